// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch report: the summary of a fixed audit log. */
#include <errno.h>
#include <stdlib.h>

#include "audit/report.h"
#include "test.h"

#define FIXTURE "tests/unit/fixtures/audit_learn.jsonl"

static char *report_of(const char *path)
{
	struct report *report = NULL;
	FILE *f = fopen(path, "re");
	char *line = NULL, *text = NULL;
	size_t cap = 0;
	ssize_t n;
	int bad = 0;

	CHECK(f != NULL);
	CHECK_EQ_INT(report_new(&report), 0);
	while (f && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (report_line(report, line, (size_t)n) == -EBADMSG)
			bad++;
	}
	CHECK_EQ_INT(bad, 1);
	CHECK_EQ_INT(report_text(report, &text), 0);
	free(line);
	if (f)
		fclose(f);
	report_free(report);
	return text;
}

static void test_report_summary(void)
{
	char *text = report_of(FIXTURE);

	/* Per policy and sandbox, the audit-only one said so, with its ending and its losses. */
	CHECK_CONTAINS(text, "policy demo, sandbox sb1 (audit-only): exit 0, denied 1, "
			     "would_deny 15, lost 3\n");
	CHECK_CONTAINS(text, "policy demo, sandbox sb2: exit 1, denied 1, lost 0\n");
	CHECK_CONTAINS(text, "policy other, sandbox sb3: exit 0, denied 0, lost 0\n"
			     "  no refused destinations\n");
	/* The destination refused twice comes first, with its name, address, port and times. */
	CHECK_CONTAINS(text,
		       "  would_deny  connect       x.cdn.provider.test 127.0.3.7:8443 tcp"
		       "        2  2026-11-30T10:00:00.300000Z  2026-11-30T10:00:00.600000Z\n");
	CHECK_CONTAINS(text, "x.cdn.provider.test 127.0.3.7:9443 tcp        1  "
			     "2026-11-30T10:00:00.400000Z  2026-11-30T10:00:00.400000Z\n");
	CHECK_CONTAINS(text, "[2001:db8::5]:5353 udp");
	CHECK_CONTAINS(text, "would_deny  dns           X.CDN.provider.test A ");
	CHECK_CONTAINS(text, "api.provider.test TXT (qtype)");
	CHECK_CONTAINS(text, "would_deny  connect_unix  /run/app.sock ");
	CHECK_CONTAINS(text, "deny        socket        packet raw 768 ");
	CHECK_CONTAINS(text, "deny   connect  10.0.0.1:22 tcp ");
	/* Allowed connections are no refusal: api.provider.test:8443 is not listed. */
	CHECK(!strstr(text, "127.0.3.1"));
	/* The jobs that ended with refusals: sb1 and sb2, not the clean sb3. */
	CHECK_CONTAINS(text,
		       "\njobs that ended with denials:\n"
		       "  sandbox sb1 (policy demo): exit 0, denied 1, would_deny 15, lost 3\n"
		       "  sandbox sb2 (policy demo): exit 1, denied 1, lost 0\n");
	CHECK(!strstr(text, "  sandbox sb3 (policy other)"));
	free(text);
}

static int count_incomplete(const char *text)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, "incomplete")); p++)
		n++;
	return n;
}

static void test_report_no_exit(void)
{
	struct report *report = NULL;
	char *text = NULL;
	const char *lines[] = {
		"{\"ts\":\"2026-11-30T10:00:00.000001Z\",\"event\":\"deny\",\"sandbox\":\"k\","
		"\"policy\":\"p\",\"op\":\"connect\",\"protocol\":\"tcp\",\"dst_ip\":\"192.0.2.1\","
		"\"dst_port\":443}",
		"{\"ts\":\"2026-11-30T10:00:00.000002Z\",\"event\":\"events_lost\",\"sandbox\":"
		"\"k\","
		"\"policy\":\"p\",\"count\":7}",
	};

	CHECK_EQ_INT(report_new(&report), 0);
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++)
		CHECK_EQ_INT(report_line(report, lines[i], strlen(lines[i])), 1);
	CHECK_EQ_INT(report_text(report, &text), 0);
	/* A launcher that was killed wrote no sandbox_exit: its events_lost lines still count. */
	CHECK_CONTAINS(text, "policy p, sandbox k: no sandbox_exit in the log\n"
			     "  lost: 7 events (events_lost)\n");
	CHECK_CONTAINS(text, "192.0.2.1:443 tcp ");
	CHECK_CONTAINS(text, "jobs that ended with denials:\n  none\n");
	free(text);
	report_free(report);
}

/* Lines launch could not write (unwritten, log_failed): the report says the log is short. */
static void test_report_incomplete(void)
{
	struct report *report = NULL;
	char *text = NULL;
	const char *lines[] = {
		"{\"ts\":\"2026-11-30T10:00:00.000001Z\",\"event\":\"sandbox_exit\",\"sandbox\":"
		"\"w\",\"policy\":\"p\",\"exit_code\":0,\"denied\":4,\"lost\":1,\"unwritten\":2,"
		"\"log_failed\":3}",
		"{\"ts\":\"2026-11-30T10:00:00.000002Z\",\"event\":\"sandbox_exit\",\"sandbox\":"
		"\"c\",\"policy\":\"p\",\"exit_code\":0,\"denied\":0,\"lost\":0,\"unwritten\":0}",
	};

	CHECK_EQ_INT(report_new(&report), 0);
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++)
		CHECK_EQ_INT(report_line(report, lines[i], strlen(lines[i])), 1);
	CHECK_EQ_INT(report_text(report, &text), 0);
	CHECK_CONTAINS(text, "policy p, sandbox w: exit 0, denied 4, lost 1, unwritten 2 (log "
			     "incomplete: 3 lines not written)\n");
	CHECK_CONTAINS(text, "  sandbox w (policy p): exit 0, denied 4, lost 1, unwritten 2 (log "
			     "incomplete: 3 lines not written)\n");
	/* A whole log says nothing of it. */
	CHECK_CONTAINS(text, "policy p, sandbox c: exit 0, denied 0, lost 0\n");
	CHECK_EQ_INT(count_incomplete(text), 2);
	free(text);
	report_free(report);
}

int main(void)
{
	RUN(test_report_summary);
	RUN(test_report_no_exit);
	RUN(test_report_incomplete);
	return test_failures != 0;
}
