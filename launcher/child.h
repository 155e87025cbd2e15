/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting the job: clone3 into the sandbox's cgroup, drop every privilege, exec. */
#ifndef LAUNCH_CHILD_H
#define LAUNCH_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct child_config {
	char *const *argv;
	int cgroup_fd;
	bool set_user; /* --user: switch to uid/gid and the user's groups */
	uid_t uid;
	gid_t gid;
	const char *user_name;
};

/* Why the child could not exec, reported through a close-on-exec pipe. */
enum child_stage {
	CHILD_STAGE_SIGNALS = 1,
	CHILD_STAGE_PDEATHSIG,
	CHILD_STAGE_SECUREBITS,
	CHILD_STAGE_USER,
	CHILD_STAGE_CAPS,
	CHILD_STAGE_NO_NEW_PRIVS,
	CHILD_STAGE_FDS,
	CHILD_STAGE_EXEC,
};

struct child_status {
	int stage; /* enum child_stage */
	int error; /* errno */
};

struct child {
	pid_t pid;
	int pidfd;
	int status_fd; /* read end: EOF means exec succeeded */
};

/*
 * Starts the job inside the cgroup: it runs no code of its own before it is a member, so
 * the programs attached to the cgroup see its very first socket. The caller must have
 * blocked the signals it forwards; the child restores an empty mask before exec.
 */
int child_spawn(const struct child_config *config, struct child *ret_child);
/*
 * Waits for the exec outcome. Returns 0 when the job runs, else fills ret_status with the
 * stage that failed.
 */
int child_wait_exec(struct child *child, struct child_status *ret_status);
const char *child_stage_name(int stage);
/* Resolves --user NAME or a numeric uid. */
int child_lookup_user(const char *name, struct child_config *config);

#endif /* LAUNCH_CHILD_H */
