/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launch mcp's type-check before a call runs: whether it is offered, and the errors it found. */
#ifndef LAUNCH_MCP_TYPECHECK_H
#define LAUNCH_MCP_TYPECHECK_H

#include <stdbool.h>

/* Where a prepared runner that found type errors writes them, in its call's folder. */
#define MCP_TYPECHECK_FILE "/.launch-type-errors.json"
/*
 * The least memory limit under which a prepared runner loads the checker: typescript and an
 * SDK's declarations hold about 100 MB more (180 MB with stripe's), which a 256M limit's call
 * beside them would not have.
 */
#define MCP_TYPECHECK_MEMORY_MIN_BYTES (512ULL << 20)
/* At most this many errors, each message cut there; the file at most this long. */
#define MCP_TYPECHECK_ERRORS_MAX     20
#define MCP_TYPECHECK_MESSAGE_MAX    400
#define MCP_TYPECHECK_FILE_MAX_BYTES (64 * 1024)

struct cJSON;

/* Whether modules (a node_modules folder) has typescript, which the prepared runners load. */
bool mcp_typecheck_available(const char *modules);

/*
 * Reads the type errors a runner wrote in folder dir (written inside the sandbox: bounded,
 * checked, a regular file only) as a JSON array of {line, column, code, message}. Returns 0
 * and *ret_errors, or a negative errno (-EBADMSG: not such an array).
 */
int mcp_typecheck_read(const char *dir, struct cJSON **ret_errors);

#endif /* LAUNCH_MCP_TYPECHECK_H */
