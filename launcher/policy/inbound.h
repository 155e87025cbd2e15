/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job as a server: which sockets it may listen on (the rest of the rule is in BPF). */
#ifndef LAUNCH_INBOUND_H
#define LAUNCH_INBOUND_H

#include <stddef.h>
#include <linux/types.h>
#include <sys/socket.h>

#include "bpf/launch.h"
#include "rules.h"

/* The policies' "listen" entries, as rules_compile merged them. */
struct inbound_policy {
	const struct port_set *ports;	      /* TCP/UDP ports served on any address */
	const struct unix_allow *unix_allows; /* abstract names with UNIX_ALLOW_BIND */
	size_t nunix;
};

/*
 * Judges listen() on a socket of sock_type bound to addr (as getsockname gives it; an
 * unbound inet socket has port 0, and listen() would bind it to the wildcard address).
 * Returns 0 when the job may listen there, else the AUDIT_REASON_* and fills the socket's
 * fields of ret_event (family, type, protocol, address or path).
 */
int inbound_judge_listen(const struct inbound_policy *policy, const struct sockaddr *addr,
			 socklen_t addrlen, int sock_type, int protocol,
			 struct deny_event *ret_event);

#endif /* LAUNCH_INBOUND_H */
