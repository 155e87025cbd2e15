// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch learn: the policy made from a fixed audit log, and that policy.c takes it. */
#include <errno.h>
#include <stdlib.h>

#include "audit/learn.h"
#include "policy/policy.h"
#include "test.h"

#define FIXTURE "tests/unit/fixtures/audit_learn.jsonl"

/* Feeds every line of the fixture; returns how many were not audit lines. */
static int feed(struct learn *learn, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int bad = 0;

	CHECK(f != NULL);
	if (!f)
		return -1;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (learn_line(learn, line, (size_t)n) == -EBADMSG)
			bad++;
	}
	free(line);
	fclose(f);
	return bad;
}

/* The policy and notes learned from the fixture with these options; the policy is checked. */
static void learned(const struct learn_options *options, char **ret_policy, char **ret_notes)
{
	struct learn *learn = NULL;
	struct policy *policy = NULL;
	char err[POLICY_ERR_LEN] = "";

	*ret_policy = *ret_notes = NULL;
	CHECK_EQ_INT(learn_new(options, &learn), 0);
	CHECK_EQ_INT(feed(learn, FIXTURE), 1);
	CHECK_EQ_INT(learn_policy(learn, ret_policy, ret_notes), 0);
	/* What launch learn prints, launch --policy takes. */
	CHECK_EQ_INT(policy_parse("learned", *ret_policy, &policy, err, sizeof(err)), 0);
	CHECK_EQ_STR(err, "");
	policy_free(policy);
	learn_free(learn);
}

static void test_learn_sandbox(void)
{
	struct learn_options options = { .sandbox = "sb1", .name = "demo-learned" };
	char *policy, *notes;

	learned(&options, &policy, &notes);
	/*
	 * Names where a look-up explains the address (in lower case); "*.evil.test" is no name
	 * a policy may take from the job, so its address is learned; TCP and UDP to 192.0.2.9
	 * on the same port are one "any" entry; duplicates are merged, ports sorted.
	 */
	CHECK_EQ_STR(
		policy,
		"{\n"
		"  \"name\": \"demo-learned\",\n"
		"  \"description\": \"learned by launch learn from an audit log\",\n"
		"  \"allow\": [\n"
		"    {\"host\":\"api.provider.test\",\"ports\":[8443],\"protocol\":\"tcp\"},\n"
		"    {\"host\":\"x.cdn.provider.test\",\"ports\":[8443,9443],"
		"\"protocol\":\"tcp\"},\n"
		"    {\"host\":\"y.cdn.provider.test\",\"ports\":[8443],\"protocol\":\"tcp\"},\n"
		"    {\"cidr\":\"127.0.0.66/32\",\"ports\":[443],\"protocol\":\"tcp\"},\n"
		"    {\"cidr\":\"192.0.2.9/32\",\"ports\":[80],\"protocol\":\"any\"},\n"
		"    {\"cidr\":\"2001:db8::5/128\",\"ports\":[5353],\"protocol\":\"udp\"}\n"
		"  ],\n"
		"  \"unix\": [\n"
		"    \"/run/app.sock\"\n"
		"  ]\n"
		"}\n");
	/* What no policy allows is named, and not learned; sb2's connect is not there. */
	CHECK_EQ_STR(notes, "1 deny socket: no policy allows it, left out\n"
			    "1 would_deny dns look-ups of type TXT: no policy allows it, left out\n"
			    "lookup.only.test was looked up but never connected to: left out (its "
			    "look-ups will be refused)\n");
	CHECK(!strstr(policy, "10.0.0.1"));
	free(policy);
	free(notes);
}

static void test_learn_wildcards(void)
{
	struct learn_options options = { .sandbox = "sb1", .wildcards = true };
	char *policy, *notes;

	learned(&options, &policy, &notes);
	/* Two names below cdn.provider.test: one wildcard. api.provider.test stays alone. */
	CHECK_CONTAINS(policy, "\"name\": \"learned\"");
	CHECK_CONTAINS(
		policy,
		"{\"host\":\"*.cdn.provider.test\",\"ports\":[8443,9443],\"protocol\":\"tcp\"}");
	CHECK_CONTAINS(policy, "{\"host\":\"api.provider.test\",\"ports\":[8443]");
	CHECK(!strstr(policy, "x.cdn.provider.test"));
	CHECK(!strstr(policy, "*.provider.test"));
	free(policy);
	free(notes);
}

static void test_learn_every_sandbox(void)
{
	struct learn_options options = { 0 };
	char *policy, *notes;

	learned(&options, &policy, &notes);
	CHECK_CONTAINS(policy, "{\"cidr\":\"10.0.0.1/32\",\"ports\":[22],\"protocol\":\"tcp\"}");
	free(policy);
	free(notes);
}

/* What the log says it lacks: lost events and lines launch could not write, per sandbox. */
static void test_learn_gaps(void)
{
	struct learn_options options = { .sandbox = "sb1" };
	struct learn *learn = NULL;
	struct learn_gaps gaps;
	const char *exit_line = "{\"event\":\"sandbox_exit\",\"sandbox\":\"w\",\"lost\":1,"
				"\"would_deny_lost\":0,\"allowed_lost\":2,\"unwritten\":1,"
				"\"log_failed\":4}";
	const char *lost_line = "{\"event\":\"events_lost\",\"sandbox\":\"k\",\"count\":0,"
				"\"allow\":5}";

	/* The fixture's sb1: 3 would_deny events lost (events_lost and sandbox_exit agree). */
	CHECK_EQ_INT(learn_new(&options, &learn), 0);
	CHECK_EQ_INT(feed(learn, FIXTURE), 1);
	learn_gaps(learn, &gaps);
	CHECK_EQ_INT(gaps.lost, 3);
	CHECK_EQ_INT(gaps.unwritten, 0);
	learn_free(learn);

	/* sb2: a whole log. */
	options.sandbox = "sb2";
	CHECK_EQ_INT(learn_new(&options, &learn), 0);
	CHECK_EQ_INT(feed(learn, FIXTURE), 1);
	learn_gaps(learn, &gaps);
	CHECK_EQ_INT(gaps.lost, 0);
	CHECK_EQ_INT(gaps.unwritten, 0);
	learn_free(learn);

	/* Lines not written (log_failed, all kinds) and allow events lost count too. */
	options.sandbox = "w";
	CHECK_EQ_INT(learn_new(&options, &learn), 0);
	CHECK_EQ_INT(learn_line(learn, exit_line, strlen(exit_line)), 1);
	learn_gaps(learn, &gaps);
	CHECK_EQ_INT(gaps.lost, 3);
	CHECK_EQ_INT(gaps.unwritten, 4);
	learn_free(learn);

	/* A killed launcher wrote no sandbox_exit: its events_lost lines say it. */
	options.sandbox = "k";
	CHECK_EQ_INT(learn_new(&options, &learn), 0);
	CHECK_EQ_INT(learn_line(learn, lost_line, strlen(lost_line)), 1);
	learn_gaps(learn, &gaps);
	CHECK_EQ_INT(gaps.lost, 5);
	learn_free(learn);
}

/* A line of connect to ADDR:PORT over tcp, no name. */
static int feed_connect(struct learn *learn, const char *event, const char *addr, unsigned port)
{
	char line[512];

	snprintf(line, sizeof(line),
		 "{\"event\":\"%s\",\"sandbox\":\"s\",\"op\":\"connect\",\"family\":\"ipv4\","
		 "\"protocol\":\"tcp\",\"dst_ip\":\"%s\",\"dst_port\":%u}",
		 event, addr, port);
	return learn_line(learn, line, strlen(line));
}

static void test_learn_port_ranges(void)
{
	struct learn_options options = { 0 };
	struct learn *learn = NULL;
	struct policy *parsed = NULL;
	char *policy = NULL, *notes = NULL, err[POLICY_ERR_LEN] = "";

	CHECK_EQ_INT(learn_new(&options, &learn), 0);
	/* Consecutive ports make a range; a lone one stays a number. */
	for (unsigned p = 9000; p <= 9002; p++)
		CHECK_EQ_INT(feed_connect(learn, "allow", "192.0.2.1", p), 1);
	CHECK_EQ_INT(feed_connect(learn, "deny", "192.0.2.1", 22), 1);
	/* 40 scattered ports at another address: more ranges than a policy entry holds. */
	for (unsigned p = 0; p < 40; p++)
		CHECK_EQ_INT(
			feed_connect(learn, "would_deny", "192.0.2.2", 1000 + p * 10 + (p > 20)),
			1);
	{
		const char *odd[] = {
			"{\"event\":\"would_deny\",\"op\":\"connect_unix\",\"dst_path\":\"rel."
			"sock\"}",
			"{\"event\":\"would_deny\",\"op\":\"connect_unix\",\"dst_path\":"
			"\"@evil\\u0000secret\"}",
		};

		for (size_t i = 0; i < ARRAY_SIZE(odd); i++)
			CHECK_EQ_INT(learn_line(learn, odd[i], strlen(odd[i])), 1);
	}
	CHECK_EQ_INT(learn_line(learn, "[1,2]", 5), -EBADMSG);
	CHECK_EQ_INT(learn_line(learn, "{\"no_event\":1}", 14), -EBADMSG);
	CHECK_EQ_INT(learn_policy(learn, &policy, &notes), 0);
	CHECK_CONTAINS(policy, "{\"cidr\":\"192.0.2.1/32\",\"ports\":[22,\"9000-9002\"],"
			       "\"protocol\":\"tcp\"}");
	CHECK_CONTAINS(notes, "more than 32 port ranges for one destination");
	/* Neither AF_UNIX address is learned: one is relative, one would be cut at its NUL. */
	CHECK_CONTAINS(notes, "2 would_deny connect_unix to a relative path or an abstract name "
			      "with a NUL: no policy allows them, left out\n");
	CHECK(!strstr(policy, "unix"));
	CHECK_EQ_INT(policy_parse("learned", policy, &parsed, err, sizeof(err)), 0);
	if (parsed) {
		CHECK_EQ_INT(parsed->nentries, 2);
		CHECK_EQ_INT(parsed->entries[1].nports, MAX_PORT_RANGES);
		/* Every port used is still allowed after the joining. */
		for (unsigned p = 0; p < 40; p++) {
			unsigned port = 1000 + p * 10 + (p > 20);
			bool found = false;

			for (unsigned i = 0; i < parsed->entries[1].nports; i++)
				found |= port >= parsed->entries[1].ports[i].lo &&
					 port <= parsed->entries[1].ports[i].hi;
			CHECK(found);
		}
	}
	policy_free(parsed);
	free(policy);
	free(notes);
	learn_free(learn);
}

int main(void)
{
	RUN(test_learn_sandbox);
	RUN(test_learn_wildcards);
	RUN(test_learn_every_sandbox);
	RUN(test_learn_port_ranges);
	RUN(test_learn_gaps);
	return test_failures != 0;
}
