/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which process of a sandbox owns a local socket: the pid on the DNS proxy's deny lines. */
#ifndef LAUNCH_PEERPID_H
#define LAUNCH_PEERPID_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * Finds a process in the cgroup cgroup_fd (a directory fd) holding the socket whose local
 * address is addr (the peer the proxy saw: the job's end of a loopback exchange), from
 * /proc/net/{udp,tcp}{,6} of the network namespace of net_pid (0: the caller's) and the
 * processes' /proc/PID/fd. Returns the pid (as the
 * launcher's PID namespace numbers it), -ENOENT when none is found, or -errno.
 */
int peerpid_find(int cgroup_fd, int net_pid, const struct sockaddr *addr, socklen_t addrlen,
		 bool tcp);

#endif /* LAUNCH_PEERPID_H */
