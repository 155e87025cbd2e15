// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for policy.c: the strict schema, its error messages, limits and parsers. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "test_addr.h"
#include "policy/policy.h"

/* Parses `json` as "t.json" and expects failure with a message containing `needle`. */
static void expect_error_at(int line, const char *json, const char *needle)
{
	char err[POLICY_ERR_LEN];
	struct policy *policy = NULL;
	int r;

	r = policy_parse("t.json", json, &policy, err, sizeof(err));
	if (r != -EINVAL || policy || !strstr(err, needle) || strncmp(err, "t.json: ", 8) != 0 ||
	    strchr(err, '\n')) {
		printf("  %s:%d: policy_parse(%s) = %d, \"%s\"; expected -EINVAL with \"%s\"\n",
		       __FILE__, line, json, r, err, needle);
		test_current_failed = 1;
	}
	policy_free(policy);
}
#define EXPECT_ERROR(json, needle) expect_error_at(__LINE__, json, needle)

/* Wraps one allow entry after a valid one, so the message must name index 1. */
static void expect_entry_error_at(int line, const char *entry, const char *needle)
{
	char json[4096];

	snprintf(json, sizeof(json), "{\"name\":\"t\",\"allow\":[{\"host\":\"ok.example\"},%s]}",
		 entry);
	expect_error_at(line, json, needle);
}
#define EXPECT_ENTRY_ERROR(entry, needle) expect_entry_error_at(__LINE__, entry, needle)

static struct policy *parse_ok_at(int line, const char *json)
{
	char err[POLICY_ERR_LEN] = "";
	struct policy *policy = NULL;
	int r;

	r = policy_parse("t.json", json, &policy, err, sizeof(err));
	if (r != 0 || !policy) {
		printf("  %s:%d: policy_parse(%s) = %d, \"%s\"; expected success\n", __FILE__, line,
		       json, r, err);
		test_current_failed = 1;
	}
	return policy;
}
#define PARSE_OK(json) parse_ok_at(__LINE__, json)

static void test_minimal(void)
{
	_cleanup_(policy_freep) struct policy *policy = PARSE_OK("{\"name\":\"x\",\"allow\":[]}");

	if (!policy)
		return;
	CHECK_EQ_STR(policy->name, "x");
	CHECK_EQ_STR(policy->path, "t.json");
	CHECK(policy->description == NULL);
	CHECK_EQ_INT(policy->nentries, 0);
	CHECK_EQ_INT(policy->nunix, 0);
}

static void test_full_example(void)
{
	static const char json[] =
		"{\n"
		"  \"name\": \"stripe\",\n"
		"  \"description\": \"Stripe API only\",\n"
		"  \"allow\": [\n"
		"    { \"host\": \"api.stripe.com\", \"ports\": [443] },\n"
		"    { \"cidr\": \"192.0.2.0/24\", \"ports\": [8443, \"9000-9010\"], \"protocol\": "
		"\"tcp\" },\n"
		"    { \"cidr\": \"2001:db8::1\", \"protocol\": \"udp\" },\n"
		"    { \"host\": \"*.example.com\", \"ports\": [\"443\"], \"protocol\": \"any\" }\n"
		"  ],\n"
		"  \"unix\": [\"/run/foo.sock\", \"@abstract-name\"]\n"
		"}\n";
	_cleanup_(policy_freep) struct policy *policy = PARSE_OK(json);
	struct in6_addr want;
	const struct policy_entry *e;

	if (!policy)
		return;
	CHECK_EQ_STR(policy->name, "stripe");
	CHECK_EQ_STR(policy->description, "Stripe API only");
	CHECK_EQ_INT(policy->nentries, 4);
	if (policy->nentries != 4)
		return;

	e = &policy->entries[0];
	CHECK_EQ_STR(e->host, "api.stripe.com");
	CHECK_EQ_INT(e->nports, 1);
	CHECK_EQ_INT(e->ports[0].lo, 443);
	CHECK_EQ_INT(e->ports[0].hi, 443);
	CHECK_EQ_INT(e->ports[0].protos, PROTO_TCP);
	CHECK_EQ_INT(e->protos, PROTO_TCP);

	e = &policy->entries[1];
	CHECK(e->host == NULL);
	want = addr_of("192.0.2.0");
	CHECK(memcmp(&e->addr, &want, sizeof(want)) == 0);
	CHECK(policy_addr_is_v4(&e->addr));
	CHECK_EQ_INT(e->prefixlen, 96 + 24);
	CHECK_EQ_INT(e->nports, 2);
	CHECK_EQ_INT(e->ports[0].lo, 8443);
	CHECK_EQ_INT(e->ports[0].hi, 8443);
	CHECK_EQ_INT(e->ports[1].lo, 9000);
	CHECK_EQ_INT(e->ports[1].hi, 9010);
	CHECK_EQ_INT(e->protos, PROTO_TCP);

	e = &policy->entries[2];
	want = addr_of("2001:db8::1");
	CHECK(memcmp(&e->addr, &want, sizeof(want)) == 0);
	CHECK(!policy_addr_is_v4(&e->addr));
	CHECK_EQ_INT(e->prefixlen, 128);
	CHECK_EQ_INT(e->protos, PROTO_UDP);
	/* "ports" omitted: every port, as one range. */
	CHECK_EQ_INT(e->nports, 1);
	CHECK_EQ_INT(e->ports[0].lo, 0);
	CHECK_EQ_INT(e->ports[0].hi, 65535);
	CHECK_EQ_INT(e->ports[0].protos, PROTO_UDP);

	e = &policy->entries[3];
	CHECK_EQ_STR(e->host, "*.example.com");
	CHECK_EQ_INT(e->protos, PROTO_ANY);
	CHECK_EQ_INT(e->ports[0].lo, 443);
	CHECK_EQ_INT(e->ports[0].protos, PROTO_ANY);

	CHECK_EQ_INT(policy->nunix, 2);
	if (policy->nunix == 2) {
		CHECK_EQ_STR(policy->unix_paths[0], "/run/foo.sock");
		CHECK_EQ_STR(policy->unix_paths[1], "@abstract-name");
	}
}

static void test_host_normalized(void)
{
	_cleanup_(policy_freep) struct policy *policy =
		PARSE_OK("{\"name\":\"n\",\"allow\":[{\"host\":\"API.Stripe.COM.\"},{\"host\":\"*."
			 "Example.com\"},"
			 "{\"host\":\"localhost\"},{\"host\":\"xn--bcher-kva.example\"},{\"host\":"
			 "\"a-b.c0m\"}]}");

	if (!policy || policy->nentries != 5)
		return;
	CHECK_EQ_STR(policy->entries[0].host, "api.stripe.com");
	CHECK_EQ_STR(policy->entries[1].host, "*.example.com");
	CHECK_EQ_STR(policy->entries[2].host, "localhost");
	CHECK_EQ_STR(policy->entries[3].host, "xn--bcher-kva.example");
	CHECK_EQ_STR(policy->entries[4].host, "a-b.c0m");
}

static void test_host_length_limits(void)
{
	char label63[64], json[1024], name253[254];
	struct policy *policy;
	size_t i;

	memset(label63, 'a', 63);
	label63[63] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"n\",\"allow\":[{\"host\":\"%s.com\"}]}", label63);
	policy = PARSE_OK(json);
	policy_free(policy);
	snprintf(json, sizeof(json), "{\"name\":\"n\",\"allow\":[{\"host\":\"%sa.com\"}]}",
		 label63);
	EXPECT_ERROR(json, "allow[0].host: ");
	EXPECT_ERROR(json, "label longer than 63");

	/* 253 characters: 63 + '.' + 63 + '.' + 63 + '.' + 61. */
	for (i = 0; i < 253; i++)
		name253[i] = (i % 64 == 63) ? '.' : 'b';
	name253[253] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"n\",\"allow\":[{\"host\":\"%s\"}]}", name253);
	policy = PARSE_OK(json);
	if (policy)
		CHECK_EQ_INT(strlen(policy->entries[0].host), 253);
	policy_free(policy);
	/* The trailing dot of a fully qualified name does not count. */
	snprintf(json, sizeof(json), "{\"name\":\"n\",\"allow\":[{\"host\":\"%s.\"}]}", name253);
	policy = PARSE_OK(json);
	policy_free(policy);
	snprintf(json, sizeof(json), "{\"name\":\"n\",\"allow\":[{\"host\":\"c%s\"}]}", name253);
	EXPECT_ERROR(json, "allow[0].host: ");
	EXPECT_ERROR(json, "longer than 253");
	/* "*." counts towards the 253: no name under a longer suffix could match. */
	snprintf(json, sizeof(json), "{\"name\":\"n\",\"allow\":[{\"host\":\"*.%s\"}]}", name253);
	EXPECT_ERROR(json, "longer than 253");
}

static bool is_json_file(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && strcmp(name + len - 5, ".json") == 0;
}

static void test_shipped_policies(void)
{
	static const char *const required[] = { "stripe", "openai", "anthropic", "github" };
	char path[512], err[POLICY_ERR_LEN];
	bool found[ARRAY_SIZE(required)] = { false };
	struct dirent *de;
	size_t i, nfiles = 0;
	DIR *dir;

	dir = opendir("policies");
	CHECK(dir != NULL);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		_cleanup_(policy_freep) struct policy *policy = NULL;
		int r;

		if (!is_json_file(de->d_name))
			continue;
		nfiles++;
		snprintf(path, sizeof(path), "policies/%s", de->d_name);
		r = policy_load(path, &policy, err, sizeof(err));
		if (r < 0) {
			printf("  %s: %s\n", path, err);
			test_current_failed = 1;
			continue;
		}
		CHECK_EQ_STR(policy->path, path);
		/* make demo's policy names the local stand-in, not a provider. */
		if (strcmp(policy->name, "demo") == 0) {
			CHECK_EQ_INT(policy->nentries, 1);
			continue;
		}
		/* The file is named after the policy. */
		CHECK(strlen(de->d_name) == strlen(policy->name) + 5 &&
		      strncmp(de->d_name, policy->name, strlen(policy->name)) == 0);
		CHECK(policy->description && strlen(policy->description) > 20);
		CHECK(policy->nentries > 0);
		for (i = 0; i < policy->nentries; i++) {
			const struct policy_entry *e = &policy->entries[i];

			CHECK(e->host != NULL);
			CHECK_EQ_INT(e->protos, PROTO_TCP);
			CHECK_EQ_INT(e->nports, 1);
			CHECK_EQ_INT(e->ports[0].lo, 443);
			CHECK_EQ_INT(e->ports[0].hi, 443);
		}
		for (i = 0; i < ARRAY_SIZE(required); i++)
			if (strcmp(policy->name, required[i]) == 0)
				found[i] = true;
	}
	closedir(dir);
	CHECK(nfiles >= ARRAY_SIZE(required));
	for (i = 0; i < ARRAY_SIZE(required); i++)
		if (!found[i]) {
			printf("  policies/%s.json missing\n", required[i]);
			test_current_failed = 1;
		}
}

static void test_shipped_hosts(void)
{
	static const struct {
		const char *file;
		const char *host;
	} expected[] = {
		{ "policies/stripe.json", "api.stripe.com" },
		{ "policies/stripe.json", "files.stripe.com" },
		{ "policies/stripe.json", "connect.stripe.com" },
		{ "policies/openai.json", "api.openai.com" },
		{ "policies/anthropic.json", "api.anthropic.com" },
		{ "policies/github.json", "api.github.com" },
		{ "policies/github.json", "uploads.github.com" },
	};
	char err[POLICY_ERR_LEN];
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(expected); i++) {
		_cleanup_(policy_freep) struct policy *policy = NULL;
		bool found = false;

		CHECK_EQ_INT(policy_load(expected[i].file, &policy, err, sizeof(err)), 0);
		if (!policy)
			continue;
		for (k = 0; k < policy->nentries; k++)
			if (policy->entries[k].host &&
			    strcmp(policy->entries[k].host, expected[i].host) == 0)
				found = true;
		if (!found) {
			printf("  %s lacks %s\n", expected[i].file, expected[i].host);
			test_current_failed = 1;
		}
	}
}

static void test_bad_json(void)
{
	EXPECT_ERROR("", "t.json: not valid JSON near line 1");
	EXPECT_ERROR("{\n\"name\": \"x\",\n\"allow\": [,]\n}",
		     "t.json: not valid JSON near line 3");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[]} x", "not valid JSON");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[]}{}", "not valid JSON");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],}", "not valid JSON");
	EXPECT_ERROR("{\"name\":\"x\" // comment\n,\"allow\":[]}", "not valid JSON near line 1");
	EXPECT_ERROR("{'name':'x','allow':[]}", "not valid JSON");
	EXPECT_ERROR("[]", "t.json: top level must be a JSON object, not an array");
	EXPECT_ERROR("\"x\"", "top level must be a JSON object, not a string");
	EXPECT_ERROR("null", "top level must be a JSON object, not null");
}

static void test_bad_top_level(void)
{
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"alow\":[]}", "t.json: unknown key \"alow\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"Name\":\"y\"}", "unknown key \"Name\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"name\":\"y\"}",
		     "t.json: duplicate key \"name\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"allow\":[]}", "duplicate key \"allow\"");
	EXPECT_ERROR("{\"allow\":[]}", "t.json: name: missing");
	EXPECT_ERROR("{\"name\":\"x\"}", "t.json: allow: missing");
	EXPECT_ERROR("{\"name\":5,\"allow\":[]}", "t.json: name: must be a string, not a number");
	EXPECT_ERROR("{\"name\":null,\"allow\":[]}", "name: must be a string, not null");
	EXPECT_ERROR("{\"name\":\"\",\"allow\":[]}", "t.json: name: must not be empty");
	EXPECT_ERROR("{\"name\":\"a b\",\"allow\":[]}", "name: \"a b\" may contain only");
	EXPECT_ERROR("{\"name\":\"a/b\",\"allow\":[]}", "name: \"a/b\" may contain only");
	EXPECT_ERROR("{\"name\":\"caf\xc3\xa9\",\"allow\":[]}", "name: \"caf??\" may contain only");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"description\":5}",
		     "t.json: description: must be a string, not a number");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":{}}",
		     "t.json: allow: must be an array, not an object");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":null}",
		     "t.json: allow: must be an array, not null");
}

static void test_name_rules(void)
{
	char json[256], name[70];
	struct policy *policy;

	policy = PARSE_OK("{\"name\":\"My_policy-1.2\",\"allow\":[]}");
	if (policy)
		CHECK_EQ_STR(policy->name, "My_policy-1.2");
	policy_free(policy);

	memset(name, 'n', 64);
	name[64] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"%s\",\"allow\":[]}", name);
	policy = PARSE_OK(json);
	policy_free(policy);
	snprintf(json, sizeof(json), "{\"name\":\"%sn\",\"allow\":[]}", name);
	EXPECT_ERROR(json, "t.json: name: ");
	EXPECT_ERROR(json, "longer than 64 characters");
}

static void test_bad_entry_shape(void)
{
	EXPECT_ENTRY_ERROR("\"a.com\"", "t.json: allow[1]: must be an object, not a string");
	EXPECT_ENTRY_ERROR("[]", "allow[1]: must be an object, not an array");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"prot\":\"tcp\"}",
			   "t.json: allow[1]: unknown key \"prot\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"port\":[443]}", "allow[1]: unknown key \"port\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"host\":\"b.com\"}",
			   "allow[1]: duplicate key \"host\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[1],\"ports\":[2]}",
			   "allow[1]: duplicate key \"ports\"");
	EXPECT_ENTRY_ERROR("{}", "t.json: allow[1]: needs exactly one of \"host\" or \"cidr\"");
	EXPECT_ENTRY_ERROR("{\"ports\":[443]}",
			   "allow[1]: needs exactly one of \"host\" or \"cidr\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"cidr\":\"10.0.0.0/8\"}",
			   "allow[1]: needs exactly one of \"host\" or \"cidr\"");
}

static void test_bad_ports(void)
{
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[70000]}",
			   "t.json: allow[1].ports[0]: 70000 is not a port (1-65535)");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[443,0]}",
			   "allow[1].ports[1]: 0 is not a port (1-65535)");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[-1]}",
			   "allow[1].ports[0]: -1 is not a port");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[443.5]}",
			   "allow[1].ports[0]: 443.5 is not a port");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[1e9]}",
			   "allow[1].ports[0]: 1e+09 is not a port");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[65536]}",
			   "allow[1].ports[0]: 65536 is not");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[true]}",
			   "allow[1].ports[0]: must be a port number or a \"lo-hi\" string, not a "
			   "boolean");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[{\"lo\":1}]}",
			   "allow[1].ports[0]: must be a port number or a \"lo-hi\" string, not an "
			   "object");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[null]}",
			   "allow[1].ports[0]: must be a port");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[[443]]}",
			   "allow[1].ports[0]: must be a port");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[443,\"9010-9000\"]}",
			   "allow[1].ports[1]: \"9010-9000\" is not a port or a range");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"0-10\"]}",
			   "allow[1].ports[0]: \"0-10\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"1-65536\"]}", "allow[1].ports[0]: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"https\"]}",
			   "allow[1].ports[0]: \"https\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\" 443\"]}", "allow[1].ports[0]: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"443-\"]}", "allow[1].ports[0]: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"-443\"]}", "allow[1].ports[0]: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"1-2-3\"]}", "allow[1].ports[0]: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[\"\"]}", "allow[1].ports[0]: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":[]}",
			   "t.json: allow[1].ports: must not be empty");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":443}",
			   "allow[1].ports: must be an array, not a number");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"ports\":\"443\"}",
			   "allow[1].ports: must be an array, not a string");
}

static void test_bad_protocol(void)
{
	EXPECT_ENTRY_ERROR(
		"{\"host\":\"a.com\",\"protocol\":\"sctp\"}",
		"t.json: allow[1].protocol: \"sctp\" is not \"tcp\", \"udp\" or \"any\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"protocol\":\"TCP\"}",
			   "allow[1].protocol: \"TCP\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"protocol\":6}",
			   "allow[1].protocol: must be a string, not a number");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com\",\"protocol\":[\"tcp\",\"udp\"]}",
			   "allow[1].protocol: must be a string, not an array");
}

static void test_bad_hosts(void)
{
	EXPECT_ENTRY_ERROR("{\"host\":5}", "t.json: allow[1].host: must be a string, not a number");
	EXPECT_ENTRY_ERROR("{\"host\":\"192.0.2.1\"}",
			   "allow[1].host: \"192.0.2.1\" is an IP address; use \"cidr\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"2001:db8::1\"}",
			   "allow[1].host: \"2001:db8::1\" is an IP address");
	EXPECT_ENTRY_ERROR("{\"host\":\"::ffff:1.2.3.4\"}", "is an IP address");
	EXPECT_ENTRY_ERROR("{\"host\":\"0x7f000001\"}",
			   "allow[1].host: \"0x7f000001\" is an IP address");
	EXPECT_ENTRY_ERROR("{\"host\":\"10.1\"}", "allow[1].host: \"10.1\" is an IP address");
	EXPECT_ENTRY_ERROR("{\"host\":\"192.0.2.0/24\"}",
			   "allow[1].host: \"192.0.2.0/24\" is not a valid");
	EXPECT_ENTRY_ERROR("{\"host\":\"example.123\"}",
			   "allow[1].host: \"example.123\" is not a valid "
			   "host name: it looks like an IP address");
	EXPECT_ENTRY_ERROR("{\"host\":\"*\"}", "allow[1].host: \"*\" alone is not allowed");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.*.com\"}",
			   "allow[1].host: \"a.*.com\" is not a valid host name");
	EXPECT_ENTRY_ERROR("{\"host\":\"*example.com\"}",
			   "allow[1].host: \"*example.com\" is not a valid");
	EXPECT_ENTRY_ERROR("{\"host\":\"*.*.example.com\"}", "allow[1].host: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"**.example.com\"}", "allow[1].host: ");
	EXPECT_ENTRY_ERROR("{\"host\":\"*.\"}", "allow[1].host: \"*\" alone is not allowed");
	EXPECT_ENTRY_ERROR("{\"host\":\"\"}",
			   "allow[1].host: \"\" is not a valid host name: it is empty");
	EXPECT_ENTRY_ERROR("{\"host\":\".\"}", "allow[1].host: \".\" is not a valid host name");
	EXPECT_ENTRY_ERROR(
		"{\"host\":\"a..com\"}",
		"allow[1].host: \"a..com\" is not a valid host name: it has an empty label");
	EXPECT_ENTRY_ERROR("{\"host\":\".a.com\"}", "has an empty label");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com..\"}", "has an empty label");
	EXPECT_ENTRY_ERROR(
		"{\"host\":\"exa mple.com\"}",
		"allow[1].host: \"exa mple.com\" is not a valid host name: it may contain only");
	EXPECT_ENTRY_ERROR("{\"host\":\"ex_ample.com\"}", "allow[1].host: \"ex_ample.com\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"https://a.com\"}", "allow[1].host: \"https://a.com\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.com:443\"}", "allow[1].host: \"a.com:443\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"-a.com\"}", "starts or ends with '-'");
	EXPECT_ENTRY_ERROR("{\"host\":\"a-.com\"}", "starts or ends with '-'");
	EXPECT_ENTRY_ERROR("{\"host\":\"b\xc3\xbc\x63her.de\"}", "allow[1].host: \"b??cher.de\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a\\nb.com\"}", "allow[1].host: \"a?b.com\"");
}

static void test_bad_cidrs(void)
{
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.1/8\"}",
			   "t.json: allow[1].cidr: \"10.0.0.1/8\" has host bits set beyond /8 (did "
			   "you mean 10.0.0.0/8?)");
	EXPECT_ENTRY_ERROR(
		"{\"cidr\":\"2001:db8::1/32\"}",
		"allow[1].cidr: \"2001:db8::1/32\" has host bits set beyond /32 (did you "
		"mean 2001:db8::/32?)");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"::ffff:10.0.0.1/104\"}",
			   "has host bits set beyond /104 (did you mean ::ffff:10.0.0.0/104?)");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/33\"}",
			   "allow[1].cidr: \"10.0.0.0/33\" has a bad prefix length");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"2001:db8::/129\"}",
			   "allow[1].cidr: \"2001:db8::/129\" has a bad prefix");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/\"}", "has a bad prefix length");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/-1\"}", "has a bad prefix length");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/ 8\"}", "has a bad prefix length");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/0008\"}", "has a bad prefix length");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/8/8\"}", "has a bad prefix length");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"example.com\"}",
			   "allow[1].cidr: \"example.com\" is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0\"}",
			   "allow[1].cidr: \"10.0.0\" is not an IPv4 or IPv6");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"010.0.0.1\"}", "is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"256.0.0.1\"}", "is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"fe80::1%eth0\"}", "is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"[2001:db8::1]\"}", "is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"\"}", "allow[1].cidr: \"\" is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\" 10.0.0.1\"}", "is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"1111:2222:3333:4444:5555:6666:7777:8888:9999/128\"}",
			   "is not an IPv4 or IPv6 address");
	EXPECT_ENTRY_ERROR("{\"cidr\":167772160}", "allow[1].cidr: must be a string, not a number");
}

/* "sni": its default, what it may be set on, and its limits. */
static void test_sni(void)
{
	struct policy *p = PARSE_OK("{\"name\":\"t\",\"allow\":["
				    "{\"host\":\"a.example\",\"ports\":[443]},"
				    "{\"host\":\"b.example\",\"ports\":[443,8443]},"
				    "{\"host\":\"c.example\"},"
				    "{\"host\":\"d.example\",\"ports\":[443],\"protocol\":\"udp\"},"
				    "{\"cidr\":\"192.0.2.1\",\"ports\":[443]},"
				    "{\"host\":\"e.example\",\"ports\":[443],\"sni\":false},"
				    "{\"host\":\"f.example\",\"ports\":[8443,\"9000-9014\"],"
				    "\"sni\":true,\"protocol\":\"any\"}]}");

	if (!p)
		return;
	CHECK(p->entries[0].sni);  /* 443 alone: on */
	CHECK(!p->entries[1].sni); /* another port too: off */
	CHECK(!p->entries[2].sni); /* every port: off */
	CHECK(!p->entries[3].sni); /* UDP only: off */
	CHECK(!p->entries[4].sni); /* a cidr: off */
	CHECK(!p->entries[5].sni);
	CHECK(p->entries[6].sni); /* 16 ports, asked for */
	policy_free(p);
	EXPECT_ENTRY_ERROR("{\"host\":\"x.example\",\"ports\":[443],\"sni\":1}",
			   "allow[1].sni: must be true or false, not a number");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"192.0.2.1\",\"ports\":[443],\"sni\":true}",
			   "allow[1].sni: true needs a \"host\" rule");
	EXPECT_ENTRY_ERROR("{\"host\":\"x.example\",\"sni\":true}",
			   "allow[1].sni: true needs \"ports\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"x.example\",\"ports\":[443],\"protocol\":\"udp\","
			   "\"sni\":true}",
			   "allow[1].sni: true needs TCP");
	EXPECT_ENTRY_ERROR("{\"host\":\"x.example\",\"ports\":[\"9000-9016\"],\"sni\":true}",
			   "allow[1].sni: true allows at most 16 ports, and \"ports\" has 17");
}

static void test_bad_unix(void)
{
	char json[512], path[UNIX_PATH_LEN + 1];
	struct policy *policy;

	EXPECT_ERROR("{\"name\":\"u\",\"allow\":[],\"unix\":\"/run/a\"}",
		     "t.json: unix: must be an array, not a string");
	EXPECT_ERROR("{\"name\":\"u\",\"allow\":[],\"unix\":[\"/a\",5]}",
		     "t.json: unix[1]: must be a string, not a number");
	EXPECT_ERROR("{\"name\":\"u\",\"allow\":[],\"unix\":[\"run/a.sock\"]}",
		     "t.json: unix[0]: \"run/a.sock\" must be an absolute path or \"@name\"");
	EXPECT_ERROR("{\"name\":\"u\",\"allow\":[],\"unix\":[\"\"]}",
		     "unix[0]: \"\" must be an absolute path");
	EXPECT_ERROR("{\"name\":\"u\",\"allow\":[],\"unix\":[\"@\"]}",
		     "unix[0]: \"@\" needs a name");

	/* 107 bytes fit sun_path with its NUL; 108 do not. */
	path[0] = '/';
	memset(path + 1, 'p', UNIX_PATH_LEN - 2);
	path[UNIX_PATH_LEN - 1] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"u\",\"allow\":[],\"unix\":[\"%s\",\"@%s\"]}",
		 path, path + 1);
	policy = PARSE_OK(json);
	if (policy) {
		CHECK_EQ_INT(policy->nunix, 2);
		CHECK_EQ_INT(strlen(policy->unix_paths[0]), UNIX_PATH_LEN - 1);
		CHECK_EQ_INT(policy->unix_paths[1][0], '@');
	}
	policy_free(policy);
	snprintf(json, sizeof(json), "{\"name\":\"u\",\"allow\":[],\"unix\":[\"/a\",\"%sp\"]}",
		 path);
	EXPECT_ERROR(json, "t.json: unix[1]: ");
	EXPECT_ERROR(json, "is 108 bytes, at most 107");
}

static void test_fs(void)
{
	struct policy *policy;

	/* No "fs": read-only but for the defaults, and nothing asks for Landlock by name. */
	policy = PARSE_OK("{\"name\":\"f\",\"allow\":[]}");
	if (policy) {
		CHECK(!policy->fs_set);
		CHECK(policy->fs_read_only);
		CHECK_EQ_INT(policy->nfs_write, 0);
		policy_free(policy);
	}
	policy = PARSE_OK("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/srv/out\",\"/var/"
			  "cache/app/\"],\"read_only\":true}}");
	if (policy) {
		CHECK(policy->fs_set);
		CHECK(policy->fs_read_only);
		CHECK_EQ_INT(policy->nfs_write, 2);
		if (policy->nfs_write == 2) {
			CHECK_EQ_STR(policy->fs_write[0], "/srv/out");
			CHECK_EQ_STR(policy->fs_write[1], "/var/cache/app/");
		}
		policy_free(policy);
	}
	/* read_only defaults to true inside "fs" too. */
	policy = PARSE_OK("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[]}}");
	if (policy) {
		CHECK(policy->fs_set);
		CHECK(policy->fs_read_only);
		policy_free(policy);
	}
	policy = PARSE_OK("{\"name\":\"f\",\"allow\":[],\"fs\":{\"read_only\":false}}");
	if (policy) {
		CHECK(policy->fs_set);
		CHECK(!policy->fs_read_only);
		policy_free(policy);
	}
}

static void test_bad_fs(void)
{
	char json[8192];
	size_t used;

	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":[\"/srv\"]}",
		     "t.json: fs: must be an object, not an array");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"writes\":[\"/srv\"]}}",
		     "t.json: fs: unknown key \"writes\"");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"read_only\":true,\"read_only\":"
		     "false}}",
		     "t.json: fs: duplicate key \"read_only\"");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"read_only\":\"yes\"}}",
		     "t.json: fs.read_only: must be true or false, not a string");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"read_only\":1}}",
		     "t.json: fs.read_only: must be true or false, not a number");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":\"/srv\"}}",
		     "t.json: fs.write: must be an array, not a string");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/srv\",7]}}",
		     "t.json: fs.write[1]: must be a string, not a number");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"srv/out\"]}}",
		     "t.json: fs.write[0]: \"srv/out\" must be an absolute path");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"\"]}}",
		     "t.json: fs.write[0]: \"\" must be an absolute path");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/srv/../etc\"]}}",
		     "t.json: fs.write[0]: \"/srv/../etc\" must not contain \".\" or \"..\"");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/srv/./x\"]}}",
		     "must not contain");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/srv/..\"]}}",
		     "must not contain");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/\"]}}",
		     "t.json: fs.write[0]: \"/\" would make every file writable");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[\"/srv\"],\"read_only\":"
		     "false}}",
		     "t.json: fs.write: has no effect with \"read_only\": false");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":null}}",
		     "t.json: fs.write: must be an array, not null");
	EXPECT_ERROR("{\"name\":\"f\",\"allow\":[],\"fs\":null}",
		     "t.json: fs: must be an object, not null");
	/* One path more than POLICY_MAX_FS_WRITE. */
	used = (size_t)snprintf(json, sizeof(json),
				"{\"name\":\"f\",\"allow\":[],\"fs\":{\"write\":[");
	for (int i = 0; i <= POLICY_MAX_FS_WRITE; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used, "%s\"/p%d\"",
					 i ? "," : "", i);
	snprintf(json + used, sizeof(json) - used, "]}}");
	EXPECT_ERROR(json, "t.json: fs.write: 65 entries, at most 64");
}

static void test_unix_limit(void)
{
	char json[8192];
	size_t off, i;
	struct policy *policy;

	for (int extra = 0; extra <= 1; extra++) {
		off = (size_t)snprintf(json, sizeof(json),
				       "{\"name\":\"u\",\"allow\":[],\"unix\":[");
		for (i = 0; i < (size_t)MAX_UNIX_PATHS + (size_t)extra; i++)
			off += (size_t)snprintf(json + off, sizeof(json) - off, "%s\"/run/s%zu\"",
						i ? "," : "", i);
		snprintf(json + off, sizeof(json) - off, "]}");
		if (!extra) {
			policy = PARSE_OK(json);
			if (policy)
				CHECK_EQ_INT(policy->nunix, MAX_UNIX_PATHS);
			policy_free(policy);
		} else {
			EXPECT_ERROR(json, "t.json: unix: 65 entries, at most 64 (MAX_UNIX_PATHS)");
		}
	}
}

static void test_port_range_limit(void)
{
	char json[4096];
	size_t off, i;
	struct policy *policy;

	for (int extra = 0; extra <= 1; extra++) {
		off = (size_t)snprintf(
			json, sizeof(json),
			"{\"name\":\"p\",\"allow\":[{\"host\":\"a.com\",\"ports\":[");
		for (i = 0; i < (size_t)MAX_PORT_RANGES + (size_t)extra; i++)
			off += (size_t)snprintf(json + off, sizeof(json) - off, "%s%zu",
						i ? "," : "", 1000 + 2 * i);
		snprintf(json + off, sizeof(json) - off, "]}]}");
		if (!extra) {
			policy = PARSE_OK(json);
			if (policy) {
				CHECK_EQ_INT(policy->entries[0].nports, MAX_PORT_RANGES);
				CHECK_EQ_INT(policy->entries[0].ports[MAX_PORT_RANGES - 1].lo,
					     1000 + 2 * (MAX_PORT_RANGES - 1));
			}
			policy_free(policy);
		} else {
			EXPECT_ERROR(json, "t.json: allow[0].ports: 33 elements, at most 32 "
					   "(MAX_PORT_RANGES)");
		}
	}
}

/* Builds a policy of n cidr entries in memory: 10.x.y.z/32, all distinct. */
static char *many_entries_json(size_t n)
{
	size_t cap = 64 + n * 32, off, i;
	char *json = malloc(cap);

	if (!json)
		return NULL;
	off = (size_t)snprintf(json, cap, "{\"name\":\"big\",\"allow\":[");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(json + off, cap - off, "%s{\"cidr\":\"10.%zu.%zu.%zu\"}",
					i ? "," : "", (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff);
	snprintf(json + off, cap - off, "]}");
	return json;
}

static void test_allow_entries_limit(void)
{
	_cleanup_free_ char *ok = many_entries_json(MAX_ALLOW_ENTRIES);
	_cleanup_free_ char *big = many_entries_json(MAX_ALLOW_ENTRIES + 1);
	struct policy *policy;
	struct in6_addr last;

	CHECK(ok && big);
	if (!ok || !big)
		return;
	policy = PARSE_OK(ok);
	if (policy) {
		CHECK_EQ_INT(policy->nentries, MAX_ALLOW_ENTRIES);
		last = addr_of("10.1.134.159"); /* entry 99999 */
		CHECK(memcmp(&policy->entries[MAX_ALLOW_ENTRIES - 1].addr, &last, sizeof(last)) ==
		      0);
	}
	policy_free(policy);
	EXPECT_ERROR(big, "t.json: allow: 100001 entries, at most 100000 (MAX_ALLOW_ENTRIES)");
}

static void test_later_entry_error_frees(void)
{
	/* Hosts parsed before the failing entry must be freed (ASan/valgrind check it). */
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[{\"host\":\"a.com\"},{\"host\":\"b.com\"},"
		     "{\"host\":\"c.com\",\"ports\":[0]}],\"unix\":[\"/a\"]}",
		     "allow[2].ports[0]: 0 is not a port");
	EXPECT_ERROR("{\"name\":\"x\",\"description\":\"d\",\"allow\":[{\"host\":\"a.com\"}],"
		     "\"unix\":[\"/a\",\"b\"]}",
		     "unix[1]: ");
	EXPECT_ERROR(
		"{\"name\":\"x\",\"allow\":[{\"host\":\"a.com\"},{\"host\":\"b.com\",\"x\":1}]}",
		"allow[1]: unknown key \"x\"");
}

static void test_escaped_nul(void)
{
	struct policy *policy;

	EXPECT_ERROR("{\"name\":\"x\",\n\"allow\":[],\"unix\":[\"/a\\u0000b\"]}",
		     "t.json: line 2: \"\\u0000\" in a string is not allowed");
	EXPECT_ERROR("{\"name\":\"x\\u0000y\",\"allow\":[]}", "\"\\u0000\" in a string");
	/* An escaped backslash followed by "u0000" is just text. */
	policy = PARSE_OK("{\"name\":\"x\",\"description\":\"C:\\\\u0000\",\"allow\":[]}");
	if (policy)
		CHECK_EQ_STR(policy->description, "C:\\u0000");
	policy_free(policy);
}

static void test_ipv4_mapped_same(void)
{
	_cleanup_(policy_freep) struct policy *policy =
		PARSE_OK("{\"name\":\"m\",\"allow\":[{\"cidr\":\"192.0.2.0/24\"},"
			 "{\"cidr\":\"::ffff:192.0.2.0/120\"},{\"cidr\":\"192.0.2.7\"},"
			 "{\"cidr\":\"::ffff:192.0.2.7\"},{\"cidr\":\"::FFFF:C000:207\"}]}");

	if (!policy || policy->nentries != 5)
		return;
	CHECK(memcmp(&policy->entries[0].addr, &policy->entries[1].addr, 16) == 0);
	CHECK_EQ_INT(policy->entries[0].prefixlen, 120);
	CHECK_EQ_INT(policy->entries[1].prefixlen, 120);
	CHECK(memcmp(&policy->entries[2].addr, &policy->entries[3].addr, 16) == 0);
	CHECK(memcmp(&policy->entries[2].addr, &policy->entries[4].addr, 16) == 0);
	CHECK_EQ_INT(policy->entries[3].prefixlen, 128);
	CHECK(policy_addr_is_v4(&policy->entries[3].addr));
}

static void check_cidr(int line, const char *text, const char *want_addr, unsigned int want_len)
{
	struct in6_addr addr, want;
	unsigned int prefixlen = 999;

	if (policy_parse_cidr(text, &addr, &prefixlen) != 0 ||
	    inet_pton(AF_INET6, want_addr, &want) != 1 || memcmp(&addr, &want, 16) != 0 ||
	    prefixlen != want_len) {
		printf("  %s:%d: policy_parse_cidr(\"%s\") gave /%u, expected %s/%u\n", __FILE__,
		       line, text, prefixlen, want_addr, want_len);
		test_current_failed = 1;
	}
}

static void test_parse_cidr(void)
{
	static const char *const bad[] = {
		"",
		"/",
		"10.0.0.0/33",
		"10.0.0.1/31",
		"10.0.0.1/24",
		"10.0.0.0/",
		"10.0.0.0/a",
		"10.0.0.0/+8",
		"10.0.0.0/ 8",
		"10.0.0.0 /8",
		"10.0.0",
		"10.0.0.0.0",
		"1.2.3.04",
		"1.2.3.256",
		"0x0a.0.0.1",
		"::/129",
		"2001:db8::1/64",
		"2001:db8:::1",
		"fe80::1%lo",
		"host",
		"::ffff:1.2.3.5/127",
		"10.0.0.0/0",
		"::1/0",
		"1.2.3.4 ",
		"-1.2.3.4",
	};
	struct in6_addr addr;
	unsigned int prefixlen, i;

	check_cidr(__LINE__, "192.0.2.1", "::ffff:192.0.2.1", 128);
	check_cidr(__LINE__, "192.0.2.1/32", "::ffff:192.0.2.1", 128);
	check_cidr(__LINE__, "192.0.2.0/24", "::ffff:192.0.2.0", 120);
	check_cidr(__LINE__, "10.0.0.0/8", "::ffff:10.0.0.0", 104);
	check_cidr(__LINE__, "0.0.0.0/0", "::ffff:0.0.0.0", 96);
	check_cidr(__LINE__, "255.255.255.255", "::ffff:255.255.255.255", 128);
	check_cidr(__LINE__, "128.0.0.0/1", "::ffff:128.0.0.0", 97);
	check_cidr(__LINE__, "::/0", "::", 0);
	check_cidr(__LINE__, "::", "::", 128);
	check_cidr(__LINE__, "::1", "::1", 128);
	check_cidr(__LINE__, "2001:db8::/32", "2001:db8::", 32);
	check_cidr(__LINE__, "2001:DB8::1/128", "2001:db8::1", 128);
	check_cidr(__LINE__, "8000::/1", "8000::", 1);
	check_cidr(__LINE__, "::ffff:1.2.3.4", "::ffff:1.2.3.4", 128);
	check_cidr(__LINE__, "::ffff:1.2.3.0/120", "::ffff:1.2.3.0", 120);
	check_cidr(__LINE__, "::ffff:0:0/96", "::ffff:0.0.0.0", 96);
	check_cidr(__LINE__, "2001:db8::/032", "2001:db8::", 32);

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (policy_parse_cidr(bad[i], &addr, &prefixlen) != -EINVAL) {
			printf("  policy_parse_cidr(\"%s\") accepted\n", bad[i]);
			test_current_failed = 1;
		}
	CHECK_EQ_INT(policy_parse_cidr(NULL, &addr, &prefixlen), -EINVAL);
}

static void test_parse_port_range(void)
{
	static const char *const bad[] = { "",	    "0",     "65536", "99999", "100000",  "-1",
					   "1-",    "-1",    "5-4",   "0-5",   "1-65536", "a",
					   "44 3",  " 443",  "443 ",  "1--2",  "1-2-3",	  "+443",
					   "0x1bb", "443.0", "1-0",   "000001" };
	struct port_range range;
	unsigned int i;

	memset(&range, 0xaa, sizeof(range));
	CHECK_EQ_INT(policy_parse_port_range("443", &range), 0);
	CHECK_EQ_INT(range.lo, 443);
	CHECK_EQ_INT(range.hi, 443);
	CHECK_EQ_INT(range.protos, 0);
	CHECK_EQ_INT(policy_parse_port_range("1-65535", &range), 0);
	CHECK_EQ_INT(range.lo, 1);
	CHECK_EQ_INT(range.hi, 65535);
	CHECK_EQ_INT(policy_parse_port_range("65535", &range), 0);
	CHECK_EQ_INT(range.lo, 65535);
	CHECK_EQ_INT(policy_parse_port_range("9000-9000", &range), 0);
	CHECK_EQ_INT(range.hi, 9000);
	CHECK_EQ_INT(policy_parse_port_range("1", &range), 0);
	CHECK_EQ_INT(range.lo, 1);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&range, 0xaa, sizeof(range));
		if (policy_parse_port_range(bad[i], &range) != -EINVAL) {
			printf("  policy_parse_port_range(\"%s\") accepted\n", bad[i]);
			test_current_failed = 1;
		}
		/* Failure leaves the output alone. */
		CHECK_EQ_INT(range.lo, 0xaaaa);
	}
	CHECK_EQ_INT(policy_parse_port_range(NULL, &range), -EINVAL);
}

static void test_format_addr(void)
{
	char buf[INET6_ADDRSTRLEN], small[4];
	struct in6_addr addr;

	addr = addr_of("192.0.2.1");
	CHECK_EQ_STR(policy_format_addr(&addr, buf, sizeof(buf)), "192.0.2.1");
	CHECK(policy_addr_is_v4(&addr));
	addr = addr_of("::ffff:10.0.0.0/104");
	CHECK_EQ_STR(policy_format_addr(&addr, buf, sizeof(buf)), "10.0.0.0");
	addr = addr_of("2001:db8::1");
	CHECK_EQ_STR(policy_format_addr(&addr, buf, sizeof(buf)), "2001:db8::1");
	CHECK(!policy_addr_is_v4(&addr));
	addr = addr_of("::");
	CHECK_EQ_STR(policy_format_addr(&addr, buf, sizeof(buf)), "::");
	CHECK(!policy_addr_is_v4(&addr));
	/* ::ffff:0:0/96 boundaries: ::fffe:... and ::1:ffff:... are not IPv4. */
	addr = addr_of("::fffe:102:304");
	CHECK(!policy_addr_is_v4(&addr));
	addr = addr_of("::1:ffff:102:304");
	CHECK(!policy_addr_is_v4(&addr));
	addr = addr_of("192.0.2.1");
	CHECK_EQ_STR(policy_format_addr(&addr, small, sizeof(small)), "?");
}

static void test_load_fixtures(void)
{
	char err[POLICY_ERR_LEN];
	struct policy *policy = NULL;

	CHECK_EQ_INT(
		policy_load("tests/unit/fixtures/policy_valid.json", &policy, err, sizeof(err)), 0);
	if (policy) {
		CHECK_EQ_STR(policy->name, "fixture");
		CHECK_EQ_STR(policy->path, "tests/unit/fixtures/policy_valid.json");
		CHECK_EQ_INT(policy->nentries, 2);
		CHECK_EQ_INT(policy->nunix, 1);
	}
	policy_free(policy);
	policy = NULL;

	CHECK_EQ_INT(
		policy_load("tests/unit/fixtures/policy_bad_port.json", &policy, err, sizeof(err)),
		-EINVAL);
	CHECK(policy == NULL);
	CHECK_EQ_STR(err, "tests/unit/fixtures/policy_bad_port.json: allow[2].ports[0]: 70000 is "
			  "not a port (1-65535)");

	CHECK_EQ_INT(policy_load("tests/unit/fixtures/policy_bad_syntax.json", &policy, err,
				 sizeof(err)),
		     -EINVAL);
	CHECK_EQ_STR(err, "tests/unit/fixtures/policy_bad_syntax.json: not valid JSON near line 4");
}

static void test_load_errors(void)
{
	char err[POLICY_ERR_LEN], path[] = "/tmp/launch-test-policy-XXXXXX";
	struct policy *policy = NULL;
	int fd;

	CHECK_EQ_INT(
		policy_load("tests/unit/fixtures/does-not-exist.json", &policy, err, sizeof(err)),
		-ENOENT);
	CHECK_EQ_STR(err, "tests/unit/fixtures/does-not-exist.json: cannot read: No such file or "
			  "directory");
	CHECK(policy == NULL);

	CHECK_EQ_INT(policy_load("tests/unit/fixtures", &policy, err, sizeof(err)), -EISDIR);
	CHECK_CONTAINS(err, "tests/unit/fixtures: cannot read: Is a directory");

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	/* A NUL byte inside the file would hide everything after it from cJSON. */
	CHECK(write(fd, "{\"name\":\"x\",\"allow\":[]}\0junk", 28) == 28);
	CHECK_EQ_INT(policy_load(path, &policy, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "contains a NUL byte");
	CHECK(strncmp(err, path, strlen(path)) == 0);

	/* Just over 16 MiB (sparse, so cheap): refused before reading. */
	CHECK(ftruncate(fd, 16 * 1024 * 1024 + 1) == 0);
	CHECK_EQ_INT(policy_load(path, &policy, err, sizeof(err)), -EFBIG);
	CHECK_CONTAINS(err, "larger than 16 MiB");
	CHECK(policy == NULL);

	/* Exactly 16 MiB is read, then judged as JSON (spaces after a valid object). */
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	{
		static const char head[] = "{\"name\":\"x\",\"allow\":[]}";
		size_t total = 16 * 1024 * 1024, off = 0;
		_cleanup_free_ char *spaces = malloc(1 << 20);

		CHECK(spaces != NULL);
		if (spaces) {
			memset(spaces, ' ', 1 << 20);
			CHECK(write(fd, head, sizeof(head) - 1) == (ssize_t)(sizeof(head) - 1));
			off = sizeof(head) - 1;
			while (off < total) {
				size_t n = total - off < (1 << 20) ? total - off : (1 << 20);

				CHECK(write(fd, spaces, n) == (ssize_t)n);
				off += n;
			}
			CHECK_EQ_INT(policy_load(path, &policy, err, sizeof(err)), 0);
			policy_free(policy);
			policy = NULL;
		}
	}
	close(fd);
	unlink(path);

	/* Unreadable arguments. */
	CHECK_EQ_INT(policy_load(NULL, &policy, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(policy_parse("x", NULL, &policy, err, sizeof(err)), -EINVAL);
}

static void test_errbuf_small_or_null(void)
{
	char tiny[12];
	struct policy *policy = NULL;

	memset(tiny, 'Z', sizeof(tiny));
	CHECK_EQ_INT(policy_parse("policies/long-name.json", "{\"allow\":[]}", &policy, tiny,
				  sizeof(tiny)),
		     -EINVAL);
	CHECK_EQ_INT(strlen(tiny), sizeof(tiny) - 1);
	CHECK_EQ_INT(policy_parse("p.json", "{\"allow\":[]}", &policy, NULL, 0), -EINVAL);
	CHECK_EQ_INT(policy_parse("p.json", "{\"allow\":[]}", &policy, tiny, 0), -EINVAL);
	CHECK(policy == NULL);
}

static void test_long_value_is_cut(void)
{
	char json[2048], host[700];
	char err[POLICY_ERR_LEN];
	struct policy *policy = NULL;

	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	host[300] = '_';
	snprintf(json, sizeof(json), "{\"name\":\"x\",\"allow\":[{\"host\":\"%s\"}]}", host);
	CHECK_EQ_INT(policy_parse("t.json", json, &policy, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "allow[0].host: \"hhhh");
	CHECK_CONTAINS(err, "...\"");
	CHECK(strlen(err) < 200);
}

/* "limits": every key, as numbers and as strings, in both spellings. */
static void test_limits(void)
{
	_cleanup_(policy_freep) struct policy *p = PARSE_OK(
		"{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":256,\"memory_max\":\"256M\","
		"\"cpu_max\":1.5,\"tmp-size\":\"10%\",\"nofile\":1024}}");
	_cleanup_(policy_freep) struct policy *q = PARSE_OK(
		"{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids-max\":\"max\",\"memory_max\":"
		"1073741824,\"cpu_max\":\"50000 100000\",\"tmp_size\":\"1G\"}}");
	_cleanup_(policy_freep) struct policy *none = PARSE_OK("{\"name\":\"x\",\"allow\":[]}");

	if (!p || !q || !none)
		return;
	CHECK_EQ_INT(p->limits.pids_max, 256);
	CHECK_EQ_INT(p->limits.memory_max, 256 << 20);
	CHECK_EQ_INT(p->limits.cpu_quota_us, 150000);
	CHECK_EQ_INT(p->limits.cpu_period_us, 100000);
	CHECK_EQ_INT(p->limits.tmp_percent, 10);
	CHECK_EQ_INT(p->limits.tmp_bytes, LIMIT_UNSET);
	CHECK_EQ_INT(p->limits.nofile, 1024);
	CHECK(q->limits.pids_max == LIMIT_NONE);
	CHECK_EQ_INT(q->limits.memory_max, 1 << 30);
	CHECK_EQ_INT(q->limits.cpu_quota_us, 50000);
	CHECK_EQ_INT(q->limits.tmp_bytes, 1 << 30);
	CHECK_EQ_INT(q->limits.nofile, LIMIT_UNSET);
	CHECK_EQ_INT(none->limits.pids_max, LIMIT_UNSET);
	CHECK_EQ_INT(none->limits.memory_max, LIMIT_UNSET);
}

static void test_bad_limits(void)
{
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":[]}", "limits: must be an object");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids\":5}}",
		     "limits: unknown key \"pids\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":5,\"pids_max\":6}}",
		     "limits: duplicate key \"pids_max\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":5,\"pids-max\":6}}",
		     "limits: duplicate key \"pids_max\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":0}}",
		     "limits.pids_max: \"0\" is not a number of tasks");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":2.5}}",
		     "limits.pids_max: 2.5 is not a positive integer");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":-1}}",
		     "limits.pids_max: -1 is not a positive integer");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"pids_max\":true}}",
		     "limits.pids_max: must be a number or a string, not a boolean");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"memory_max\":\"1M\"}}",
		     "limits.memory_max: \"1M\" is not a size of at least 4M");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"memory_max\":\"256MB x\"}}",
		     "limits.memory_max: \"256MB x\" is not a size");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"memory_max\":\"99999999999T\"}}",
		     "is not a size");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"cpu_max\":0}}",
		     "limits.cpu_max: \"0\" is not a number of CPUs");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"cpu_max\":\"1 10\"}}",
		     "limits.cpu_max: \"1 10\" is not");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"tmp_size\":\"max\"}}",
		     "limits.tmp_size: \"max\" is not a size");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"tmp_size\":\"101%\"}}",
		     "limits.tmp_size: \"101%\" is not");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"nofile\":2}}",
		     "limits.nofile: \"2\" is not a number of descriptors (3-1048576)");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"limits\":{\"nofile\":\"max\"}}",
		     "limits.nofile: \"max\" is not");
}

/* The parsers the options share with the policy file. */
static void test_limit_parsers(void)
{
	uint64_t v, q, per;
	unsigned int pct;

	CHECK_EQ_INT(limit_parse_pids("1", &v), 0);
	CHECK_EQ_INT(v, 1);
	CHECK_EQ_INT(limit_parse_pids("4194304", &v), 0);
	CHECK_EQ_INT(limit_parse_pids("4194305", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_pids("+5", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_pids(" 5", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_pids("", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_pids("99999999999999999999999", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_memory("256M", &v), 0);
	CHECK_EQ_INT(v, 256ull << 20);
	CHECK_EQ_INT(limit_parse_memory("256m", &v), 0);
	CHECK_EQ_INT(limit_parse_memory("2GiB", &v), 0);
	CHECK_EQ_INT(v, 2ull << 30);
	CHECK_EQ_INT(limit_parse_memory("4096K", &v), 0);
	CHECK_EQ_INT(limit_parse_memory("4095K", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_memory("1.5G", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_memory("G", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_memory("5X", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_memory("16777216T", &v), -EINVAL);
	CHECK_EQ_INT(limit_parse_memory("max", &v), 0);
	CHECK(v == LIMIT_NONE);
	CHECK_EQ_INT(limit_parse_cpu("0.5", &q, &per), 0);
	CHECK_EQ_INT(q, 50000);
	CHECK_EQ_INT(per, 100000);
	CHECK_EQ_INT(limit_parse_cpu("250%", &q, &per), 0);
	CHECK_EQ_INT(q, 250000);
	CHECK_EQ_INT(limit_parse_cpu("20000 50000", &q, &per), 0);
	CHECK_EQ_INT(q, 20000);
	CHECK_EQ_INT(per, 50000);
	CHECK_EQ_INT(limit_parse_cpu("0.001", &q, &per), -EINVAL); /* 100 us: under 1 ms */
	CHECK_EQ_INT(limit_parse_cpu("5000", &q, &per), -EINVAL);
	CHECK_EQ_INT(limit_parse_cpu("1.", &q, &per), -EINVAL);
	CHECK_EQ_INT(limit_parse_cpu("1.0000001", &q, &per), -EINVAL);
	CHECK_EQ_INT(limit_parse_cpu("%", &q, &per), -EINVAL);
	CHECK_EQ_INT(limit_parse_cpu("1000 2000000", &q, &per), -EINVAL);
	CHECK_EQ_INT(limit_parse_cpu("max", &q, &per), 0);
	CHECK(q == LIMIT_NONE);
	CHECK_EQ_INT(limit_parse_tmp("64M", &v, &pct), 0);
	CHECK_EQ_INT(v, 64 << 20);
	CHECK_EQ_INT(pct, 0);
	CHECK_EQ_INT(limit_parse_tmp("100%", &v, &pct), 0);
	CHECK_EQ_INT(pct, 100);
	CHECK_EQ_INT(limit_parse_tmp("0%", &v, &pct), -EINVAL);
	CHECK_EQ_INT(limit_parse_tmp("0", &v, &pct), -EINVAL);
	CHECK_EQ_INT(limit_parse_nofile("3", &v), 0);
	CHECK_EQ_INT(limit_parse_nofile("1048577", &v), -EINVAL);
}

/* Several policies: the strictest of each limit; options override; defaults fill the rest. */
/* A controller is needed for any pids, memory or CPU limit, defaults included; not for "max". */
static void test_limit_wants_cgroup(void)
{
	struct job_limits none = { .pids_max = LIMIT_NONE, .memory_max = LIMIT_NONE };
	struct job_limits l = { 0 };

	limit_apply_defaults(&l, 24ull << 30, 32768, 2, 20000);
	CHECK(limit_wants_cgroup(&l));
	limit_apply_defaults(&none, 24ull << 30, 32768, 2, 20000);
	CHECK(!limit_wants_cgroup(&none));
	l = none;
	l.pids_max = 64;
	CHECK(limit_wants_cgroup(&l));
	l = none;
	l.memory_max = 1ull << 30;
	CHECK(limit_wants_cgroup(&l));
	l = none;
	l.cpu_quota_us = 50000;
	l.cpu_period_us = 100000;
	CHECK(limit_wants_cgroup(&l));
	/* tmp and nofile are no controller's. */
	l = none;
	l.tmp_bytes = 1 << 20;
	l.nofile = 64;
	CHECK(!limit_wants_cgroup(&l));
}

static void test_limit_merge_defaults(void)
{
	struct job_limits a = { .pids_max = 100,
				.memory_max = LIMIT_NONE,
				.cpu_quota_us = 50000,
				.cpu_period_us = 100000,
				.tmp_percent = 20 };
	struct job_limits b = { .pids_max = LIMIT_NONE,
				.memory_max = 1ull << 30,
				.cpu_quota_us = 20000,
				.cpu_period_us = 10000,
				.tmp_percent = 10,
				.nofile = 512 };
	struct job_limits cli = { .pids_max = 5000 }, merged = { 0 };
	char buf[32];

	limit_merge_strictest(&merged, &a);
	limit_merge_strictest(&merged, &b);
	CHECK_EQ_INT(merged.pids_max, 100);
	CHECK_EQ_INT(merged.memory_max, 1ull << 30);
	CHECK_EQ_INT(merged.cpu_quota_us, 50000); /* 0.5 CPU beats 2 */
	CHECK_EQ_INT(merged.cpu_period_us, 100000);
	CHECK_EQ_INT(merged.tmp_percent, 10);
	CHECK_EQ_INT(merged.nofile, 512);
	limit_override(&merged, &cli);
	CHECK_EQ_INT(merged.pids_max, 5000);
	CHECK_EQ_INT(merged.memory_max, 1ull << 30);
	limit_apply_defaults(&merged, 24ull << 30, 32768, 2, 20000);
	CHECK_EQ_INT(merged.defaulted, 0); /* asked for, by a policy or an option */

	merged = (struct job_limits){ 0 };
	limit_apply_defaults(&merged, 24ull << 30, 32768, 64, 20000);
	CHECK_EQ_INT(merged.pids_max, 2048); /* Podman's cap, on a large host */
	merged = (struct job_limits){ 0 };
	limit_apply_defaults(&merged, 24ull << 30, 32768, 2, 20000);
	CHECK_EQ_INT(merged.pids_max, 128); /* 64 per CPU */
	CHECK_EQ_INT(merged.memory_max, (24ull << 30) / 100 * 50);
	CHECK(merged.cpu_quota_us == LIMIT_NONE);
	CHECK_EQ_INT(merged.tmp_percent, 25);
	CHECK_EQ_INT(merged.nofile, 4096);
	CHECK_EQ_INT(merged.defaulted, LIMIT_DEFAULTED_PIDS | LIMIT_DEFAULTED_MEMORY);
	CHECK_EQ_INT(limit_tmp_bytes(&merged, 1000ull * 100), 25000);
	merged = (struct job_limits){ 0 };
	limit_apply_defaults(&merged, 1 << 20, 100, 2, 1024);
	CHECK_EQ_INT(merged.pids_max, 64);
	CHECK_EQ_INT(merged.memory_max, LIMIT_MEMORY_MIN_BYTES);
	CHECK_EQ_INT(merged.nofile, 1024);
	merged = (struct job_limits){ 0 };
	limit_apply_defaults(&merged, 1 << 30, 10000, 32, 1024);
	CHECK_EQ_INT(merged.pids_max, 1500); /* 15% of the kernel's tasks */
	merged = (struct job_limits){ 0 };
	limit_apply_defaults(&merged, 1 << 30, 10000, 0, 1024);
	CHECK_EQ_INT(merged.pids_max, 64); /* an unknown CPU count counts as one */
	CHECK_EQ_STR(limit_format_bytes(256ull << 20, buf, sizeof(buf)), "256M");
	CHECK_EQ_STR(limit_format_bytes(1000, buf, sizeof(buf)), "1000");
	CHECK_EQ_STR(limit_format_bytes(LIMIT_NONE, buf, sizeof(buf)), "max");
}

/* "listen": ports (with a protocol) and abstract names, each entry one or the other. */
static void test_listen(void)
{
	struct policy *policy = PARSE_OK("{\"name\":\"l\",\"allow\":[],\"listen\":["
					 "{\"port\":8080},"
					 "{\"port\":\"9000-9010\",\"protocol\":\"udp\"},"
					 "{\"port\":53,\"protocol\":\"any\"},"
					 "{\"unix\":\"@my-service\"}]}");

	if (!policy)
		return;
	CHECK_EQ_INT(policy->nlisten_ports, 3);
	CHECK_EQ_INT(policy->listen_ports[0].lo, 8080);
	CHECK_EQ_INT(policy->listen_ports[0].hi, 8080);
	CHECK_EQ_INT(policy->listen_ports[0].protos, PROTO_TCP);
	CHECK_EQ_INT(policy->listen_ports[1].lo, 9000);
	CHECK_EQ_INT(policy->listen_ports[1].hi, 9010);
	CHECK_EQ_INT(policy->listen_ports[1].protos, PROTO_UDP);
	CHECK_EQ_INT(policy->listen_ports[2].protos, PROTO_ANY);
	CHECK_EQ_INT(policy->nlisten_unix, 1);
	if (policy->nlisten_unix == 1)
		CHECK_EQ_STR(policy->listen_unix[0], "@my-service");
	policy_free(policy);

	/* Absent or empty: loopback only, nothing to list. */
	policy = PARSE_OK("{\"name\":\"l\",\"allow\":[],\"listen\":[]}");
	if (policy)
		CHECK_EQ_INT(policy->nlisten_ports + policy->nlisten_unix, 0);
	policy_free(policy);
}

static void test_bad_listen(void)
{
	char json[8192];
	size_t used;

	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":{\"port\":1}}",
		     "t.json: listen: must be an array, not an object");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[8080]}",
		     "t.json: listen[0]: must be an object, not a number");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{}]}",
		     "t.json: listen[0]: needs exactly one of \"port\" or \"unix\"");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":1,\"unix\":\"@a\"}]}",
		     "listen[0]: needs exactly one of");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":80},{\"ports\":[1]}]}",
		     "t.json: listen[1]: unknown key \"ports\"");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":0}]}",
		     "t.json: listen[0].port: 0 is not a port (1-65535)");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":65536}]}",
		     "listen[0].port: 65536 is not a port");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":80.5}]}",
		     "listen[0].port: 80.5 is not a port");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":\"90-80\"}]}",
		     "listen[0].port: \"90-80\" is not a port or a range");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":[80]}]}",
		     "listen[0].port: must be a port number or a \"lo-hi\" string, not an array");
	EXPECT_ERROR(
		"{\"name\":\"l\",\"allow\":[],\"listen\":[{\"port\":80,\"protocol\":\"sctp\"}]}",
		"listen[0].protocol: \"sctp\" is not \"tcp\", \"udp\" or \"any\"");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"unix\":\"/run/a.sock\"}]}",
		     "listen[0].unix: \"/run/a.sock\" must be \"@name\"");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"unix\":\"@\"}]}",
		     "listen[0].unix: \"@\" must be \"@name\"");
	EXPECT_ERROR("{\"name\":\"l\",\"allow\":[],\"listen\":[{\"unix\":7}]}",
		     "listen[0].unix: must be a string, not a number");
	EXPECT_ERROR(
		"{\"name\":\"l\",\"allow\":[],\"listen\":[{\"unix\":\"@a\",\"protocol\":\"tcp\"}]}",
		"listen[0]: \"protocol\" goes with \"port\", not \"unix\"");

	/* MAX_LISTEN_PORTS ports at most. */
	used = (size_t)snprintf(json, sizeof(json), "{\"name\":\"l\",\"allow\":[],\"listen\":[");
	for (int i = 0; i <= MAX_LISTEN_PORTS; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used, "%s{\"port\":%d}",
					 i ? "," : "", 1000 + i);
	snprintf(json + used, sizeof(json) - used, "]}");
	EXPECT_ERROR(json, "more than 32 ports (MAX_LISTEN_PORTS)");
}

/* The example: "http" on a host rule and "secrets"; the rest of a policy unchanged. */
static void test_http_and_secrets(void)
{
	_cleanup_(policy_freep) struct policy *policy = PARSE_OK(
		"{\"name\":\"stripe\",\"allow\":[{\"host\":\"api.stripe.com\",\"ports\":[443],"
		"\"http\":{\"allow\":[{\"method\":\"GET\",\"path\":\"/v1/customers*\"},"
		"{\"method\":\"POST\",\"path\":\"/v1/customers\"}],"
		"\"deny\":[{\"path\":\"/v1/webhook_endpoints*\"}]}},"
		"{\"host\":\"files.stripe.com\",\"ports\":[443],\"http\":{}},"
		"{\"host\":\"m.stripe.com\"}],"
		"\"secrets\":[{\"name\":\"STRIPE_API_KEY\",\"hosts\":[\"api.stripe.com\","
		"\"files.stripe.com\"],\"header\":\"Authorization\",\"format\":\"Bearer {}\"}]}");

	if (!policy)
		return;
	CHECK_EQ_INT(policy->nentries, 3);
	CHECK(policy->entries[0].http && policy->entries[0].http->nallow == 2);
	CHECK(policy->entries[1].http && !policy->entries[1].http->allow_given);
	CHECK(policy->entries[2].http == NULL);
	CHECK_EQ_INT(policy->nsecrets, 1);
	CHECK_EQ_STR(policy->secrets[0].hosts[1], "files.stripe.com");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[{\"host\":\"api.x.com\",\"http\":{}},"
		     "{\"host\":\"b.x.com\"}],\"secrets\":[{\"name\":\"K\",\"hosts\":"
		     "[\"api.x.com\",\"b.x.com\"],\"header\":\"x-api-key\",\"format\":\"{}\"}]}",
		     "t.json: secrets[0].hosts[1]: \"b.x.com\" has no host rule with \"http\"");
	EXPECT_ERROR("{\"name\":\"x\",\"allow\":[],\"secrets\":[{\"name\":\"K\",\"hosts\":"
		     "[\"api.x.com\"],\"header\":\"x-api-key\",\"format\":\"{}\"}]}",
		     "t.json: secrets[0].hosts[0]: \"api.x.com\" has no host rule with \"http\"");
	EXPECT_ENTRY_ERROR("{\"cidr\":\"10.0.0.0/8\",\"http\":{}}",
			   "t.json: allow[1].http: only a \"host\" rule may have \"http\"");
	EXPECT_ENTRY_ERROR("{\"host\":\"a.x.com\",\"http\":true}",
			   "t.json: allow[1].http: must be an object, not a boolean");
}

int main(void)
{
	RUN(test_minimal);
	RUN(test_full_example);
	RUN(test_host_normalized);
	RUN(test_host_length_limits);
	RUN(test_shipped_policies);
	RUN(test_shipped_hosts);
	RUN(test_bad_json);
	RUN(test_bad_top_level);
	RUN(test_name_rules);
	RUN(test_bad_entry_shape);
	RUN(test_bad_ports);
	RUN(test_bad_protocol);
	RUN(test_bad_hosts);
	RUN(test_bad_cidrs);
	RUN(test_sni);
	RUN(test_bad_unix);
	RUN(test_unix_limit);
	RUN(test_fs);
	RUN(test_bad_fs);
	RUN(test_listen);
	RUN(test_bad_listen);
	RUN(test_port_range_limit);
	RUN(test_allow_entries_limit);
	RUN(test_later_entry_error_frees);
	RUN(test_escaped_nul);
	RUN(test_ipv4_mapped_same);
	RUN(test_parse_cidr);
	RUN(test_parse_port_range);
	RUN(test_format_addr);
	RUN(test_load_fixtures);
	RUN(test_load_errors);
	RUN(test_errbuf_small_or_null);
	RUN(test_long_value_is_cut);
	RUN(test_limits);
	RUN(test_bad_limits);
	RUN(test_limit_parsers);
	RUN(test_limit_merge_defaults);
	RUN(test_limit_wants_cgroup);
	RUN(test_http_and_secrets);
	return test_failures != 0;
}
