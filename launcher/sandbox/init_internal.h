/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the sandbox's init (init.c) and its mounts (init_mount.c) share. */
#ifndef LAUNCH_INIT_INTERNAL_H
#define LAUNCH_INIT_INTERNAL_H

#include <stdbool.h>

#include "childproto.h"

/* Init keeps these descriptors, and nothing else of the launcher's. */
#define INIT_STATUS_FD 3
#define INIT_LIFE_FD   4
#define INIT_EXEC_FD   5 /* the job's: its exec closes it, which tells the launcher */
#define INIT_MOUNTS_FD 6 /* the launcher's mountinfo, polled for a change; gone before the job */
/* Cgroup or BPF mounts stacked on one path that init takes off, at most. */
#define CHILD_MAX_STACKED_MOUNTS 16

/*
 * The part of the job's view that needs nothing of its configuration: "/" private, /proc,
 * /dev/shm, the lock files, cgroup and BPF file systems hidden, the kernel's files read-only.
 * 0 or -errno.
 */
int child_setup_mounts_early(const struct child_config *early, bool mounts_watched);
/* The rest, once the configuration came: /tmp, the audit log hidden, read-only. 0 or -errno. */
int child_setup_mounts_late(const struct child_config *config);

#endif /* LAUNCH_INIT_INTERNAL_H */
