// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch gc: removes what killed launchers left behind, and unloads other builds' programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "sandbox/gc.h"
#include "sandbox/loader.h"

static bool gc_unload;

static const struct opt gc_options[] = {
	{ "unload", 0, NULL, "unload this build's programs too (the next launch\nloads them again)",
	  .flag = &gc_unload },
};

static const struct command_help gc_help = {
	.synopsis =
		"Usage: launch gc [--unload]\n"
		"\n"
		"Removes the cgroups of sandboxes whose launcher was killed (every launch run\n"
		"does this too), frees the maps that idle BPF slots keep for the next sandbox,\n"
		"and unloads the programs of other builds.\n",
	.own = gc_options,
	.nown = ARRAY_SIZE(gc_options),
	.command = CMD_GC,
};

int cmd_gc(int argc, char **argv)
{
	struct loader_shared shared;
	char parent[PATH_MAX], holder[PATH_MAX], default_parent[PATH_MAX];
	int first, r, slots = 0, holders, found, v1_error = 0;

	first = options_parse(argc, argv, &gc_help, false);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc) {
		fail("gc: \"%s\" is not an option", argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (check_system() < 0 || cgroup_parent_dir(parent, sizeof(parent), &v1_error) < 0)
		return EXIT_LAUNCH_FAILED;
	r = gc_sweep();
	if (r < 0) {
		fail("gc: %s: %s", GC_LOCK_DIR, strerror(-r));
		return EXIT_LAUNCH_FAILED;
	}
	/* Sandboxes whose lock file is gone too: found in the cgroup parents themselves. */
	found = gc_sweep_parent(parent, !arg.cgroup_parent);
	r += found > 0 ? found : 0;
	if (arg.cgroup_parent &&
	    cgroup_parent_default(default_parent, sizeof(default_parent)) == 0) {
		found = gc_sweep_parent(default_parent, true);
		r += found > 0 ? found : 0;
	}
	found = gc_sweep_registered();
	r += found > 0 ? found : 0;
	/* The slots of killed launchers, if this build's programs are loaded at all. */
	if ((size_t)snprintf(holder, sizeof(holder), "%s/%s%s", parent, LOADER_HOLDER_PREFIX,
			     loader_version()) < sizeof(holder) &&
	    access(holder, F_OK) == 0 && loader_shared_get(parent, &shared, NULL, 0) == 0) {
		/* Idle slots keep their maps for the next sandbox: their kernel memory goes. */
		slots = loader_trim_idle_slots(&shared);
		loader_shared_close(&shared);
	}
	holders = loader_remove_holders(parent, gc_unload ? NULL : loader_version());
	printf("removed %d sandbox%s left behind, freed the maps of %d idle slot%s, unloaded %d "
	       "program set%s\n",
	       r, r == 1 ? "" : "es", slots > 0 ? slots : 0, slots == 1 ? "" : "s",
	       holders > 0 ? holders : 0, holders == 1 ? "" : "s");
	return EXIT_SUCCESS;
}
