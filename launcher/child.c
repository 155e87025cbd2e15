// SPDX-License-Identifier: LGPL-2.1-or-later
/* Starting the job: clone3 into the sandbox's cgroup, drop every privilege, exec. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <linux/securebits.h>

#include "child.h"
#include "util.h"

const char *child_stage_name(int stage)
{
	switch (stage) {
	case CHILD_STAGE_SIGNALS:
		return "cannot reset signals";
	case CHILD_STAGE_PDEATHSIG:
		return "cannot tie the job to the launcher's life";
	case CHILD_STAGE_SECUREBITS:
		return "cannot lock securebits";
	case CHILD_STAGE_USER:
		return "cannot switch user";
	case CHILD_STAGE_CAPS:
		return "cannot drop capabilities";
	case CHILD_STAGE_NO_NEW_PRIVS:
		return "cannot set no_new_privs";
	case CHILD_STAGE_FDS:
		return "cannot close inherited descriptors";
	case CHILD_STAGE_EXEC:
		return "cannot execute";
	default:
		return "cannot start the job";
	}
}

int child_lookup_user(const char *name, struct child_config *config)
{
	struct passwd *pw;
	char *end;

	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		unsigned long uid = strtoul(name, &end, 10);

		if (*name && !*end && uid < UINT32_MAX)
			pw = getpwuid((uid_t)uid);
		if (!pw)
			return errno ? -errno : -ESRCH;
	}
	config->set_user = true;
	config->uid = pw->pw_uid;
	config->gid = pw->pw_gid;
	config->user_name = name;
	return 0;
}

/* Drops every capability from every set; with SECBIT_NOROOT, exec as uid 0 gains none. */
static int child_drop_caps(void)
{
	cap_t empty;
	int last, r;

	for (last = 0; prctl(PR_CAPBSET_READ, last, 0, 0, 0) >= 0; last++)
		;
	for (int cap = 0; cap < last; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	empty = cap_init();
	if (!empty)
		return -errno;
	r = cap_set_proc(empty) < 0 ? -errno : 0;
	cap_free(empty);
	return r;
}

static _Noreturn void child_fail(int status_fd, int stage, int error)
{
	struct child_status status = { .stage = stage, .error = error };
	ssize_t n = write(status_fd, &status, sizeof(status));

	(void)n;
	/* As env(1): 127 when the command is not found, 126 when it cannot run. */
	_exit(stage == CHILD_STAGE_EXEC && error == ENOENT ? 127 : 126);
}

/* Runs in the child, which is already in the sandbox's cgroup. Never returns. */
static _Noreturn void child_run(const struct child_config *config, int status_fd, pid_t parent)
{
	sigset_t none;

	sigemptyset(&none);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(status_fd, CHILD_STAGE_SIGNALS, errno);

	/* If the launcher dies, the job dies too; the check closes the race with its death. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(status_fd, CHILD_STAGE_PDEATHSIG, errno);
	if (getppid() != parent)
		_exit(125);

	/* Root without capabilities must not regain them through exec or setuid-root files. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED |
					     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		child_fail(status_fd, CHILD_STAGE_SECUREBITS, errno);

	if (config->set_user) {
		if (initgroups(config->user_name, config->gid) < 0 &&
		    setgroups(1, &config->gid) < 0)
			child_fail(status_fd, CHILD_STAGE_USER, errno);
		if (setresgid(config->gid, config->gid, config->gid) < 0 ||
		    setresuid(config->uid, config->uid, config->uid) < 0)
			child_fail(status_fd, CHILD_STAGE_USER, errno);
	}
	if (child_drop_caps() < 0)
		child_fail(status_fd, CHILD_STAGE_CAPS, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(status_fd, CHILD_STAGE_NO_NEW_PRIVS, errno);

	/*
	 * Every descriptor above 2 (BPF maps, the audit log, the status pipe itself) is closed
	 * by exec; a failed exec can still report through the status pipe.
	 */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(status_fd, CHILD_STAGE_FDS, errno);

	execvp(config->argv[0], config->argv);
	child_fail(status_fd, CHILD_STAGE_EXEC, errno);
}

int child_spawn(const struct child_config *config, struct child *ret_child)
{
	int pipe_fds[2], pidfd = -1;
	pid_t parent = getpid();
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)config->cgroup_fd,
	};
	long pid;

	if (pipe2(pipe_fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int r = -errno;

		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return r;
	}
	if (pid == 0) {
		close(pipe_fds[0]);
		child_run(config, pipe_fds[1], parent);
	}
	close(pipe_fds[1]);
	ret_child->pid = (pid_t)pid;
	ret_child->pidfd = pidfd;
	ret_child->status_fd = pipe_fds[0];
	return 0;
}

int child_wait_exec(struct child *child, struct child_status *ret_status)
{
	ssize_t n;

	do
		n = read(child->status_fd, ret_status, sizeof(*ret_status));
	while (n < 0 && errno == EINTR);
	close(child->status_fd);
	child->status_fd = -1;
	if (n == 0)
		return 0;
	if (n != sizeof(*ret_status)) {
		ret_status->stage = 0;
		ret_status->error = n < 0 ? errno : EIO;
	}
	return -ret_status->error;
}
