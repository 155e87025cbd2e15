// SPDX-License-Identifier: LGPL-2.1-or-later
/* Starting the job: an init in fresh PID, mount and cgroup namespaces, then the job itself. */
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
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <linux/securebits.h>

#include "audit/audit.h"
#include "child.h"
#include "childmsg.h"
#include "gc.h"
#include "landlock.h"
#include "lib/mountinfo.h"
#include "mounthide.h"
#include "seccomp.h"
#include "lib/util.h"

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
	config->ngroups = CHILD_MAX_GROUPS;
	if (getgrouplist(pw->pw_name, pw->pw_gid, config->groups, &config->ngroups) < 0)
		return -E2BIG;
	return 0;
}

/* A uid or gid field: decimal, below 2^32-1. */
static int child_parse_field_id(const char *text, unsigned int *ret_id)
{
	unsigned long id;
	char *end;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	id = strtoul(text, &end, 10);
	if (errno || *end || id >= UINT32_MAX)
		return -EINVAL;
	*ret_id = (unsigned int)id;
	return 0;
}

/* A uid or gid from the environment: as a field, but 0 is refused too. */
static int child_parse_id(const char *text, unsigned int *ret_id)
{
	unsigned int id;
	int r = child_parse_field_id(text, &id);

	if (r < 0)
		return r;
	if (id == 0)
		return -EINVAL;
	*ret_id = id;
	return 0;
}

/*
 * Splits a line of /etc/passwd or /etc/group at its colons, in place: the number of fields
 * (at most max), the last one without its newline.
 */
static int child_split_fields(char *line, char **fields, int max)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	while (n < max) {
		fields[n++] = line;
		line = strchr(line, ':');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

/*
 * A user from /etc/passwd and its groups from /etc/group, for the default user only: NSS's
 * group look-up asks every source (here it loads libnss_systemd and asks systemd-userdbd
 * over a socket), 3.4 ms of CPU at every start, for a user no directory service defines.
 * The lines are split here rather than by fgetpwent and fgetgrent, which ask the kernel
 * for the file's position at every entry (130 lseek calls for the two files here, 0.5 ms).
 * A malformed line is passed over, as fgetpwent does. -ENOENT when the files do not have
 * the user: NSS is asked then.
 */
static int child_files_user(const char *name, struct child_config *config)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool found = false;
	int n = 0, r = 0;
	FILE *f;

	f = fopen("/etc/passwd", "re");
	if (!f)
		return -errno;
	while (!found && getline(&line, &cap, f) > 0) {
		char *field[4];

		if (child_split_fields(line, field, 4) < 4 || strcmp(field[0], name) != 0 ||
		    child_parse_field_id(field[2], &config->uid) < 0 ||
		    child_parse_field_id(field[3], &config->gid) < 0)
			continue;
		config->groups[n++] = config->gid;
		found = true;
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	f = fopen("/etc/group", "re");
	if (!f)
		return -errno;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		char *field[4];
		unsigned int gid;

		if (child_split_fields(line, field, 4) < 4 ||
		    child_parse_field_id(field[2], &gid) < 0 || gid == config->gid ||
		    !word_list_has(field[3], strlen(field[3]), name, ",\n"))
			continue;
		if (n == CHILD_MAX_GROUPS)
			r = -E2BIG;
		else
			config->groups[n++] = gid;
	}
	fclose(f);
	if (r < 0)
		return r;
	config->set_user = true;
	config->user_name = name;
	config->ngroups = n;
	return 0;
}

int child_default_user(struct child_config *config)
{
	unsigned int uid, gid;
	struct passwd *pw;

	/*
	 * Started through sudo: the user who asked. SUDO_UID=0 (sudo from root) is no user to
	 * fall back to: a uid-0 job is only ever run on request (--user root).
	 */
	if (getuid() == 0 && child_parse_id(getenv("SUDO_UID"), &uid) == 0 &&
	    child_parse_id(getenv("SUDO_GID"), &gid) == 0) {
		config->set_user = true;
		config->uid = uid;
		config->gid = gid;
		config->user_name = "SUDO_UID";
		config->groups[0] = gid;
		config->ngroups = 1;
		errno = 0;
		pw = getpwuid(uid);
		if (pw) {
			config->user_name = pw->pw_name;
			config->ngroups = CHILD_MAX_GROUPS;
			if (getgrouplist(pw->pw_name, gid, config->groups, &config->ngroups) < 0)
				return -E2BIG;
		}
		return 0;
	}
	if (child_files_user("nobody", config) == 0 || child_lookup_user("nobody", config) == 0)
		return 0;
	/* No "nobody" in the user database: its usual number, with no other group. */
	config->set_user = true;
	config->uid = CHILD_NOBODY_ID;
	config->gid = CHILD_NOBODY_ID;
	config->user_name = "nobody";
	config->groups[0] = CHILD_NOBODY_ID;
	config->ngroups = 1;
	return 0;
}

/* The sandbox's init: launch-init, beside the launcher's own binary. */
int child_init_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len);
	char *slash;

	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof("/" CHILD_INIT_NAME) > len)
		return -ENAMETOOLONG;
	strcpy(slash + 1, CHILD_INIT_NAME);
	return 0;
}

int child_init_open(void)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, r = child_init_path(path, sizeof(path));

	if (r < 0)
		return r;
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EACCES;
	/* It runs with every privilege the launcher has: none but root may have written it. */
	else if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		r = -EPERM;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

#if defined(__x86_64__)
/*
 * clone3, then in the child: "/" made private, recursively, and the home of the cgroup file
 * systems (MOUNTHIDE_HOME) detached; then execveat(init_fd, "", argv, envp, AT_EMPTY_PATH).
 * With CLONE_VM | CLONE_VFORK the child runs in the launcher's memory while the launcher waits
 * for its exec or exit (posix_spawn's way): no page tables copied, no page copied on write by
 * either afterwards. The child writes nothing but *exec_error, while the launcher is
 * suspended; it uses no stack, so it runs on none of its own.
 *
 * The detach waits for an RCU grace period (namespace_unlock), which the kernel ends in tens
 * of microseconds on a quiet machine and in up to 1.4 ms here while the launcher works on the
 * other core (docs/design.md, "Start-up cost"): here the launcher is suspended, so it is quiet. Its
 * result is left to init, which finds the home no longer a mount point (child_setup_mounts_
 * early). Nothing is detached before "/" is private, so nothing propagates to the host's
 * mounts: if that fails, its error (negative) is stored at *exec_error and the child exits.
 * If the exec fails, its error (positive) is stored there. Returns the child's pid or -errno.
 */
static long child_clone3_exec(struct clone_args *args, int init_fd, char *const argv[],
			      char *const envp[], volatile int *exec_error)
{
	register long rax __asm__("rax") = SYS_clone3;
	register long rdi __asm__("rdi") = (long)args;
	register long rsi __asm__("rsi") = (long)sizeof(*args);
	register long r12 __asm__("r12") = init_fd;
	register long r13 __asm__("r13") = (long)argv;
	register long r14 __asm__("r14") = (long)envp;
	register long r15 __asm__("r15") = (long)exec_error;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 /* mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) */
			 "xor %%edi, %%edi\n\t"
			 "lea 3f(%%rip), %%rsi\n\t"
			 "xor %%edx, %%edx\n\t"
			 "mov %[private], %%r10d\n\t"
			 "xor %%r8d, %%r8d\n\t"
			 "mov %[mount], %%eax\n\t"
			 "syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 5f\n\t"
			 /* umount2(MOUNTHIDE_HOME, MNT_DETACH): init reads the result */
			 "lea 4f(%%rip), %%rdi\n\t"
			 "mov %[detach], %%esi\n\t"
			 "mov %[umount2], %%eax\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rdi\n\t"
			 "lea 2f(%%rip), %%rsi\n\t"
			 "mov %%r13, %%rdx\n\t"
			 "mov %%r14, %%r10\n\t"
			 "mov %[empty_path], %%r8d\n\t"
			 "mov %[execveat], %%eax\n\t"
			 "syscall\n\t"
			 "neg %%eax\n\t"
			 "mov %%eax, (%%r15)\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall\n\t"
			 "5: mov %%eax, (%%r15)\n\t"
			 "neg %%eax\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall\n\t"
			 "2: .byte 0\n\t"
			 "3: .asciz \"/\"\n\t"
			 "4: .asciz \"" MOUNTHIDE_HOME "\"\n\t"
			 "1:\n\t"
			 : "+r"(rax)
			 : "r"(rdi), "r"(rsi), "r"(r12), "r"(r13), "r"(r14),
			   "r"(r15), [empty_path] "i"(AT_EMPTY_PATH), [execveat] "i"(SYS_execveat),
			   [exit] "i"(SYS_exit), [mount] "i"(SYS_mount), [umount2] "i"(SYS_umount2),
			   [private] "i"(MS_REC | MS_PRIVATE), [detach] "i"(MNT_DETACH)
			 : "rcx", "r11", "rdx", "r8", "r10", "memory");
	return rax;
}
#else
#error "child_clone3_exec: written for x86_64 only, the one architecture vmlinux/ has"
#endif

static void child_free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/*
 * Init's argv: its name, the protocol (child_protocol), its four descriptors (the status
 * socket, the life pipe, the exec pipe, the launcher's mountinfo or -1), then "HOW" "PATH" for
 * each mount it hides without a walk. NULL when out of memory.
 */
static char **child_init_argv(const struct child_config *config, const int fds[4])
{
	size_t n = 6 + 2 * config->nmounts_to_hide + 1, used = 0;
	char **argv = calloc(n, sizeof(*argv));

	if (!argv)
		return NULL;
	argv[used++] = strdup(CHILD_INIT_NAME);
	argv[used++] = strdup(child_protocol());
	for (int i = 0; i < 4; i++)
		if (asprintf(&argv[used++], "%d", fds[i]) < 0)
			argv[used - 1] = NULL;
	for (size_t i = 0; i < config->nmounts_to_hide; i++) {
		if (asprintf(&argv[used++], "%ld", config->mounts_to_hide[i].how) < 0)
			argv[used - 1] = NULL;
		argv[used++] = strdup(config->mounts_to_hide[i].mount_point);
	}
	for (size_t i = 0; i < used; i++)
		if (!argv[i]) {
			while (++i < used)
				free(argv[i]);
			child_free_argv(argv);
			return NULL;
		}
	return argv;
}

int child_spawn(const struct child_config *config, int init_fd, struct child *ret_child,
		int *ret_exec_error)
{
	int status_pipe[2] = { -1, -1 }, life_pipe[2] = { -1, -1 }, exec_pipe[2] = { -1, -1 };
	int pidfd = -1, mounts_fd = -1, r;
	struct clone_args args = {
		/*
		 * CLONE_NEWIPC: System V queues, segments and semaphore sets, and POSIX message
		 * queues, are per IPC namespace; the host's are a channel between sandboxes and
		 * outlive the job. The namespace and all in it go with its last process.
		 */
		.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP | CLONE_PIDFD | CLONE_NEWPID |
			 CLONE_NEWNS | CLONE_NEWIPC,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)config->cgroup_fd,
	};
	char *const no_env[] = { NULL };
	char **argv = NULL;
	siginfo_t info = { 0 };
	/*
	 * Written by the child while the launcher is suspended, only if it fails: negative when
	 * making its mounts private did, positive when its exec did.
	 */
	volatile int exec_error = 0;
	long pid;

	*ret_exec_error = 0;
	/*
	 * Init's ends without O_CLOEXEC, so that they pass its exec; the launcher runs one
	 * thread here, and takes its ends back at once.
	 */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, status_pipe) < 0 || pipe2(life_pipe, 0) < 0 ||
	    pipe2(exec_pipe, 0) < 0 || fcntl(status_pipe[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(life_pipe[1], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(exec_pipe[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    (config->mounts_known && (mounts_fd = fcntl(config->mounts_fd, F_DUPFD, 3)) < 0)) {
		r = -errno;
		goto out;
	}
	argv = child_init_argv(
		config, (const int[4]){ status_pipe[1], life_pipe[0], exec_pipe[1], mounts_fd });
	if (!argv) {
		r = -ENOMEM;
		goto out;
	}
	fflush(NULL);
	pid = child_clone3_exec(&args, init_fd, argv, no_env, &exec_error);
	if (pid < 0) {
		r = (int)pid;
		goto out;
	}
	/*
	 * Back from CLONE_VFORK: init exec'd, or its exec failed and it said why before exiting
	 * (the kernel resumes the launcher before the child is a zombie: its status alone
	 * could not tell). Then it is reaped here.
	 */
	if (exec_error != 0) {
		waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED);
		close(pidfd);
		/* Negative: making its mounts private failed, before any exec. */
		*ret_exec_error = exec_error > 0 ? exec_error : -1;
		r = exec_error > 0 ? -exec_error : exec_error;
		goto out;
	}
	ret_child->pid = (pid_t)pid;
	ret_child->pidfd = pidfd;
	ret_child->status_fd = TAKE_FD(status_pipe[0]);
	ret_child->seccomp_fd = -1;
	ret_child->life_fd = TAKE_FD(life_pipe[1]);
	ret_child->exec_fd = TAKE_FD(exec_pipe[0]);
	r = 0;
out:
	child_free_argv(argv);
	for (int i = 0; i < 2; i++) {
		if (status_pipe[i] >= 0)
			close(status_pipe[i]);
		if (life_pipe[i] >= 0)
			close(life_pipe[i]);
		if (exec_pipe[i] >= 0)
			close(exec_pipe[i]);
	}
	if (mounts_fd >= 0)
		close(mounts_fd);
	return r;
}

/* One message to init, or to the job; a dead reader has said why already. */
static int child_tell(struct child *child, int type)
{
	const struct child_msg msg = { .type = type };
	ssize_t n;

	do
		n = send(child->status_fd, &msg, sizeof(msg), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno != EPIPE && errno != ECONNRESET)
		return -errno;
	return 0;
}

int child_configure(struct child *child, const struct child_config *config)
{
	const struct child_msg msg = { .type = CHILD_MSG_CONFIG };
	_cleanup_close_ int fd = -1;
	int r = child_config_write(config, &fd);

	if (r < 0)
		return r;
	r = child_send_fds(child->status_fd, &msg, &fd, 1);
	return r == -EPIPE || r == -ECONNRESET ? 0 : r;
}

int child_ruleset_new(const struct child_config *config, const char **ret_failed)
{
	_cleanup_close_ int ruleset_fd = landlock_ruleset_new(config->landlock_abi);
	int r;

	*ret_failed = NULL;
	if (ruleset_fd < 0)
		return ruleset_fd;
	/*
	 * The working directory is init's too (a namespace's copy of the same folder, whatever
	 * is mounted over its path since), and init mounts nothing over the devices (only
	 * /dev/shm below /dev; a file audit log elsewhere is covered with /dev/null, and a rule
	 * on what it covers names nothing the job can open there).
	 */
	r = landlock_allow_cwd_and_devices(ruleset_fd, config->landlock_abi, config->fs_write_cwd,
					   ret_failed);
	if (r < 0) {
		if (*ret_failed && strcmp(*ret_failed, ".") == 0)
			*ret_failed = config->fs_write[0];
		return r;
	}
	return TAKE_FD(ruleset_fd);
}

/*
 * Whether a process that changes its user stays undumpable meanwhile: fs.suid_dumpable 0 or
 * 2 (only CAP_SYS_PTRACE may trace it), not 1, with which any process of the job's user
 * could trace the job, and so write init's memory, until the job makes itself undumpable.
 * Read by the launcher while init mounts, not by init on its way to the job.
 */
static bool child_user_change_undumpable(void)
{
	_cleanup_close_ int fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC);
	char mode = '1';

	return fd >= 0 && read(fd, &mode, 1) == 1 && mode != '1';
}

/* What one read of the launcher's mountinfo feeds: the scan, and the caller's own callback. */
struct child_watch {
	struct mounthide_scan *scan;
	int (*also)(const struct mount_entry *mount, void *userdata);
	void *also_data;
};

static int child_watch_add(const struct mount_entry *mount, void *userdata)
{
	struct child_watch *watch = userdata;
	int r = mounthide_scan_add(mount, watch->scan);

	if (r == 0 && watch->also)
		r = watch->also(mount, watch->also_data);
	return r;
}

int child_watch_mounts(struct child_config *config,
		       int (*also)(const struct mount_entry *mount, void *userdata),
		       void *also_data)
{
	struct child_watch watch = { .scan = mounthide_scan_new(),
				     .also = also,
				     .also_data = also_data };
	struct mounthide_mount *hide = NULL;
	size_t n = 0;
	int fd = -1, r = -ENOMEM, walked;

	child_unwatch_mounts(config);
	/* Opened before it is read: any change after the read shows in a poll of it. */
	if (watch.scan) {
		fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? -errno : 0;
	}
	if (fd >= 0)
		r = mountinfo_foreach_fd(fd, child_watch_add, &watch);
	walked = r;
	if (fd >= 0 && r == 0)
		r = mounthide_scan_result(watch.scan, &hide, &n);
	mounthide_scan_free(watch.scan);
	if (fd < 0 || r < 0) {
		/* Init walks its own, then. */
		if (fd >= 0)
			close(fd);
		return walked;
	}
	config->mounts_to_hide = hide;
	config->nmounts_to_hide = n;
	config->mounts_fd = fd;
	config->mounts_known = true;
	return 0;
}

void child_unwatch_mounts(struct child_config *config)
{
	if (config->mounts_known) {
		mounthide_free((struct mounthide_mount *)config->mounts_to_hide,
			       config->nmounts_to_hide);
		close(config->mounts_fd);
	}
	config->mounts_known = false;
	config->mounts_fd = -1;
	config->mounts_to_hide = NULL;
	config->nmounts_to_hide = 0;
}

int child_joined(struct child *child, const int *dir_fds, int ndirs, int ruleset_fd)
{
	struct child_msg msg = { .type = CHILD_MSG_JOINED, .status = ndirs };
	int fds[CHILD_JOIN_FDS_MAX], nfds = 0, r;

	if (ndirs < 0 || ndirs > CHILD_JOIN_DIRS_MAX)
		return -EINVAL;
	for (; nfds < ndirs; nfds++)
		fds[nfds] = dir_fds[nfds];
	if (ruleset_fd >= 0) {
		fds[nfds++] = ruleset_fd;
		msg.flags |= CHILD_JOINED_RULESET;
	}
	if (child_user_change_undumpable())
		msg.flags |= CHILD_JOINED_UNDUMPABLE;
	r = child_send_fds(child->status_fd, &msg, fds, nfds);

	/* A dead init has said why already. */
	return r == -EPIPE || r == -ECONNRESET ? 0 : r;
}

int child_start(struct child *child)
{
	return child_tell(child, CHILD_MSG_GO);
}

int child_read_msg(struct child *child, struct child_msg *ret_msg)
{
	int fd, nfds, reset = 0;
	bool truncated;
	ssize_t n;

	/*
	 * ECONNRESET: init exited with a message of ours unread (`go`, sent as it failed). The
	 * socket reports that once, before what init sent ahead of it: read on.
	 */
	do
		n = child_recv_fds(child->status_fd, ret_msg, &fd, 1, &nfds, &truncated);
	while (n == -ECONNRESET && !reset++);
	if (n < 0)
		return (int)n;
	if (nfds && ret_msg->type == CHILD_MSG_SECCOMP && child->seccomp_fd < 0)
		child->seccomp_fd = fd;
	else if (nfds)
		close(fd);
	if (n != sizeof(*ret_msg))
		return -EPIPE;
	return 0;
}

int child_wait_exec(struct child *child, struct child_msg *ret_msg)
{
	ssize_t n;
	int r;

	do
		n = read(child->exec_fd, ret_msg, sizeof(*ret_msg));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* Data: the job's why; it never exec'd. */
	if (n == sizeof(*ret_msg))
		return 0;
	/*
	 * The end: the job exec'd, having sent its listener before, or no job ever ran (init
	 * failed: its why is on the status socket) or the job died before its exec (init says
	 * so when it reaps it).
	 */
	r = child_read_msg(child, ret_msg);
	if (r < 0)
		return r;
	if (ret_msg->type == CHILD_MSG_FAILED)
		return 0;
	if (ret_msg->type != CHILD_MSG_SECCOMP || child->seccomp_fd < 0)
		return -EPROTO;
	ret_msg->type = CHILD_MSG_EXEC_OK;
	return 0;
}

void child_close(struct child *child)
{
	if (child->pidfd >= 0)
		close(child->pidfd);
	if (child->status_fd >= 0)
		close(child->status_fd);
	if (child->life_fd >= 0)
		close(child->life_fd);
	if (child->seccomp_fd >= 0)
		close(child->seccomp_fd);
	if (child->exec_fd >= 0)
		close(child->exec_fd);
	child->pidfd = child->status_fd = child->life_fd = child->seccomp_fd = -1;
	child->exec_fd = -1;
}

const char *child_stage_name(int stage)
{
	switch (stage) {
	case CHILD_STAGE_SIGNALS:
		return "cannot set up signals";
	case CHILD_STAGE_PDEATHSIG:
		return "cannot tie the sandbox to the launcher's life";
	case CHILD_STAGE_MOUNTS:
		return "cannot set up the job's mounts";
	case CHILD_STAGE_CGROUPNS:
		return "cannot enter a cgroup namespace";
	case CHILD_STAGE_FORK:
		return "cannot fork the job";
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
	case CHILD_STAGE_SECCOMP:
		return "cannot install the seccomp filter";
	case CHILD_STAGE_EXEC:
		return "cannot execute";
	case CHILD_STAGE_LANDLOCK:
		return "cannot confine the job's file writes with Landlock";
	case CHILD_STAGE_GO:
		return "the launcher went away before the sandbox was confined";
	case CHILD_STAGE_CONFIG:
		return "cannot read the job's configuration";
	default:
		return "cannot start the job";
	}
}
