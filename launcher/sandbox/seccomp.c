// SPDX-License-Identifier: LGPL-2.1-or-later
/* The job's seccomp filter: the doors cgroup hooks cannot see, refused and reported. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "policy/inbound.h"
#include "seccomp.h"
#include "lib/util.h"

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#else
#error "seccomp: unsupported architecture"
#endif

#define SOCK_TYPE_MASK 0xf
/* pidfd_open() of a thread rather than a thread group (kernel 6.9), O_EXCL's value. */
#define SECCOMP_PIDFD_THREAD 0x80
/* x32 calls: AUDIT_ARCH_X86_64, with this bit set in the number. */
#define SECCOMP_X32_BIT 0x40000000u

#ifndef IPV6_FLOWLABEL_MGR
#define IPV6_FLOWLABEL_MGR 32 /* linux/in6.h, which clashes with glibc's netinet/in.h */
#endif
/* struct in6_flowlabel_req: what follows it in IPV6_FLOWLABEL_MGR is the label's options. */
#define SECCOMP_FLOWLABEL_REQ_LEN 32
/* struct in6_pktinfo: the source address, then the outgoing interface. */
#define SECCOMP_PKTINFO_LEN 20

/* Low 32 bits of an argument (little-endian) */
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(__u64))

#define LOAD(off)	  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v)		  BPF_STMT(BPF_RET | BPF_K, (v))
#define JUMP(op, v, t, f) BPF_JUMP(BPF_JMP | (op) | BPF_K, (v), (t), (f))
#define RET_ALLOW	  RET(SECCOMP_RET_ALLOW)
#define RET_NOTIFY	  RET(SECCOMP_RET_USER_NOTIF)
#define RET_ERRNO(e)	  RET(SECCOMP_RET_ERRNO | (e))

/*
 * The filter's instructions by name, in program order: a jump names its target, and TO()
 * turns that into the offset classic BPF wants, so that no count is kept by hand.
 */
enum {
	/* Prologue: the arch, then the number, read once. */
	SF_LOAD_ARCH,
	SF_IS_NATIVE,
	SF_FOREIGN,
	SF_LOAD_NR,
#if defined(__x86_64__)
	SF_IS_X32,
	SF_X32,
#endif
	/* Dispatch: a call that needs more than its number jumps to its block. */
	SF_IS_SOCKET,
	SF_IS_SOCKETPAIR,
	SF_IS_CLONE,
	SF_IS_UNSHARE,
	SF_IS_LISTEN,
	SF_IS_IO_URING,
	SF_IS_CLONE3,
	SF_IS_SETSOCKOPT,
	SF_IS_SENDTO,
	SF_IS_SENDMSG,
	SF_IS_SENDMMSG,
	/* socket(family, type, protocol) */
	SF_SOCKET_FAMILY,
	SF_SOCKET_UNIX,
	SF_SOCKET_INET,
	SF_SOCKET_INET6,
	SF_SOCKET_NETLINK,
	SF_NETLINK_PROTOCOL,
	SF_NETLINK_ROUTE,
	SF_SOCKET_TYPE,
	SF_SOCKET_TYPE_MASK,
	SF_SOCKET_STREAM,
	SF_SOCKET_DGRAM,
	SF_STREAM_PROTOCOL,
	SF_STREAM_DEFAULT,
	SF_STREAM_TCP,
	SF_DGRAM_PROTOCOL,
	SF_DGRAM_DEFAULT,
	SF_DGRAM_UDP,
	/* socketpair(family, ...) */
	SF_SOCKETPAIR_FAMILY,
	SF_SOCKETPAIR_UNIX,
	/* clone(flags, ...) and unshare(flags) */
	SF_CLONE_FLAGS,
	SF_CLONE_NEWUSER,
	/* setsockopt(fd, level, optname, optval, optlen) */
	SF_SOCKOPT_LEVEL,
	SF_SOCKOPT_IS_IP,
	SF_SOCKOPT_IS_IPV6,
	SF_IP_OPTNAME,
	SF_IP_OPTIONS,
	SF_IPV6_OPTNAME,
	SF_IPV6_RTHDR,
	SF_IPV6_HOPOPTS,
	SF_IPV6_DSTOPTS,
	SF_IPV6_RTHDRDSTOPTS,
	SF_IPV6_2292PKTOPTIONS,
	SF_IPV6_2292PKTINFO,
	SF_IPV6_2292HOPOPTS,
	SF_IPV6_2292DSTOPTS,
	SF_IPV6_2292RTHDR,
	SF_IPV6_2292HOPLIMIT,
	SF_IPV6_PKTINFO,
	SF_IPV6_FLOWLABEL_MGR,
	SF_SOCKOPT_LEN,
	SF_SOCKOPT_LEN_SET,
	SF_FLOWLABEL_LEN,
	SF_FLOWLABEL_HEADERS,
	/* SECCOMP_REFUSE_FASTOPEN: setsockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT), send flags */
	SF_SOCKOPT_IS_TCP,
	SF_TCP_OPTNAME,
	SF_TCP_FASTOPEN_CONNECT,
	SF_SENDTO_FLAGS,
	SF_SENDTO_FASTOPEN,
	SF_SENDMSG_FLAGS,
	SF_SENDMSG_FASTOPEN,
	SF_SENDMMSG_FLAGS,
	SF_SENDMMSG_FASTOPEN,
	/* The answers, last: classic BPF jumps only forward. */
	SF_ALLOW,
	SF_NOTIFY,
	SF_ENOSYS,
	SF_COUNT
};

/*
 * The offset of a jump at instruction `from` to instruction `to`; a jump backwards or
 * beyond 255 instructions, which classic BPF cannot make, does not compile.
 */
#define TO(from, to) \
	(sizeof(char[(to) > (from) && (to) - (from) <= 256 ? 1 : -1]) * 0 + (to) - (from)-1)
#define JEQ(at, v, t, f)  [at] = JUMP(BPF_JEQ, (v), TO(at, t), TO(at, f))
#define JSET(at, v, t, f) [at] = JUMP(BPF_JSET, (v), TO(at, t), TO(at, f))
/* The instruction JEQ(at, ...) makes, for a variant of the filter written in place. */
#define JEQ_AT(at, v, t, f) JUMP(BPF_JEQ, (v), TO(at, t), TO(at, f))

/*
 * The kernel runs a filter only for calls whose action it cannot tell from the number and
 * arch alone (seccomp_cache_prepare, 5.11): a call that reaches RET_ALLOW through loads of
 * nr and arch and jumps on constants only is allowed from a bitmap, without running the
 * program. So the arguments are loaded only in the blocks of the calls that need them,
 * after the dispatch, and every other call of the native ABI goes straight to SF_ALLOW
 * (tests/unit/test_seccomp.c replays the kernel's check over every number).
 */
static const struct sock_filter SECCOMP_FILTER[SF_COUNT] = {
	/*
	 * Another ABI's numbering (i386 through int 0x80): nothing is allowed, and the
	 * launcher logs each refusal with the call's name in that ABI.
	 */
	[SF_LOAD_ARCH] = LOAD(offsetof(struct seccomp_data, arch)),
	JEQ(SF_IS_NATIVE, SECCOMP_ARCH, SF_LOAD_NR, SF_FOREIGN),
	[SF_FOREIGN] = RET_NOTIFY,
	[SF_LOAD_NR] = LOAD(offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
	/* x32 calls share the arch value, with bit 30 set: refused and logged, all of them. */
	[SF_IS_X32] =
		JUMP(BPF_JGE, SECCOMP_X32_BIT, TO(SF_IS_X32, SF_X32), TO(SF_IS_X32, SF_IS_SOCKET)),
	[SF_X32] = RET_NOTIFY,
#endif
	JEQ(SF_IS_SOCKET, __NR_socket, SF_SOCKET_FAMILY, SF_IS_SOCKETPAIR),
	JEQ(SF_IS_SOCKETPAIR, __NR_socketpair, SF_SOCKETPAIR_FAMILY, SF_IS_CLONE),
	/* clone(flags, ...), unshare(flags): no new user namespace. */
	JEQ(SF_IS_CLONE, __NR_clone, SF_CLONE_FLAGS, SF_IS_UNSHARE),
	JEQ(SF_IS_UNSHARE, __NR_unshare, SF_CLONE_FLAGS, SF_IS_LISTEN),
	/*
	 * listen(fd, backlog): the launcher judges the socket's address, which the filter
	 * cannot see, and listens on the job's behalf (seccomp_listen).
	 */
	JEQ(SF_IS_LISTEN, __NR_listen, SF_NOTIFY, SF_IS_IO_URING),
	/* io_uring's IORING_OP_SOCKET makes sockets without calling socket(). */
	JEQ(SF_IS_IO_URING, __NR_io_uring_setup, SF_NOTIFY, SF_IS_CLONE3),
	/*
	 * clone3 passes its flags by pointer, which a filter cannot read: libc falls back to
	 * clone, which is judged above. Not a refusal, so not logged: glibc tries clone3 for
	 * every thread and fork. Every other call is decided by its number alone.
	 */
	JEQ(SF_IS_CLONE3, __NR_clone3, SF_ENOSYS, SF_IS_SETSOCKOPT),
	JEQ(SF_IS_SETSOCKOPT, __NR_setsockopt, SF_SOCKOPT_LEVEL, SF_IS_SENDTO),
	/*
	 * The sends: allowed by number, unless SECCOMP_REFUSE_FASTOPEN points them at their flags
	 * (seccomp_program_for).
	 */
	JEQ(SF_IS_SENDTO, __NR_sendto, SF_ALLOW, SF_IS_SENDMSG),
	JEQ(SF_IS_SENDMSG, __NR_sendmsg, SF_ALLOW, SF_IS_SENDMMSG),
	JEQ(SF_IS_SENDMMSG, __NR_sendmmsg, SF_ALLOW, SF_ALLOW),

	[SF_SOCKET_FAMILY] = LOAD(ARG_LO(0)),
	JEQ(SF_SOCKET_UNIX, AF_UNIX, SF_ALLOW, SF_SOCKET_INET),
	JEQ(SF_SOCKET_INET, AF_INET, SF_SOCKET_TYPE, SF_SOCKET_INET6),
	JEQ(SF_SOCKET_INET6, AF_INET6, SF_SOCKET_TYPE, SF_SOCKET_NETLINK),
	/* Any other family goes to the launcher. */
	JEQ(SF_SOCKET_NETLINK, AF_NETLINK, SF_NETLINK_PROTOCOL, SF_NOTIFY),
	[SF_NETLINK_PROTOCOL] = LOAD(ARG_LO(2)),
	/* Other netlink protocols: docs/threat-model.md. */
	JEQ(SF_NETLINK_ROUTE, NETLINK_ROUTE, SF_ALLOW, SF_NOTIFY),
	/*
	 * inet and inet6: TCP and UDP only, by the type and the protocol the kernel resolves 0
	 * to (inet_create), so that ping, raw, SCTP, MPTCP and UDP-Lite sockets never exist.
	 * This call runs the filter anyway; a cgroup/sock_create program would cost every
	 * socket a program run more.
	 */
	[SF_SOCKET_TYPE] = LOAD(ARG_LO(1)),
	[SF_SOCKET_TYPE_MASK] = BPF_STMT(BPF_ALU | BPF_AND | BPF_K, SOCK_TYPE_MASK),
	JEQ(SF_SOCKET_STREAM, SOCK_STREAM, SF_STREAM_PROTOCOL, SF_SOCKET_DGRAM),
	JEQ(SF_SOCKET_DGRAM, SOCK_DGRAM, SF_DGRAM_PROTOCOL, SF_NOTIFY),
	[SF_STREAM_PROTOCOL] = LOAD(ARG_LO(2)),
	JEQ(SF_STREAM_DEFAULT, 0, SF_ALLOW, SF_STREAM_TCP),
	JEQ(SF_STREAM_TCP, IPPROTO_TCP, SF_ALLOW, SF_NOTIFY),
	[SF_DGRAM_PROTOCOL] = LOAD(ARG_LO(2)),
	JEQ(SF_DGRAM_DEFAULT, 0, SF_ALLOW, SF_DGRAM_UDP),
	JEQ(SF_DGRAM_UDP, IPPROTO_UDP, SF_ALLOW, SF_NOTIFY),

	/*
	 * The options that send packets elsewhere than the address judged (docs/threat-model.md,
	 * "Route-changing options"), by level, name and length; a zero length removes a header.
	 * The launcher refuses them, but a sticky IPV6_PKTINFO, which it judges by its value and
	 * sets itself when that is all zeros (seccomp_setsockopt). Every other option is
	 * allowed here, so no cgroup/setsockopt program has to run for each setsockopt().
	 */
	[SF_SOCKOPT_LEVEL] = LOAD(ARG_LO(1)),
	JEQ(SF_SOCKOPT_IS_IP, SOL_IP, SF_IP_OPTNAME, SF_SOCKOPT_IS_IPV6),
	JEQ(SF_SOCKOPT_IS_IPV6, SOL_IPV6, SF_IPV6_OPTNAME, SF_ALLOW),
	[SF_IP_OPTNAME] = LOAD(ARG_LO(2)),
	/* Source routes (LSRR/SSRR) among them: the packet goes to the first hop. */
	JEQ(SF_IP_OPTIONS, IP_OPTIONS, SF_SOCKOPT_LEN, SF_ALLOW),
	[SF_IPV6_OPTNAME] = LOAD(ARG_LO(2)),
	JEQ(SF_IPV6_RTHDR, IPV6_RTHDR, SF_SOCKOPT_LEN, SF_IPV6_HOPOPTS),
	JEQ(SF_IPV6_HOPOPTS, IPV6_HOPOPTS, SF_SOCKOPT_LEN, SF_IPV6_DSTOPTS),
	JEQ(SF_IPV6_DSTOPTS, IPV6_DSTOPTS, SF_SOCKOPT_LEN, SF_IPV6_RTHDRDSTOPTS),
	JEQ(SF_IPV6_RTHDRDSTOPTS, IPV6_RTHDRDSTOPTS, SF_SOCKOPT_LEN, SF_IPV6_2292PKTOPTIONS),
	JEQ(SF_IPV6_2292PKTOPTIONS, IPV6_2292PKTOPTIONS, SF_SOCKOPT_LEN, SF_IPV6_2292PKTINFO),
	/* The obsolete RFC 2292 interface, which nothing current uses: all of it. */
	JEQ(SF_IPV6_2292PKTINFO, IPV6_2292PKTINFO, SF_NOTIFY, SF_IPV6_2292HOPOPTS),
	JEQ(SF_IPV6_2292HOPOPTS, IPV6_2292HOPOPTS, SF_NOTIFY, SF_IPV6_2292DSTOPTS),
	JEQ(SF_IPV6_2292DSTOPTS, IPV6_2292DSTOPTS, SF_NOTIFY, SF_IPV6_2292RTHDR),
	JEQ(SF_IPV6_2292RTHDR, IPV6_2292RTHDR, SF_NOTIFY, SF_IPV6_2292HOPLIMIT),
	JEQ(SF_IPV6_2292HOPLIMIT, IPV6_2292HOPLIMIT, SF_NOTIFY, SF_IPV6_PKTINFO),
	JEQ(SF_IPV6_PKTINFO, IPV6_PKTINFO, SF_NOTIFY, SF_IPV6_FLOWLABEL_MGR),
	JEQ(SF_IPV6_FLOWLABEL_MGR, IPV6_FLOWLABEL_MGR, SF_FLOWLABEL_LEN, SF_ALLOW),
	/* optlen is an int: the upper half does not count, and a negative one is refused. */
	[SF_SOCKOPT_LEN] = LOAD(ARG_LO(4)),
	JEQ(SF_SOCKOPT_LEN_SET, 0, SF_ALLOW, SF_NOTIFY),
	/*
	 * A flow label may carry headers after its struct in6_flowlabel_req (32 bytes), which
	 * sendmsg merges into each datagram sent with the label.
	 */
	[SF_FLOWLABEL_LEN] = LOAD(ARG_LO(4)),
	[SF_FLOWLABEL_HEADERS] =
		JUMP(BPF_JGT, SECCOMP_FLOWLABEL_REQ_LEN, TO(SF_FLOWLABEL_HEADERS, SF_NOTIFY),
		     TO(SF_FLOWLABEL_HEADERS, SF_ALLOW)),

	/*
	 * TCP Fast Open (SECCOMP_REFUSE_FASTOPEN): its data leaves in the SYN, before the TLS
	 * server-name check can see it (docs/threat-model.md); the launcher refuses it with EPERM
	 * and logs it (op setsockopt, or syscall naming the send). sendmmsg's flags apply to every
	 * message (___sys_sendmsg ignores each msghdr's own msg_flags).
	 */
	JEQ(SF_SOCKOPT_IS_TCP, IPPROTO_TCP, SF_TCP_OPTNAME, SF_ALLOW),
	[SF_TCP_OPTNAME] = LOAD(ARG_LO(2)),
	JEQ(SF_TCP_FASTOPEN_CONNECT, TCP_FASTOPEN_CONNECT, SF_NOTIFY, SF_ALLOW),
	[SF_SENDTO_FLAGS] = LOAD(ARG_LO(3)),
	JSET(SF_SENDTO_FASTOPEN, MSG_FASTOPEN, SF_NOTIFY, SF_ALLOW),
	[SF_SENDMSG_FLAGS] = LOAD(ARG_LO(2)),
	JSET(SF_SENDMSG_FASTOPEN, MSG_FASTOPEN, SF_NOTIFY, SF_ALLOW),
	[SF_SENDMMSG_FLAGS] = LOAD(ARG_LO(3)),
	JSET(SF_SENDMMSG_FASTOPEN, MSG_FASTOPEN, SF_NOTIFY, SF_ALLOW),

	[SF_SOCKETPAIR_FAMILY] = LOAD(ARG_LO(0)),
	JEQ(SF_SOCKETPAIR_UNIX, AF_UNIX, SF_ALLOW, SF_NOTIFY),

	[SF_CLONE_FLAGS] = LOAD(ARG_LO(0)),
	JSET(SF_CLONE_NEWUSER, CLONE_NEWUSER, SF_NOTIFY, SF_ALLOW),

	[SF_ALLOW] = RET_ALLOW,
	[SF_NOTIFY] = RET_NOTIFY,
	[SF_ENOSYS] = RET_ERRNO(ENOSYS),
};

const struct sock_filter *seccomp_program(size_t *ret_len)
{
	*ret_len = ARRAY_SIZE(SECCOMP_FILTER);
	return SECCOMP_FILTER;
}

const struct sock_filter *seccomp_program_for(unsigned int flags, size_t *ret_len)
{
	static struct sock_filter program[SF_COUNT];

	memcpy(program, SECCOMP_FILTER, sizeof(program));
	/*
	 * Without the AF_UNIX cgroup hooks (before 6.7) nothing judges an AF_UNIX connect, and a
	 * filter cannot tell an AF_UNIX socket's connect from an inet one's: no AF_UNIX socket is
	 * made at all, each attempt refused by the launcher and logged (socketpair stays).
	 */
	if (flags & SECCOMP_REFUSE_UNIX)
		program[SF_SOCKET_UNIX] =
			(struct sock_filter)JUMP(BPF_JEQ, AF_UNIX, TO(SF_SOCKET_UNIX, SF_NOTIFY),
						 TO(SF_SOCKET_UNIX, SF_SOCKET_INET));
	if (flags & SECCOMP_REFUSE_FASTOPEN) {
		program[SF_IS_SENDTO] = (struct sock_filter)JEQ_AT(SF_IS_SENDTO, __NR_sendto,
								   SF_SENDTO_FLAGS, SF_IS_SENDMSG);
		program[SF_IS_SENDMSG] = (struct sock_filter)JEQ_AT(
			SF_IS_SENDMSG, __NR_sendmsg, SF_SENDMSG_FLAGS, SF_IS_SENDMMSG);
		program[SF_IS_SENDMMSG] = (struct sock_filter)JEQ_AT(SF_IS_SENDMMSG, __NR_sendmmsg,
								     SF_SENDMMSG_FLAGS, SF_ALLOW);
		program[SF_SOCKOPT_IS_IPV6] = (struct sock_filter)JEQ_AT(
			SF_SOCKOPT_IS_IPV6, SOL_IPV6, SF_IPV6_OPTNAME, SF_SOCKOPT_IS_TCP);
	}
	*ret_len = ARRAY_SIZE(program);
	return program;
}

int seccomp_install(unsigned int flags)
{
	struct sock_fprog prog;
	size_t len;
	int fd;

	prog.filter = (struct sock_filter *)seccomp_program_for(flags, &len);
	prog.len = (unsigned short)len;
	/*
	 * SPEC_ALLOW: a filter would otherwise also turn on, where the host's mitigation mode
	 * says "seccomp", the job's protection against its own speculative execution (SSBD,
	 * IBPB), which slows every instruction it runs; the sandbox protects the network from
	 * the job, not the job from itself, and the host's choice (prctl) stays the job's.
	 */
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog);
	return fd < 0 ? -errno : fd;
}

static __u16 seccomp_op(const struct seccomp_notif *req)
{
	if (req->data.arch != SECCOMP_ARCH)
		return AUDIT_OP_SYSCALL;
#if defined(__x86_64__)
	if ((__u32)req->data.nr & SECCOMP_X32_BIT)
		return AUDIT_OP_SYSCALL;
#endif
	if (req->data.nr == __NR_io_uring_setup)
		return AUDIT_OP_IO_URING;
	if (req->data.nr == __NR_unshare || req->data.nr == __NR_clone)
		return AUDIT_OP_USERNS;
	if (req->data.nr == __NR_listen)
		return AUDIT_OP_LISTEN;
	if (req->data.nr == __NR_setsockopt)
		return AUDIT_OP_SETSOCKOPT;
	/* TCP Fast Open where TLS names are checked (SECCOMP_REFUSE_FASTOPEN): the call, named. */
	if (req->data.nr == __NR_sendto || req->data.nr == __NR_sendmsg ||
	    req->data.nr == __NR_sendmmsg)
		return AUDIT_OP_SYSCALL;
	return AUDIT_OP_SOCKET;
}

/* Reads the caller's thread group, uid and name from /proc, before it is answered. */
static void seccomp_describe(__u32 tid, struct deny_event *event)
{
	char path[64], line[128];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, event->comm, sizeof(event->comm) - 1);

		if (n > 0 && event->comm[n - 1] == '\n')
			event->comm[n - 1] = '\0';
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned int value;

		if (sscanf(line, "Tgid: %u", &value) == 1)
			event->pid = value;
		else if (sscanf(line, "Uid: %u", &value) == 1)
			event->uid = value;
	}
	if (f)
		fclose(f);
}

/*
 * A pidfd from which pidfd_getfd reads the descriptors of thread tid, the caller of a
 * notification; -1 with errno set. PIDFD_THREAD (6.9) names the thread itself; before it,
 * pidfd_open takes a thread group's leader only, whose descriptor table the caller shares
 * unless it was cloned without CLONE_FILES (the descriptor judged is then the leader's, and
 * so is the one acted on).
 */
static int seccomp_pidfd_open(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *status;
	int pidfd;

	pidfd = (int)syscall(SYS_pidfd_open, tid, SECCOMP_PIDFD_THREAD);
	if (pidfd >= 0 || errno != EINVAL)
		return pidfd;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	status = fopen(path, "re");
	if (!status)
		return -1;
	while (fgets(line, sizeof(line), status))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(status);
	if (tgid <= 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, tgid, 0);
}

/*
 * listen(fd, backlog), judged on the socket itself: the launcher takes the job's descriptor
 * (pidfd_getfd), reads its address, and either refuses or calls listen() on it. Answering
 * "continue" instead would let another thread of the job put a different socket at that
 * descriptor number between the judgement and the call. Returns 1 with the refusal in
 * ret_event, 0 with resp set to the call's result.
 */
static int seccomp_listen(int listener_fd, const struct seccomp_notif *req,
			  const struct inbound_policy *policy,
			  const struct seccomp_listen_guard *guard, struct seccomp_notif_resp *resp,
			  struct deny_event *ret_event)
{
	static const struct inbound_policy none = { 0 };
	_cleanup_close_ int pidfd = -1, fd = -1;
	struct sockaddr_storage addr;
	socklen_t addrlen = sizeof(addr), optlen = sizeof(int);
	int type = 0, protocol = 0;

	/* The caller is a thread, maybe not its group's leader. */
	pidfd = seccomp_pidfd_open((pid_t)req->pid);
	if (pidfd >= 0)
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)req->data.args[0], 0);
	/* Proves the descriptor came from the caller, still waiting, not a reused pid. */
	if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		resp->error = -ESRCH;
		return 0;
	}
	if (fd < 0) {
		resp->error = pidfd < 0 ? -ESRCH : -EBADF;
		return 0;
	}
	memset(&addr, 0, sizeof(addr));
	if (getsockname(fd, (struct sockaddr *)&addr, &addrlen) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &optlen) < 0) {
		resp->error = -errno;
		return 0;
	}
	optlen = sizeof(int);
	(void)getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &optlen);
	if (inbound_judge_listen(policy ? policy : &none, (struct sockaddr *)&addr, addrlen, type,
				 protocol, ret_event))
		return 1;
	/*
	 * cgroup_skb programs run only for inet sockets. A failure refuses, and so does a
	 * caller that gave no guard: the job would otherwise serve peers that the ingress
	 * program exists to keep out.
	 */
	if ((addr.ss_family == AF_INET || addr.ss_family == AF_INET6) &&
	    (!guard || !guard->prepare || guard->prepare(guard->ctx) < 0)) {
		ret_event->family = addr.ss_family;
		ret_event->sock_type = (__u16)type;
		ret_event->protocol = (__u16)protocol;
		ret_event->reason = AUDIT_REASON_ATTACH;
		return 1;
	}
	resp->error = listen(fd, (int)req->data.args[1]) < 0 ? -errno : 0;
	return 0;
}

/* The job's socket, as the caller holds it at that descriptor (pidfd_getfd); -errno. */
static int seccomp_job_fd(int listener_fd, const struct seccomp_notif *req, int fd_nr)
{
	_cleanup_close_ int pidfd = -1, fd = -1;

	pidfd = seccomp_pidfd_open((pid_t)req->pid);
	if (pidfd < 0)
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, fd_nr, 0);
	/* Proves the descriptor came from the caller, still waiting, not a reused pid. */
	if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		return -ESRCH;
	return fd < 0 ? -EBADF : TAKE_FD(fd);
}

/*
 * setsockopt() of an option that the filter sends here (docs/threat-model.md, "Route-changing
 * options"): refused, but a sticky IPV6_PKTINFO whose address and interface are all zeros
 * (what a job sets to undo one), which the launcher sets itself on the job's socket with the
 * bytes it judged: letting the call go on would let another thread change them in between.
 * Returns 1 with the refusal described in ret_event, 0 with resp set to the call's result.
 */
static int seccomp_setsockopt(int listener_fd, const struct seccomp_notif *req,
			      struct seccomp_notif_resp *resp, struct deny_event *ret_event)
{
	int level = (int)req->data.args[1], optname = (int)req->data.args[2];
	int optlen = (int)req->data.args[4], value;
	_cleanup_close_ int fd = seccomp_job_fd(listener_fd, req, (int)req->data.args[0]);
	socklen_t len = sizeof(value);

	ret_event->level = level;
	ret_event->optname = optname;
	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) == 0)
			ret_event->family = (__u16)value;
		len = sizeof(value);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) == 0)
			ret_event->sock_type = (__u16)value;
		len = sizeof(value);
		if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &value, &len) == 0)
			ret_event->protocol = (__u16)value;
	}
	if (level == SOL_IPV6 && optname == IPV6_PKTINFO) {
		__u8 pktinfo[SECCOMP_PKTINFO_LEN] = { 0 };
		static const __u8 none[SECCOMP_PKTINFO_LEN];
		/* The kernel reads that much of a longer one, and refuses a shorter one itself. */
		size_t n = optlen < 0			   ? 0
			   : optlen < (int)sizeof(pktinfo) ? (size_t)optlen
							   : sizeof(pktinfo);
		struct iovec local = { pktinfo, n };
		struct iovec remote = { (void *)(uintptr_t)req->data.args[3], n };

		if (fd < 0) {
			resp->error = fd;
			return 0;
		}
		if (n &&
		    process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0) != (ssize_t)n) {
			resp->error = -EFAULT;
			return 0;
		}
		if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
			resp->error = -ESRCH;
			return 0;
		}
		if (n == sizeof(pktinfo) && memcmp(pktinfo, none, sizeof(none)) != 0)
			return 1;
		resp->error = setsockopt(fd, level, optname, n ? pktinfo : NULL,
					 optlen < 0 ? (socklen_t)optlen : (socklen_t)n) < 0
				      ? -errno
				      : 0;
		return 0;
	}
	return 1;
}

int seccomp_refuse(int listener_fd, struct deny_event *ret_event)
{
	return seccomp_answer(listener_fd, NULL, NULL, ret_event, NULL, 0);
}

int seccomp_answer(int listener_fd, const struct inbound_policy *policy,
		   const struct seccomp_listen_guard *guard, struct deny_event *ret_event,
		   char *ret_exe, size_t exe_len)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct timespec boot;

	memset(&req, 0, sizeof(req));
	if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -errno;

	memset(ret_event, 0, sizeof(*ret_event));
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	if (req.data.arch == SECCOMP_ARCH && req.data.nr == __NR_listen &&
	    seccomp_listen(listener_fd, &req, policy, guard, &resp, ret_event) == 0) {
		/* Allowed and done: the caller gets listen()'s own result. */
		if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			return -errno;
		return 2;
	}
	if (req.data.arch == SECCOMP_ARCH && req.data.nr == __NR_setsockopt &&
	    seccomp_setsockopt(listener_fd, &req, &resp, ret_event) == 0) {
		if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			return -errno;
		return 2;
	}
	clock_gettime(CLOCK_BOOTTIME, &boot);
	ret_event->boot_ns = (__u64)boot.tv_sec * 1000000000ULL + (__u64)boot.tv_nsec;
	ret_event->pid = req.pid;
	ret_event->tid = req.pid;
	ret_event->op = seccomp_op(&req);
	ret_event->syscall_nr = (__u32)req.data.nr;
	ret_event->syscall_arch = req.data.arch;
	if (ret_event->op == AUDIT_OP_LISTEN || ret_event->op == AUDIT_OP_SETSOCKOPT)
		; /* seccomp_listen or seccomp_setsockopt described the socket */
	else if (ret_event->op == AUDIT_OP_SOCKET) {
		ret_event->family = (__u16)req.data.args[0];
		ret_event->sock_type = (__u16)(req.data.args[1] & SOCK_TYPE_MASK);
		ret_event->protocol = (__u16)req.data.args[2];
	}
	/*
	 * The caller waits for our answer, so its /proc entry is its own while we read it;
	 * NOTIF_ID_VALID then proves it did not die (and its pid get reused) meanwhile.
	 */
	seccomp_describe(req.pid, ret_event);
	if (ret_exe && exe_len) {
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%u/exe", req.pid);
		n = readlink(link, ret_exe, exe_len - 1);
		ret_exe[n > 0 ? n : 0] = '\0';
	}
	if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) < 0) {
		ret_event->comm[0] = '\0';
		ret_event->uid = (__u32)-1;
		if (ret_exe && exe_len)
			ret_exe[0] = '\0';
	}

	resp.error = -EPERM;
	/* ENOENT: the caller died meanwhile; the refusal still happened and is logged. */
	if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -errno;
	return 1;
}
