/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A refusal as a person or a model reads it, from an audit log's "deny" line. */
#ifndef LAUNCH_REFUSAL_H
#define LAUNCH_REFUSAL_H

#include <stdbool.h>
#include <stddef.h>

#define REFUSAL_FIELD_MAX 512

struct refusal {
	char op[32]; /* "connect", "dns", "socket", ... as in the audit log */
	char destination[REFUSAL_FIELD_MAX]; /* "1.1.1.1:443", "[2001:db8::1]:53", a path, a name */
	char name[REFUSAL_FIELD_MAX];	     /* the host name the job used, when known; else "" */
	char policy[REFUSAL_FIELD_MAX];
	char ts[32]; /* the line's "ts", RFC 3339 UTC of fixed width: ordered as text */
	bool would;  /* a "would_deny" line (--audit-only): let through, not refused */
	/* The refusals the line stands for: 1, plus the identical look-ups a dns line folds. */
	unsigned long long count;
};

/*
 * Reads one audit log line. Returns 1 and fills ret_refusal for a "deny" or "would_deny"
 * line, 0 for any other line (or one that is not JSON), -ENOMEM.
 */
int refusal_parse(const char *line, size_t len, struct refusal *ret_refusal);

/* Whether the refusal was made at since (an audit line's "ts") or later; NULL or "": yes. */
bool refusal_since(const struct refusal *refusal, const char *since);

/*
 * "refused connect 1.1.1.1:443 (policy stripe)" ("would refuse ..." for would_deny), without
 * a newline; the length written.
 */
int refusal_format(const struct refusal *refusal, char *buf, size_t len);

#endif /* LAUNCH_REFUSAL_H */
