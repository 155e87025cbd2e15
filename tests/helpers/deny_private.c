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

#include "../../launcher/util.h"

#if defined(__x86_64__)
#define DENY_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define DENY_ARCH AUDIT_ARCH_AARCH64
#else
#error "deny_private: add this architecture's AUDIT_ARCH_*"
#endif

/* The low 32 bits of mount()'s flags (its fourth argument), on a little-endian machine. */
#define DENY_FLAGS_LOW offsetof(struct seccomp_data, args[3])

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DENY_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, DENY_FLAGS_LOW),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MS_PRIVATE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(filter), .filter = filter };

	if (argc < 2) {
		fprintf(stderr, "usage: deny_private COMMAND [ARG...]\n");
		return 2;
	}
	/* Root installs it without no_new_privs, so launch keeps every privilege it needs. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("deny_private: seccomp");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror("deny_private: exec");
	return 127;
}
