// SPDX-License-Identifier: LGPL-2.1-or-later
/* The job's seccomp filter: the doors cgroup hooks cannot see, refused and reported. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "inbound.h"
#include "seccomp.h"
#include "util.h"

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
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif

/* Low 32 bits of an argument (little-endian) */
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(__u64))

#define LOAD(off)     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v)	      BPF_STMT(BPF_RET | BPF_K, (v))
#define JEQ(v, t, f)  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (v), (t), (f))
#define JSET(v, t, f) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (v), (t), (f))
#define RET_ALLOW     RET(SECCOMP_RET_ALLOW)
#define RET_NOTIFY    RET(SECCOMP_RET_USER_NOTIF)
#define RET_ERRNO(e)  RET(SECCOMP_RET_ERRNO | (e))

/* A call whose first argument holds clone flags: CLONE_NEWUSER goes to the launcher. */
#define NO_NEW_USERNS(sysno)                                                          \
	LOAD(offsetof(struct seccomp_data, nr)), JEQ((sysno), 0, 4), LOAD(ARG_LO(0)), \
		JSET(CLONE_NEWUSER, 0, 1), RET_NOTIFY, RET_ALLOW

/*
 * Each block loads the syscall number and, on a match, decides within its own body (which
 * always ends in a return); otherwise it skips its body. The counts after each JEQ are the
 * number of instructions in that body.
 */
static const struct sock_filter SECCOMP_FILTER[] = {
	/*
	 * Another ABI's numbering (i386 through int 0x80): nothing is allowed, and the
	 * launcher logs each refusal with the call's name in that ABI.
	 */
	LOAD(offsetof(struct seccomp_data, arch)),
	JEQ(SECCOMP_ARCH, 1, 0),
	RET_NOTIFY,
#if defined(__x86_64__)
	/* x32 calls share the arch value, with bit 30 set: refused and logged, all of them. */
	LOAD(offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SECCOMP_X32_BIT, 0, 1),
	RET_NOTIFY,
#endif
	/*
	 * clone3 passes its flags by pointer, which a filter cannot read: libc falls back to
	 * clone, which is judged below. Not a refusal, so not logged: glibc tries clone3 for
	 * every thread and fork.
	 */
	LOAD(offsetof(struct seccomp_data, nr)),
	JEQ(__NR_clone3, 0, 1),
	RET_ERRNO(ENOSYS),
	/*
	 * listen(fd, backlog): the launcher judges the socket's address, which the filter
	 * cannot see, and listens on the job's behalf (seccomp_listen).
	 */
	LOAD(offsetof(struct seccomp_data, nr)),
	JEQ(__NR_listen, 0, 1),
	RET_NOTIFY,
	/* io_uring's IORING_OP_SOCKET makes sockets without calling socket(). */
	LOAD(offsetof(struct seccomp_data, nr)),
	JEQ(__NR_io_uring_setup, 0, 1),
	RET_NOTIFY,
	/* unshare(flags), clone(flags, ...): no new user namespace. */
	NO_NEW_USERNS(__NR_unshare),
	NO_NEW_USERNS(__NR_clone),
	/* socketpair(family, ...): unix only. */
	LOAD(offsetof(struct seccomp_data, nr)),
	JEQ(__NR_socketpair, 0, 4),
	LOAD(ARG_LO(0)),
	JEQ(AF_UNIX, 0, 1),
	RET_ALLOW,
	RET_NOTIFY,
	/* socket(family, type, protocol) */
	LOAD(offsetof(struct seccomp_data, nr)),
	JEQ(__NR_socket, 0, 18),
	LOAD(ARG_LO(0)),	  /* 1 */
	JEQ(AF_UNIX, 0, 1),	  /* 2 */
	RET_ALLOW,		  /* 3 */
	JEQ(AF_NETLINK, 0, 4),	  /* 4: else to 9 */
	LOAD(ARG_LO(2)),	  /* 5 */
	JEQ(NETLINK_ROUTE, 0, 1), /* 6 */
	RET_ALLOW,		  /* 7 */
	RET_NOTIFY,		  /* 8: other netlink protocols (docs/threat-model.md) */
	JEQ(AF_INET, 1, 0),	  /* 9: to 11 */
	JEQ(AF_INET6, 0, 7),	  /* 10: else to 18 */
	LOAD(ARG_LO(1)),	  /* 11 */
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, SOCK_TYPE_MASK), /* 12 */
	JEQ(SOCK_RAW, 0, 1),				     /* 13 */
	RET_NOTIFY,					     /* 14 */
	JEQ(SOCK_PACKET, 0, 1),				     /* 15 */
	RET_NOTIFY,					     /* 16 */
	RET_ALLOW,  /* 17: TCP, UDP, ICMP: the cgroup hooks judge those */
	RET_NOTIFY, /* 18: any other family */
	RET_ALLOW,
};

int seccomp_install(void)
{
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(SECCOMP_FILTER),
		.filter = (struct sock_filter *)SECCOMP_FILTER,
	};
	int fd;

	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
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
 * listen(fd, backlog), judged on the socket itself: the launcher takes the job's descriptor
 * (pidfd_getfd), reads its address, and either refuses or calls listen() on it. Answering
 * "continue" instead would let another thread of the job put a different socket at that
 * descriptor number between the judgement and the call. Returns 1 with the refusal in
 * ret_event, 0 with resp set to the call's result.
 */
static int seccomp_listen(int listener_fd, const struct seccomp_notif *req,
			  const struct inbound_policy *policy, struct seccomp_notif_resp *resp,
			  struct deny_event *ret_event)
{
	static const struct inbound_policy none = { 0 };
	_cleanup_close_ int pidfd = -1, fd = -1;
	struct sockaddr_storage addr;
	socklen_t addrlen = sizeof(addr), optlen = sizeof(int);
	int type = 0, protocol = 0;

	/* The caller is a thread, maybe not its group's leader. */
	pidfd = (int)syscall(SYS_pidfd_open, req->pid, SECCOMP_PIDFD_THREAD);
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
	resp->error = listen(fd, (int)req->data.args[1]) < 0 ? -errno : 0;
	return 0;
}

int seccomp_refuse(int listener_fd, struct deny_event *ret_event)
{
	return seccomp_answer(listener_fd, NULL, ret_event, NULL, 0);
}

int seccomp_answer(int listener_fd, const struct inbound_policy *policy,
		   struct deny_event *ret_event, char *ret_exe, size_t exe_len)
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
	    seccomp_listen(listener_fd, &req, policy, &resp, ret_event) == 0) {
		/* Allowed and done: the caller gets listen()'s own result. */
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
	if (ret_event->op == AUDIT_OP_LISTEN)
		; /* seccomp_listen described the socket */
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
