// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch update: the running sandbox ID takes new policies, at once. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sandbox/update.h"

static const struct command_help update_help = {
	.synopsis = "Usage: launch update ID --policy FILE [--policy FILE...] [--resolver "
		    "ADDR[:PORT]]\n"
		    "\n"
		    "Replaces the policies of the running sandbox ID (its --name) at once: each\n"
		    "call is judged by the old policies or the new, and by the new ones once it\n"
		    "returns. A policy that does not load leaves the old ones in force.\n",
	.command = CMD_UPDATE,
};

/* launch update ID --policy FILE...: the running sandbox ID takes these policies instead. */
int cmd_update(int argc, char **argv)
{
	char errbuf[POLICY_ERR_LEN + 512] = "";
	const char *id;
	int first, r;

	if (argc < 2 || argv[1][0] == '-') {
		fail("update: no sandbox id given: launch update ID --policy FILE...");
		return EXIT_LAUNCH_FAILED;
	}
	id = argv[1];
	/* The options after the id, as if the id were the program's name. */
	first = options_parse(argc - 1, argv + 1, &update_help, true);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc - 1) {
		fail("update: \"%s\" is not an option", argv[1 + first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (resolve_policy_names() < 0)
		return EXIT_LAUNCH_FAILED;
	r = update_request(id, arg.policies, arg.npolicies, errbuf, sizeof(errbuf));
	if (r < 0) {
		fail("update: %s", errbuf[0] ? errbuf : strerror(-r));
		return EXIT_LAUNCH_FAILED;
	}
	return EXIT_SUCCESS;
}
