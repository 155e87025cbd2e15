/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading /proc/self/mountinfo: where the cgroup and BPF file systems are mounted. */
#ifndef LAUNCH_MOUNTINFO_H
#define LAUNCH_MOUNTINFO_H

#include <limits.h>
#include <stddef.h>

struct mount_entry {
	int id, parent_id;
	char mount_point[PATH_MAX]; /* unescaped (mountinfo writes a space as \040) */
	char options[256];	    /* per-mount options: "rw,nosuid,nodev,relatime" */
	char fstype[64];
	char super_options[256]; /* the file system's: "rw,pids" for a cgroup v1 hierarchy */
};

/* Room for one line of mountinfo: its two paths escaped (a byte may take four), and more. */
#define MOUNTINFO_LINE_MAX (6 * PATH_MAX)

/*
 * Calls fn for every mount, in order, until it returns non-zero; returns that value, 0 when
 * every mount was seen, or -errno when mountinfo cannot be read.
 */
int mountinfo_foreach(int (*fn)(const struct mount_entry *mount, void *userdata), void *userdata);
/* The same, through a descriptor of a mountinfo file the caller opened and has not read. */
int mountinfo_foreach_fd(int fd, int (*fn)(const struct mount_entry *mount, void *userdata),
			 void *userdata);
/* Writes the mount point of the first mount of fstype. -ENOENT when there is none. */
int mountinfo_find(const char *fstype, char *ret_path, size_t len);

#endif /* LAUNCH_MOUNTINFO_H */
