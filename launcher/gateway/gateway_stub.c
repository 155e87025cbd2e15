// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stand-in for the gateway engine (branch gwengine) until it is merged: every call that would
 * serve fails with ENOSYS, so a policy with "http" refuses to start (fail closed). Deleted by
 * the merge of the engine, whose gateway.c defines these.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/random.h>

#include "gateway.h"

int gateway_new(const struct gateway_config *config __attribute__((unused)), struct gateway **ret,
		char *errbuf, size_t errlen)
{
	*ret = NULL;
	snprintf(errbuf, errlen, "this build has no HTTPS gateway engine");
	return -ENOSYS;
}

int gateway_start(struct gateway *gw __attribute__((unused)))
{
	return -ENOSYS;
}

void gateway_free(struct gateway *gw __attribute__((unused)))
{
}

int gateway_ca_pem(const struct gateway *gw __attribute__((unused)), char **ret_pem,
		   size_t *ret_len)
{
	*ret_pem = NULL;
	*ret_len = 0;
	return -ENOSYS;
}

int gateway_client_add(struct gateway *gw __attribute__((unused)),
		       const struct gateway_client_config *config __attribute__((unused)),
		       struct gateway_client **ret, char *errbuf, size_t errlen)
{
	*ret = NULL;
	snprintf(errbuf, errlen, "this build has no HTTPS gateway engine");
	return -ENOSYS;
}

void gateway_client_ports(const struct gateway_client *client __attribute__((unused)),
			  uint16_t *ret_port4, uint16_t *ret_port6)
{
	*ret_port4 = *ret_port6 = 0;
}

void gateway_client_remove(struct gateway_client *client __attribute__((unused)))
{
}

int gateway_secret_placeholder(struct gateway_secret *secret)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char bytes[16];
	int n;

	if (getrandom(bytes, sizeof(bytes), 0) != sizeof(bytes))
		return -errno;
	n = snprintf(secret->placeholder, sizeof(secret->placeholder), "launch-placeholder-");
	for (size_t i = 0; i < sizeof(bytes); i++) {
		secret->placeholder[n++] = hex[bytes[i] >> 4];
		secret->placeholder[n++] = hex[bytes[i] & 15];
	}
	secret->placeholder[n] = '\0';
	return 0;
}
