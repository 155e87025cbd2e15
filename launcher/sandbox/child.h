/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting the job: an init in fresh PID, mount and cgroup namespaces, then the job itself. */
#ifndef LAUNCH_CHILD_H
#define LAUNCH_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

#include "childproto.h"
#include "mounthide.h"
#include "lib/mountinfo.h"

struct child {
	pid_t pid;	/* the sandbox's init, in the launcher's PID namespace */
	int pidfd;	/* of init */
	int status_fd;	/* the launcher's end of the status socket (SOCK_SEQPACKET) */
	int seccomp_fd; /* the job's seccomp listener, once received */
	int life_fd;	/* write end of the life pipe: init dies when it closes */
	int exec_fd;	/* read end of the exec pipe: EOF at the job's exec, or why it failed */
};

/* The sandbox's init, a binary of its own installed beside launch. */
#define CHILD_INIT_NAME "launch-init"

/* Nothing open yet: what child_close may be given before child_spawn ran, or after it failed. */
#define CHILD_INIT                                                                        \
	{                                                                                 \
		.pid = -1, .pidfd = -1, .status_fd = -1, .seccomp_fd = -1, .life_fd = -1, \
		.exec_fd = -1                                                             \
	}

/*
 * Opens launch-init (CHILD_INIT_NAME, beside the launcher's binary) for child_spawn: the fd,
 * or -errno; -EPERM when anyone but root owns it or its group or others may write it (it runs
 * with every privilege the launcher has), -EACCES when it is no regular file.
 */
int child_init_open(void);
/*
 * Starts the sandbox's init, launch-init (init_fd, from child_init_open), inside the cgroup
 * (clone3 CLONE_INTO_CGROUP, so no code runs outside it) in new PID and mount namespaces,
 * before the job's configuration is known: of config, only cgroup_fd and the mounts
 * child_watch_mounts found are read. Init is exec'd from a child that shares the launcher's
 * memory until then (CLONE_VM | CLONE_VFORK): no page of the launcher's is copied, now or
 * later. It hides the cgroup and BPF file systems from the job meanwhile, then waits for
 * child_configure; it makes the rest of the job's view and forks it; the job drops its
 * privileges, installs its filters and waits for child_start to exec. Init then passes on
 * signals. The caller must have blocked the signals it forwards. -errno on failure, with
 * *ret_exec_error the exec's errno when that is what failed, -1 when making the new mount
 * namespace private failed (before the exec, and before anything in it was detached), and 0
 * otherwise.
 */
int child_spawn(const struct child_config *config, int init_fd, struct child *ret_child,
		int *ret_exec_error);
/*
 * Hands init the job's whole configuration (argv, environment, user, what it may write), in a
 * sealed memfd (child_config_write). 0 or -errno; a dead init has said why on the socket.
 */
int child_configure(struct child *child, const struct child_config *config);
/* Where launch-init is: beside the launcher's own binary. 0 or -errno. */
int child_init_path(char *buf, size_t len);
/*
 * The launcher's half of the job's Landlock ruleset (config->landlock_abi > 0), made while
 * init mounts: the rules whose paths name the same inode in init's mount namespace as in the
 * launcher's (the working directory, the devices). Init adds the others in its own view
 * before the job restricts itself. Returns the ruleset's descriptor, or a negative errno with
 * the path at fault in *ret_failed.
 */
int child_ruleset_new(const struct child_config *config, const char **ret_failed);
/*
 * Tells init that its OOM score and RLIMIT_NOFILE are set, and hands it the directories of the
 * cgroup v1 limits (ndirs, at most CHILD_JOIN_DIRS_MAX) and, when ruleset_fd >= 0, the job's
 * Landlock ruleset, and whether fs.suid_dumpable lets the job start in init's memory
 * (CHILD_JOINED_UNDUMPABLE, read here rather than by init on its way to the job): init moves itself
 * into each directory, and starts the job (which inherits them all) only once it is in every one.
 * When a move fails, init says so (CHILD_STAGE_LIMITS, status: the directory's index) and no job
 * runs; so does a ruleset missing where init's configuration asks for Landlock, or one init cannot
 * add its rules to (CHILD_STAGE_LANDLOCK).
 */
int child_joined(struct child *child, const int *dir_fds, int ndirs, int ruleset_fd);
/*
 * Tells the job to exec: call once the cgroup is confined. A job or init that failed already
 * has said why on the status socket, which child_read_msg reads next.
 */
int child_start(struct child *child);
/*
 * Waits for the job's exec, told by the job itself (its end of the exec pipe closes at exec)
 * rather than by init, which is one wake-up less before the job runs. ret_msg says
 * CHILD_MSG_EXEC_OK once the job's seccomp listener is in child->seccomp_fd, else why the
 * start failed (CHILD_MSG_FAILED, from init or the job). -EPIPE when init died without a
 * word, -EPROTO when the job exec'd without handing over its listener.
 */
int child_wait_exec(struct child *child, struct child_msg *ret_msg);
/*
 * Reads one message from init (or the job); -EPIPE when init died without one. A seccomp
 * listener that comes with it is kept in child->seccomp_fd.
 */
int child_read_msg(struct child *child, struct child_msg *ret_msg);
const char *child_stage_name(int stage);
/*
 * Reads the launcher's mountinfo for child_config's mounts_fd, mounts_known and
 * mounts_to_hide: call after the launcher's own mounts (a private cgroup2 mount), before
 * child_spawn, or again after them. On any failure mounts_known stays false, and init walks
 * its mountinfo as before. The same read feeds also (with also_data) every mount, when not
 * NULL: 0 when it saw the whole table, else -errno (also's data is then not whole).
 */
int child_watch_mounts(struct child_config *config,
		       int (*also)(const struct mount_entry *mount, void *userdata),
		       void *also_data);
/* Forgets what child_watch_mounts read: mounts_known false, its descriptor closed. */
void child_unwatch_mounts(struct child_config *config);
/* Resolves --user NAME or a numeric uid. */
int child_lookup_user(const char *name, struct child_config *config);
/*
 * The job's user without --user: the invoking user when launch runs under sudo (SUDO_UID and
 * SUDO_GID, when not 0), otherwise nobody. Never root.
 */
int child_default_user(struct child_config *config);
void child_close(struct child *child);

#endif /* LAUNCH_CHILD_H */
