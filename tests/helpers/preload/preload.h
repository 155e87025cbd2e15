// SPDX-License-Identifier: LGPL-2.1-or-later
/* What the LD_PRELOAD libraries that interpose syscall(3) share: its arguments, and libc's. */
#ifndef LAUNCH_PRELOAD_H
#define LAUNCH_PRELOAD_H

#include <dlfcn.h>
#include <stdarg.h>

typedef long (*preload_syscall_fn)(long, ...);

/* Reads the six arguments a syscall(3) call may carry after `number` into arg[6]. */
#define PRELOAD_SYSCALL_ARGS(number, arg)                            \
	do {                                                         \
		va_list preload_ap;                                  \
		va_start(preload_ap, number);                        \
		for (int preload_i = 0; preload_i < 6; preload_i++)  \
			(arg)[preload_i] = va_arg(preload_ap, long); \
		va_end(preload_ap);                                  \
	} while (0)

/* libc's syscall(3), which every call not meant for the library goes on to. */
static inline preload_syscall_fn preload_syscall_next(void)
{
	static preload_syscall_fn next;

	if (!next)
		next = (preload_syscall_fn)dlsym(RTLD_NEXT, "syscall");
	return next;
}

#endif /* LAUNCH_PRELOAD_H */
