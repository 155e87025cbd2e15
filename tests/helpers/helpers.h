/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the test helpers share: parsing a destination, reporting one errno by name, running a
 * command under a seccomp filter.
 */
#ifndef LAUNCH_TEST_HELPERS_H
#define LAUNCH_TEST_HELPERS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* "127.0.0.2" or "2001:db8::1" (or "::ffff:127.0.0.2") and a port 0-65535. */
static inline int helper_parse_dest(const char *addr, const char *port,
				    struct sockaddr_storage *ret, socklen_t *ret_len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret;
	char *end;
	long p;

	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 0 || p > 65535)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		*ret_len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)p);
		*ret_len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

/* Prints "OK" for 0, else the negative errno's name (EPERM, ...); the helpers exit 0 then. */
static inline void helper_report(int r)
{
	const char *name = r ? strerrorname_np(-r) : "OK";

	if (name)
		puts(name);
	else
		printf("E%d\n", -r);
}

#if defined(__x86_64__)
#define HELPER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HELPER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "helpers.h: add this architecture's AUDIT_ARCH_*"
#endif

/*
 * A filter's first four instructions: another ABI's calls are allowed, and the system call's
 * number is loaded for what follows.
 */
#define HELPER_FILTER_NATIVE_NR                                                  \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HELPER_AUDIT_ARCH, 1, 0),    \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                    \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

/*
 * Installs prog, then execs argv[1] with the rest of argv: the filter holds for the command and
 * everything it starts. Root installs it without no_new_privs, so launch keeps every privilege
 * it needs. Returns only on failure, with the helper's exit status: 2 (usage), 125 (the
 * filter), 127 (the exec).
 */
static inline int helper_exec_filtered(const char *name, struct sock_fprog *prog, int argc,
				       char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s COMMAND [ARG...]\n", name);
		return 2;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0) {
		fprintf(stderr, "%s: seccomp: %s\n", name, strerror(errno));
		return 125;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "%s: exec: %s\n", name, strerror(errno));
	return 127;
}

#endif /* LAUNCH_TEST_HELPERS_H */
