// SPDX-License-Identifier: LGPL-2.1-or-later
/* Finding and removing what launchers that died (SIGKILL, power loss) left behind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cgroup.h"
#include "gc.h"
#include "loader.h"
#include "util.h"

static int gc_lock_path(const char *id, char *path, size_t len)
{
	if ((size_t)snprintf(path, len, "%s/%s.lock", GC_LOCK_DIR, id) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int gc_lock(const char *id)
{
	char path[PATH_MAX];
	int fd, r;

	r = gc_lock_path(id, path, sizeof(path));
	if (r < 0)
		return r;
	if (mkdir(GC_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	/*
	 * A new lock file appears locked: made unnamed (O_TMPFILE), locked, then linked into
	 * place. A sweep running at the same time never finds it unlocked, takes it for a dead
	 * sandbox's and removes it under the starting launcher.
	 */
	fd = open(GC_LOCK_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
			return fd;
		r = errno;
		close(fd);
		if (r != EEXIST)
			return -r;
		/* The name exists: a live sandbox's lock, or a dead one's to take over. */
	}
	for (;;) {
		struct stat held, named;

		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			r = errno == EWOULDBLOCK ? -EEXIST : -errno;
			close(fd);
			return r;
		}
		/*
		 * The holder unlinks the file before it lets go: a lock won on a file no longer
		 * at the path guards nothing. Try again on the file that is there now.
		 */
		if (fstat(fd, &held) == 0 && stat(path, &named) == 0 &&
		    held.st_ino == named.st_ino && held.st_dev == named.st_dev)
			return fd;
		close(fd);
	}
}

void gc_unlock(const char *id, int fd)
{
	char path[PATH_MAX];

	if (fd < 0)
		return;
	if (gc_lock_path(id, path, sizeof(path)) == 0)
		unlink(path);
	close(fd);
}

/*
 * The recorded cgroup goes into an extended attribute, which fits in the inode, rather than
 * the file's data: removing a lock file whose data block has been written costs an ext4
 * /run a writeback wait and a synchronous discard, 0.4 ms at the end of every sandbox.
 */
#define GC_RECORD_XATTR "trusted.launch.cgroup"

int gc_record(int lock_fd, const char *cgroup_path)
{
	size_t len = strlen(cgroup_path);

	if (fsetxattr(lock_fd, GC_RECORD_XATTR, cgroup_path, len, 0) == 0)
		return 0;
	if (errno != ENOTSUP && errno != EOPNOTSUPP)
		return -errno;
	/* A file system without them: the file's data. */
	if (ftruncate(lock_fd, 0) < 0 || pwrite(lock_fd, cgroup_path, len, 0) != (ssize_t)len)
		return -errno;
	return 0;
}

/*
 * The cgroup a dead launcher recorded, accepted only if it is a directory named after the
 * sandbox: the sweep kills what is in it.
 */
static bool gc_recorded_cgroup(int lock_fd, const char *id, char *path, size_t len)
{
	ssize_t n = fgetxattr(lock_fd, GC_RECORD_XATTR, path, len - 1);
	const char *base;

	if (n < 0)
		n = pread(lock_fd, path, len - 1, 0);
	if (n <= 0)
		return false;
	path[n] = '\0';
	base = strrchr(path, '/');
	return path[0] == '/' && base && strcmp(base + 1, id) == 0 && !strstr(path, "/../");
}

/* Removes sandbox `id` if no live launcher holds its lock. Returns 1 when removed. */
static int gc_sweep_one(const char *id)
{
	struct sandbox_cgroup cgroup = { .dir_fd = -1 };
	int fd, removed = 0;

	fd = gc_lock(id);
	if (fd < 0)
		return 0; /* alive */
	if (gc_recorded_cgroup(fd, id, cgroup.path, sizeof(cgroup.path)))
		cgroup.dir_fd = open(cgroup.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup.dir_fd >= 0) {
		/*
		 * The programs stay attached to the cgroup until it is removed, which happens
		 * only once the processes they confine are dead.
		 */
		if (cgroup_kill(&cgroup, 5000) < 0 || cgroup_destroy(&cgroup) < 0) {
			if (cgroup.dir_fd >= 0)
				close(cgroup.dir_fd);
			close(fd);
			return 0;
		}
		removed = 1;
	}
	gc_unlock(id, fd);
	return removed;
}

int gc_sweep(void)
{
	/* Only what launch made: sandboxes with a lock file; never a cgroup by name. */
	struct dirent *de;
	int removed = 0;
	DIR *d;

	d = opendir(GC_LOCK_DIR);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), suffix_len = strlen(".lock");
		char id[NAME_MAX + 1];

		/* Dot names are the loader's own locks. */
		if (de->d_name[0] == '.' || len <= suffix_len ||
		    strcmp(de->d_name + len - suffix_len, ".lock") != 0)
			continue;
		memcpy(id, de->d_name, len - suffix_len);
		id[len - suffix_len] = '\0';
		removed += gc_sweep_one(id);
	}
	closedir(d);
	return removed;
}

int gc_remove_holders(const char *cgroup_parent, const char *keep)
{
	_cleanup_close_ int lock_fd = -1;
	struct dirent *de;
	int removed = 0;
	DIR *d;

	/*
	 * Under the loader's lock: a launcher that is loading the programs finds its holder
	 * still there when it looks for what it attached.
	 */
	lock_fd = open(GC_LOCK_DIR "/" LOADER_LOAD_LOCK, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lock_fd >= 0 && flock(lock_fd, LOCK_EX) < 0)
		return -errno;
	d = opendir(cgroup_parent);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, LOADER_HOLDER_PREFIX, strlen(LOADER_HOLDER_PREFIX)) != 0 ||
		    (keep && strcmp(de->d_name + strlen(LOADER_HOLDER_PREFIX), keep) == 0))
			continue;
		/*
		 * A holder has no process. Sandboxes still running on its programs keep them:
		 * each has its own attachment.
		 */
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
