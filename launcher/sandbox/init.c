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
#ifndef __GLIBC__
/*
 * Linked with musl where it is installed (Makefile, docs/design.md cut 24), whose 1.2.3 has
 * neither the new mount API's structures nor its wrappers.
 */
#include <linux/mount.h>

static int open_tree(int dfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int move_mount(int from_dfd, const char *from_path, int to_dfd, const char *to_path,
		      unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from_path, to_dfd, to_path, flags);
}

static int mount_setattr(int dfd, const char *path, unsigned int flags, struct mount_attr *attr,
			 size_t size)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, size);
}
#endif

#include "audit/audit.h"
#include "child.h"
#include "gc.h"
#include "landlock.h"
#include "lib/mountinfo.h"
#include "mounthide.h"
#include "seccomp.h"
#include "lib/util.h"
#include "childmsg.h"

/* Init keeps these descriptors, and nothing else of the launcher's. */
#define INIT_STATUS_FD 3
#define INIT_LIFE_FD   4
#define INIT_EXEC_FD   5 /* the job's: its exec closes it, which tells the launcher */
#define INIT_MOUNTS_FD 6 /* the launcher's mountinfo, polled for a change; gone before the job */
/* Cgroup or BPF mounts stacked on one path that init takes off, at most. */
#define CHILD_MAX_STACKED_MOUNTS 16

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

/*
 * In the job's mount namespace, cgroup v2 and BPF file systems disappear and cgroup v1 ones
 * become read-only; /proc shows the sandbox only. No cgroup v2 directory can be opened then:
 * the kernel lets anyone holding a cgroup's directory detach the programs attached to it
 * without a link (BPF_PROG_DETACH checks no capability), as launch attaches them, and a
 * cgroup.procs write could move a process out (the hierarchy has no nsdelegate). v1
 * hierarchies carry no BPF programs.
 */
/* What the mount a path reaches (the topmost at it) is: CHILD_FS_*, or -errno. */
enum { CHILD_FS_OTHER, CHILD_FS_CGROUP_V1, CHILD_FS_CGROUP_V2_OR_BPF };

static int child_fs_at(const char *path)
{
	struct statfs st;

	if (statfs(path, &st) < 0)
		return -errno;
	if (st.f_type == CGROUP_SUPER_MAGIC)
		return CHILD_FS_CGROUP_V1;
	if (st.f_type == CGROUP2_SUPER_MAGIC || st.f_type == BPF_FS_MAGIC)
		return CHILD_FS_CGROUP_V2_OR_BPF;
	return CHILD_FS_OTHER;
}

/*
 * Hides the mount at mount_point as mounthide_how says. umount2 and a remount act on the
 * topmost mount at the path, which is another file system when the host covered the cgroup
 * or BPF one: detaching that cover would lay the file system bare. A covered one is left as
 * it is (no path reaches it, and the job cannot unmount: it has no capability); stacked ones
 * all go, a cgroup v2 or BPF one always detached.
 */
static int child_hide_at(const char *mount_point, long how)
{
	for (int i = 0; i < CHILD_MAX_STACKED_MOUNTS; i++) {
		int fs = child_fs_at(mount_point);

		if (fs == -ENOENT || fs == CHILD_FS_OTHER)
			return 0;
		if (fs < 0)
			return fs;
		if (fs == CHILD_FS_CGROUP_V1 && how != MOUNTHIDE_DETACH) {
			if (mount(NULL, mount_point, NULL, (unsigned long)how, NULL) < 0 &&
			    errno != ENOENT)
				return -errno;
			return 0;
		}
		if (umount2(mount_point, MNT_DETACH) < 0)
			return errno == EINVAL || errno == ENOENT ? 0 : -errno;
	}
	return -ELOOP;
}

static int child_hide_mount(const struct mount_entry *entry, void *userdata)
{
	long how = mounthide_how(entry);

	(void)userdata;
	return how < 0 ? 0 : child_hide_at(entry->mount_point, how);
}

/*
 * The audit log: a job running as uid 0 has no capability but still owns root's files, so it
 * disappears from its view: an empty, read-only tmpfs over its folder when it is launch's own,
 * /dev/null over a log file elsewhere.
 */
static int child_hide_log(const struct child_config *config)
{
	const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;

	if (!config->audit_path)
		return 0;
	if (strncmp(config->audit_path, AUDIT_DEFAULT_DIR "/", strlen(AUDIT_DEFAULT_DIR) + 1) ==
	    0) {
		if (mount("tmpfs", AUDIT_DEFAULT_DIR, "tmpfs", ro, "size=4k,mode=0") < 0)
			return -errno;
		return 0;
	}
	/* ENOENT: not in the job's view at all (under its private /tmp, say): nothing to hide. */
	if (mount("/dev/null", config->audit_path, NULL, MS_BIND, NULL) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * Kernel tunables and host-wide knobs that check nothing but file ownership: a uid-0 job
 * without capabilities could write kernel.core_pattern (a pipe helper runs as full root,
 * outside the sandbox) or the host's net.* sysctls. As runc's defaults: bound onto
 * themselves, then made read-only.
 */
static const char *const CHILD_READONLY_PROC[] = {
	"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
};

/* Host-wide state a job has no use for (runc's and Docker's masked paths): /dev/null over it. */
static const char *const CHILD_MASKED_FILES[] = {
	"/proc/kcore",	     "/proc/keys",	    "/proc/timer_list", "/proc/timer_stats",
	"/proc/sched_debug", "/proc/latency_stats", "/proc/interrupts",
};

/* The same for folders: an empty read-only tmpfs over each. */
static const char *const CHILD_MASKED_DIRS[] = {
	"/proc/acpi",
	"/proc/asound",
	"/proc/scsi",
	"/sys/firmware",
	"/sys/devices/virtual/powercap",
	"/sys/devices/virtual/tpm",
};

static int child_readonly_bind(const char *path)
{
	const unsigned long locked = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	/* A failed mount(2) costs ten times an access(2): most kernels lack a path or two. */
	if (access(path, F_OK) < 0)
		return 0;
	if (mount(path, path, NULL, MS_BIND, NULL) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | locked, NULL) < 0)
		return -errno;
	return 0;
}

/* One mount call per path; ENOENT: this kernel does not have it, nothing to hide. */
static int child_mask(const char *path, bool dir)
{
	const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	int r;

	if (access(path, F_OK) < 0)
		return 0;
	if (dir)
		r = mount("tmpfs", path, "tmpfs", ro, "size=4k,mode=0555");
	else
		r = mount("/dev/null", path, NULL, MS_BIND, NULL);
	if (r < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * The job's /proc and /sys: kernel tunables read-only, sensitive files masked, and the whole
 * of /sys (and every mount below it) read-only in one mount_setattr call.
 */
static int child_protect_kernel_files(void)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(CHILD_READONLY_PROC); i++) {
		r = child_readonly_bind(CHILD_READONLY_PROC[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(CHILD_MASKED_FILES); i++) {
		r = child_mask(CHILD_MASKED_FILES[i], false);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(CHILD_MASKED_DIRS); i++) {
		r = child_mask(CHILD_MASKED_DIRS[i], true);
		if (r < 0)
			return r;
	}
	if (mount_setattr(AT_FDCWD, "/sys", AT_RECURSIVE, &attr, sizeof(attr)) < 0 &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * Puts a writable copy of the mount tree at `fd` (a folder or a file) over it, in the
 * read-only view. Returns the copy's descriptor, or -errno.
 */
static int child_writable_over(int fd)
{
	struct mount_attr rw = { .attr_clr = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int tree = -1;

	tree = open_tree(fd, "",
			 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return -errno;
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &rw, sizeof(rw)) < 0 ||
	    move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return TAKE_FD(tree);
}

/*
 * Without Landlock, "read_only" (the default) still holds for files: every mount of the job's
 * view becomes read-only but for writable copies over what it may write (EROFS rather than
 * Landlock's EACCES, and chmod, chown, utime and setxattr too). Device nodes are the gap: the
 * kernel does not ask the mount when one is opened for writing. The working directory is the
 * one inherited, whatever its path names now: it is copied by descriptor, and init (so the
 * job) moves into the copy.
 */
static int child_readonly_view(const struct child_config *config)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	const char *const *write = config->fs_write;
	_cleanup_close_ int cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fds[CHILD_MAX_FS_WRITE], n = 0, r = 0;

	if (cwd_fd < 0)
		return -errno;
	for (size_t i = 0; write && write[i] && r == 0; i++) {
		if (n == CHILD_MAX_FS_WRITE)
			r = -E2BIG;
		else if (i == 0 && config->fs_write_cwd)
			fds[n++] = fcntl(cwd_fd, F_DUPFD_CLOEXEC, 3);
		else
			fds[n++] = open(write[i], O_PATH | O_CLOEXEC);
		if (r == 0 && fds[n - 1] < 0)
			r = -errno;
	}
	if (r == 0 && mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof(ro)) < 0)
		r = -errno;
	for (int i = 0; i < n && r == 0; i++) {
		int tree = child_writable_over(fds[i]);

		if (tree < 0)
			r = tree;
		else if (i == 0 && config->fs_write_cwd && fchdir(tree) < 0)
			r = -errno;
		if (tree >= 0)
			close(tree);
	}
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

/*
 * Whether the namespace of the launcher's mountinfo (INIT_MOUNTS_FD) changed since the
 * launcher opened it: POLLPRI (and POLLERR) then; an error counts as a change.
 */
static bool child_mounts_changed(void)
{
	struct pollfd mounts = { .fd = INIT_MOUNTS_FD, .events = POLLPRI };

	return poll(&mounts, 1, 0) != 0;
}

/*
 * Cgroup and BPF mounts outside /sys/fs/cgroup (or below it, when it is no mount point):
 * init's own mountinfo walked, each hidden by its path, whatever the launcher saw.
 */
static int child_hide_other_mounts(void)
{
	return mountinfo_foreach(child_hide_mount, NULL);
}

/*
 * The part of the job's view that depends on nothing of its configuration, made while the
 * launcher still reads it (the policies, the user): "/" private, /proc, /dev/shm, launch's
 * lock files hidden, the cgroup and BPF file systems hidden, the kernel's files read-only.
 * mounts_watched: init holds the launcher's mountinfo in INIT_MOUNTS_FD, in which the
 * launcher saw no cgroup or BPF mount outside /sys/fs/cgroup's tree but early->mounts_to_hide
 * (child_watch_mounts).
 */
static int child_setup_mounts_early(const struct child_config *early, bool mounts_watched)
{
	const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	bool home_detached = false;
	int r;

	/* Nothing done below may propagate back to the host's mounts. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	/* POSIX shared memory and semaphores: the host's /dev/shm is a folder every user shares. */
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOSYMFOLLOW,
		  "mode=1777,size=50%") < 0 &&
	    errno != ENOENT)
		return -errno;
	/*
	 * The lock files a sweep trusts: a job running as uid 0 has no capability but still owns
	 * root's files (child_hide_log for the audit log).
	 */
	if (mount("tmpfs", GC_LOCK_DIR, "tmpfs", ro, "size=4k,mode=0") < 0 && errno != ENOENT)
		return -errno;
	/*
	 * The home of the cgroup file systems goes in one detach, with everything mounted below
	 * it (a hybrid host has a dozen cgroup mounts there); the walk below deals with any
	 * mounted elsewhere. The launcher's clone child made that detach before this exec, while
	 * the launcher was suspended and the kernel's grace period short (child_clone3_exec):
	 * the home is then no longer a mount point (EINVAL). With mounts_watched the launcher saw
	 * a mount there, and the poll below says whether anything came or went since: EINVAL
	 * then means that detach. Without it, the walk.
	 */
	if (umount2(MOUNTHIDE_HOME, MNT_DETACH) == 0 || (errno == EINVAL && mounts_watched))
		home_detached = true;
	else if (errno != EINVAL && errno != ENOENT)
		return -errno;
	/*
	 * The launcher saw every cgroup and BPF mount in the tree of the one on /sys/fs/cgroup,
	 * which went whole, or in early->mounts_to_hide: the walk would find those, in that
	 * order, unless a mount came or went in the launcher's namespace since it opened its
	 * mountinfo. Anything that reached init's copy before its "/" went private (above) came
	 * that way (a copy's mounts are peers, or slaves of the same master, of the launcher's),
	 * and the namespace's event count, which poll() compares with the one at the open, says
	 * so. In any doubt, the walk.
	 */
	if (mounts_watched && home_detached && !child_mounts_changed()) {
		for (size_t i = 0; i < early->nmounts_to_hide; i++) {
			r = child_hide_at(early->mounts_to_hide[i].mount_point,
					  early->mounts_to_hide[i].how);
			if (r < 0)
				return r;
		}
	} else {
		r = child_hide_other_mounts();
		if (r < 0)
			return r;
	}
	if (mounts_watched)
		close(INIT_MOUNTS_FD);
	return child_protect_kernel_files();
}

/* The rest of the job's view, once its configuration came: /tmp, the audit log, read-only. */
static int child_setup_mounts_late(const struct child_config *config)
{
	char tmp_options[64] = "mode=1777,size=50%";
	int r;

	if (config->tmp_size_bytes)
		snprintf(tmp_options, sizeof(tmp_options), "mode=1777,size=%llu",
			 config->tmp_size_bytes);
	/*
	 * A private /tmp: AF_UNIX sockets under it are the job's own and always reachable, so
	 * no symlink there may lead anywhere else (nosymfollow, 5.10).
	 */
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOSYMFOLLOW, tmp_options) < 0)
		return -errno;
	r = child_hide_log(config);
	if (r < 0 || !config->fs_write || config->landlock_abi > 0)
		return r;
	return child_readonly_view(config);
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
