// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library for the launcher: the kernel seems to have no AF_UNIX cgroup hooks
 * (before Linux 6.7), as the launcher probes them: a BPF_PROG_QUERY of the
 * BPF_CGROUP_UNIX_CONNECT attach type fails with EINVAL, as an unknown attach type does there.
 * Every other call goes to the kernel (libbpf is linked into launch statically and calls
 * syscall(3)).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "preload.h"

/* The attach type's number (enum bpf_attach_type), which older headers lack. */
#define UNIX_CONNECT_ATTACH_TYPE 49

long syscall(long number, ...)
{
	long arg[6];

	PRELOAD_SYSCALL_ARGS(number, arg);
	if (number == SYS_bpf && arg[0] == BPF_PROG_QUERY && arg[1]) {
		const union bpf_attr *attr = (const union bpf_attr *)arg[1];

		if (attr->query.attach_type == UNIX_CONNECT_ATTACH_TYPE) {
			errno = EINVAL;
			return -1;
		}
	}
	return preload_syscall_next()(number, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}
