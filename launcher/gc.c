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

/* Removes sandbox `id` if no live launcher holds its lock. Returns 1 when removed. */
static int gc_sweep_one(const char *cgroup_parent, const char *bpffs_dir, const char *id)
{
	struct sandbox_cgroup cgroup = { .dir_fd = -1 };
	char pins[PATH_MAX];
	int fd, removed = 0;

	fd = gc_lock(id);
	if (fd < 0)
		return 0; /* alive */
	if ((size_t)snprintf(cgroup.path, sizeof(cgroup.path), "%s/%s", cgroup_parent, id) <
	    sizeof(cgroup.path))
		cgroup.dir_fd = open(cgroup.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup.dir_fd >= 0) {
		/* The pins go only once the processes they confine are dead. */
		if (cgroup_kill(&cgroup, 5000) < 0 || cgroup_destroy(&cgroup) < 0) {
			if (cgroup.dir_fd >= 0)
				close(cgroup.dir_fd);
			gc_unlock(id, fd);
			return 0;
		}
		removed = 1;
	}
	if (bpffs_dir &&
	    (size_t)snprintf(pins, sizeof(pins), "%s/%s", bpffs_dir, id) < sizeof(pins) &&
	    access(pins, F_OK) == 0) {
		loader_unpin_dir(pins);
		removed = 1;
	}
	gc_unlock(id, fd);
	return removed;
}

static int gc_sweep_dir(const char *dir, const char *cgroup_parent, const char *bpffs_dir)
{
	DIR *d;
	struct dirent *de;
	int removed = 0;

	if (!dir)
		return 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.')
			removed += gc_sweep_one(cgroup_parent, bpffs_dir, de->d_name);
	closedir(d);
	return removed;
}

int gc_sweep(const char *cgroup_parent, const char *bpffs_dir)
{
	int cgroups = gc_sweep_dir(cgroup_parent, cgroup_parent, bpffs_dir);
	int pins = gc_sweep_dir(bpffs_dir, cgroup_parent, bpffs_dir);

	if (cgroups < 0)
		return cgroups;
	return pins < 0 ? pins : cgroups + pins;
}
