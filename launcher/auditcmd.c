// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `launch learn` and `launch report`: their options, reading the audit log line by line into
 * learn.c or report.c, and printing the result. Neither needs privilege or the kernel.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditcmd.h"
#include "audit/learn.h"
#include "policy/policy.h"
#include "audit/report.h"

__attribute__((format(printf, 1, 2))) static void auditcmd_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "launch: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)

/*
 * Feeds every line of path ("-": standard input) to take(ctx, line, len). Returns the lines
 * taken (take's 1s), or -errno; *ret_bad counts lines that are not audit lines.
 */
static long auditcmd_read(const char *path, int (*take)(void *ctx, const char *line, size_t len),
			  void *ctx, size_t *ret_bad)
{
	_cleanup_(fclosep) FILE *file = NULL;
	_cleanup_free_ char *line = NULL;
	FILE *in = stdin;
	size_t cap = 0;
	ssize_t n;
	long taken = 0;
	int r;

	*ret_bad = 0;
	if (strcmp(path, "-") != 0) {
		file = fopen(path, "re");
		if (!file)
			return -errno;
		in = file;
	}
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		r = take(ctx, line, (size_t)n);
		if (r == -EBADMSG)
			(*ret_bad)++;
		else if (r < 0)
			return r;
		else
			taken += r;
	}
	return ferror(in) ? -(errno ?: EIO) : taken;
}

static int learn_take(void *ctx, const char *line, size_t len)
{
	return learn_line(ctx, line, len);
}

static int report_take(void *ctx, const char *line, size_t len)
{
	return report_line(ctx, line, len);
}

static void auditcmd_report_bad(const char *path, size_t bad)
{
	if (bad)
		fprintf(stderr,
			"launch: warning: %s: %zu line%s not audit lines (not JSON objects "
			"with an \"event\"), skipped\n",
			path, bad, bad == 1 ? " is" : "s are");
}

int auditcmd_learn(int argc, char **argv)
{
	struct learn_options options = { .name = LEARN_DEFAULT_NAME };
	_cleanup_(learn_freep) struct learn *learn = NULL;
	_cleanup_(policy_freep) struct policy *check = NULL;
	_cleanup_free_ char *policy = NULL, *notes = NULL;
	char errbuf[POLICY_ERR_LEN];
	struct learn_gaps gaps;
	const char *path = NULL;
	size_t bad;
	long taken;

	for (int i = 1; i < argc; i++) {
		if ((strcmp(argv[i], "--sandbox") == 0 || strcmp(argv[i], "--name") == 0) &&
		    (i + 1 >= argc || !*argv[i + 1])) {
			auditcmd_fail("learn: %s: needs a value", argv[i]);
			return EXIT_LAUNCH_FAILED;
		}
		if (strcmp(argv[i], "--sandbox") == 0) {
			options.sandbox = argv[++i];
		} else if (strcmp(argv[i], "--name") == 0) {
			options.name = argv[++i];
		} else if (strcmp(argv[i], "--wildcards") == 0) {
			options.wildcards = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			auditcmd_fail("learn: %s: unknown option (launch learn AUDIT.jsonl "
				      "[--sandbox ID] [--name NAME] [--wildcards])",
				      argv[i]);
			return EXIT_LAUNCH_FAILED;
		} else if (path) {
			auditcmd_fail("learn: \"%s\": one audit log only (\"%s\" given already)",
				      argv[i], path);
			return EXIT_LAUNCH_FAILED;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		auditcmd_fail("learn: no audit log given: launch learn AUDIT.jsonl [--sandbox ID] "
			      "[--name NAME] [--wildcards]");
		return EXIT_LAUNCH_FAILED;
	}
	if (learn_new(&options, &learn) < 0) {
		auditcmd_fail("learn: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	taken = auditcmd_read(path, learn_take, learn, &bad);
	if (taken < 0) {
		auditcmd_fail("learn: %s: %s", path, strerror((int)-taken));
		return EXIT_LAUNCH_FAILED;
	}
	auditcmd_report_bad(path, bad);
	if (learn_lines(learn) == 0) {
		if (options.sandbox)
			auditcmd_fail("learn: %s: no line of sandbox \"%s\"", path,
				      options.sandbox);
		else
			auditcmd_fail("learn: %s: no audit line", path);
		return EXIT_LAUNCH_FAILED;
	}
	learn_gaps(learn, &gaps);
	if (gaps.lost || gaps.unwritten)
		fprintf(stderr,
			"launch: warning: learn: %s is incomplete (%llu event%s lost, %llu line%s "
			"not written): the policy may miss what the job did\n",
			path, gaps.lost, gaps.lost == 1 ? "" : "s", gaps.unwritten,
			gaps.unwritten == 1 ? "" : "s");
	if (learn_policy(learn, &policy, &notes) < 0) {
		auditcmd_fail("learn: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	/* What is printed must be a policy launch takes: fail here, not at the enforcing run. */
	if (policy_parse("learned policy", policy, &check, errbuf, sizeof(errbuf)) < 0) {
		auditcmd_fail("learn: the policy made is not valid: %s", errbuf);
		return EXIT_LAUNCH_FAILED;
	}
	for (const char *line = notes; *line;) {
		size_t len = strcspn(line, "\n");

		fprintf(stderr, "launch: learn: %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
	fputs(policy, stdout);
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_LAUNCH_FAILED;
}

int auditcmd_report(int argc, char **argv)
{
	_cleanup_(report_freep) struct report *report = NULL;
	_cleanup_free_ char *text = NULL;
	const char *path = NULL;
	size_t bad;
	long taken;

	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			auditcmd_fail("report: %s: unknown option (launch report AUDIT.jsonl)",
				      argv[i]);
			return EXIT_LAUNCH_FAILED;
		}
		if (path) {
			auditcmd_fail("report: \"%s\": one audit log only (\"%s\" given already)",
				      argv[i], path);
			return EXIT_LAUNCH_FAILED;
		}
		path = argv[i];
	}
	if (!path) {
		auditcmd_fail("report: no audit log given: launch report AUDIT.jsonl");
		return EXIT_LAUNCH_FAILED;
	}
	if (report_new(&report) < 0) {
		auditcmd_fail("report: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	taken = auditcmd_read(path, report_take, report, &bad);
	if (taken < 0) {
		auditcmd_fail("report: %s: %s", path, strerror((int)-taken));
		return EXIT_LAUNCH_FAILED;
	}
	auditcmd_report_bad(path, bad);
	if (taken == 0) {
		auditcmd_fail("report: %s: no audit line", path);
		return EXIT_LAUNCH_FAILED;
	}
	if (report_text(report, &text) < 0) {
		auditcmd_fail("report: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	fputs(text, stdout);
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_LAUNCH_FAILED;
}
