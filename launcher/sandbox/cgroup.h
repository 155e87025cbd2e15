/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox's cgroup v2: find the hierarchy, create, kill every member, remove. */
#ifndef LAUNCH_CGROUP_H
#define LAUNCH_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct sandbox_cgroup {
	char path[PATH_MAX]; /* <parent>/<id> */
	int dir_fd;	     /* O_PATH|O_DIRECTORY: for CLONE_INTO_CGROUP and BPF attach */
	uint64_t id;	     /* the cgroup's inode number, as bpf_get_current_cgroup_id() */
};

/*
 * Lets a frozen cgroup run again (cgroup.freeze): a job frozen from outside (launch mcp
 * freezes a finished call's sandbox) must still get the signals launch passes on.
 */
int cgroup_thaw(const struct sandbox_cgroup *cgroup);

/* Writes the cgroup2 mount point found in /proc/self/mountinfo. -ENOENT when there is none. */
int cgroup_find_mount(char *ret_path, size_t len);
/*
 * When no cgroup2 hierarchy is visible (`ip netns exec` mounts a fresh sysfs over /sys,
 * which hides it), mounts it in a mount namespace of the launcher's own, where the host
 * usually has it, and writes that path: on CGROUP_PRIVATE_ROOT, or on a hybrid host (cgroup
 * v1 hierarchies beside it) on a tmpfs there, at CGROUP_PRIVATE_HYBRID_MOUNT. Call it while
 * the launcher has a single thread.
 */
#define CGROUP_PRIVATE_ROOT	    "/sys/fs/cgroup"
#define CGROUP_PRIVATE_HYBRID_MOUNT CGROUP_PRIVATE_ROOT "/unified"
int cgroup_mount_private(bool hybrid, char *ret_path, size_t len);
/*
 * Creates <parent>/<name> (and parent itself, with mode 0755, when missing). -EEXIST when a
 * sandbox of that name exists already.
 */
int cgroup_create(const char *parent, const char *name, struct sandbox_cgroup *ret_cgroup);
/* Kills every process in the cgroup and its descendants (cgroup.kill) and waits for it to
 * be empty, at most timeout_ms. */
int cgroup_kill(const struct sandbox_cgroup *cgroup, int timeout_ms);
/* Removes the (empty) cgroup and closes its fd; harmless on a cgroup never created. */
int cgroup_destroy(struct sandbox_cgroup *cgroup);
/*
 * Kills every process of the cgroup with this id, wherever it is, and waits for it to be
 * empty, at most timeout_ms. 0 when it is empty or exists no more.
 */
int cgroup_empty_by_id(uint64_t id, int timeout_ms);
/* True when no process is left in the cgroup (cgroup.events: populated 0). */
bool cgroup_is_empty(const struct sandbox_cgroup *cgroup);

/*
 * Marks a sandbox's cgroup (v2, and its v1 mirrors) as launch's, for gc_sweep_parent: an
 * extended attribute holding the sandbox id.
 */
#define CGROUP_MARK_XATTR "trusted.launch.sandbox"
int cgroup_mark(int dir_fd, const char *id);

/* Reads a small file of the cgroup directory dir_fd into buf, NUL-terminated. */
int cgroup_read_text(int dir_fd, const char *file, char *buf, size_t len);

#endif /* LAUNCH_CGROUP_H */
