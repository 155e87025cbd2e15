/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The HTTPS gateway: the job's connections to hosts whose rule has "http" are redirected here
 * (the connect hooks rewrite them, as DNS is), TLS is terminated with a certificate for the
 * server name signed by a CA that the gateway makes (its key only in this process's memory),
 * each request is judged against the rule, the secret's placeholder replaced by its value,
 * and the request sent on a verified TLS connection of the gateway's own to an address it
 * resolved itself. One gateway serves one sandbox (launch run) or every call of a server
 * (launch mcp): each sandbox is a client with its own listening ports, policy and secrets.
 */
#ifndef LAUNCH_GATEWAY_H
#define LAUNCH_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "policy/http_rules.h"
#include "policy/resolve.h"

/* The job's placeholder for a secret: "launch-placeholder-" and 32 hex digits. */
#define GATEWAY_PLACEHOLDER_LEN 51

/* Limits, each documented in docs/gateway.md. */
#define GATEWAY_MAX_CONNECTIONS	    1024  /* job connections at once, all clients */
#define GATEWAY_IDLE_MS		    60000 /* an idle job connection is closed */
#define GATEWAY_UPSTREAM_IDLE_MS    30000 /* an idle pooled upstream connection is closed */
#define GATEWAY_POOL_PER_HOST	    32
#define GATEWAY_HANDSHAKE_MS	    10000
#define GATEWAY_UPSTREAM_TIMEOUT_MS 30000 /* connect and TLS handshake upstream */

/* A secret the gateway injects: its policy entry, value, and the placeholder the job holds. */
struct gateway_secret {
	const struct policy_secret *policy; /* name, hosts, header, format */
	char *value;			    /* never logged, never in the job's view */
	size_t value_len;
	char placeholder[GATEWAY_PLACEHOLDER_LEN + 1];
};

/* What the gateway did with one request; handed to the client's on_request. */
struct gateway_request_log {
	const char *method;
	const char *host;    /* the request's Host (the SNI when they differ and that refused it) */
	const char *path;    /* decoded path; with "?query" only when log_query is set */
	unsigned int status; /* sent to the job: upstream's, or the gateway's own 403/400/502 */
	uint64_t bytes_out;  /* request body bytes sent upstream */
	uint64_t bytes_in;   /* response body bytes sent to the job */
	double duration_ms;  /* from the request's head to the response's end */
	bool allowed;
	/* "" when allowed; else "host", "rule", "credential", "malformed", "too_large",
	 * "upstream_tls", "upstream" (connect or resolve failed) */
	const char *reason;
	const char *secret; /* name of the secret injected, NULL when none */
	uint16_t peer_port; /* the job's source port (its process is found by the caller) */
	bool peer_v6;
};

struct gateway_config {
	const struct resolver *resolver;      /* NULL: the system resolver */
	const char *const *upstream_ca_files; /* --upstream-ca, added to the system store */
	size_t nupstream_ca_files;
	bool log_query; /* --audit-http-query */
};

struct gateway;
struct gateway_client;

/* What a client (one sandbox) gives the gateway. */
struct gateway_client_config {
	const struct policy *const *policies; /* their host rules with "http" are served */
	size_t npolicies;
	struct gateway_secret *secrets; /* borrowed; outlives the client */
	size_t nsecrets;
	/* Called on the gateway's thread for each request: must be thread-safe, must not block. */
	void (*on_request)(void *ctx, const struct gateway_request_log *log);
	/*
	 * Called on the gateway's thread for each connection it accepts, with the peer's source
	 * port: false closes it unserved. The sandboxes' say whether a process of theirs holds
	 * that end, so that no other process of the host (which can learn the ports and, from a
	 * command line or an environment, the placeholders) has a secret put into its requests.
	 * NULL: every connection is served (the gateway's own tests).
	 */
	bool (*peer_ok)(void *ctx, uint16_t peer_port, bool peer_v6);
	void *ctx;
};

/* Makes the CA and the upstream TLS context. 0 or -errno, with one line in errbuf. */
int gateway_new(const struct gateway_config *config, struct gateway **ret, char *errbuf,
		size_t errlen);
/* Starts the gateway's thread. */
int gateway_start(struct gateway *gw);
/* Stops the thread, closes every connection; accepts NULL. */
void gateway_free(struct gateway *gw);

/* The CA's certificate, PEM (malloc'd), for the job's trust bundle. */
int gateway_ca_pem(const struct gateway *gw, char **ret_pem, size_t *ret_len);

/* Adds a client listening on 127.0.0.1 and ::1 (0 when the host has none), ephemeral ports. */
int gateway_client_add(struct gateway *gw, const struct gateway_client_config *config,
		       struct gateway_client **ret, char *errbuf, size_t errlen);
void gateway_client_ports(const struct gateway_client *client, uint16_t *ret_port4,
			  uint16_t *ret_port6);
/* Closes the client's listeners and connections; waits until on_request is no more called. */
void gateway_client_remove(struct gateway_client *client);

/* Fills a secret's placeholder from the kernel's random source. */
int gateway_secret_placeholder(struct gateway_secret *secret);

#endif /* LAUNCH_GATEWAY_H */
