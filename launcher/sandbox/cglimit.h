/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job's resource limits in force: cgroup v2 controllers where the cgroup parent can
 * enable them, else cgroup v1 hierarchies (hybrid hosts); and watching for the job to reach
 * them.
 */
#ifndef LAUNCH_CGLIMIT_H
#define LAUNCH_CGLIMIT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgplan.h"
#include "policy/limit.h"
#include "lib/mountinfo.h"

/* What cglimit_check found newly reached. */
enum {
	CGLIMIT_HIT_PIDS = 1 << 0,   /* a fork failed at pids.max */
	CGLIMIT_HIT_MEMORY = 1 << 1, /* the OOM killer killed in the sandbox */
	CGLIMIT_HIT_TMP = 1 << 2,    /* the job's /tmp is full */
};

/*
 * The job's own priority for the OOM killer: the highest, so that a host short of memory
 * kills the job before anything else, the launcher included (which cannot lower its own
 * score without CAP_SYS_RESOURCE).
 */
#define CGLIMIT_JOB_OOM_SCORE_ADJ 1000

struct cglimit {
	int v2_fd;			   /* the sandbox's cgroup v2 (not ours to close) */
	bool in_v2[CGLIMIT_NCTRLS];	   /* the controller is enabled for it in cgroup v2 */
	char v1[CGLIMIT_NCTRLS][PATH_MAX]; /* else its cgroup in the v1 hierarchy, or "" */
	int v1_fd[CGLIMIT_NCTRLS];	   /* that folder, open from its mkdir on, or -1 */
	unsigned long long pids_events;	   /* failed forks seen so far */
	unsigned long long oom_kills;	   /* OOM kills seen so far */
	int tmp_fd;			   /* the job's /tmp, for statfs; -1 when not open */
	bool tmp_full;			   /* reported once */
	bool missing[CGLIMIT_NCTRLS];	   /* a default limit the host has no controller for */
	char warning[256];		   /* what runs without its default limit, for stderr */
};

#define CGLIMIT_INIT                                               \
	{                                                          \
		.v2_fd = -1, .tmp_fd = -1, .v1_fd = { -1, -1, -1 } \
	}

/*
 * Where the cgroup file systems are mounted, from one read of mountinfo: every question
 * about a controller's v1 hierarchy and the v2 mount is answered from it.
 */
struct cgroup_mounts {
	char v2[PATH_MAX];		   /* the first cgroup2 mount, or "" */
	char v1[CGLIMIT_NCTRLS][PATH_MAX]; /* each controller's first v1 hierarchy, or "" */
};

/* Empties mounts for cglimit_mounts_add: path by path, not zeroed whole (16 KiB of pages). */
void cglimit_mounts_init(struct cgroup_mounts *mounts);
/* A mountinfo_foreach callback that fills a struct cgroup_mounts; always 0. */
int cglimit_mounts_add(const struct mount_entry *mount, void *userdata);

/*
 * Puts the limits on the sandbox's (new, empty) cgroup v2 at v2_path, or on its mirrors in
 * the v1 hierarchies (the same path below each mount), which it creates. A limit that cannot
 * be enforced is an error with one line in errbuf naming it: the job never runs with less
 * than asked. The CPU controller is used, when there is one, even without a quota: the job
 * then competes for the CPU as one group. known: the mounts as the caller read them (one read
 * of mountinfo serves the whole start), or NULL to read them now.
 */
int cglimit_setup(struct cglimit *cl, const struct job_limits *limits, int v2_fd,
		  const char *v2_path, const struct cgroup_mounts *known, char *errbuf,
		  size_t errlen);
/*
 * Gives pid (the sandbox's init, before it starts the job) the job's OOM score and
 * RLIMIT_NOFILE, which the job inherits, and returns in ret_dir_fds the directories of the v1
 * cgroups (*ret_ndirs of them, in controller order) for init to move itself into: a process
 * that moves itself as one thread (0 written to `tasks`) spares the move the kernel's global
 * cgroup_threadgroup_rwsem, whose write lock waits for an RCU grace period and holds up every
 * fork and exit on the host meanwhile. They are cl's own, open until cglimit_destroy: the
 * caller sends them and does not close them.
 */
int cglimit_join(struct cglimit *cl, const struct job_limits *limits, pid_t pid,
		 int ret_dir_fds[CGLIMIT_NCTRLS], int *ret_ndirs, char *errbuf, size_t errlen);
/* The path of the nth directory cglimit_join returned, for messages; NULL past the last. */
const char *cglimit_v1_joined(const struct cglimit *cl, int nth);
/* Opens the job's /tmp through init's root, once its mounts are made. */
int cglimit_watch_tmp(struct cglimit *cl, pid_t pid);
/* Reads the counters; returns the CGLIMIT_HIT_* reached since the last call. */
unsigned int cglimit_check(struct cglimit *cl);
/* Removes the v1 cgroups (their processes are gone with the v2 cgroup's). 0 or -errno. */
int cglimit_destroy(struct cglimit *cl);
/*
 * For gc: kills what is left in the v1 mirrors of a dead sandbox's cgroup v2 path and removes
 * them. 0 when none is left (or there are none), else -errno.
 */
int cglimit_remove_mirrors(const char *v2_path, int timeout_ms);
/* The v1 mirror of a v2 path for one controller; -ENOENT when it has no v1 hierarchy. */
int cglimit_v1_mirror(enum cglimit_ctrl ctrl, const char *v2_path, char *ret, size_t len);
/*
 * In the launcher's private mount namespace (cgroup_mount_private), mounts again below root
 * each cgroup v1 hierarchy that holds a controller of the limits, with the controller list
 * the kernel gives in /proc/self/cgroup: `ip netns exec` hides them with /sys. Returns how
 * many it mounted, or -errno.
 */
int cglimit_mount_private(const char *root);
/* Whether a cgroup v1 hierarchy holds a controller of the limits (/proc/self/cgroup). */
bool cglimit_host_is_hybrid(void);

#endif /* LAUNCH_CGLIMIT_H */
