/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroup hierarchy enforces each of the job's limits, decided from what the host offers
 * (pure: cglimit.c reads the host and applies the decision).
 */
#ifndef LAUNCH_CGPLAN_H
#define LAUNCH_CGPLAN_H

#include <stdbool.h>
#include <stddef.h>

enum cglimit_ctrl {
	CGLIMIT_PIDS,
	CGLIMIT_MEMORY,
	CGLIMIT_CPU,
	CGLIMIT_NCTRLS,
};

/* "pids", "memory", "cpu": the kernel's names. */
const char *cgplan_ctrl_name(enum cglimit_ctrl ctrl);

/* What the host offers for one controller, and what the job asks of it. */
struct cgplan_offer {
	bool v2_listed;	 /* in the cgroup parent's cgroup.controllers */
	bool v1_mounted; /* a cgroup v1 hierarchy of it is mounted */
	bool limited;	 /* the job has a limit for it */
	bool required;	 /* asked for (an option or a policy), not a default */
};

enum cgplan_choice {
	CGPLAN_SKIP,	/* no limit and no use for the controller */
	CGPLAN_V2,	/* enable it in the parent's cgroup.subtree_control */
	CGPLAN_V1,	/* a mirror cgroup in its v1 hierarchy, joined before the job starts */
	CGPLAN_MISSING, /* a default limit the host cannot enforce: run without it, say so */
	CGPLAN_REFUSE,	/* an asked-for limit the host cannot enforce: launch fails (125) */
};

/*
 * cgroup v2 wins when the parent can enable the controller: a controller is bound to one
 * hierarchy at a time, so v1 has it only when v2 has not. The CPU controller is used even
 * without a quota, so that the job competes for the CPU as one group.
 */
enum cgplan_choice cgplan_choose(enum cglimit_ctrl ctrl, const struct cgplan_offer *offer);

/*
 * From the text of /proc/self/cgroup ("ID:CONTROLLERS:PATH" lines), the controller list of
 * the v1 hierarchy that holds ctrl ("cpu", or "cpu,cpuacct" where they share one), as the
 * options that mount that hierarchy again. -ENOENT when no v1 hierarchy holds it (it is
 * cgroup v2's, or not built), -ENAMETOOLONG when ret is too small.
 */
int cgplan_v1_controllers(const char *proc_self_cgroup, enum cglimit_ctrl ctrl, char *ret,
			  size_t len);

#endif /* LAUNCH_CGPLAN_H */
