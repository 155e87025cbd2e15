/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What policy.c (the file, its top-level keys, "allow") and policy_sections.c ("unix", "fs",
 * "limits", "listen") share: the parse's context, its one-line errors, the value checks.
 * Private to policy/.
 */
#ifndef LAUNCH_POLICY_INTERNAL_H
#define LAUNCH_POLICY_INTERNAL_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "policy.h"

/* Bytes of an offending value repeated in a message; the rest is cut to keep one line. */
#define ERR_VALUE_SHOWN_LEN 64
/* Longest JSON path we name in messages: "allow[99999].ports[31]" and friends. */
#define KEY_PATH_LEN 128

/* Where a parse is: the file's path, and where its one-line error goes. */
struct parse_ctx {
	const char *path;
	char *errbuf;
	size_t errlen;
};

/* Writes "PATH: KEY: message" (or "PATH: message" without a key) and returns -EINVAL. */
__attribute__((format(printf, 3, 4))) int policy_fail(const struct parse_ctx *ctx, const char *key,
						      const char *fmt, ...);

/*
 * Copies a user-supplied string for a message: control and non-ASCII bytes become '?' so
 * the message stays one printable line, and long values are cut.
 */
const char *policy_shown(const char *s, char *buf, size_t len);

/* The JSON type of item, as a message names it ("a string", "an array"). */
const char *policy_json_type(const cJSON *item);

/* Refuses keys outside known[nknown] and keys given twice (cJSON keeps both copies). */
int policy_check_keys(const struct parse_ctx *ctx, const cJSON *obj, const char *where,
		      const char *const *known, size_t nknown);

/* "ports": an array of numbers and "LOW-HIGH" ranges, into entry. */
int policy_parse_ports(const struct parse_ctx *ctx, const cJSON *ports, const char *key,
		       struct policy_entry *entry);

/* "protocol": "tcp", "udp" or "any". */
int policy_parse_protocol(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			  unsigned int *ret_protos);

/* The sections of a policy besides "name" and "allow" (policy_sections.c). */
int policy_parse_unix(const struct parse_ctx *ctx, const cJSON *unix_paths, struct policy *policy);
int policy_parse_listen(const struct parse_ctx *ctx, const cJSON *listen, struct policy *policy);
int policy_parse_fs(const struct parse_ctx *ctx, const cJSON *fs, struct policy *policy);
int policy_parse_limits(const struct parse_ctx *ctx, const cJSON *limits, struct policy *policy);

/* The HTTPS gateway's keys (policy_http.c): a host rule's "http", after its "host" and
 * "protocol" are parsed, and "secrets", after "allow" (its hosts must be rules with "http"). */
int policy_parse_http(const struct parse_ctx *ctx, const cJSON *obj, const char *key,
		      struct policy_entry *entry);
int policy_parse_secrets(const struct parse_ctx *ctx, const cJSON *list, struct policy *policy);
/* A host with "http" in no other rule of the policy; after "allow". */
int policy_check_http_hosts(const struct parse_ctx *ctx, const struct policy *policy);

#endif /* LAUNCH_POLICY_INTERNAL_H */
