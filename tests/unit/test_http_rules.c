// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for http_rules.c and policy_http.c: the glob, deny-wins, and the strict keys. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "policy/policy.h"
#include "policy/http_rules.h"

static struct policy *parse_at(int line, const char *json, const char *needle)
{
	char err[POLICY_ERR_LEN] = "";
	struct policy *policy = NULL;
	int r;

	r = policy_parse("t.json", json, &policy, err, sizeof(err));
	if (needle && (r != -EINVAL || policy || strcmp(err, needle) != 0)) {
		printf("  %s:%d: got %d \"%s\"; expected -EINVAL with\n  \"%s\"\n", __FILE__, line,
		       r, err, needle);
		test_current_failed = 1;
	} else if (!needle && (r != 0 || !policy)) {
		printf("  %s:%d: got %d \"%s\"; expected success\n", __FILE__, line, r, err);
		test_current_failed = 1;
	}
	if (needle) {
		policy_free(policy);
		return NULL;
	}
	return policy;
}
#define PARSE_OK(json)		  parse_at(__LINE__, json, NULL)
#define EXPECT_ERROR(json, error) parse_at(__LINE__, json, error)

/* A policy with one host rule, its "http" given as text, and a "secrets" list. */
static char *with_http(const char *http, const char *secrets)
{
	static char json[8192];

	snprintf(json, sizeof(json),
		 "{\"name\":\"t\",\"allow\":[{\"cidr\":\"192.0.2.0/24\"},{\"host\":\"api.x.com\","
		 "\"ports\":[443],\"http\":%s},{\"host\":\"plain.x.com\"}]%s%s}",
		 http, secrets ? ",\"secrets\":" : "", secrets ? secrets : "");
	return json;
}

static void test_glob(void)
{
	CHECK(http_glob_match("*", ""));
	CHECK(http_glob_match("*", "/a/b"));
	CHECK(http_glob_match("/v1/customers*", "/v1/customers"));
	CHECK(http_glob_match("/v1/customers*", "/v1/customers/cus_1/sources"));
	CHECK(!http_glob_match("/v1/customers", "/v1/customers/"));
	CHECK(http_glob_match("/v1/*/items", "/v1/a/b/items"));
	CHECK(!http_glob_match("/v1/*/items", "/v1/a/b/item"));
	CHECK(http_glob_match("/v?/x", "/v1/x"));
	CHECK(!http_glob_match("/v?/x", "/v/x"));
	CHECK(http_glob_match("*a*b*c", "xxaxxbxxc"));
	CHECK(!http_glob_match("*a*b*c", "xxaxxcxxb"));
	CHECK(!http_glob_match("", "/"));
	CHECK(http_glob_match("**", "/anything"));
}

/* The worst case of the backtracking: bounded, and no recursion to blow the stack. */
static void test_glob_long(void)
{
	static char text[8192], glob[1025];

	memset(text, 'a', sizeof(text) - 1);
	for (size_t i = 0; i < sizeof(glob) - 1; i++)
		glob[i] = (i % 2) ? 'a' : '*';
	glob[sizeof(glob) - 2] = 'b';
	CHECK(!http_glob_match(glob, text));
}

/* The definition, recursively: what the iterative matcher must agree with. */
static bool glob_reference(const char *glob, const char *text)
{
	if (*glob == '\0')
		return *text == '\0';
	if (*glob == '*')
		return glob_reference(glob + 1, text) || (*text && glob_reference(glob, text + 1));
	if (*text && (*glob == '?' || *glob == *text))
		return glob_reference(glob + 1, text + 1);
	return false;
}

static void test_glob_against_reference(void)
{
	static const char alphabet[] = "ab/*?";
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	char glob[9], text[11];
	int mismatches = 0;

	for (int round = 0; round < 200000; round++) {
		size_t gl, tl, i;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		gl = (seed >> 33) % sizeof(glob);
		tl = (seed >> 45) % sizeof(text);
		for (i = 0; i < gl; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			glob[i] = alphabet[(seed >> 40) % 5];
		}
		glob[gl] = '\0';
		for (i = 0; i < tl; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			text[i] = alphabet[(seed >> 40) % 3];
		}
		text[tl] = '\0';
		if (http_glob_match(glob, text) != glob_reference(glob, text) && mismatches++ < 5)
			printf("  glob \"%s\" text \"%s\": %d, reference %d\n", glob, text,
			       http_glob_match(glob, text), glob_reference(glob, text));
	}
	CHECK_EQ_INT(mismatches, 0);
}

static void test_rules_deny_wins(void)
{
	_cleanup_(policy_freep) struct policy *p = PARSE_OK(with_http(
		"{\"allow\":[{\"method\":\"GET\",\"path\":\"/v1/customers*\"},"
		"{\"method\":\"POST\",\"path\":\"/v1/customers\"},{\"path\":\"/v1/*\"}],"
		"\"deny\":[{\"path\":\"/v1/webhook_endpoints*\"},{\"method\":\"DELETE\"}]}",
		NULL));
	const struct policy_http *h;

	if (!p)
		return;
	CHECK(p->entries[0].http == NULL);
	CHECK(p->entries[2].http == NULL);
	h = p->entries[1].http;
	CHECK(h != NULL);
	if (!h)
		return;
	CHECK(h->allow_given);
	CHECK_EQ_INT(h->nallow, 3);
	CHECK_EQ_STR(h->allow[2].method, "*");
	CHECK_EQ_STR(h->deny[1].path, "*");
	CHECK_EQ_INT(h->max_body_bytes, HTTP_MAX_BODY_BYTES_DEFAULT);
	CHECK(http_rules_allow(h, "GET", "/v1/customers/cus_1"));
	CHECK(http_rules_allow(h, "POST", "/v1/customers"));
	CHECK(http_rules_allow(h, "PUT", "/v1/charges"));
	CHECK(!http_rules_allow(h, "GET", "/v1/webhook_endpoints"));
	CHECK(!http_rules_allow(h, "POST", "/v1/webhook_endpoints/we_1"));
	CHECK(!http_rules_allow(h, "DELETE", "/v1/customers/cus_1"));
	CHECK(!http_rules_allow(h, "GET", "/v2/customers"));
	/* Methods are case-sensitive. */
	CHECK(!http_rules_allow(h, "delete", "/v2/x"));
	CHECK(!http_rules_allow(NULL, "GET", "/"));
}

static void test_rules_empty(void)
{
	_cleanup_(policy_freep) struct policy *p = PARSE_OK(with_http("{}", NULL));
	_cleanup_(policy_freep) struct policy *none = PARSE_OK(with_http("{\"allow\":[]}", NULL));

	if (!p || !none)
		return;
	CHECK(!p->entries[1].http->allow_given);
	CHECK(http_rules_allow(p->entries[1].http, "GET", "/anything"));
	CHECK(http_rules_allow(p->entries[1].http, "PATCH", "/"));
	CHECK(none->entries[1].http->allow_given);
	CHECK(!http_rules_allow(none->entries[1].http, "GET", "/"));
	CHECK_EQ_INT(p->nsecrets, 0);
}

static void test_pass_headers_and_body(void)
{
	_cleanup_(policy_freep) struct policy *p = PARSE_OK(
		with_http("{\"pass_headers\":[\"Cookie\",\"X-Team\"],\"max_body_bytes\":0}", NULL));

	if (!p)
		return;
	CHECK_EQ_INT(p->entries[1].http->npass_headers, 2);
	CHECK_EQ_STR(p->entries[1].http->pass_headers[0], "cookie");
	CHECK_EQ_STR(p->entries[1].http->pass_headers[1], "x-team");
	CHECK_EQ_INT(p->entries[1].http->max_body_bytes, 0);
}

static void test_secrets(void)
{
	_cleanup_(policy_freep) struct policy *p =
		PARSE_OK("{\"name\":\"t\",\"allow\":[{\"host\":\"API.stripe.com\",\"http\":{}},"
			 "{\"host\":\"files.stripe.com\",\"http\":{}}],\"secrets\":["
			 "{\"name\":\"STRIPE_API_KEY\",\"hosts\":[\"api.stripe.com\","
			 "\"Files.Stripe.com.\"],\"header\":\"Authorization\","
			 "\"format\":\"Bearer {}\"},"
			 "{\"name\":\"X_KEY\",\"hosts\":[\"api.stripe.com\"],"
			 "\"header\":\"x-api-key\",\"format\":\"{}\"}]}");

	if (!p)
		return;
	CHECK_EQ_INT(p->nsecrets, 2);
	CHECK_EQ_STR(p->secrets[0].name, "STRIPE_API_KEY");
	CHECK_EQ_INT(p->secrets[0].nhosts, 2);
	CHECK_EQ_STR(p->secrets[0].hosts[1], "files.stripe.com");
	CHECK_EQ_STR(p->secrets[0].header, "Authorization");
	CHECK_EQ_STR(p->secrets[0].format, "Bearer {}");
	CHECK_EQ_STR(p->secrets[1].format, "{}");
}

static void test_bad_http(void)
{
	EXPECT_ERROR(
		"{\"name\":\"t\",\"allow\":[{\"cidr\":\"192.0.2.1\",\"http\":{}}]}",
		"t.json: allow[0].http: only a \"host\" rule may have \"http\", not a \"cidr\"");
	EXPECT_ERROR("{\"name\":\"t\",\"allow\":[{\"host\":\"*.x.com\",\"http\":{}}]}",
		     "t.json: allow[0].http: needs an exact host name, not the wildcard "
		     "\"*.x.com\"");
	EXPECT_ERROR("{\"name\":\"t\",\"allow\":[{\"host\":\"x.com\",\"protocol\":\"any\","
		     "\"http\":{}}]}",
		     "t.json: allow[0].http: needs \"protocol\": \"tcp\" (the default)");
	/* The gateway would reach 443 for a list or a range, a port the rule may not name. */
	EXPECT_ERROR(
		"{\"name\":\"t\",\"allow\":[{\"host\":\"x.com\",\"ports\":[80,8443],"
		"\"http\":{}}]}",
		"t.json: allow[0].http: needs one port in \"ports\" (the provider's), or none: "
		"443");
	EXPECT_ERROR(
		"{\"name\":\"t\",\"allow\":[{\"host\":\"x.com\",\"ports\":[\"8000-9000\"],"
		"\"http\":{}}]}",
		"t.json: allow[0].http: needs one port in \"ports\" (the provider's), or none: "
		"443");
	EXPECT_ERROR(
		"{\"name\":\"t\",\"allow\":[{\"host\":\"a.x.com\",\"ports\":[443],"
		"\"http\":{}},{\"host\":\"b.x.com\"},{\"host\":\"A.x.com\",\"ports\":[80]}]}",
		"t.json: allow[2]: \"a.x.com\" is also allow[0]; a host with \"http\" takes one "
		"rule");
	EXPECT_ERROR(
		"{\"name\":\"t\",\"allow\":[{\"host\":\"a.x.com\"},{\"host\":\"a.x.com\","
		"\"http\":{}}]}",
		"t.json: allow[1]: \"a.x.com\" is also allow[0]; a host with \"http\" takes one "
		"rule");
	EXPECT_ERROR(with_http("[]", NULL),
		     "t.json: allow[1].http: must be an object, not an array");
	EXPECT_ERROR(with_http("{\"allows\":[]}", NULL),
		     "t.json: allow[1].http: unknown key \"allows\"");
	EXPECT_ERROR(with_http("{\"deny\":[],\"deny\":[]}", NULL),
		     "t.json: allow[1].http: duplicate key \"deny\"");
	EXPECT_ERROR(with_http("{\"allow\":{}}", NULL),
		     "t.json: allow[1].http.allow: must be an array, not an object");
	EXPECT_ERROR(with_http("{\"allow\":[{}]}", NULL),
		     "t.json: allow[1].http.allow[0]: needs \"method\" or \"path\" (or both)");
	EXPECT_ERROR(with_http("{\"deny\":[{\"path\":\"/a\"},{\"verb\":\"GET\"}]}", NULL),
		     "t.json: allow[1].http.deny[1]: unknown key \"verb\"");
	EXPECT_ERROR(with_http("{\"allow\":[{\"method\":\"get\"}]}", NULL),
		     "t.json: allow[1].http.allow[0].method: \"get\" must be upper case (methods "
		     "are case-sensitive)");
	EXPECT_ERROR(with_http("{\"allow\":[{\"method\":\"GE T\"}]}", NULL),
		     "t.json: allow[1].http.allow[0].method: \"GE T\" is not an HTTP method "
		     "(\"GET\", \"*\")");
	EXPECT_ERROR(with_http("{\"allow\":[{\"method\":7}]}", NULL),
		     "t.json: allow[1].http.allow[0].method: must be a string, not a number");
	EXPECT_ERROR(with_http("{\"allow\":[{\"path\":\"v1/x\"}]}", NULL),
		     "t.json: allow[1].http.allow[0].path: \"v1/x\" must start with '/' or '*'");
	EXPECT_ERROR(with_http("{\"allow\":[{\"path\":\"/v1/a%2Fb\"}]}", NULL),
		     "t.json: allow[1].http.allow[0].path: \"/v1/a%2Fb\" holds '%': paths are "
		     "matched decoded, write the character itself");
	EXPECT_ERROR(with_http("{\"allow\":[{\"path\":\"/a b\"}]}", NULL),
		     "t.json: allow[1].http.allow[0].path: \"/a b\" holds a space or control "
		     "character");
	EXPECT_ERROR(with_http("{\"allow\":[{\"path\":\"/x?limit=3\"}]}", NULL),
		     "t.json: allow[1].http.allow[0].path: \"/x?limit=3\" looks like it has a "
		     "query; rules match the path without its query ('?' matches one character)");
	EXPECT_ERROR(with_http("{\"pass_headers\":[\"Cookie\",\"cookie\"]}", NULL),
		     "t.json: allow[1].http.pass_headers[1]: \"cookie\" is listed twice");
	EXPECT_ERROR(with_http("{\"pass_headers\":[\"Bad Header\"]}", NULL),
		     "t.json: allow[1].http.pass_headers[0]: \"Bad Header\" is not a header name");
	EXPECT_ERROR(with_http("{\"max_body_bytes\":-1}", NULL),
		     "t.json: allow[1].http.max_body_bytes: -1 is not a whole number of bytes from "
		     "0 to 2^53");
	EXPECT_ERROR(with_http("{\"max_body_bytes\":1.5}", NULL),
		     "t.json: allow[1].http.max_body_bytes: 1.5 is not a whole number of bytes "
		     "from 0 to 2^53");
	EXPECT_ERROR(with_http("{\"max_body_bytes\":\"1M\"}", NULL),
		     "t.json: allow[1].http.max_body_bytes: must be a number of bytes, not a "
		     "string");
}

static void test_rules_limit(void)
{
	static char http[HTTP_RULES_MAX * 20 + 64];
	size_t n = 0;

	n += (size_t)snprintf(http + n, sizeof(http) - n, "{\"deny\":[");
	for (int i = 0; i <= HTTP_RULES_MAX; i++)
		n += (size_t)snprintf(http + n, sizeof(http) - n, "%s{\"path\":\"/%d\"}",
				      i ? "," : "", i);
	snprintf(http + n, sizeof(http) - n, "]}");
	EXPECT_ERROR(with_http(http, NULL),
		     "t.json: allow[1].http.deny: 257 rules, at most 256 (HTTP_RULES_MAX)");
}

#define SECRET(name, hosts, header, format) \
	"[{\"name\":" name ",\"hosts\":" hosts ",\"header\":" header ",\"format\":" format "}]"

static void test_bad_secrets(void)
{
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\",\"plain.x.com\"]",
					    "\"Authorization\"", "\"Bearer {}\"")),
		     "t.json: secrets[0].hosts[1]: \"plain.x.com\" has no host rule with \"http\"");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\",\"other.x.com\"]",
					    "\"Authorization\"", "\"Bearer {}\"")),
		     "t.json: secrets[0].hosts[1]: \"other.x.com\" has no host rule with \"http\"");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[]", "\"Authorization\"", "\"{}\"")),
		     "t.json: secrets[0].hosts: must not be empty");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\",\"API.x.com\"]",
					    "\"Authorization\"", "\"{}\"")),
		     "t.json: secrets[0].hosts[1]: \"API.x.com\" is listed twice");
	EXPECT_ERROR(with_http("{}", SECRET("\"1KEY\"", "[\"api.x.com\"]", "\"A\"", "\"{}\"")),
		     "t.json: secrets[0].name: \"1KEY\" is not an environment variable name "
		     "(letters, digits and '_', not starting with a digit, at most 128)");
	EXPECT_ERROR(with_http("{}", SECRET("\"A-B\"", "[\"api.x.com\"]", "\"A\"", "\"{}\"")),
		     "t.json: secrets[0].name: \"A-B\" is not an environment variable name "
		     "(letters, digits and '_', not starting with a digit, at most 128)");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\"]", "\"Auth: x\"", "\"{}\"")),
		     "t.json: secrets[0].header: \"Auth: x\" is not a header name");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\"]", "\"Host\"", "\"{}\"")),
		     "t.json: secrets[0].header: \"Host\" frames or routes the request; it cannot "
		     "carry a secret");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\"]", "\"A\"", "\"Bearer\"")),
		     "t.json: secrets[0].format: \"Bearer\" must hold \"{}\" exactly once");
	EXPECT_ERROR(with_http("{}", SECRET("\"K\"", "[\"api.x.com\"]", "\"A\"", "\"{}{}\"")),
		     "t.json: secrets[0].format: \"{}{}\" must hold \"{}\" exactly once");
	EXPECT_ERROR(
		with_http("{}", SECRET("\"K\"", "[\"api.x.com\"]", "\"A\"", "\"{}\\r\\nX: y\"")),
		"t.json: secrets[0].format: \"{}??X: y\" holds a control or non-ASCII "
		"character");
	EXPECT_ERROR(
		with_http("{}", "[{\"name\":\"K\",\"hosts\":[\"api.x.com\"],\"header\":\"A\"}]"),
		"t.json: secrets[0].format: missing (\"Bearer {}\", \"{}\")");
	EXPECT_ERROR(with_http("{}", "[{\"name\":\"K\",\"hosts\":[\"api.x.com\"],\"header\":\"A\","
				     "\"format\":\"{}\",\"value\":\"sk\"}]"),
		     "t.json: secrets[0]: unknown key \"value\"");
	EXPECT_ERROR(with_http("{}", "{}"), "t.json: secrets: must be an array, not an object");
	EXPECT_ERROR(with_http("{}", "[{\"name\":\"K\",\"hosts\":[\"api.x.com\"],\"header\":\"A\","
				     "\"format\":\"{}\"},{\"name\":\"K\",\"hosts\":[\"api.x.com\"],"
				     "\"header\":\"B\",\"format\":\"{}\"}]"),
		     "t.json: secrets[1]: name \"K\" is given twice (secrets[0])");
	EXPECT_ERROR(with_http("{}", "[{\"name\":\"K\",\"hosts\":[\"api.x.com\"],\"header\":\"A\","
				     "\"format\":\"{}\"},{\"name\":\"L\",\"hosts\":[\"api.x.com\"],"
				     "\"header\":\"a\",\"format\":\"{}\"}]"),
		     "t.json: secrets[1]: \"api.x.com\" already gets header \"a\" from secrets[0]");
}

int main(void)
{
	RUN(test_glob);
	RUN(test_glob_long);
	RUN(test_glob_against_reference);
	RUN(test_rules_deny_wins);
	RUN(test_rules_empty);
	RUN(test_pass_headers_and_body);
	RUN(test_secrets);
	RUN(test_bad_http);
	RUN(test_rules_limit);
	RUN(test_bad_secrets);
	return test_failures ? 1 : 0;
}
