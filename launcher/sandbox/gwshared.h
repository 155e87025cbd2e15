/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A gateway shared by many sandboxes (launch mcp's, one for the server): made and started
 * once, its CA files written once, and the --setenv options each sandbox's launch gets.
 */
#ifndef LAUNCH_GWSHARED_H
#define LAUNCH_GWSHARED_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "gateway/gateway.h"

/* A placeholder per secret, and the four CA variables of the job's runtimes. */
#define GWSHARED_ENV_MAX (POLICY_SECRETS_MAX + 4)

struct gwshared {
	struct gateway *gw;
	char id[64]; /* names the CA files: "mcp-PID" */
	char ca_path[PATH_MAX], bundle_path[PATH_MAX];
	bool files_made;
	char *env[GWSHARED_ENV_MAX]; /* "--setenv=NAME=VALUE" */
	size_t nenv;
};

/* 0, or a negative errno with one line in errbuf. The secrets outlive it. */
int gwshared_start(const struct gateway_config *config, const struct gateway_secret *secrets,
		   size_t nsecrets, struct gwshared **ret, char *errbuf, size_t errlen);
/* Stops the gateway, removes the CA files; accepts NULL. */
void gwshared_free(struct gwshared *shared);

/* The process of cgroup cgroup_fd holding the job's end (port) of a loopback TCP connection. */
int gwshared_peer_pid(int cgroup_fd, uint16_t port, bool v6);

#endif /* LAUNCH_GWSHARED_H */
