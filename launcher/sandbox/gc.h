/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding and removing what launchers that died (SIGKILL, power loss) left behind. */
#ifndef LAUNCH_GC_H
#define LAUNCH_GC_H

#include <stdbool.h>
#include <stddef.h>

/* Each running launcher holds an exclusive lock on <GC_LOCK_DIR>/<id>.lock. */
#define GC_LOCK_DIR "/run/launch"
/* The running launcher's control socket (launch update): <GC_LOCK_DIR>/<id>GC_CONTROL_SUFFIX. */
#define GC_CONTROL_SUFFIX ".ctl"

/*
 * Takes the lock of sandbox `id` before anything of it exists, so that a concurrent sweep
 * never takes a starting sandbox for a dead one. Returns the lock's fd, or -errno.
 */
int gc_lock(const char *id);
/*
 * Writes the sandbox's cgroup path into its lock file, so that a sweep after the launcher's
 * death removes exactly that cgroup, wherever --cgroup-parent put it.
 */
int gc_record(int lock_fd, const char *cgroup_path);
/* Removes the control socket and the lock file, closes fd; call last, when the sandbox is gone. */
void gc_unlock(const char *id, int fd);
/*
 * For every sandbox whose launcher is gone (its lock file is not held): kills the processes
 * of the cgroup it recorded, removes that cgroup (which detaches its programs) and its v1
 * mirrors, then its lock file, once they are really gone. Returns how many were removed, or
 * -errno.
 */
int gc_sweep(void);
/*
 * Removes every dead sandbox's cgroup under cgroup_parent and under its cgroup v1 mirrors,
 * whether or not it has a lock file: those marked by cgroup_mark, or (owned: a parent only launch
 * uses, its default) every one. A cgroup whose lock is held is never touched. Returns how
 * many were removed, or -errno.
 */
int gc_sweep_parent(const char *cgroup_parent, bool owned);
/* Remembers a cgroup parent other than the default, for gc_sweep_registered. */
int gc_register_parent(const char *cgroup_parent);
/* gc_sweep_parent on every registered parent; forgets those that exist no more. */
int gc_sweep_registered(void);
#endif /* LAUNCH_GC_H */
