/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's view of the file systems, made by the sandbox's init: hidden mounts, read-only binds.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
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
 * Linked with musl where it is installed (Makefile, docs/design.md, "Starting the job"),
 * whose 1.2.3 has neither the new mount API's structures nor its wrappers.
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
#include "init_internal.h"
#include "lib/mountinfo.h"
#include "mounthide.h"
#include "reach.h"
#include "lib/util.h"

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
	char copy[PATH_MAX], folder[PATH_MAX];

	if (!config->audit_path)
		return 0;
	/*
	 * Its whole folder where that hides nothing the job works in (reach_folder_hidden, as
	 * the launcher decided): no file launch makes there, after a rotation too, is in sight.
	 */
	if (strlen(config->audit_path) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, config->audit_path);
	if (realpath(dirname(copy), folder) && reach_folder_hidden(config, folder)) {
		if (mount("tmpfs", folder, "tmpfs", ro, "size=4k,mode=0") < 0)
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
 * launcher still reads it (the policies, the user): "/" private, /proc, /dev/shm,
 * /dev/mqueue, launch's lock files hidden, the cgroup and BPF file systems hidden, the
 * kernel's files read-only.
 * mounts_watched: init holds the launcher's mountinfo in INIT_MOUNTS_FD, in which the
 * launcher saw no cgroup or BPF mount outside /sys/fs/cgroup's tree but early->mounts_to_hide
 * (child_watch_mounts).
 */
int child_setup_mounts_early(const struct child_config *early, bool mounts_watched)
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
	 * POSIX message queues: mq_open works in the job's IPC namespace whatever is mounted,
	 * but the host's mqueue file system at /dev/mqueue would list, open and create the
	 * host's queues. A fresh one belongs to init's namespace (the job's). ENODEV: a kernel
	 * without POSIX message queues, which has no host's queues to show either.
	 */
	if (mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 &&
	    errno != ENOENT && errno != ENODEV)
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
int child_setup_mounts_late(const struct child_config *config)
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
