// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which cgroup and BPF mounts a sandbox's init must hide besides /sys/fs/cgroup's tree. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "mounthide.h"

/* More than this many mounts, or cgroup and BPF mounts: no list, and init walks its own. */
#define MOUNTHIDE_MOUNTS_MAX 1024
#define MOUNTHIDE_HIDDEN_MAX 64

struct mounthide_scan {
	struct {
		int id, parent_id;
		int hidden; /* its index in hidden[], or -1: not a cgroup or BPF mount */
	} mounts[MOUNTHIDE_MOUNTS_MAX];
	size_t n;
	struct mounthide_mount hidden[MOUNTHIDE_HIDDEN_MAX];
	size_t nhidden;
	long home; /* the index of the one mount on MOUNTHIDE_HOME; -1 none, -2 several */
};

long mounthide_how(const struct mount_entry *mount)
{
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;

	if (strcmp(mount->fstype, "bpf") == 0 || strcmp(mount->fstype, "cgroup2") == 0)
		return MOUNTHIDE_DETACH;
	if (strcmp(mount->fstype, "cgroup") != 0)
		return -1;
	if (strstr(mount->options, "nosuid"))
		flags |= MS_NOSUID;
	if (strstr(mount->options, "nodev"))
		flags |= MS_NODEV;
	if (strstr(mount->options, "noexec"))
		flags |= MS_NOEXEC;
	return (long)flags;
}

struct mounthide_scan *mounthide_scan_new(void)
{
	struct mounthide_scan *scan = calloc(1, sizeof(*scan));

	if (scan)
		scan->home = -1;
	return scan;
}

void mounthide_scan_free(struct mounthide_scan *scan)
{
	if (!scan)
		return;
	for (size_t i = 0; i < scan->nhidden; i++)
		free(scan->hidden[i].mount_point);
	free(scan);
}

int mounthide_scan_add(const struct mount_entry *mount, void *userdata)
{
	struct mounthide_scan *scan = userdata;
	long how = mounthide_how(mount);

	if (scan->n == MOUNTHIDE_MOUNTS_MAX || (how >= 0 && scan->nhidden == MOUNTHIDE_HIDDEN_MAX))
		return -E2BIG;
	scan->mounts[scan->n].id = mount->id;
	scan->mounts[scan->n].parent_id = mount->parent_id;
	scan->mounts[scan->n].hidden = -1;
	if (how >= 0) {
		char *path = strdup(mount->mount_point);

		if (!path)
			return -ENOMEM;
		scan->hidden[scan->nhidden].mount_point = path;
		scan->hidden[scan->nhidden].how = how;
		scan->mounts[scan->n].hidden = (int)scan->nhidden++;
	}
	if (strcmp(mount->mount_point, MOUNTHIDE_HOME) == 0)
		scan->home = scan->home == -1 ? (long)scan->n : -2;
	scan->n++;
	return 0;
}

/* Whether mount i lies in the tree of the mount on MOUNTHIDE_HOME, its parents followed up. */
static bool mounthide_in_home(const struct mounthide_scan *scan, size_t i)
{
	size_t at = i, steps = 0;

	while (at != (size_t)scan->home) {
		size_t parent = scan->n;

		for (size_t j = 0; j < scan->n; j++)
			if (scan->mounts[j].id == scan->mounts[at].parent_id)
				parent = j;
		/* The root's parent, or one not listed (a path too long to list): not in it. */
		if (parent == scan->n || ++steps > scan->n)
			return false;
		at = parent;
	}
	return true;
}

int mounthide_scan_result(struct mounthide_scan *scan, struct mounthide_mount **ret, size_t *ret_n)
{
	struct mounthide_mount *out;
	size_t n = 0;

	if (scan->home < 0)
		return -ENOENT;
	out = calloc(scan->nhidden ? scan->nhidden : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < scan->n; i++) {
		int h = scan->mounts[i].hidden;

		if (h < 0 || mounthide_in_home(scan, i))
			continue;
		out[n] = scan->hidden[h];
		out[n++].mount_point = strdup(scan->hidden[h].mount_point);
		if (!out[n - 1].mount_point) {
			mounthide_free(out, n - 1);
			return -ENOMEM;
		}
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

void mounthide_free(struct mounthide_mount *mounts, size_t n)
{
	if (!mounts)
		return;
	for (size_t i = 0; i < n; i++)
		free(mounts[i].mount_point);
	free(mounts);
}
