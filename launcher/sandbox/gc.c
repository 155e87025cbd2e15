// SPDX-License-Identifier: LGPL-2.1-or-later
/* Finding and removing what launchers that died (SIGKILL, power loss) left behind. */
#include <dirent.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cglimit.h"
#include "cgroup.h"
#include "gc.h"
#include "lib/util.h"
#include "sbgateway.h"

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
	/* The control socket first: a killed launcher's is answered by nobody. */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s", GC_LOCK_DIR, id, GC_CONTROL_SUFFIX) <
	    sizeof(path))
		unlink(path);
	/* The job's trust files of the gateway's CA, if it had one. */
	sbgateway_remove_files(id);
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

/*
 * Removes a dead sandbox's cgroup at path (killing what is left in it) and its cgroup v1
 * mirrors. 1 when something was removed, 0 when nothing was there, -errno when something
 * is left: the caller keeps the sandbox's lock record then, for the next sweep.
 */
static int gc_remove_cgroup(const char *path)
{
	struct sandbox_cgroup cgroup = { .dir_fd = -1 };
	int r, removed = 0;

	if ((size_t)snprintf(cgroup.path, sizeof(cgroup.path), "%s", path) >= sizeof(cgroup.path))
		return -ENAMETOOLONG;
	cgroup.dir_fd = open(cgroup.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup.dir_fd < 0 && errno != ENOENT)
		return -errno;
	if (cgroup.dir_fd >= 0) {
		/*
		 * The programs stay attached to the cgroup until it is removed, which happens
		 * only once the processes they confine are dead.
		 */
		r = cgroup_kill(&cgroup, 5000);
		if (r == 0)
			r = cgroup_destroy(&cgroup);
		if (cgroup.dir_fd >= 0)
			close(cgroup.dir_fd);
		if (r < 0)
			return r;
		removed = 1;
	}
	/* Its processes died with the v2 cgroup's: the v1 ones are empty, or nearly. */
	r = cglimit_remove_mirrors(path, 1000);
	return r < 0 ? r : removed;
}

/*
 * Removes sandbox `id` if no live launcher holds its lock. The lock file goes only when the
 * cgroup it records is really gone. Returns 1 when a cgroup was removed.
 */
static int gc_sweep_one(const char *id)
{
	char path[PATH_MAX];
	int fd, r = 0;

	fd = gc_lock(id);
	if (fd < 0)
		return 0; /* alive */
	/*
	 * Without a record, nothing was made: the launcher records the cgroup before it makes
	 * it. (A cgroup of an older launch without one is found by gc_sweep_parent.)
	 */
	if (gc_recorded_cgroup(fd, id, path, sizeof(path))) {
		r = gc_remove_cgroup(path);
		if (r < 0) {
			close(fd);
			return 0;
		}
	}
	gc_unlock(id, fd);
	return r;
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

/* Whether the cgroup dir `name` under dir_fd was made by launch for sandbox `name`. */
static bool gc_is_marked(int dir_fd, const char *name)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char value[NAME_MAX + 1];
	ssize_t n;

	if (fd < 0)
		return false;
	n = fgetxattr(fd, CGROUP_MARK_XATTR, value, sizeof(value) - 1);
	if (n <= 0)
		return false;
	value[n] = '\0';
	return strcmp(value, name) == 0;
}

/*
 * Removes the dead sandbox `name` found in a cgroup folder (dir_fd) whose v2 path is
 * cgroup_parent: its lock, if it has none or a dead one, is taken first, so that a starting
 * or running sandbox is never touched. Returns 1 when removed.
 */
static int gc_sweep_found(const char *cgroup_parent, const char *name)
{
	char path[PATH_MAX];
	int fd, r;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", cgroup_parent, name) >= sizeof(path))
		return 0;
	fd = gc_lock(name);
	if (fd < 0)
		return 0; /* alive, or starting: it holds its lock before it makes its cgroup */
	r = gc_remove_cgroup(path);
	if (r < 0) {
		/* Left for the next sweep, which now finds it by its lock file too. */
		gc_record(fd, path);
		close(fd);
		return 0;
	}
	gc_unlock(name, fd);
	return r;
}

/* The names of the sandbox cgroups in one folder: marked ones, or any in launch's own. */
static int gc_sweep_dir(const char *dir, const char *cgroup_parent, bool owned)
{
	struct dirent *de;
	int removed = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (!owned && !gc_is_marked(dirfd(d), de->d_name))
			continue;
		removed += gc_sweep_found(cgroup_parent, de->d_name) > 0;
	}
	closedir(d);
	return removed;
}

int gc_sweep_parent(const char *cgroup_parent, bool owned)
{
	char real[PATH_MAX];
	int removed;

	if (!realpath(cgroup_parent, real))
		return errno == ENOENT ? 0 : -errno;
	removed = gc_sweep_dir(real, real, owned);
	/* Mirrors left in the v1 hierarchies after their v2 cgroup went. */
	for (int c = 0; c < CGLIMIT_NCTRLS; c++) {
		char mirror[PATH_MAX];

		if (cglimit_v1_mirror(c, real, mirror, sizeof(mirror)) == 0)
			removed += gc_sweep_dir(mirror, real, owned);
	}
	return removed;
}

/* The registry of cgroup parents other than the default, one path a line. */
#define GC_PARENTS_FILE GC_LOCK_DIR "/.parents"

int gc_register_parent(const char *cgroup_parent)
{
	_cleanup_close_ int fd = -1;
	char real[PATH_MAX], line[PATH_MAX + 1];
	FILE *f;
	int r = 0;

	if (!realpath(cgroup_parent, real))
		return -errno;
	if (mkdir(GC_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(GC_PARENTS_FILE, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0)
		return -errno;
	f = fdopen(dup(fd), "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, real) == 0) {
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	snprintf(line, sizeof(line), "%s\n", real);
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		r = -errno;
	return r;
}

int gc_sweep_registered(void)
{
	_cleanup_close_ int fd = -1;
	char line[PATH_MAX + 1];
	int removed = 0, r;
	FILE *f, *keep;
	size_t kept_len = 0;
	char *kept = NULL;

	fd = open(GC_PARENTS_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (flock(fd, LOCK_EX) < 0)
		return -errno;
	f = fdopen(dup(fd), "r");
	keep = open_memstream(&kept, &kept_len);
	if (!f || !keep) {
		if (f)
			fclose(f);
		if (keep)
			fclose(keep);
		free(kept);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '/')
			continue;
		r = gc_sweep_parent(line, false);
		removed += r > 0 ? r : 0;
		/* A parent that is gone is forgotten. */
		if (access(line, F_OK) == 0)
			fprintf(keep, "%s\n", line);
	}
	fclose(f);
	fclose(keep);
	if (ftruncate(fd, 0) == 0)
		(void)!write(fd, kept, kept_len);
	free(kept);
	return removed;
}
