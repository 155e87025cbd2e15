// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reading /proc/self/mountinfo: where the cgroup and BPF file systems are mounted. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "mountinfo.h"
#include "util.h"

/* Undoes the octal escapes (\040 for a space) that mountinfo uses in paths. */
static void mountinfo_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Copies src into dst of size len, cut to fit (as the fields were read before). */
static void mountinfo_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * Fields: id parent major:minor root mount-point options [optional...] - fstype source
 * super-options. -EINVAL for a line that is not one; -ENAMETOOLONG for a mount point longer
 * than a path can be (no call could name it, so no caller can act on it).
 */
static int mountinfo_parse(char *line, struct mount_entry *mount)
{
	char *field[6], *sep = strstr(line, " - "), *save = NULL;
	int n = 0;

	if (!sep)
		return -EINVAL;
	*sep = '\0';
	for (char *f = strtok_r(line, " ", &save); f && n < 6; f = strtok_r(NULL, " ", &save))
		field[n++] = f;
	if (n < 6)
		return -EINVAL;
	mount->id = atoi(field[0]);
	mount->parent_id = atoi(field[1]);
	mountinfo_unescape(field[4]);
	if (strlen(field[4]) >= sizeof(mount->mount_point))
		return -ENAMETOOLONG;
	strcpy(mount->mount_point, field[4]);
	mountinfo_copy(mount->options, sizeof(mount->options), field[5]);
	save = NULL;
	n = 0;
	for (char *f = strtok_r(sep + 3, " ", &save); f && n < 3; f = strtok_r(NULL, " ", &save))
		field[n++] = f;
	if (n < 1)
		return -EINVAL;
	mountinfo_copy(mount->fstype, sizeof(mount->fstype), field[0]);
	mountinfo_copy(mount->super_options, sizeof(mount->super_options), n == 3 ? field[2] : "");
	return 0;
}

/*
 * The file systems a caller must see wherever they are mounted (the cgroup hierarchies, a
 * BPF file system): a mount of one at a path no call can name is an error, not passed over.
 */
static bool mountinfo_must_see(const char *line_after_sep)
{
	static const char *const types[] = { "cgroup ", "cgroup2 ", "bpf " };

	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (strncmp(line_after_sep, types[i], strlen(types[i])) == 0)
			return true;
	return false;
}

/* Parses one line and hands it to fn: fn's answer, 0 for a line passed over, or -errno. */
static int mountinfo_line(char *line, int (*fn)(const struct mount_entry *mount, void *userdata),
			  void *userdata)
{
	struct mount_entry mount;
	const char *sep = strstr(line, " - ");
	bool must_see = sep && mountinfo_must_see(sep + 3);
	int r = mountinfo_parse(line, &mount);

	if (r == -EINVAL)
		return 0; /* not a mount line: passed over, as before */
	/*
	 * A mount point longer than a path (a FUSE mount deep in a user's folders, say): no
	 * caller could act on it, and one user's mount must not stop every launch.
	 */
	if (r == -ENAMETOOLONG && !must_see)
		return 0;
	return r < 0 ? r : fn(&mount, userdata);
}

/*
 * With read(2) into a buffer on the stack rather than stdio: the sandbox's init walks
 * mountinfo before the job starts, and a FILE and getline's line (its first allocations,
 * fresh pages each) cost it more than the walk.
 * A line longer than that buffer (paths full of escaped spaces, an overlay's long lowerdir:
 * anyone's FUSE mount can make one) moves the walk to a buffer on the heap, as large as
 * it takes.
 */
int mountinfo_foreach(int (*fn)(const struct mount_entry *mount, void *userdata), void *userdata)
{
	_cleanup_close_ int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return mountinfo_foreach_fd(fd, fn, userdata);
}

int mountinfo_foreach_fd(int fd, int (*fn)(const struct mount_entry *mount, void *userdata),
			 void *userdata)
{
	char stack_buf[MOUNTINFO_LINE_MAX];
	_cleanup_free_ char *heap_buf = NULL;
	char *buf = stack_buf;
	size_t size = sizeof(stack_buf), len = 0;
	int r = 0;

	while (r == 0) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		char *line = buf, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		len += (size_t)n;
		buf[len] = '\0';
		while (r == 0 && (end = strchr(line, '\n'))) {
			*end = '\0';
			r = mountinfo_line(line, fn, userdata);
			line = end + 1;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len + 1);
		if (n == 0) {
			/* A last line without its newline. */
			if (r == 0 && len > 0)
				r = mountinfo_line(buf, fn, userdata);
			break;
		}
		if (len == size - 1) {
			/* One line longer than the buffer: a larger one. */
			char *bigger;

			if (size > SIZE_MAX / 2)
				return -E2BIG;
			bigger = realloc(heap_buf, size * 2);
			if (!bigger)
				return -ENOMEM;
			if (!heap_buf)
				memcpy(bigger, stack_buf, len + 1);
			heap_buf = buf = bigger;
			size *= 2;
		}
	}
	return r;
}

struct mountinfo_search {
	const char *fstype;
	char *path;
	size_t len;
};

static int mountinfo_match(const struct mount_entry *mount, void *userdata)
{
	struct mountinfo_search *search = userdata;

	if (strcmp(mount->fstype, search->fstype) != 0)
		return 0;
	if (strlen(mount->mount_point) >= search->len)
		return -ENAMETOOLONG;
	strcpy(search->path, mount->mount_point);
	return 1;
}

int mountinfo_find(const char *fstype, char *ret_path, size_t len)
{
	struct mountinfo_search search = { .fstype = fstype, .path = ret_path, .len = len };
	int r = mountinfo_foreach(mountinfo_match, &search);

	if (r < 0)
		return r;
	return r == 1 ? 0 : -ENOENT;
}
