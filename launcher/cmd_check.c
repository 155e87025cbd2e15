// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch check: validates the policies and prints the effective allowlist, running nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "lib/util.h"

static const struct command_help check_help = {
	.synopsis =
		"Usage: launch check --policy FILE [--policy FILE...] [--resolver ADDR[:PORT]]\n"
		"\n"
		"Validates the policies and prints the effective allowlist, with the addresses\n"
		"each host resolves to, without running anything.\n",
	.command = CMD_CHECK,
};

int cmd_check(int argc, char **argv)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	int first = options_parse(argc, argv, &check_help, true);

	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc) {
		fail("check: runs nothing; \"%s\" is not an option", argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (resolve_policy_names() < 0 || compile_rules(&rules) < 0)
		return EXIT_LAUNCH_FAILED;
	rules_print(rules, stdout);
	return EXIT_SUCCESS;
}
