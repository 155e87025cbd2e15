// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Runs a command whose every mount() that changes propagation to private fails with EPERM: a
 * seccomp filter, for the command and everything it starts. For the test that launch makes
 * nothing of its namespace's mounts private-dependent before that succeeded.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "lib/util.h"
#include "helpers.h"

/* The low 32 bits of mount()'s flags (its fourth argument), on a little-endian machine. */
#define DENY_FLAGS_LOW offsetof(struct seccomp_data, args[3])

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		HELPER_FILTER_NATIVE_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, DENY_FLAGS_LOW),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MS_PRIVATE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(filter), .filter = filter };

	return helper_exec_filtered("deny_private", &prog, argc, argv);
}
