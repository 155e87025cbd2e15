// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library: opening a cgroup v1 `tasks` file by a path relative to a descriptor
 * fails with EACCES, as where a security module refuses the move; every other open goes to the
 * kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int openat(int dir_fd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (dir_fd >= 0 && strcmp(path, "tasks") == 0) {
		errno = EACCES;
		return -1;
	}
	return (int)syscall(SYS_openat, dir_fd, path, flags, mode);
}
