/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's seccomp filter: the doors cgroup hooks cannot see, refused and reported. */
#ifndef LAUNCH_SECCOMP_H
#define LAUNCH_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>

#include "bpf/launch.h"

/*
 * Installs the filter in the calling process (no_new_privs must be set). Calls of another
 * ABI (i386, x32), socket families other than unix, inet, inet6 and netlink, netlink
 * protocols other than NETLINK_ROUTE, inet sockets other than TCP and UDP (raw, ping, SCTP,
 * MPTCP, UDP-Lite), new user namespaces and io_uring
 * (whose IORING_OP_SOCKET would bypass a socket() filter) are sent to the launcher, which
 * refuses them with EPERM and logs them; so is listen(), which it judges by the socket's
 * address; clone3, whose flags a filter cannot read, fails
 * with ENOSYS so that libc falls back to clone. With SECCOMP_REFUSE_UNIX, AF_UNIX sockets
 * are sent to the launcher too (a kernel without the AF_UNIX cgroup hooks). Returns the
 * listener fd.
 */
#define SECCOMP_REFUSE_UNIX (1u << 0)
/*
 * A policy checks TLS server names ("sni"): TCP Fast Open, whose data rides in the SYN before
 * the check can see it, goes to the launcher, which refuses it with EPERM and logs it
 * (MSG_FASTOPEN on sendto, sendmsg and sendmmsg, and setsockopt TCP_FASTOPEN_CONNECT).
 * Without it the sends are allowed by number alone.
 */
#define SECCOMP_REFUSE_FASTOPEN (1u << 1)
int seccomp_install(unsigned int flags);

/*
 * The filter seccomp_install installs, for the unit tests: its instructions, and their
 * number in *ret_len.
 */
const struct sock_filter *seccomp_program(size_t *ret_len);
/* The filter seccomp_install(flags) installs (a static copy, overwritten by the next call). */
const struct sock_filter *seccomp_program_for(unsigned int flags, size_t *ret_len);

/*
 * Answers one pending notification on listener_fd with EPERM and describes it in
 * ret_event. Returns 1 with an event, 0 when there was none to read, or -errno.
 */
int seccomp_refuse(int listener_fd, struct deny_event *ret_event);
struct inbound_policy;

/*
 * What the launcher must have in place before an inet socket of the job listens (the
 * ingress program): prepare(ctx) returns 0, or -errno, and then listen() is refused (EPERM)
 * and reported with reason AUDIT_REASON_ATTACH.
 */
struct seccomp_listen_guard {
	int (*prepare)(void *ctx);
	void *ctx;
};

/*
 * As seccomp_refuse, and listen() is judged by policy (NULL: loopback only) and, when
 * allowed, done on the job's behalf, after guard's prepare for an inet socket (without a
 * guard, an inet listen() is refused): returns 2 then, with no event. With ret_exe, the
 * caller's executable ("" when unknown), read before the answer lets it go on.
 */
int seccomp_answer(int listener_fd, const struct inbound_policy *policy,
		   const struct seccomp_listen_guard *guard, struct deny_event *ret_event,
		   char *ret_exe, size_t exe_len);

#endif /* LAUNCH_SECCOMP_H */
