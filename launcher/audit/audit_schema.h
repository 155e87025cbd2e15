/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --audit-format: turns one of launch's JSON lines into an OCSF event or an Elastic Common
 * Schema document, between the formatters (audit.c) and the sink (audit_writer.c).
 */
#ifndef LAUNCH_AUDIT_SCHEMA_H
#define LAUNCH_AUDIT_SCHEMA_H

#include <stddef.h>

/* The schemas, and the versions of them the mapping in docs/audit-log.md follows. */
#define AUDIT_SCHEMA_OCSF_VERSION "1.3.0"
#define AUDIT_SCHEMA_ECS_VERSION  "8.11.0"

enum audit_schema {
	AUDIT_SCHEMA_JSON = 0, /* launch's own lines, unchanged */
	AUDIT_SCHEMA_OCSF,
	AUDIT_SCHEMA_ECS,
};

/* What a translation needs beyond the line; the lines of one sandbox share one. */
struct audit_schema_ctx {
	enum audit_schema schema;
	const char *version; /* launch's release: metadata.product.version, observer.version */
	int launcher_pid;    /* the actor that starts the job */
	/* The job's pid, from sandbox_start: the process that sandbox_exit and limit concern. */
	unsigned long long job_pid;
};

/* "json", "ocsf" or "ecs"; -EINVAL for anything else. */
int audit_schema_parse(const char *name, enum audit_schema *ret_schema);

/* The end of the JSON value at p in a line of launch's, or NULL when the text ends inside it. */
const char *audit_json_skip_value(const char *p, const char *end);

/*
 * Writes the document for one JSON line (with or without its '\n') into buf, with a '\n',
 * at most cap bytes. Returns its length, -ENOBUFS when even a shortened document does not
 * fit, -EINVAL when the line is not one of launch's. Pure, but for ctx->job_pid, which a
 * sandbox_start line sets.
 */
int audit_schema_translate(struct audit_schema_ctx *ctx, const char *line, size_t len, char *buf,
			   size_t cap);

#endif /* LAUNCH_AUDIT_SCHEMA_H */
