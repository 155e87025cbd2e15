/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DNS proxy's side of the BPF maps: where it listens, and the addresses answers opened. */
#ifndef LAUNCH_DNSBPF_H
#define LAUNCH_DNSBPF_H

#include "dns/dnsproxy.h"

struct loader_sandbox;

/*
 * Tells the programs where the proxy listens, which turns the redirection of port 53 on. Call
 * before loader_sandbox_attach: the job's first look-up must already go to the proxy.
 */
void dnsbpf_configure(struct loader_sandbox *sb, const struct dnsproxy_ports *ports);

/* The proxy's operations on the maps dns_allow and dns_port_sets; ctx is the struct loader_sandbox.
 */
extern const struct dnsproxy_ops dnsbpf_ops;

#endif /* LAUNCH_DNSBPF_H */
