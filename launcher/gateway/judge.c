// SPDX-License-Identifier: LGPL-2.1-or-later
/* The gateway's decision on one request's head, and the head it sends upstream: pure logic. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "gateway_internal.h"

/* Headers that carry a credential: the job may send none but its placeholder. */
static const char *const JUDGE_CREDENTIAL_HEADERS[] = {
	"authorization",
	"x-api-key",
	"proxy-authorization",
	"cookie",
};

/* Hop-by-hop headers: the gateway's connections are its own (RFC 9110, 7.6.1). */
static const char *const JUDGE_HOP_HEADERS[] = {
	"connection",
	"keep-alive",
	"proxy-connection",
	"upgrade",
};

static bool judge_name_is(const struct http_header *h, const char *name)
{
	return h->name_len == strlen(name) && !strncasecmp(h->name, name, h->name_len);
}

const struct policy_entry *gw_judge_host(const struct gateway_client_config *client,
					 const char *name)
{
	size_t i, j;

	for (i = 0; i < client->npolicies; i++) {
		const struct policy *p = client->policies[i];

		for (j = 0; j < p->nentries; j++)
			if (p->entries[j].host && p->entries[j].http &&
			    !strcmp(p->entries[j].host, name))
				return &p->entries[j];
	}
	return NULL;
}

static bool judge_secret_serves(const struct gateway_secret *s, const char *host)
{
	size_t i;

	for (i = 0; i < s->policy->nhosts; i++)
		if (!strcmp(s->policy->hosts[i], host))
			return true;
	return false;
}

/* Whether value is the secret's format with the job's placeholder where "{}" is. */
static bool judge_is_placeholder(const struct gateway_secret *s, const char *value, size_t len)
{
	const char *hole = strstr(s->policy->format, "{}");
	size_t pre, post;

	if (!hole)
		return false;
	pre = hole - s->policy->format;
	post = strlen(hole + 2);
	return len == pre + GATEWAY_PLACEHOLDER_LEN + post &&
	       !memcmp(value, s->policy->format, pre) &&
	       !memcmp(value + pre, s->placeholder, GATEWAY_PLACEHOLDER_LEN) &&
	       !memcmp(value + pre + GATEWAY_PLACEHOLDER_LEN, hole + 2, post);
}

/* The secret whose placeholder this header carries, for this host; NULL when none. */
static const struct gateway_secret *judge_header_secret(const struct gateway_client_config *client,
							const char *host,
							const struct http_header *h)
{
	size_t i;

	for (i = 0; i < client->nsecrets; i++) {
		const struct gateway_secret *s = &client->secrets[i];

		if (judge_name_is(h, s->policy->header) && judge_secret_serves(s, host) &&
		    judge_is_placeholder(s, h->value, h->value_len))
			return s;
	}
	return NULL;
}

static bool judge_is_credential(const struct gateway_client_config *client, const char *host,
				const struct policy_http *http, const struct http_header *h)
{
	bool credential = false;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(JUDGE_CREDENTIAL_HEADERS); i++)
		credential |= judge_name_is(h, JUDGE_CREDENTIAL_HEADERS[i]);
	for (i = 0; i < client->nsecrets; i++)
		credential |= judge_name_is(h, client->secrets[i].policy->header) &&
			      judge_secret_serves(&client->secrets[i], host);
	if (!credential)
		return false;
	for (i = 0; i < http->npass_headers; i++)
		if (judge_name_is(h, http->pass_headers[i]))
			return false;
	return true;
}

/* The Host header's name: lower case, its port left out. false when it is not one. */
static bool judge_host_name(const struct http_request *req, char *buf, size_t size)
{
	size_t i, n = req->host ? req->host_len : 0;

	if (n && req->host[0] != '[') {
		const char *colon = memchr(req->host, ':', n);

		if (colon)
			n = colon - req->host;
	}
	if (!n || n >= size)
		return false;
	for (i = 0; i < n; i++)
		buf[i] = (req->host[i] >= 'A' && req->host[i] <= 'Z') ? req->host[i] + 32
								      : req->host[i];
	buf[n] = '\0';
	return true;
}

static void judge_refuse(struct gw_verdict *ret, unsigned int status, const char *reason,
			 const char *message)
{
	ret->status = status;
	ret->reason = reason;
	ret->message = message;
}

void gw_judge(const struct gateway_client_config *client, const char *sni,
	      const struct http_request *req, struct gw_verdict *ret)
{
	const struct policy_entry *entry = sni[0] ? gw_judge_host(client, sni) : NULL;
	char host[GW_HOST_MAX], method[32];
	size_t i;

	memset(ret, 0, sizeof(*ret));
	if (!entry)
		return judge_refuse(ret, 403, "host",
				    "the TLS server name is not a gateway host of the policy");
	ret->http = entry->http;
	ret->port = entry->nports == 1 && entry->ports[0].lo == entry->ports[0].hi
			    ? entry->ports[0].lo
			    : 443;
	if (!judge_host_name(req, host, sizeof(host)) || strcmp(host, sni))
		return judge_refuse(ret, 403, "host",
				    "the Host header is not the TLS session's server name");
	if (req->method_len >= sizeof(method))
		return judge_refuse(ret, 403, "rule", "the method is not allowed by the policy");
	memcpy(method, req->method, req->method_len);
	method[req->method_len] = '\0';
	/*
	 * TRACE (and IIS's TRACK) echo the request as the provider got it, the secret put in by
	 * the gateway among its headers: never sent, whatever the rules say ("*" included).
	 */
	if (!strcmp(method, "TRACE") || !strcmp(method, "TRACK"))
		return judge_refuse(ret, 403, "rule", "TRACE would echo the injected credential");
	if (!http_rules_allow(entry->http, method, req->path))
		return judge_refuse(ret, 403, "rule",
				    "the policy's http rules do not allow this method and path");
	for (i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];
		const struct gateway_secret *s;

		if (!judge_is_credential(client, host, entry->http, &req->headers[i]))
			continue;
		s = judge_header_secret(client, host, h);
		if (!s)
			return judge_refuse(ret, 403, "credential",
					    "a credential header other than launch's placeholder");
		ret->secret = s->policy->name;
	}
	if (req->framing == HTTP_BODY_LENGTH && req->content_length > entry->http->max_body_bytes)
		return judge_refuse(ret, 413, "too_large",
				    "the request body is larger than the policy's max_body_bytes");
}

static bool judge_put(struct gw_buf *out, const char *data, size_t n)
{
	return gw_buf_append(out, data, n);
}

static bool judge_put_secret(struct gw_buf *out, const struct gateway_secret *s)
{
	const char *hole = strstr(s->policy->format, "{}");

	return judge_put(out, s->policy->format, hole - s->policy->format) &&
	       judge_put(out, s->value, s->value_len) && judge_put(out, hole + 2, strlen(hole + 2));
}

int gw_judge_rewrite(const struct gateway_client_config *client, const char *host,
		     const struct http_request *req, struct gw_buf *out)
{
	bool ok = judge_put(out, req->method, req->method_len) && judge_put(out, " ", 1) &&
		  judge_put(out, req->target, req->target_len) &&
		  judge_put(out, " HTTP/1.1\r\n", 11);
	size_t i, j;

	for (i = 0; ok && i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];
		const struct gateway_secret *s;
		bool hop = false;

		for (j = 0; j < ARRAY_SIZE(JUDGE_HOP_HEADERS); j++)
			hop |= judge_name_is(h, JUDGE_HOP_HEADERS[j]);
		/* A WebSocket's handshake keeps its Upgrade; Connection is written below. */
		if (hop && !(req->upgrade && judge_name_is(h, "upgrade")))
			continue;
		ok = judge_put(out, h->name, h->name_len) && judge_put(out, ": ", 2);
		s = judge_header_secret(client, host, h);
		if (ok && s)
			ok = judge_put_secret(out, s);
		else if (ok)
			ok = judge_put(out, h->value, h->value_len);
		ok = ok && judge_put(out, "\r\n", 2);
	}
	if (ok && req->upgrade)
		ok = judge_put(out, "Connection: Upgrade\r\n", 21);
	ok = ok && judge_put(out, "\r\n", 2);
	return ok ? 0 : -ENOBUFS;
}

void gw_judge_refusal(struct gw_buf *out, unsigned int status, const char *reason,
		      const char *message, bool close)
{
	char body[512], head[256];
	const char *text = status == 400   ? "Bad Request"
			   : status == 413 ? "Content Too Large"
			   : status == 502 ? "Bad Gateway"
					   : "Forbidden";
	int nbody, nhead;

	nbody = snprintf(
		body, sizeof(body),
		"{\"error\":{\"type\":\"launch_gateway\",\"reason\":\"%s\",\"message\":\"%s\"}}\n",
		reason, message);
	nhead = snprintf(head, sizeof(head),
			 "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %d\r\n%s\r\n",
			 status, text, nbody, close ? "Connection: close\r\n" : "");
	gw_buf_append(out, head, nhead);
	gw_buf_append(out, body, nbody);
}

int gateway_secret_placeholder(struct gateway_secret *secret)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char random[16];
	size_t i;

	if (getrandom(random, sizeof(random), 0) != sizeof(random))
		return errno ? -errno : -EIO;
	memcpy(secret->placeholder, "launch-placeholder-", 19);
	for (i = 0; i < sizeof(random); i++) {
		secret->placeholder[19 + 2 * i] = hex[random[i] >> 4];
		secret->placeholder[20 + 2 * i] = hex[random[i] & 15];
	}
	secret->placeholder[GATEWAY_PLACEHOLDER_LEN] = '\0';
	return 0;
}
