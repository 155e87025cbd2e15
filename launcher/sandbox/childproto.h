/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the launcher and the sandbox's init agree on: the job's configuration, the stages a
 * start can fail at, and the messages of the status socket. Types only, shared by child.c
 * (the launcher's side), childmsg.c (the wire) and init.c.
 */
#ifndef LAUNCH_CHILDPROTO_H
#define LAUNCH_CHILDPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mounthide.h"

#define CHILD_MAX_GROUPS 256
/* nobody's uid and gid where the user database has no "nobody" */
#define CHILD_NOBODY_ID 65534
/* Paths the job may write: its working directory, /tmp, /dev/shm, 64 per policy of 64. */
#define CHILD_MAX_FS_WRITE (3 + 64 * 64)

struct child_config {
	char *const *argv;
	char *const *envp; /* the job's environment; NULL: the launcher's */
	int cgroup_fd;
	bool set_user; /* --user: switch to uid/gid and the user's groups */
	uid_t uid;
	gid_t gid;
	const char *user_name;
	const char *audit_path; /* hidden from the job; NULL for standard error */
	/*
	 * What the job may write, NULL-terminated; NULL: anything its uid may ("read_only":
	 * false). Every other mount is read-only in its view, and with landlock_abi > 0 (the
	 * kernel's Landlock ABI) Landlock refuses every other write too.
	 */
	const char *const *fs_write;
	bool fs_write_cwd; /* fs_write[0] is the working directory, opened as "." */
	int landlock_abi;
	unsigned int seccomp_flags;	   /* seccomp_install's: SECCOMP_REFUSE_UNIX */
	unsigned long long tmp_size_bytes; /* --tmp-size: the private /tmp's; 0: half the RAM */
	/*
	 * The launcher's /proc/self/mountinfo, opened before it was read (child_watch_mounts),
	 * and whether it showed every cgroup and BPF mount either in the tree of the one mount
	 * on /sys/fs/cgroup, which init detaches whole, or in mounts_to_hide. Then init hides
	 * those without walking its own mountinfo, unless a poll of mounts_fd says the mounts
	 * changed since. mounts_known false (as zeroed): init walks.
	 */
	int mounts_fd;
	bool mounts_known;
	const struct mounthide_mount *mounts_to_hide;
	size_t nmounts_to_hide;
	/* Looked up by the launcher, which NSS's sockets may reach: the sandbox refuses them. */
	gid_t groups[CHILD_MAX_GROUPS];
	int ngroups;
};

/* Where the start failed, reported by the sandbox's init. */
enum child_stage {
	CHILD_STAGE_SIGNALS = 1,
	CHILD_STAGE_PDEATHSIG,
	CHILD_STAGE_MOUNTS,
	CHILD_STAGE_CGROUPNS,
	CHILD_STAGE_FORK,
	CHILD_STAGE_SECUREBITS,
	CHILD_STAGE_USER,
	CHILD_STAGE_CAPS,
	CHILD_STAGE_NO_NEW_PRIVS,
	CHILD_STAGE_FDS,
	CHILD_STAGE_SECCOMP,
	CHILD_STAGE_EXEC,
	CHILD_STAGE_LANDLOCK,
	CHILD_STAGE_GO,	    /* the launcher went away before the cgroup was confined */
	CHILD_STAGE_LIMITS, /* init could not move itself into a cgroup v1 (status: which) */
	CHILD_STAGE_CONFIG, /* init could not read the job's configuration */
};

/* Messages between the launcher and the sandbox's init, on the status socket. */
enum child_msg_type {
	CHILD_MSG_EXEC_OK = 1, /* the job runs */
	CHILD_MSG_FAILED,      /* stage and error say why it does not */
	CHILD_MSG_EXITED,      /* the job ended with wait status `status` */
	CHILD_MSG_SECCOMP,     /* from the job itself: its seccomp listener, as SCM_RIGHTS */
	CHILD_MSG_GO,	       /* from the launcher: the cgroup is confined, the job may exec */
	/*
	 * From the launcher: init's limits are set; init moves itself into the v1 cgroups
	 * whose directories come with it (status: how many), then starts the job.
	 */
	CHILD_MSG_JOINED,
	/*
	 * From the launcher, with a sealed memfd: the job's configuration (child_configure);
	 * init makes the mounts that depend on it.
	 */
	CHILD_MSG_CONFIG,
};

/* Cgroup v1 directories a CHILD_MSG_JOINED carries at most. */
#define CHILD_JOIN_DIRS_MAX 4
/* Descriptors it carries at most: those directories, then the job's Landlock ruleset. */
#define CHILD_JOIN_FDS_MAX (CHILD_JOIN_DIRS_MAX + 1)

/* What else a CHILD_MSG_JOINED brings (its flags). */
enum child_joined_flags {
	/* The last descriptor is the job's Landlock ruleset (child_ruleset_new). */
	CHILD_JOINED_RULESET = 1 << 0,
	/*
	 * fs.suid_dumpable is 0 or 2, read by the launcher: a change of user leaves the job's
	 * memory undumpable, so the job may start in init's (child_start_job). Without it,
	 * init forks the job.
	 */
	CHILD_JOINED_UNDUMPABLE = 1 << 1,
};

/* What else a CHILD_MSG_EXITED says (its flags). */
enum child_exited_flags {
	/*
	 * Init has no other child, alive or dead: no process of the sandbox is left but init,
	 * which exits next. The launcher may write the exit line meanwhile.
	 */
	CHILD_EXITED_ALONE = 1 << 0,
};

struct child_msg {
	int type;
	int stage;
	int error;
	int status;
	int flags; /* CHILD_MSG_JOINED: enum child_joined_flags */
};

#endif /* LAUNCH_CHILDPROTO_H */
