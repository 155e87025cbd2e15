// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library: just before launch clones the sandbox's init (clone3, through
 * syscall(3)), mounts a BPF file system on $MOUNT_AT_CLONE, as another program of the host
 * might at that moment: after launch read its mountinfo, before init's copy of the mounts is
 * cut off from the host's. Every system call then goes to the kernel.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "preload.h"

long syscall(long number, ...)
{
	const char *dir = getenv("MOUNT_AT_CLONE");
	long arg[6];

	PRELOAD_SYSCALL_ARGS(number, arg);
	if (number == SYS_clone3 && dir && *dir)
		mount("bpf", dir, "bpf", 0, NULL);
	return preload_syscall_next()(number, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}
