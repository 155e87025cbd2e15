/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `launch learn`: the smallest policy that allows what an audit log shows a job doing. */
#ifndef LAUNCH_LEARN_H
#define LAUNCH_LEARN_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/util.h"

/* Policy name when --name is not given. */
#define LEARN_DEFAULT_NAME "learned"

struct learn_options {
	const char *sandbox; /* only the lines of this sandbox; NULL: every line */
	const char *name;    /* the policy's "name" */
	bool wildcards;	     /* names sharing a parent domain become "*.parent" */
};

struct learn;

int learn_new(const struct learn_options *options, struct learn **ret_learn);
void learn_free(struct learn *learn);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct learn *, learn_free)

/*
 * Takes one line of an audit log. Returns 1 when it is an audit line of the sandbox asked
 * for (whatever it says), 0 when it is another sandbox's, -EBADMSG when it is not a JSON
 * object with an "event", -ENOMEM.
 */
int learn_line(struct learn *learn, const char *line, size_t len);

/*
 * The policy, as JSON text ending in a newline (*ret_policy), and what the log showed that no
 * policy can allow, one line each (*ret_notes, "" when nothing): both malloc'd. Pure: the
 * same lines give the same text.
 */
int learn_policy(struct learn *learn, char **ret_policy, char **ret_notes);

/* What the lines taken say the log lacks: a policy learned from it may miss destinations. */
struct learn_gaps {
	unsigned long long lost;      /* events the kernel's ring had no room for */
	unsigned long long unwritten; /* lines launch could not write */
};
void learn_gaps(const struct learn *learn, struct learn_gaps *ret_gaps);

/* Lines taken by learn_line that were of the sandbox asked for. */
size_t learn_lines(const struct learn *learn);

#endif /* LAUNCH_LEARN_H */
