// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of the job's seccomp filter: its decisions, and which calls the kernel caches. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "sandbox/seccomp.h"
#include "test.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define OTHER_ARCH  AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define OTHER_ARCH  AUDIT_ARCH_ARM
#endif
/* Above every system call number of either ABI today, with room for the coming ones. */
#define NR_LIMIT 1024

/* The calls whose decision needs more than their number: the filter runs for these only. */
static const int ARG_CALLS[] = { __NR_socket, __NR_socketpair,	   __NR_clone,	__NR_unshare,
				 __NR_listen, __NR_io_uring_setup, __NR_clone3, __NR_setsockopt };

static bool arg_call(uint32_t nr)
{
	for (size_t i = 0; i < sizeof(ARG_CALLS) / sizeof(ARG_CALLS[0]); i++)
		if ((uint32_t)ARG_CALLS[i] == nr)
			return true;
	return false;
}

/*
 * The kernel's seccomp_is_const_allow (kernel/seccomp.c), rule for rule: the program is
 * walked with only nr and arch known; any other load or instruction, and any answer but
 * ALLOW, means the filter has to run for that call.
 */
static bool kernel_const_allow(const struct sock_filter *prog, size_t len, uint32_t arch,
			       uint32_t nr)
{
	uint32_t reg = 0;

	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *insn = &prog[pc];
		bool taken;

		switch (insn->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (insn->k == offsetof(struct seccomp_data, nr))
				reg = nr;
			else if (insn->k == offsetof(struct seccomp_data, arch))
				reg = arch;
			else
				return false;
			break;
		case BPF_RET | BPF_K:
			return insn->k == SECCOMP_RET_ALLOW;
		case BPF_JMP | BPF_JA:
			pc += insn->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_K:
			switch (BPF_OP(insn->code)) {
			case BPF_JEQ:
				taken = reg == insn->k;
				break;
			case BPF_JGE:
				taken = reg >= insn->k;
				break;
			case BPF_JGT:
				taken = reg > insn->k;
				break;
			default:
				taken = (reg & insn->k) != 0;
				break;
			}
			pc += taken ? insn->jt : insn->jf;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			reg &= insn->k;
			break;
		default:
			return false;
		}
	}
	return false;
}

/*
 * Runs the filter on one call, as the kernel would: every load of seccomp_data, the jumps
 * and the AND the filter uses. Returns the filter's answer; 0xdead on an instruction it
 * does not know or a jump out of the program, which no answer of the filter's can equal.
 */
static unsigned int filter_flags; /* the seccomp_install flags run_data's filter has */

static uint32_t run_data(const struct seccomp_data *data)
{
	const struct sock_filter *prog;
	uint32_t acc = 0;
	size_t len;

	prog = filter_flags ? seccomp_program_for(filter_flags, &len) : seccomp_program(&len);
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *insn = &prog[pc];
		bool taken;

		switch (insn->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (insn->k > sizeof(*data) - sizeof(acc) || insn->k % 4)
				return 0xdead;
			memcpy(&acc, (const char *)data + insn->k, sizeof(acc));
			continue;
		case BPF_ALU | BPF_AND | BPF_K:
			acc &= insn->k;
			continue;
		case BPF_RET | BPF_K:
			return insn->k;
		case BPF_JMP | BPF_JEQ | BPF_K:
			taken = acc == insn->k;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			taken = acc >= insn->k;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			taken = acc > insn->k;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			taken = (acc & insn->k) != 0;
			break;
		default:
			return 0xdead;
		}
		pc += taken ? insn->jt : insn->jf;
	}
	return 0xdead;
}

static uint32_t run_filter(uint32_t arch, uint32_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct seccomp_data data = { .nr = (int)nr, .arch = arch, .args = { a0, a1, a2 } };

	return run_data(&data);
}

static uint32_t run_native(uint32_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	return run_filter(NATIVE_ARCH, nr, a0, a1, a2);
}

/* Every instruction is set (a forgotten one would read as "ld #0"), and it ends in a return. */
static void test_program_complete(void)
{
	const struct sock_filter *prog;
	size_t len;

	prog = seccomp_program(&len);
	CHECK(len > 0 && len <= BPF_MAXINSNS);
	for (size_t pc = 0; pc < len; pc++) {
		if (prog[pc].code == 0)
			printf("  instruction %zu is not set\n", pc);
		CHECK(prog[pc].code != 0);
		if (BPF_CLASS(prog[pc].code) == BPF_JMP)
			CHECK(pc + 1 + prog[pc].jt < len && pc + 1 + prog[pc].jf < len);
	}
	CHECK_EQ_INT(prog[len - 1].code, BPF_RET | BPF_K);
}

/*
 * The kernel's constant-action cache covers every native call but those that need their
 * arguments: for those, the filter runs; for the rest, a bit in a bitmap is all it costs.
 */
static void test_cache_covers_native(void)
{
	const struct sock_filter *prog;
	size_t len;
	int cached = 0, wrong = 0;

	prog = seccomp_program(&len);
	for (uint32_t nr = 0; nr < NR_LIMIT; nr++) {
		bool allow = kernel_const_allow(prog, len, NATIVE_ARCH, nr);

		if (allow == arg_call(nr) && wrong++ < 8)
			printf("  nr %u: constant allow %d, needs its arguments %d\n", nr, allow,
			       arg_call(nr));
		cached += allow;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(cached, NR_LIMIT - (int)(sizeof(ARG_CALLS) / sizeof(ARG_CALLS[0])));
	/* The cache's own view of getppid, read, write: allowed without running the filter. */
	CHECK(kernel_const_allow(prog, len, NATIVE_ARCH, __NR_getppid));
	CHECK(kernel_const_allow(prog, len, NATIVE_ARCH, __NR_read));
	CHECK(kernel_const_allow(prog, len, NATIVE_ARCH, __NR_write));
}

/* No call of another ABI is allowed, cached or not: each goes to the launcher. */
static void test_foreign_abi_refused(void)
{
	const struct sock_filter *prog;
	size_t len;

	prog = seccomp_program(&len);
	for (uint32_t nr = 0; nr < NR_LIMIT; nr++) {
		CHECK(!kernel_const_allow(prog, len, OTHER_ARCH, nr));
		CHECK_EQ_INT(run_filter(OTHER_ARCH, nr, AF_UNIX, 0, 0), SECCOMP_RET_USER_NOTIF);
	}
#if defined(__x86_64__)
	/* x32: the native arch value, bit 30 set in the number. */
	for (uint32_t nr = 0; nr < NR_LIMIT; nr++) {
		CHECK(!kernel_const_allow(prog, len, NATIVE_ARCH, nr | 0x40000000u));
		CHECK_EQ_INT(run_filter(NATIVE_ARCH, nr | 0x40000000u, AF_UNIX, 0, 0),
			     SECCOMP_RET_USER_NOTIF);
	}
#endif
	CHECK_EQ_INT(run_filter(0, __NR_getppid, 0, 0, 0), SECCOMP_RET_USER_NOTIF);
}

/* setsockopt(3, level, optname, optval, optlen) as the filter answers it. */
static uint32_t run_sockopt(uint64_t level, uint64_t optname, uint64_t optlen)
{
	struct seccomp_data data = {
		.nr = __NR_setsockopt,
		.arch = NATIVE_ARCH,
		.args = { 3, level, optname, 0x1000, optlen },
	};

	return run_data(&data);
}

/* What each call that needs its arguments is answered. */
static void test_decisions(void)
{
	const uint32_t allow = SECCOMP_RET_ALLOW, notify = SECCOMP_RET_USER_NOTIF;

	CHECK_EQ_INT(run_native(__NR_getppid, 0, 0, 0), allow);
	CHECK_EQ_INT(run_native(__NR_connect, 3, 0, 0), allow);

	CHECK_EQ_INT(run_native(__NR_socket, AF_UNIX, SOCK_STREAM, 0), allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0), allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_RAW, 1), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_RAW | SOCK_CLOEXEC, 58), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, 10 /* SOCK_PACKET */, 0), notify);
	/* inet: TCP and UDP, named or by the type's default (0), nothing else. */
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM, IPPROTO_TCP), allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP),
		     allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP),
		     allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_DGRAM, IPPROTO_UDP), allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_DGRAM, IPPROTO_ICMP), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_DGRAM, IPPROTO_TCP), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM, 262 /* MPTCP */), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM, IPPROTO_UDP), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_SEQPACKET, IPPROTO_SCTP), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM, IPPROTO_SCTP), notify);
	/* The protocol is an int too. */
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM, IPPROTO_TCP | (1ULL << 32)),
		     allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_DGRAM, IPPROTO_ICMP | (1ULL << 32)),
		     notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), allow);
	CHECK_EQ_INT(run_native(__NR_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_PACKET, SOCK_RAW, 0), notify);
	CHECK_EQ_INT(run_native(__NR_socket, AF_VSOCK, SOCK_STREAM, 0), notify);
	/* The family is an int: the upper half of the register does not count. */
	CHECK_EQ_INT(run_native(__NR_socket, AF_PACKET | (1ULL << 32), SOCK_RAW, 0), notify);

	CHECK_EQ_INT(run_native(__NR_socketpair, AF_UNIX, SOCK_STREAM, 0), allow);
	CHECK_EQ_INT(run_native(__NR_socketpair, AF_INET, SOCK_STREAM, 0), notify);

	CHECK_EQ_INT(run_native(__NR_clone, SIGCHLD, 0, 0), allow);
	CHECK_EQ_INT(run_native(__NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0), notify);
	CHECK_EQ_INT(run_native(__NR_unshare, CLONE_NEWNS, 0, 0), allow);
	CHECK_EQ_INT(run_native(__NR_unshare, CLONE_NEWUSER | CLONE_NEWNET, 0, 0), notify);
	CHECK_EQ_INT(run_native(__NR_clone3, 0, 0, 0), SECCOMP_RET_ERRNO | ENOSYS);
	CHECK_EQ_INT(run_native(__NR_listen, 3, 128, 0), notify);
	CHECK_EQ_INT(run_native(__NR_io_uring_setup, 8, 0, 0), notify);

	/* setsockopt(fd, level, optname, optval, optlen): the route-changing options only. */
	CHECK_EQ_INT(run_sockopt(SOL_SOCKET, SO_LINGER, 8), allow);
	CHECK_EQ_INT(run_sockopt(IPPROTO_TCP, TCP_NODELAY, 4), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IP, IP_TOS, 4), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IP, IP_OPTIONS, 4), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IP, IP_OPTIONS, 0), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IP, IP_OPTIONS, 0xffffffffu), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IP, IP_OPTIONS, 4ULL << 32), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_RTHDR, 24), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_RTHDR, 0), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_HOPOPTS, 8), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_DSTOPTS, 8), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_RTHDRDSTOPTS, 8), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292PKTOPTIONS, 24), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292PKTOPTIONS, 0), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292PKTINFO, 0), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292HOPOPTS, 4), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292DSTOPTS, 4), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292RTHDR, 4), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_2292HOPLIMIT, 4), notify);
	/* Judged by its value, in the launcher. */
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_PKTINFO, 20), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, 32 /* IPV6_FLOWLABEL_MGR */, 32), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, 32 /* IPV6_FLOWLABEL_MGR */, 56), notify);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_V6ONLY, 4), allow);
	CHECK_EQ_INT(run_sockopt(SOL_IPV6, IPV6_TCLASS, 4), allow);
}

/*
 * On a kernel without the AF_UNIX hooks (SECCOMP_REFUSE_UNIX) an AF_UNIX socket goes to the
 * launcher, which refuses it; inet, netlink and socketpair are judged as always, and the
 * default filter lets AF_UNIX sockets be made (the cgroup hooks judge their connects).
 */
static void test_refuse_unix(void)
{
	const struct sock_filter *prog;
	size_t len;

	CHECK_EQ_INT(run_native(__NR_socket, AF_UNIX, SOCK_STREAM, 0), SECCOMP_RET_ALLOW);
	filter_flags = SECCOMP_REFUSE_UNIX;
	prog = seccomp_program_for(filter_flags, &len);
	CHECK_EQ_INT(prog[len - 1].code, BPF_RET | BPF_K);
	CHECK_EQ_INT(run_native(__NR_socket, AF_UNIX, SOCK_STREAM, 0), SECCOMP_RET_USER_NOTIF);
	CHECK_EQ_INT(run_native(__NR_socket, AF_UNIX, SOCK_DGRAM, 0), SECCOMP_RET_USER_NOTIF);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET, SOCK_STREAM, 0), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_native(__NR_socket, AF_INET6, SOCK_DGRAM, 0), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_native(__NR_socketpair, AF_UNIX, SOCK_STREAM, 0), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_native(__NR_getppid, 0, 0, 0), SECCOMP_RET_ALLOW);
	filter_flags = 0;
}

/* A call with four arguments, as the filter answers it. */
static uint32_t run_native4(uint32_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct seccomp_data data = { .nr = (int)nr,
				     .arch = NATIVE_ARCH,
				     .args = { a0, a1, a2, a3 } };

	return run_data(&data);
}

/* SECCOMP_REFUSE_FASTOPEN: Fast Open goes to the launcher; every other send and option goes on. */
static void test_refuse_fastopen(void)
{
	const uint32_t eperm = SECCOMP_RET_USER_NOTIF; /* the launcher refuses and logs */
	const struct sock_filter *prog;
	size_t len;

	/* Without the flag the sends are the cache's: allowed whatever their flags. */
	CHECK_EQ_INT(run_native4(__NR_sendto, 3, 0, 10, MSG_FASTOPEN), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_sockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 4), SECCOMP_RET_ALLOW);
	filter_flags = SECCOMP_REFUSE_FASTOPEN;
	prog = seccomp_program_for(filter_flags, &len);
	for (size_t pc = 0; pc < len; pc++)
		if (BPF_CLASS(prog[pc].code) == BPF_JMP)
			CHECK(pc + 1 + prog[pc].jt < len && pc + 1 + prog[pc].jf < len);
	CHECK_EQ_INT(run_native4(__NR_sendto, 3, 0, 10, MSG_FASTOPEN), eperm);
	CHECK_EQ_INT(run_native4(__NR_sendto, 3, 0, 10, MSG_FASTOPEN | MSG_NOSIGNAL), eperm);
	CHECK_EQ_INT(run_native4(__NR_sendto, 3, 0, 10, MSG_NOSIGNAL), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_native4(__NR_sendmsg, 3, 0, MSG_FASTOPEN, 0), eperm);
	CHECK_EQ_INT(run_native4(__NR_sendmsg, 3, 0, MSG_DONTWAIT, 0), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_native4(__NR_sendmmsg, 3, 0, 2, MSG_FASTOPEN), eperm);
	CHECK_EQ_INT(run_native4(__NR_sendmmsg, 3, 0, 2, 0), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_sockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 4), eperm);
	CHECK_EQ_INT(run_sockopt(IPPROTO_TCP, TCP_NODELAY, 4), SECCOMP_RET_ALLOW);
	/* The other options are judged as before. */
	CHECK_EQ_INT(run_sockopt(IPPROTO_IPV6, IPV6_RTHDR, 8), SECCOMP_RET_USER_NOTIF);
	CHECK_EQ_INT(run_sockopt(IPPROTO_IP, IP_OPTIONS, 8), SECCOMP_RET_USER_NOTIF);
	CHECK_EQ_INT(run_sockopt(SOL_SOCKET, SO_REUSEADDR, 4), SECCOMP_RET_ALLOW);
	CHECK_EQ_INT(run_native(__NR_getppid, 0, 0, 0), SECCOMP_RET_ALLOW);
	filter_flags = 0;
}

int main(void)
{
	RUN(test_program_complete);
	RUN(test_cache_covers_native);
	RUN(test_foreign_abi_refused);
	RUN(test_decisions);
	RUN(test_refuse_unix);
	RUN(test_refuse_fastopen);
	return test_failures ? 1 : 0;
}
