// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which cgroup hierarchy enforces each of the job's limits, decided from what the host offers
 * (pure: cglimit.c reads the host and applies the decision).
 */
#include <errno.h>
#include <string.h>

#include "cgplan.h"
#include "lib/util.h"

static const char *const CTRL_NAMES[CGLIMIT_NCTRLS] = {
	[CGLIMIT_PIDS] = "pids",
	[CGLIMIT_MEMORY] = "memory",
	[CGLIMIT_CPU] = "cpu",
};

const char *cgplan_ctrl_name(enum cglimit_ctrl ctrl)
{
	return ctrl < CGLIMIT_NCTRLS ? CTRL_NAMES[ctrl] : "?";
}

enum cgplan_choice cgplan_choose(enum cglimit_ctrl ctrl, const struct cgplan_offer *offer)
{
	if (!offer->limited && ctrl != CGLIMIT_CPU)
		return CGPLAN_SKIP;
	if (offer->v2_listed)
		return CGPLAN_V2;
	if (offer->v1_mounted)
		return CGPLAN_V1;
	if (offer->required)
		return CGPLAN_REFUSE;
	return offer->limited ? CGPLAN_MISSING : CGPLAN_SKIP;
}

int cgplan_v1_controllers(const char *proc_self_cgroup, enum cglimit_ctrl ctrl, char *ret,
			  size_t len)
{
	const char *line = proc_self_cgroup;

	if (ctrl >= CGLIMIT_NCTRLS)
		return -EINVAL;
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *first = memchr(line, ':', (size_t)(end - line)), *second;

		second = first ? memchr(first + 1, ':', (size_t)(end - first - 1)) : NULL;
		/* "0::/path" is cgroup v2; "N:name=systemd:/" a named hierarchy, no controller. */
		if (second && second > first + 1 &&
		    word_list_has(first + 1, (size_t)(second - first - 1), CTRL_NAMES[ctrl], ",")) {
			size_t n = (size_t)(second - first - 1);

			if (n >= len)
				return -ENAMETOOLONG;
			memcpy(ret, first + 1, n);
			ret[n] = '\0';
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}
