// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch report: reads an audit log line by line into report.c and prints, per policy and
 * sandbox, what was refused and how each job ended. Needs neither privilege nor the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "audit/report.h"
#include "lib/util.h"

static const struct opt report_options[] = {
	{ "help", 'h', NULL, "show this help", .parse = options_show_help },
};

static const struct command_help report_help = {
	.synopsis = "Usage: launch report AUDIT.jsonl\n"
		    "\n"
		    "Prints per policy and sandbox the refused destinations, the events lost and\n"
		    "the lines not written, how each job ended, and the jobs that ended with\n"
		    "refusals (\"-\": standard input).\n",
	.own = report_options,
	.nown = ARRAY_SIZE(report_options),
	.own_only = true,
};

static int take_line(void *ctx, const char *line, size_t len)
{
	return report_line(ctx, line, len);
}

int cmd_report(int argc, char **argv)
{
	_cleanup_(report_freep) struct report *report = NULL;
	_cleanup_free_ char *text = NULL;
	const char *path = NULL;
	size_t bad;
	long taken;
	int first;

	first = options_parse(argc, argv, &report_help, false);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc - 1) {
		fail("report: \"%s\": one audit log only (\"%s\" given already)", argv[first + 1],
		     argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	path = first < argc ? argv[first] : NULL;
	if (!path) {
		fail("report: no audit log given: launch report AUDIT.jsonl");
		return EXIT_LAUNCH_FAILED;
	}
	if (report_new(&report) < 0) {
		fail("report: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	taken = read_audit_log(path, take_line, report, &bad);
	if (taken < 0) {
		fail("report: %s: %s", path, strerror((int)-taken));
		return EXIT_LAUNCH_FAILED;
	}
	warn_bad_audit_lines(path, bad);
	if (taken == 0) {
		fail("report: %s: no audit line", path);
		return EXIT_LAUNCH_FAILED;
	}
	if (report_text(report, &text) < 0) {
		fail("report: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	fputs(text, stdout);
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_LAUNCH_FAILED;
}
