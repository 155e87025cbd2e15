// SPDX-License-Identifier: LGPL-2.1-or-later
/* The sandbox's cgroup v2: find the hierarchy, create, kill every member, remove. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "lib/mountinfo.h"
#include "lib/util.h"

int cgroup_find_mount(char *ret_path, size_t len)
{
	return mountinfo_find("cgroup2", ret_path, len);
}

int cgroup_mount_private(bool hybrid, char *ret_path, size_t len)
{
	const char *mount_point = hybrid ? CGROUP_PRIVATE_HYBRID_MOUNT : CGROUP_PRIVATE_ROOT;

	/*
	 * The hierarchy is the host's own (one cgroup2 hierarchy per cgroup namespace), so
	 * sandboxes made through this mount are the ones every other launcher and `launch gc`
	 * see. The namespace keeps the mount from anyone else's view, and from outliving us.
	 * On a hybrid host, a tmpfs below it leaves room for the v1 hierarchies of the limits
	 * (cglimit_mount_private), as on the host: sysfs has no directories to mount them on.
	 * Either way the paths are the host's usual ones, which lock records hold for gc.
	 */
	if (strlen(mount_point) >= len)
		return -ENAMETOOLONG;
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (hybrid && mount("tmpfs", CGROUP_PRIVATE_ROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			    "mode=0755,size=64k") < 0)
		return -errno;
	if (hybrid && mkdir(mount_point, 0755) < 0)
		return -errno;
	if (mount("cgroup2", mount_point, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	strcpy(ret_path, mount_point);
	return 0;
}

int cgroup_create(const char *parent, const char *name, struct sandbox_cgroup *ret_cgroup)
{
	struct stat st;
	int n;

	ret_cgroup->dir_fd = -1;
	ret_cgroup->path[0] = '\0';
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return -errno;
	n = snprintf(ret_cgroup->path, sizeof(ret_cgroup->path), "%s/%s", parent, name);
	if (n < 0 || (size_t)n >= sizeof(ret_cgroup->path)) {
		ret_cgroup->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (mkdir(ret_cgroup->path, 0755) < 0) {
		int r = -errno;

		ret_cgroup->path[0] = '\0';
		return r;
	}
	ret_cgroup->dir_fd = open(ret_cgroup->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Marked as a sandbox's, for a gc that finds it without its lock file. */
	if (ret_cgroup->dir_fd < 0 || fstat(ret_cgroup->dir_fd, &st) < 0 ||
	    cgroup_mark(ret_cgroup->dir_fd, name) < 0) {
		int r = -errno;

		cgroup_destroy(ret_cgroup);
		return r;
	}
	ret_cgroup->id = st.st_ino;
	return 0;
}

int cgroup_mark(int dir_fd, const char *id)
{
	return fsetxattr(dir_fd, CGROUP_MARK_XATTR, id, strlen(id), 0) < 0 ? -errno : 0;
}

int cgroup_read_text(int dir_fd, const char *file, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int cgroup_read_file(const struct sandbox_cgroup *cgroup, const char *file, char *buf,
			    size_t len)
{
	return cgroup_read_text(cgroup->dir_fd, file, buf, len);
}

bool cgroup_is_empty(const struct sandbox_cgroup *cgroup)
{
	char events[256];

	if (cgroup_read_file(cgroup, "cgroup.events", events, sizeof(events)) < 0)
		return false;
	return strstr(events, "populated 0") != NULL;
}

int cgroup_thaw(const struct sandbox_cgroup *cgroup)
{
	_cleanup_close_ int fd = -1;

	if (cgroup->dir_fd < 0)
		return 0;
	fd = openat(cgroup->dir_fd, "cgroup.freeze", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write(fd, "0", 1) == 1 ? 0 : -errno;
}

int cgroup_kill(const struct sandbox_cgroup *cgroup, int timeout_ms)
{
	_cleanup_close_ int kill_fd = -1, events_fd = -1;
	long long deadline = monotonic_now_ms() + timeout_ms;

	if (cgroup->dir_fd < 0)
		return 0;
	if (cgroup_is_empty(cgroup))
		return 0;
	/* cgroup.kill (5.14) kills the whole subtree at once, forks in flight included. */
	kill_fd = openat(cgroup->dir_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
	if (kill_fd < 0)
		return -errno;
	if (write(kill_fd, "1", 1) != 1)
		return -errno;
	events_fd = openat(cgroup->dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (events_fd < 0)
		return -errno;
	/* cgroup.events raises POLLPRI when "populated" changes. */
	while (!cgroup_is_empty(cgroup)) {
		struct pollfd pfd = { .fd = events_fd, .events = POLLPRI };
		long long left = deadline - monotonic_now_ms();
		char buf[256];

		if (left <= 0)
			return -ETIMEDOUT;
		if (pread(events_fd, buf, sizeof(buf), 0) < 0)
			return -errno;
		if (poll(&pfd, 1, left > 10 ? 10 : (int)left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

int cgroup_destroy(struct sandbox_cgroup *cgroup)
{
	int r = 0;

	if (cgroup->dir_fd >= 0) {
		close(cgroup->dir_fd);
		cgroup->dir_fd = -1;
	}
	if (cgroup->path[0]) {
		/* rmdir fails with EBUSY while a zombie is still being reaped: retry briefly. */
		for (int i = 0; i < 200; i++) {
			if (rmdir(cgroup->path) == 0 || errno == ENOENT) {
				r = 0;
				break;
			}
			r = -errno;
			if (errno != EBUSY)
				break;
			usleep(5000);
		}
		if (r == 0)
			cgroup->path[0] = '\0';
	}
	return r;
}

int cgroup_empty_by_id(uint64_t id, int timeout_ms)
{
	/* A cgroup v2 file handle (kernfs) is its 64-bit id, type FILEID_KERNFS. */
	enum { FILEID_KERNFS = 0xfe };
	struct sandbox_cgroup cgroup = { .dir_fd = -1 };
	_cleanup_free_ struct file_handle *handle = NULL;
	_cleanup_close_ int mount_fd = -1;
	char mount[PATH_MAX];
	int r;

	r = cgroup_find_mount(mount, sizeof(mount));
	if (r < 0)
		return r;
	mount_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	handle = malloc(sizeof(*handle) + sizeof(id));
	if (mount_fd < 0 || !handle)
		return mount_fd < 0 ? -errno : -ENOMEM;
	handle->handle_bytes = sizeof(id);
	handle->handle_type = FILEID_KERNFS;
	memcpy(handle->f_handle, &id, sizeof(id));
	cgroup.dir_fd = open_by_handle_at(mount_fd, handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup.dir_fd < 0)
		return errno == ESTALE || errno == ENOENT ? 0 : -errno; /* removed already */
	r = cgroup_kill(&cgroup, timeout_ms);
	close(cgroup.dir_fd);
	return r;
}
