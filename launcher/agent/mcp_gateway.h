/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch mcp's HTTPS gateway: one for the server, started once, shared by its calls' sandboxes;
 * each call a client of it with its own ports, its requests judged, logged and listed as its.
 */
#ifndef LAUNCH_MCP_GATEWAY_H
#define LAUNCH_MCP_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/gateway.h"
#include "policy/policy.h"
#include "mcp_requests.h"

/* A call's requests kept for its result; those beyond are counted (http_requests_lost). */
#define MCP_GATEWAY_CALL_REQUESTS_MAX 256
/* A call's http lines are those of sandbox "<the call's sandbox>.gateway", seq from 1. */
#define MCP_GATEWAY_SANDBOX_SUFFIX ".gateway"
/* The --setenv options of mcp_gateway_env_args: a placeholder per secret, four CA variables. */
#define MCP_GATEWAY_ENV_MAX (POLICY_SECRETS_MAX + 4)

struct mcp_gateway;
struct mcp_gwcall;

struct mcp_gateway_config {
	struct gateway *gw; /* started; the caller's, outlives the mcp_gateway */
	const struct policy *const *policies;
	size_t npolicies;
	const char *policy_names;	/* "policy" in the http lines */
	struct gateway_secret *secrets; /* borrowed: outlive the gateway */
	size_t nsecrets;
	/* The --setenv options every call's launch gets: placeholders, the CA variables. */
	char *const *env;
	size_t nenv;
	const char *cgroup_parent; /* where the calls' cgroups are: a request's process */
	/* The process of a cgroup holding the job's end of a loopback connection; NULL: none. */
	int (*peer_pid)(int cgroup_fd, uint16_t port, bool v6);
};

/* 0 or -ENOMEM. */
int mcp_gateway_new(const struct mcp_gateway_config *config, struct mcp_gateway **ret);
/* Accepts NULL; the gateway itself is the caller's. */
void mcp_gateway_free(struct mcp_gateway *mg);

/* The --setenv options every call's launch gets. Fills argv (at most max); returns how many. */
size_t mcp_gateway_env_args(const struct mcp_gateway *mg, const char **argv, size_t max);

/*
 * A call's sandbox (cgroup name) as a client of the gateway: its http lines are appended to
 * audit_path, its requests kept for the result. 0 or -errno.
 */
int mcp_gwcall_add(struct mcp_gateway *mg, const char *name, const char *audit_path,
		   struct mcp_gwcall **ret);
/* "--gateway-client=PORT4,PORT6", for the call's launch. */
const char *mcp_gwcall_arg(const struct mcp_gwcall *call);
/* Moves the requests made since the last take out (malloc'd), and how many were not kept. */
int mcp_gwcall_take(struct mcp_gwcall *call, struct mcp_http_request **ret_requests, size_t *ret_n,
		    unsigned long long *ret_lost);
/*
 * Closes its listeners and connections (the gateway's others go on): returns once every
 * request of it has its line and record. Accepts NULL; the records stay until free.
 */
void mcp_gwcall_stop(struct mcp_gwcall *call);
/* Stops it if need be and frees it; accepts NULL. */
void mcp_gwcall_free(struct mcp_gwcall *call);

#endif /* LAUNCH_MCP_GATEWAY_H */
