/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `launch report`: an audit log summed up for a person, per policy and sandbox. */
#ifndef LAUNCH_REPORT_H
#define LAUNCH_REPORT_H

#include <stddef.h>

#include "lib/util.h"

struct report;

int report_new(struct report **ret_report);
void report_free(struct report *report);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct report *, report_free)

/* Takes one line: 1 when it is an audit line, -EBADMSG when not a JSON object with an "event". */
int report_line(struct report *report, const char *line, size_t len);

/*
 * The summary (malloc'd text): per policy and sandbox, the refused destinations (deny and
 * would_deny) with names, addresses, ports, counts, first and last seen; the events lost;
 * then the jobs that ended with refusals. Pure: the same lines give the same text.
 */
int report_text(struct report *report, char **ret_text);

#endif /* LAUNCH_REPORT_H */
