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

#include "../../launcher/util.h"

#if defined(__x86_64__)
#define NO_LANDLOCK_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NO_LANDLOCK_ARCH AUDIT_ARCH_AARCH64
#else
#error "no_landlock: add this architecture's AUDIT_ARCH_*"
#endif

#define NO_LANDLOCK_ERRNO(nr)                            \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS)

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NO_LANDLOCK_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		NO_LANDLOCK_ERRNO(__NR_landlock_create_ruleset),
		NO_LANDLOCK_ERRNO(__NR_landlock_add_rule),
		NO_LANDLOCK_ERRNO(__NR_landlock_restrict_self),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(filter), .filter = filter };

	if (argc < 2) {
		fprintf(stderr, "usage: no_landlock COMMAND [ARG...]\n");
		return 2;
	}
	/* Root installs it without no_new_privs, so launch keeps every privilege it needs. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("no_landlock: seccomp");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror("no_landlock: exec");
	return 127;
}
