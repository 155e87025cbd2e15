// SPDX-License-Identifier: LGPL-2.1-or-later
/* Refusals read from audit log lines, as --notify-denials and launch mcp show them. */
#include <stdlib.h>

#include "audit/audit.h"
#include "audit/refusal.h"
#include "test.h"

/* The notice for one line, or "" when the line is no refusal. */
static const char *notice(const char *line)
{
	static char buf[2 * REFUSAL_FIELD_MAX + 128];
	struct refusal refusal;
	int r = refusal_parse(line, strlen(line), &refusal);

	buf[0] = '\0';
	if (r == 1)
		CHECK(refusal_format(&refusal, buf, sizeof(buf)) > 0);
	return buf;
}

static void test_refusal_notices(void)
{
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"stripe\",\"op\":\"connect\","
			    "\"family\":\"ipv4\",\"protocol\":\"tcp\",\"dst_ip\":\"1.1.1.1\","
			    "\"dst_port\":443}"),
		     "refused connect 1.1.1.1:443 (policy stripe)");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"a,b\",\"op\":\"sendmsg\","
			    "\"family\":\"ipv6\",\"protocol\":\"udp\",\"dst_ip\":\"2001:db8::1\","
			    "\"dst_port\":53,\"dst_name\":\"x.example\"}"),
		     "refused sendmsg [2001:db8::1]:53 (policy a,b) [x.example]");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"dns\",\"protocol\":"
			    "\"udp\",\"qname\":\"evil.example\",\"qtype\":\"A\",\"rcode\":"
			    "\"REFUSED\",\"reason\":\"name\"}"),
		     "refused dns evil.example (policy p)");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"dns\",\"qname\":"
			    "\"api.stripe.com\",\"qtype\":\"TXT\",\"reason\":\"qtype\"}"),
		     "refused dns api.stripe.com type TXT (policy p)");
	CHECK_EQ_STR(
		notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"connect_unix\","
		       "\"family\":\"unix\",\"type\":\"stream\",\"dst_path\":\"/run/x.sock\"}"),
		"refused connect_unix /run/x.sock (policy p)");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"socket\",\"family\":"
			    "\"packet\",\"type\":\"raw\",\"protocol\":\"768\"}"),
		     "refused socket packet raw 768 (policy p)");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"setsockopt\","
			    "\"family\":\"ipv6\",\"type\":\"dgram\",\"protocol\":\"udp\",\"level\":"
			    "\"ipv6\",\"optname\":51,\"option\":\"IPV6_RTHDR\"}"),
		     "refused setsockopt IPV6_RTHDR (policy p)");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"packet\","
			    "\"family\":\"ipv4\",\"protocol\":\"tcp\",\"dst_ip\":\"192.0.2.9\","
			    "\"dst_port\":80,\"reason\":\"destination\"}"),
		     "refused packet 192.0.2.9:80 (policy p)");
	CHECK_EQ_STR(notice("{\"event\":\"deny\",\"policy\":\"p\",\"op\":\"userns\"}"),
		     "refused userns (policy p)");
	/* --audit-only: what the policy would refuse, let through. */
	CHECK_EQ_STR(notice("{\"event\":\"would_deny\",\"policy\":\"p\",\"op\":\"connect\","
			    "\"protocol\":\"tcp\",\"dst_ip\":\"192.0.2.9\",\"dst_port\":80,"
			    "\"dst_name\":\"x.example\"}"),
		     "would refuse connect 192.0.2.9:80 (policy p) [x.example]");
}

static void test_refusal_other_lines(void)
{
	CHECK_EQ_STR(notice("{\"event\":\"sandbox_start\",\"policy\":\"p\"}"), "");
	CHECK_EQ_STR(notice("{\"event\":\"dns_allow\",\"qname\":\"a\"}"), "");
	CHECK_EQ_STR(notice("{\"event\":\"allow\",\"op\":\"connect\",\"dst_ip\":\"1.2.3.4\","
			    "\"dst_port\":1}"),
		     "");
	CHECK_EQ_STR(notice("{\"event\":\"deny\"}"), "");
	CHECK_EQ_STR(notice("not json"), "");
	CHECK_EQ_STR(notice(""), "");
}

/*
 * launch mcp's cut when launch did not confirm its log at ready: the runner's start-up
 * refusals, written after the call began, are older than the cut and left out; the code's
 * are not. The time is audit_format_time's, so text order is time order.
 */
static void test_refusal_since(void)
{
	static const char STARTUP[] = "{\"ts\":\"2026-11-30T21:00:00.999999Z\",\"event\":\"deny\","
				      "\"policy\":\"p\",\"op\":\"connect_unix\",\"dst_path\":"
				      "\"/var/run/nscd/socket\"}";
	static const char CODE[] = "{\"ts\":\"2026-11-30T21:00:01.000000Z\",\"event\":\"deny\","
				   "\"policy\":\"p\",\"op\":\"connect\",\"dst_ip\":\"1.1.1.1\","
				   "\"dst_port\":443}";
	struct refusal startup, code;
	char cut[32];

	CHECK_EQ_INT(
		audit_format_time(1796072400LL * 1000000000LL + 1000000000LL, cut, sizeof(cut)),
		27);
	CHECK_EQ_STR(cut, "2026-11-30T21:00:01.000000Z");
	CHECK_EQ_INT(refusal_parse(STARTUP, strlen(STARTUP), &startup), 1);
	CHECK_EQ_INT(refusal_parse(CODE, strlen(CODE), &code), 1);
	CHECK_EQ_STR(startup.ts, "2026-11-30T21:00:00.999999Z");
	CHECK(!refusal_since(&startup, cut));
	CHECK(refusal_since(&code, cut));
	/* No cut (the log was confirmed): every refusal is the call's. */
	CHECK(refusal_since(&startup, ""));
	CHECK(refusal_since(&startup, NULL));
}

int main(void)
{
	RUN(test_refusal_notices);
	RUN(test_refusal_other_lines);
	RUN(test_refusal_since);
	return test_failures != 0;
}
