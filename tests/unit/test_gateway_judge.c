// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for the gateway's judge.c: each refusal's reason, and the head sent upstream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "gateway/gateway_internal.h"

#define RUN(fn) test_run(#fn, fn)

static const char JUDGE_POLICY[] =
	"{ \"name\": \"j\", \"allow\": ["
	"  { \"host\": \"api.openai.com\", \"ports\": [443], \"http\": {"
	"    \"allow\": [ { \"method\": \"POST\", \"path\": \"/v1/*\" },"
	"                 { \"method\": \"GET\", \"path\": \"/v1/models*\" } ],"
	"    \"deny\": [ { \"path\": \"/v1/files*\" } ], \"max_body_bytes\": 1000 } },"
	"  { \"host\": \"api.stripe.com\", \"ports\": [8443], \"http\": {"
	"    \"pass_headers\": [ \"cookie\" ] } },"
	"  { \"host\": \"plain.example\", \"ports\": [443] } ],"
	"  \"secrets\": [ { \"name\": \"OPENAI_API_KEY\", \"hosts\": [\"api.openai.com\"],"
	"                   \"header\": \"Authorization\", \"format\": \"Bearer {}\" } ] }";

#define JUDGE_VALUE "sk-the-real-value"

static struct policy *judge_policy;
static const struct policy *judge_policies[1];
static struct gateway_secret judge_secret;
static struct gateway_client_config judge_client;

static void judge_setup(void)
{
	char err[POLICY_ERR_LEN];

	if (policy_parse("j.json", JUDGE_POLICY, &judge_policy, err, sizeof(err)) < 0) {
		printf("policy: %s\n", err);
		exit(1);
	}
	judge_policies[0] = judge_policy;
	judge_secret.policy = &judge_policy->secrets[0];
	judge_secret.value = (char *)JUDGE_VALUE;
	judge_secret.value_len = strlen(JUDGE_VALUE);
	if (gateway_secret_placeholder(&judge_secret) < 0)
		exit(1);
	judge_client = (struct gateway_client_config){
		.policies = judge_policies, .npolicies = 1, .secrets = &judge_secret, .nsecrets = 1
	};
}

/* The verdict's reason ("" when allowed) on a request head with these headers. */
static const char *judge(const char *sni, const char *method, const char *target,
			 const char *headers, struct gw_verdict *v)
{
	static char head[4096];
	struct http_request req;

	snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\n%s\r\n", method, target, headers);
	if (http_request_parse(head, strlen(head), &req) <= 0)
		return "unparsed";
	gw_judge(&judge_client, sni, &req, v);
	return v->reason ?: "";
}

static void test_judge_host(void)
{
	struct gw_verdict v;

	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat", "Host: api.openai.com\r\n", &v),
		     "");
	CHECK_EQ_INT(v.port, 443);
	CHECK_EQ_STR(
		judge("api.openai.com", "POST", "/v1/chat", "Host: API.OpenAI.com:443\r\n", &v),
		"");
	/* Another gateway host, and a host without "http", inside api.openai.com's session. */
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat", "Host: api.stripe.com\r\n", &v),
		     "host");
	CHECK_EQ_STR(judge("plain.example", "GET", "/", "Host: plain.example\r\n", &v), "host");
	CHECK_EQ_STR(judge("", "GET", "/", "Host: api.openai.com\r\n", &v), "host");
	CHECK_EQ_INT(v.status, 403);
	CHECK_EQ_STR(judge("api.stripe.com", "DELETE", "/v1/x", "Host: api.stripe.com\r\n", &v),
		     "");
	CHECK_EQ_INT(v.port, 8443);
	/* TRACE and TRACK would echo the injected key: refused under rules that allow any method.
	 */
	CHECK_EQ_STR(judge("api.stripe.com", "TRACE", "/", "Host: api.stripe.com\r\n", &v), "rule");
	CHECK_EQ_STR(judge("api.stripe.com", "TRACK", "/", "Host: api.stripe.com\r\n", &v), "rule");
}

static void test_judge_rule(void)
{
	struct gw_verdict v;

	CHECK_EQ_STR(judge("api.openai.com", "GET", "/v1/models/x", "Host: api.openai.com\r\n", &v),
		     "");
	CHECK_EQ_STR(judge("api.openai.com", "GET", "/v1/chat", "Host: api.openai.com\r\n", &v),
		     "rule");
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/files", "Host: api.openai.com\r\n", &v),
		     "rule");
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat",
			   "Host: api.openai.com\r\nContent-Length: 1001\r\n", &v),
		     "too_large");
	CHECK_EQ_INT(v.status, 413);
}

static void test_judge_credential(void)
{
	char headers[256];
	struct gw_verdict v;

	snprintf(headers, sizeof(headers), "Host: api.openai.com\r\nAuthorization: Bearer %s\r\n",
		 judge_secret.placeholder);
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat", headers, &v), "");
	CHECK_EQ_STR(v.secret, "OPENAI_API_KEY");
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat",
			   "Host: api.openai.com\r\nAuthorization: Bearer sk-attacker\r\n", &v),
		     "credential");
	/* The placeholder in another format, or in another credential header. */
	snprintf(headers, sizeof(headers), "Host: api.openai.com\r\nAuthorization: %s\r\n",
		 judge_secret.placeholder);
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat", headers, &v), "credential");
	snprintf(headers, sizeof(headers), "Host: api.openai.com\r\nx-api-key: %s\r\n",
		 judge_secret.placeholder);
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat", headers, &v), "credential");
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat",
			   "Host: api.openai.com\r\nCookie: a=1\r\n", &v),
		     "credential");
	CHECK_EQ_STR(judge("api.openai.com", "POST", "/v1/chat",
			   "Host: api.openai.com\r\nProxy-Authorization: Basic eA==\r\n", &v),
		     "credential");
	/* pass_headers lets the job's own Cookie through, never an Authorization. */
	CHECK_EQ_STR(
		judge("api.stripe.com", "GET", "/", "Host: api.stripe.com\r\nCookie: a=1\r\n", &v),
		"");
	CHECK_EQ_STR(judge("api.stripe.com", "GET", "/",
			   "Host: api.stripe.com\r\nAuthorization: Bearer x\r\n", &v),
		     "credential");
	/* The secret serves api.openai.com only: its placeholder is no credential elsewhere. */
	snprintf(headers, sizeof(headers), "Host: api.stripe.com\r\nAuthorization: Bearer %s\r\n",
		 judge_secret.placeholder);
	CHECK_EQ_STR(judge("api.stripe.com", "GET", "/", headers, &v), "credential");
}

static void test_judge_rewrite(void)
{
	char head[1024], out[4096];
	struct gw_buf buf = { .data = out, .cap = sizeof(out) };
	struct http_request req;

	snprintf(head, sizeof(head),
		 "POST /v1/chat?x=1 HTTP/1.1\r\nHost: api.openai.com\r\nConnection: keep-alive\r\n"
		 "Authorization: Bearer %s\r\nContent-Length: 2\r\nX-Other: %s\r\n\r\n",
		 judge_secret.placeholder, judge_secret.placeholder);
	CHECK(http_request_parse(head, strlen(head), &req) > 0);
	CHECK_EQ_INT(gw_judge_rewrite(&judge_client, "api.openai.com", &req, &buf), 0);
	out[buf.len] = '\0';
	CHECK_CONTAINS(out, "POST /v1/chat?x=1 HTTP/1.1\r\n");
	CHECK_CONTAINS(out, "Authorization: Bearer " JUDGE_VALUE "\r\n");
	/* Only the named header gets the value; hop-by-hop headers stay with the job. */
	CHECK_CONTAINS(out, "X-Other: launch-placeholder-");
	CHECK(!strstr(out, "Connection"));
	CHECK_EQ_INT(out[buf.len - 1] == '\n' && out[buf.len - 3] == '\n', 1);
	/* A head that does not fit is refused, never cut. */
	buf.len = 0;
	buf.cap = 40;
	CHECK_EQ_INT(gw_judge_rewrite(&judge_client, "api.openai.com", &req, &buf), -ENOBUFS);
}

static void test_judge_refusal(void)
{
	char out[1024];
	struct gw_buf buf = { .data = out, .cap = sizeof(out) - 1 };

	gw_judge_refusal(&buf, 403, "credential", "a credential header", false);
	out[buf.len] = '\0';
	CHECK_CONTAINS(out, "HTTP/1.1 403 Forbidden\r\n");
	CHECK_CONTAINS(out, "{\"error\":{\"type\":\"launch_gateway\",\"reason\":\"credential\"");
	CHECK(!strstr(out, "Connection: close"));
	CHECK(!strstr(out, JUDGE_VALUE));
}

int main(void)
{
	judge_setup();
	RUN(test_judge_host);
	RUN(test_judge_rule);
	RUN(test_judge_credential);
	RUN(test_judge_rewrite);
	RUN(test_judge_refusal);
	policy_free(judge_policy);
	return test_failures != 0;
}
