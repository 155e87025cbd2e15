// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch learn: reads an audit log line by line into learn.c and prints the smallest policy
 * that allows what it shows. Needs neither privilege nor the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "audit/learn.h"
#include "lib/util.h"
#include "policy/policy.h"

static const char *learn_sandbox, *learn_name;
static bool learn_wildcards;

static const struct opt learn_options[] = {
	{ "sandbox", 0, "ID", "only the lines of sandbox ID", .string = &learn_sandbox },
	{ "name", 0, "NAME", "the policy's name (default " LEARN_DEFAULT_NAME ")",
	  .string = &learn_name },
	{ "wildcards", 0, NULL,
	  "names below a common parent become one *.parent\n"
	  "wildcard",
	  .flag = &learn_wildcards },
	{ "help", 'h', NULL, "show this help", .parse = options_show_help },
};

static const struct command_help learn_help = {
	.synopsis = "Usage: launch learn AUDIT.jsonl [--sandbox ID] [--name NAME] [--wildcards]\n"
		    "\n"
		    "Prints the smallest policy that allows what the audit log shows (\"-\":\n"
		    "standard input); what no policy can allow is named on standard error.\n",
	.own = learn_options,
	.nown = ARRAY_SIZE(learn_options),
	.own_only = true,
};

static int take_line(void *ctx, const char *line, size_t len)
{
	return learn_line(ctx, line, len);
}

int cmd_learn(int argc, char **argv)
{
	struct learn_options options = { 0 };
	_cleanup_(learn_freep) struct learn *learn = NULL;
	_cleanup_(policy_freep) struct policy *check = NULL;
	_cleanup_free_ char *policy = NULL, *notes = NULL;
	char errbuf[POLICY_ERR_LEN];
	struct learn_gaps gaps;
	const char *path = NULL;
	size_t bad;
	long taken;
	int first;

	first = options_parse(argc, argv, &learn_help, false);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc - 1) {
		fail("learn: \"%s\": one audit log only (\"%s\" given already)", argv[first + 1],
		     argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	path = first < argc ? argv[first] : NULL;
	if ((learn_sandbox && !*learn_sandbox) || (learn_name && !*learn_name)) {
		fail("learn: %s: needs a value",
		     learn_name && !*learn_name ? "--name" : "--sandbox");
		return EXIT_LAUNCH_FAILED;
	}
	options.sandbox = learn_sandbox;
	options.name = learn_name ?: LEARN_DEFAULT_NAME;
	options.wildcards = learn_wildcards;
	if (!path) {
		fail("learn: no audit log given: launch learn AUDIT.jsonl [--sandbox ID] "
		     "[--name NAME] [--wildcards]");
		return EXIT_LAUNCH_FAILED;
	}
	if (learn_new(&options, &learn) < 0) {
		fail("learn: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	taken = read_audit_log(path, take_line, learn, &bad);
	if (taken < 0) {
		fail("learn: %s: %s", path, strerror((int)-taken));
		return EXIT_LAUNCH_FAILED;
	}
	warn_bad_audit_lines(path, bad);
	if (learn_lines(learn) == 0) {
		if (options.sandbox)
			fail("learn: %s: no line of sandbox \"%s\"", path, options.sandbox);
		else
			fail("learn: %s: no audit line", path);
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
		fail("learn: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	/* What is printed must be a policy launch takes: fail here, not at the enforcing run. */
	if (policy_parse("learned policy", policy, &check, errbuf, sizeof(errbuf)) < 0) {
		fail("learn: the policy made is not valid: %s", errbuf);
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
