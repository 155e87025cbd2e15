// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Runs a command as on a kernel built without Landlock: a seccomp filter makes the three
 * landlock_* system calls fail with ENOSYS, for the command and everything it starts.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "lib/util.h"
#include "helpers.h"

#define NO_LANDLOCK_ERRNO(nr)                            \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS)

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		HELPER_FILTER_NATIVE_NR,
		NO_LANDLOCK_ERRNO(__NR_landlock_create_ruleset),
		NO_LANDLOCK_ERRNO(__NR_landlock_add_rule),
		NO_LANDLOCK_ERRNO(__NR_landlock_restrict_self),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(filter), .filter = filter };

	return helper_exec_filtered("no_landlock", &prog, argc, argv);
}
