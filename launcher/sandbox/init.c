// SPDX-License-Identifier: LGPL-2.1-or-later
/* The sandbox's init (launch-init): PID 1 of the job's namespaces, exec'd by the launcher. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <linux/securebits.h>

#include "audit/audit.h"
#include "child.h"
#include "gc.h"
#include "landlock.h"
#include "lib/mountinfo.h"
#include "mounthide.h"
#include "seccomp.h"
#include "lib/util.h"
#include "childmsg.h"
#include "init_internal.h"

static const int INIT_FORWARDED[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* On the status socket or the exec pipe: write(), since sendmsg() fails on a pipe. */
static void child_send(int fd, const struct child_msg *msg)
{
	ssize_t n;

	do
		n = write(fd, msg, sizeof(*msg));
	while (n < 0 && errno == EINTR);
}

static _Noreturn void child_fail_at(int fd, int stage, int error, int status)
{
	struct child_msg msg = {
		.type = CHILD_MSG_FAILED, .stage = stage, .error = error, .status = status
	};

	child_send(fd, &msg);
	/* As env(1): 127 when the command is not found, 126 when it cannot run. */
	_exit(stage == CHILD_STAGE_EXEC && error == ENOENT ? 127 : 126);
}

static _Noreturn void child_fail(int fd, int stage, int error)
{
	child_fail_at(fd, stage, error, 0);
}

/*
 * Empties the bounding set, for good and for every process forked after: init does it while
 * it waits for the launcher, so the job starts without the forty-odd calls it takes.
 */
static int child_drop_bounding_set(void)
{
	/*
	 * Dropped until the kernel knows no such capability (EINVAL): one call each, where
	 * reading first how many there are doubled the calls.
	 */
	for (int cap = 0;; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return errno == EINVAL && cap > 0 ? 0 : -errno;
}

/*
 * Sets the permitted and effective sets to keep (a mask of capabilities below 32), the
 * inheritable one empty, and clears the ambient set. capset(2) itself, not libcap: the job
 * runs in init's memory until its exec, and one killed inside libcap's malloc there would
 * leave init a broken heap.
 */
static int child_capset(uint32_t keep)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {
		{ .effective = keep, .permitted = keep },
	};

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	return syscall(SYS_capset, &header, data) < 0 ? -errno : 0;
}

/*
 * Drops every capability from every set (bounding, ambient, effective, permitted,
 * inheritable); with SECBIT_NOROOT, exec as uid 0 gains none.
 */
static int child_drop_caps(void)
{
	int r;

	/* Emptied by init before the fork already, unless something went wrong. */
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0) {
		r = child_drop_bounding_set();
		if (r < 0)
			return r;
	}
	return child_capset(0);
}

/* Drops every capability but CAP_KILL: init's only privilege once the job runs. */
static int child_keep_kill_cap(void)
{
	return child_capset(1U << CAP_KILL);
}

/* A file execve refused as no executable format it knows: run by /bin/sh, as a script. */
static void child_exec_script(const char *file, char *const argv[], char *const envp[])
{
	size_t argc = 0;
	char **sh_argv;

	while (argv[argc])
		argc++;
	sh_argv = calloc(argc + 2, sizeof(*sh_argv));
	if (!sh_argv)
		return;
	sh_argv[0] = (char *)"/bin/sh";
	sh_argv[1] = (char *)file;
	for (size_t i = 1; i < argc; i++)
		sh_argv[i + 1] = argv[i];
	execve("/bin/sh", sh_argv, envp);
	free(sh_argv);
	errno = ENOEXEC;
}

/*
 * execvp as glibc's, whichever libc init is linked with (musl's differs): a name without a
 * slash is looked for in the job's PATH ("/bin:/usr/bin" without one; an empty entry is the
 * current folder), a folder that refuses (EACCES) does not end the search but is the answer
 * if nothing is found, and a file of no known format runs as a /bin/sh script. Returns only
 * on failure, with errno set.
 */
static void child_execvp(const char *file, char *const argv[], char *const envp[])
{
	const char *path = "/bin:/usr/bin";
	size_t flen = strlen(file);
	bool eacces = false;

	if (!flen) {
		errno = ENOENT;
		return;
	}
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		if (errno == ENOEXEC)
			child_exec_script(file, argv, envp);
		return;
	}
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0) {
			path = *e + 5;
			break;
		}
	for (const char *dir = path;; dir++) {
		const char *end = strchrnul(dir, ':');
		size_t dlen = (size_t)(end - dir);
		char buf[PATH_MAX];

		if (dlen + 1 + flen < sizeof(buf)) {
			/* An empty entry: the current folder, the file's name alone. */
			const char *candidate = dlen ? buf : buf + 1;

			memcpy(buf, dir, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, file, flen + 1);
			execve(candidate, argv, envp);
			if (errno == ENOEXEC)
				child_exec_script(candidate, argv, envp);
			switch (errno) {
			case EACCES:
				eacces = true;
				break;
			case ENOENT:
			case ENOTDIR:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
			case ENAMETOOLONG:
				break;
			default:
				return;
			}
		}
		dir = end;
		if (!*dir)
			break;
	}
	errno = eacces ? EACCES : ENOENT;
}

/*
 * The signals this process ignores (SigIgn in /proc/self/status, init's own proc), as bit
 * sig - 1 each; every one when that cannot be read. Init sets no handler, and exec resets
 * handlers: what the job could inherit other than the default is a caller's SIG_IGN (the
 * launcher's own SIGPIPE among them), which survives every exec. One read instead of a
 * sigaction per signal (64 system calls).
 */
static uint64_t ignored_signals(void)
{
	char buf[4096];
	const char *line;
	ssize_t n = -1;
	int fd;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	line = strstr(buf, "\nSigIgn:\t");
	if (!line)
		return UINT64_MAX;
	return strtoull(line + strlen("\nSigIgn:\t"), NULL, 16);
}

/*
 * The kernel's own call: the C library refuses the signals it keeps for itself (32 and 33
 * in glibc, 32 to 34 in musl), which a caller can still have set to SIG_IGN and the job
 * would inherit. SIG_DFL needs no restorer; the mask is the kernel's 64 bits.
 */
static void signal_default(int sig)
{
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		uint64_t mask;
	} action = { .handler = SIG_DFL };

	syscall(SYS_rt_sigaction, sig, &action, NULL, sizeof(action.mask));
}

/*
 * Runs in the job's process, forked by init. Never returns. Everything but the exec is done
 * before the launcher says the cgroup is confined: only the exec waits for it, and no code of
 * the job's runs before.
 */
static _Noreturn void child_exec_job(const struct child_config *config, int exec_fd, int ruleset_fd)
{
	struct child_msg seccomp_msg = { .type = CHILD_MSG_SECCOMP }, go;
	uint64_t ignored;
	sigset_t none;
	int listener;
	ssize_t n;

	sigemptyset(&none);
	ignored = ignored_signals();
	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (ignored & (1ULL << (sig - 1))))
			signal_default(sig);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(exec_fd, CHILD_STAGE_SIGNALS, errno);
	/* Init is the parent: when it goes, so does the job, without waiting for the kernel. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(exec_fd, CHILD_STAGE_PDEATHSIG, errno);

	/* Root without capabilities must not regain them through exec or setuid-root files. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED |
					     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		child_fail(exec_fd, CHILD_STAGE_SECUREBITS, errno);
	/*
	 * The system calls themselves: the job is one process of one thread, which the C
	 * library's wrappers (musl's __synccall: four signal-mask changes each) cannot know,
	 * sharing init's memory as it does until its exec.
	 */
	if (config->set_user) {
		if (syscall(SYS_setgroups, (size_t)config->ngroups, config->groups) < 0)
			child_fail(exec_fd, CHILD_STAGE_USER, errno);
		if (syscall(SYS_setresgid, config->gid, config->gid, config->gid) < 0 ||
		    syscall(SYS_setresuid, config->uid, config->uid, config->uid) < 0)
			child_fail(exec_fd, CHILD_STAGE_USER, errno);
		/*
		 * A change of user sets the memory's dumpable flag to fs.suid_dumpable, and this
		 * is init's memory until the exec (child_start_job): not dumpable again.
		 */
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
			child_fail(exec_fd, CHILD_STAGE_USER, errno);
	}
	if (child_drop_caps() < 0)
		child_fail(exec_fd, CHILD_STAGE_CAPS, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(exec_fd, CHILD_STAGE_NO_NEW_PRIVS, errno);
	/* Before seccomp, which would not refuse it; inherited by all the job starts. */
	if (ruleset_fd >= 0) {
		int r = landlock_restrict(ruleset_fd);

		if (r < 0)
			child_fail(exec_fd, CHILD_STAGE_LANDLOCK, -r);
		close(ruleset_fd);
	}
	/* Last before exec: the filter would refuse nothing above, but it stays for good. */
	listener = seccomp_install(config->seccomp_flags);
	if (listener < 0)
		child_fail(exec_fd, CHILD_STAGE_SECCOMP, -listener);
	if (child_send_fds(INIT_STATUS_FD, &seccomp_msg, &listener, 1) < 0)
		child_fail(exec_fd, CHILD_STAGE_SECCOMP, errno);
	close(listener);
	/* Everything above 2 goes at exec; a failed exec still reports through exec_fd. */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(exec_fd, CHILD_STAGE_FDS, errno);
	/* The status socket's one message for this side; nothing else reads it. */
	do
		n = read(INIT_STATUS_FD, &go, sizeof(go));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(go) || go.type != CHILD_MSG_GO)
		child_fail(exec_fd, CHILD_STAGE_GO, n < 0 ? errno : EPIPE);
	child_execvp(config->argv[0], config->argv, config->envp);
	child_fail(exec_fd, CHILD_STAGE_EXEC, errno);
}

struct child_job_args {
	const struct child_config *config;
	int ruleset_fd;
};

/* The job's entry on its own stack (clone's fn). */
static int child_job_main(void *data)
{
	const struct child_job_args *args = data;

	child_exec_job(args->config, INIT_EXEC_FD, args->ruleset_fd);
}

/*
 * The job's stack until its exec: launch's own code and libc's (child_execvp of a script
 * puts its whole argv on it), as large as a main thread's and reserved only as touched; a
 * guard page below.
 */
#define CHILD_JOB_STACK (8 * 1024 * 1024)

/*
 * Starts the job in init's memory (CLONE_VM) with init suspended until the job execs or dies
 * (CLONE_VFORK), as posix_spawn does: no page tables to copy, no page copied on write by
 * either, and the exec has no copy of init's memory to tear down. The fork this replaces cost
 * the job's start 2 to 4 ms here. Init is suspended, so the two never run in its memory at
 * once: the job's errno, and any allocation of libc's, are as a function call's of init's.
 * Init is not dumpable, so no process of the job's uid can read or write that memory through
 * the job meanwhile; where a change of user could make it so for a moment (undumpable false:
 * the launcher did not say fs.suid_dumpable is 0 or 2), the job is forked as before. Returns the
 * job's pid or -errno; when it returns with CLONE_VFORK, the job has exec'd or is dead.
 */
static pid_t child_start_job(const struct child_config *config, int ruleset_fd, bool undumpable)
{
	struct child_job_args args = { .config = config, .ruleset_fd = ruleset_fd };
	size_t guard = (size_t)sysconf(_SC_PAGESIZE);
	char *stack;
	pid_t job;
	int r;

	if (config->set_user && !undumpable) {
		job = fork();
		if (job == 0)
			child_exec_job(config, INIT_EXEC_FD, ruleset_fd);
		return job < 0 ? -errno : job;
	}
	stack = mmap(NULL, guard + CHILD_JOB_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	if (mprotect(stack, guard, PROT_NONE) < 0) {
		r = -errno;
		munmap(stack, guard + CHILD_JOB_STACK);
		return r;
	}
	job = clone(child_job_main, stack + guard + CHILD_JOB_STACK,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
	r = job < 0 ? -errno : job;
	munmap(stack, guard + CHILD_JOB_STACK);
	return r;
}

static void child_init_signals(sigset_t *ret_set)
{
	sigemptyset(ret_set);
	sigaddset(ret_set, SIGCHLD);
	for (size_t i = 0; i < ARRAY_SIZE(INIT_FORWARDED); i++)
		sigaddset(ret_set, INIT_FORWARDED[i]);
}

/* Waits for the job, passes signals on, reaps orphans; reports the job's end. */
static _Noreturn void child_init_loop(pid_t job)
{
	struct child_msg msg = { .type = CHILD_MSG_EXITED };
	sigset_t set;

	child_init_signals(&set);
	for (;;) {
		siginfo_t info;
		int status;
		pid_t pid;

		if (sigwaitinfo(&set, &info) < 0)
			continue;
		if (info.si_signo != SIGCHLD) {
			/* A terminal's signal reached the job directly; never twice. */
			if (info.si_code != SI_KERNEL)
				kill(job, info.si_signo);
			continue;
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (pid == job) {
				msg.status = status;
				/*
				 * Every process of the namespace is init's child once its
				 * parent is gone: none left (ECHILD), nothing can make a
				 * refusal any more.
				 */
				if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
					msg.flags |= CHILD_EXITED_ALONE;
				child_send(INIT_STATUS_FD, &msg);
				/* Init's exit makes the kernel kill what is left in the namespace.
				 */
				_exit(0);
			}
		}
	}
}

/*
 * Waits for the launcher's word that init's limits are set (CHILD_MSG_JOINED), then moves
 * itself into each cgroup v1 directory that came with it, and returns the job's Landlock
 * ruleset that came last (-1 when init's configuration asks for none). Init writes 0 to `tasks`: a
 * task moving itself as one thread is the one move the kernel makes without taking the global
 * cgroup_threadgroup_rwsem for writing (cgroup_procs_write_start), which waits for an RCU grace
 * period (1.2 ms at a quiet start here, up to 31 ms under load) and stalls every fork and exit
 * on the host meanwhile. Init has one thread, so the thread is the whole process. The
 * directories are closed before the job exists: one in its hands would let it move any task
 * of the host into a cgroup. Never returns on failure: no job runs outside its limits, nor
 * without the ruleset its configuration asks for.
 */
static int child_init_join(const struct child_config *config, int *ret_flags)
{
	struct child_msg msg;
	int fds[CHILD_JOIN_FDS_MAX], nfds, error = 0, failed = -1, ruleset_fd = -1;
	bool has_ruleset, truncated = false;
	ssize_t n =
		child_recv_fds(INIT_STATUS_FD, &msg, fds, CHILD_JOIN_FDS_MAX, &nfds, &truncated);

	if (n != sizeof(msg) || msg.type != CHILD_MSG_JOINED)
		_exit(125);
	has_ruleset = msg.flags & CHILD_JOINED_RULESET;
	/* Fewer than the launcher sent (a descriptor limit, a cut-off message): not in them all. */
	if (truncated || msg.status < 0 || msg.status > CHILD_JOIN_DIRS_MAX ||
	    nfds != msg.status + has_ruleset)
		child_fail_at(INIT_STATUS_FD, CHILD_STAGE_LIMITS, EPROTO, nfds);
	/* Asked for by the configuration and not there (or the other way round): no job. */
	if (has_ruleset != (config->landlock_abi > 0))
		child_fail(INIT_STATUS_FD, CHILD_STAGE_LANDLOCK, EPROTO);
	if (has_ruleset)
		ruleset_fd = fds[--nfds];
	*ret_flags = msg.flags;
	for (int i = 0; i < nfds; i++) {
		int tasks = failed < 0 ? openat(fds[i], "tasks", O_WRONLY | O_CLOEXEC) : -1;

		if (failed < 0 && (tasks < 0 || write(tasks, "0", 1) != 1)) {
			error = errno;
			failed = i;
		}
		if (tasks >= 0)
			close(tasks);
		close(fds[i]);
	}
	if (failed >= 0)
		child_fail_at(INIT_STATUS_FD, CHILD_STAGE_LIMITS, error, failed);
	return ruleset_fd;
}

/*
 * Init's half of the job's Landlock ruleset: the rules on paths that may name another inode in
 * init's mount namespace than in the launcher's, which made the rest (child_ruleset_new). A
 * rule binds to the inode its path names when it is added: init's /tmp and /dev/shm are
 * tmpfs mounts of its own, and a policy's path may lead, through a symlink or below a path
 * init mounts over (/tmp, /proc, launch's state, the cgroup file systems), somewhere else in
 * init's view than in the launcher's, so each is opened here, in the job's view, as root.
 * Never returns on failure: the ruleset would be wider or narrower than asked.
 */
static void child_init_ruleset(const struct child_config *config, int ruleset_fd)
{
	const char *failed;
	int r;

	r = landlock_allow_paths(ruleset_fd, config->landlock_abi,
				 config->fs_write + (config->fs_write_cwd ? 1 : 0), &failed);
	if (r < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_LANDLOCK, -r);
}

/*
 * Waits for the launcher's word that the job's configuration is whole, with it (a sealed
 * memfd, child_config_write), and reads it. Any other word, or none (the launcher failed or
 * died meanwhile): no job, and init goes.
 */
static const struct child_config *child_init_wait_config(void)
{
	static struct child_config config;
	struct child_msg msg;
	bool truncated = false;
	int fd = -1, nfds, r;
	ssize_t n = child_recv_fds(INIT_STATUS_FD, &msg, &fd, 1, &nfds, &truncated);

	if (n != sizeof(msg) || msg.type != CHILD_MSG_CONFIG)
		_exit(125);
	if (nfds != 1 || truncated)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_CONFIG, EPROTO);
	r = child_config_read(fd, &config);
	if (r < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_CONFIG, -r);
	close(fd);
	return &config;
}

/* The sandbox's init: PID 1 of the job's namespace, inside the cgroup. Never returns. */
static _Noreturn void child_init(const struct child_config *early, int status_fd, int life_fd,
				 int exec_fd)
{
	const struct child_config *config;
	struct pollfd life = { .fd = INIT_LIFE_FD, .events = POLLIN };
	int r, ruleset_fd = -1, joined_flags = 0, mounts_fd;
	sigset_t set;
	pid_t job;

	/*
	 * First of all, shed every descriptor but its own four that came through the exec (the
	 * caller's, which launch inherited without close-on-exec). The three move out of the way
	 * first, so that no dup2 closes another.
	 */
	status_fd = fcntl(status_fd, F_DUPFD, 10);
	life_fd = fcntl(life_fd, F_DUPFD, 10);
	exec_fd = fcntl(exec_fd, F_DUPFD, 10);
	/* Without it, init walks its mountinfo as it would have anyway. */
	mounts_fd = early->mounts_known ? fcntl(early->mounts_fd, F_DUPFD, 10) : -1;
	if (status_fd < 0 || life_fd < 0 || exec_fd < 0 || dup2(status_fd, INIT_STATUS_FD) < 0 ||
	    dup2(life_fd, INIT_LIFE_FD) < 0 || dup2(exec_fd, INIT_EXEC_FD) < 0)
		_exit(125);
	if (mounts_fd >= 0 && dup2(mounts_fd, INIT_MOUNTS_FD) < 0)
		mounts_fd = -1;
	if (syscall(SYS_close_range, mounts_fd >= 0 ? INIT_MOUNTS_FD + 1 : INIT_MOUNTS_FD, ~0U, 0) <
	    0)
		_exit(125);
	/* Blocked before the job exists, so that no SIGCHLD escapes sigwaitinfo. */
	child_init_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_SIGNALS, errno);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_PDEATHSIG, errno);
	/* If the launcher died before the line above, the life pipe has no writer left. */
	if (poll(&life, 1, 0) != 0)
		_exit(125);
	/*
	 * Neither the job nor anyone else of its uid may read or trace init's memory, which the
	 * job runs in until its exec.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_USER, errno);

	r = child_setup_mounts_early(early, mounts_fd >= 0);
	if (r < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_MOUNTS, -r);
	config = child_init_wait_config();
	/* The job's: the exec and its search of PATH read it (child_execvp). */
	environ = (char **)config->envp;
	r = child_setup_mounts_late(config);
	if (r < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_MOUNTS, -r);

	/* Nothing privileged is left to do that the bounding set would stop. */
	if (child_drop_bounding_set() < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_CAPS, errno);
	/*
	 * The job inherits init's v1 cgroups, OOM score and RLIMIT_NOFILE: a job forked before
	 * they are set would run outside its limits.
	 */
	ruleset_fd = child_init_join(config, &joined_flags);
	if (ruleset_fd >= 0)
		child_init_ruleset(config, ruleset_fd);
	/*
	 * Now a member of every cgroup of the sandbox (v2 and v1), which become the roots of
	 * the job's cgroup namespace: it sees "/" for each.
	 */
	if (unshare(CLONE_NEWCGROUP) < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_CGROUPNS, errno);

	/*
	 * Started, its privileges dropped and its filters installed, while the launcher
	 * confines the cgroup: the job waits for that only to exec.
	 */
	job = child_start_job(config, ruleset_fd, joined_flags & CHILD_JOINED_UNDUMPABLE);
	if (job < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_FORK, -job);
	/* The job's alone: its exec (or death) is the pipe's end. */
	close(INIT_EXEC_FD);
	if (ruleset_fd >= 0)
		close(ruleset_fd);

	/*
	 * Init needs no privilege from here on but to pass signals on to a job that runs as
	 * another uid (nobody, by default): CAP_KILL, and nothing else. The job has just
	 * exec'd; nothing init did since depends on it (its signals and exit wait, blocked,
	 * for the loop below).
	 */
	r = child_keep_kill_cap();
	if (r < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_CAPS, -r);
	/*
	 * Init dying takes the job with it. The job's exec released init, which drops at once:
	 * the job's own code runs beside a privileged init only for that moment, in which init
	 * (not dumpable, another uid) reads nothing from it.
	 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(INIT_STATUS_FD, CHILD_STAGE_NO_NEW_PRIVS, errno);
	child_init_loop(job);
}

/* A descriptor number from argv; -1 for "-1", and for anything else that is not one. */
static int init_parse_fd(const char *text)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < -1 || value > INT32_MAX)
		return -2;
	return (int)value;
}

/*
 * launch-init PROTOCOL STATUS_FD LIFE_FD EXEC_FD MOUNTS_FD [HOW PATH]...: exec'd by the
 * launcher (child_spawn) into the sandbox's cgroup and new PID and mount namespaces, never by
 * hand.
 */
int main(int argc, char **argv)
{
	static struct child_config early;
	struct mounthide_mount *hide = NULL;
	int fds[4];

	if (argc < 6 || (argc - 6) % 2 != 0 || getpid() != 1) {
		fprintf(stderr, "%s: the sandbox's init, started by launch; not a command\n",
			CHILD_INIT_NAME);
		return 125;
	}
	/* A launch of another build: nothing of what it says can be trusted to mean the same. */
	if (strcmp(argv[1], child_protocol()) != 0)
		_exit(125);
	/* A caller's SIG_IGN survives the execs: init must see its children end. */
	signal(SIGCHLD, SIG_DFL);
	for (int i = 0; i < 4; i++) {
		fds[i] = init_parse_fd(argv[2 + i]);
		if (fds[i] < -1 || (i < 3 && fds[i] < 0))
			_exit(125);
	}
	if (argc > 6) {
		hide = calloc((size_t)(argc - 6) / 2, sizeof(*hide));
		if (!hide)
			_exit(125);
		for (int i = 6; i < argc; i += 2) {
			char *end;

			hide[early.nmounts_to_hide].how = strtol(argv[i], &end, 10);
			if (*end)
				_exit(125);
			hide[early.nmounts_to_hide++].mount_point = argv[i + 1];
		}
	}
	early.mounts_to_hide = hide;
	early.mounts_fd = fds[3];
	early.mounts_known = fds[3] >= 0;
	child_init(&early, fds[0], fds[1], fds[2]);
}
