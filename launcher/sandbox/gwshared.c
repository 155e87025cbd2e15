// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A gateway shared by many sandboxes (launch mcp's): one CA and one upstream pool for all of
 * them, each sandbox a client with its own ports (gateway_client_add).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gwshared.h"
#include "peerpid.h"
#include "sbgateway.h"

static int gwshared_env(struct gwshared *shared, const char *name, const char *value)
{
	char *line;

	if (shared->nenv == GWSHARED_ENV_MAX || asprintf(&line, "--setenv=%s=%s", name, value) < 0)
		return -ENOMEM;
	shared->env[shared->nenv++] = line;
	return 0;
}

int gwshared_start(const struct gateway_config *config, const struct gateway_secret *secrets,
		   size_t nsecrets, struct gwshared **ret, char *errbuf, size_t errlen)
{
	struct gwshared *shared = calloc(1, sizeof(*shared));
	char why[512] = "";
	int r;

	if (!shared)
		return -ENOMEM;
	snprintf(shared->id, sizeof(shared->id), "mcp-%d", (int)getpid());
	r = gateway_new(config, &shared->gw, why, sizeof(why));
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway: %s",
			 why[0] ? why : strerror(-r));
		goto fail;
	}
	r = sbgateway_write_ca_files(shared->gw, shared->id, shared->ca_path, shared->bundle_path,
				     &shared->files_made, errbuf, errlen);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < nsecrets && r == 0; i++)
		r = gwshared_env(shared, secrets[i].policy->name, secrets[i].placeholder);
	/* Node adds NODE_EXTRA_CA_CERTS to its store; OpenSSL, requests and curl take a bundle. */
	if (r == 0)
		r = gwshared_env(shared, "NODE_EXTRA_CA_CERTS", shared->ca_path);
	if (r == 0)
		r = gwshared_env(shared, "SSL_CERT_FILE", shared->bundle_path);
	if (r == 0)
		r = gwshared_env(shared, "REQUESTS_CA_BUNDLE", shared->bundle_path);
	if (r == 0)
		r = gwshared_env(shared, "CURL_CA_BUNDLE", shared->bundle_path);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway: %s", strerror(-r));
		goto fail;
	}
	r = gateway_start(shared->gw);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway's thread: %s",
			 strerror(-r));
		goto fail;
	}
	*ret = shared;
	return 0;
fail:
	gwshared_free(shared);
	return r;
}

void gwshared_free(struct gwshared *shared)
{
	if (!shared)
		return;
	gateway_free(shared->gw);
	if (shared->files_made) {
		unlink(shared->ca_path);
		unlink(shared->bundle_path);
	}
	for (size_t i = 0; i < shared->nenv; i++)
		free(shared->env[i]);
	free(shared);
}

int gwshared_peer_pid(int cgroup_fd, uint16_t port, bool v6)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(port) };

	in6.sin6_addr = in6addr_loopback;
	in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return v6 ? peerpid_find(cgroup_fd, 0, (struct sockaddr *)&in6, sizeof(in6), true)
		  : peerpid_find(cgroup_fd, 0, (struct sockaddr *)&in4, sizeof(in4), true);
}
