// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `launch report`: an audit log summed up for a person, per policy and sandbox, without I/O:
 * the caller feeds lines and prints the text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "lib/json.h"
#include "report.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* Room for an RFC 3339 time as the log writes it, and then some. */
#define REPORT_TS_LEN 40

/* One refused destination of one sandbox: every line that names it, counted. */
struct report_dest {
	char *event; /* "deny" or "would_deny" */
	char *op;
	char *where; /* name, address and port; a path; a name and type... */
	unsigned long long count;
	char first[REPORT_TS_LEN], last[REPORT_TS_LEN];
};

struct report_sandbox {
	char *policy, *sandbox;
	char first[REPORT_TS_LEN]; /* its first line's time: the order of the report */
	bool audit_only;
	bool exited;
	long long exit_code; /* -1: killed by `signal` */
	long long signal;
	unsigned long long denied, would_deny, lost_exit; /* from sandbox_exit */
	unsigned long long unwritten, log_failed;	  /* from sandbox_exit */
	unsigned long long lost_lines;			  /* events_lost counts, summed */
	struct report_dest *dests;
	size_t ndests, capdests;
};

struct report {
	struct report_sandbox *sandboxes;
	size_t nsandboxes, capsandboxes;
};

int report_new(struct report **ret_report)
{
	*ret_report = calloc(1, sizeof(**ret_report));
	return *ret_report ? 0 : -ENOMEM;
}

void report_free(struct report *report)
{
	if (!report)
		return;
	for (size_t i = 0; i < report->nsandboxes; i++) {
		struct report_sandbox *s = &report->sandboxes[i];

		for (size_t k = 0; k < s->ndests; k++) {
			free(s->dests[k].event);
			free(s->dests[k].op);
			free(s->dests[k].where);
		}
		free(s->dests);
		free(s->policy);
		free(s->sandbox);
	}
	free(report->sandboxes);
	free(report);
}

static struct report_sandbox *report_sandbox_get(struct report *report, const char *policy,
						 const char *sandbox, const char *ts)
{
	struct report_sandbox *s;

	for (size_t i = 0; i < report->nsandboxes; i++) {
		s = &report->sandboxes[i];
		if (strcmp(s->policy, policy) == 0 && strcmp(s->sandbox, sandbox) == 0)
			return s;
	}
	if (array_grow((void **)&report->sandboxes, &report->capsandboxes, report->nsandboxes + 1,
		       sizeof(*report->sandboxes)) < 0)
		return NULL;
	s = &report->sandboxes[report->nsandboxes];
	*s = (struct report_sandbox){ .policy = strdup(policy), .sandbox = strdup(sandbox) };
	if (!s->policy || !s->sandbox) {
		free(s->policy);
		free(s->sandbox);
		return NULL;
	}
	snprintf(s->first, sizeof(s->first), "%s", ts);
	report->nsandboxes++;
	return s;
}

/* "name 1.2.3.4:443 tcp", "[2001:db8::1]:53 udp"; the address alone when it has no name. */
static void report_inet(FILE *f, const cJSON *line, const char *ip_key, const char *port_key)
{
	const char *ip = json_str(line, ip_key), *name = json_str(line, "dst_name");
	const char *protocol = json_str(line, "protocol");

	if (name)
		fprintf(f, "%s ", name);
	fprintf(f, strchr(ip, ':') ? "[%s]:%llu" : "%s:%llu", ip, json_u64(line, port_key));
	if (protocol)
		fprintf(f, " %s", protocol);
}

/* Where a refused line was going, as a person would write it. */
static char *report_where(const cJSON *line, const char *op)
{
	const char *qname = json_str(line, "qname"), *qtype = json_str(line, "qtype");
	const char *reason = json_str(line, "reason"), *path = json_str(line, "dst_path");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (strcmp(op, "dns") == 0) {
		fprintf(f, "%s%s%s", qname ? qname : "(no question)", qtype ? " " : "",
			qtype ? qtype : "");
		if (reason && strcmp(reason, "name") != 0)
			fprintf(f, " (%s)", reason);
	} else if (json_str(line, "dst_ip")) {
		report_inet(f, line, "dst_ip", "dst_port");
		if (reason)
			fprintf(f, " (%s)", reason);
	} else if (json_str(line, "local_ip")) {
		report_inet(f, line, "local_ip", "local_port");
	} else if (path || json_str(line, "path")) {
		fprintf(f, "%s", path ? path : json_str(line, "path"));
	} else if (json_str(line, "option")) {
		fprintf(f, "%s", json_str(line, "option"));
	} else if (json_str(line, "family")) {
		fprintf(f, "%s", json_str(line, "family"));
		if (json_str(line, "type"))
			fprintf(f, " %s", json_str(line, "type"));
		if (json_str(line, "protocol"))
			fprintf(f, " %s", json_str(line, "protocol"));
	} else if (json_str(line, "syscall")) {
		fprintf(f, "%s", json_str(line, "syscall"));
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static int report_refusal(struct report_sandbox *s, const cJSON *line, const char *event,
			  const char *ts)
{
	const char *op = json_str(line, "op") ?: "?";
	_cleanup_free_ char *where = report_where(line, op);
	/* A refused look-up's line stands for it and its repeats within the second. */
	unsigned long long count = 1 + json_u64(line, "repeats");
	struct report_dest *d;

	if (!where)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndests; i++) {
		d = &s->dests[i];
		if (strcmp(d->event, event) || strcmp(d->op, op) || strcmp(d->where, where))
			continue;
		d->count += count;
		/* RFC 3339 times of one format order as text. */
		if (strcmp(ts, d->first) < 0)
			snprintf(d->first, sizeof(d->first), "%s", ts);
		if (strcmp(ts, d->last) > 0)
			snprintf(d->last, sizeof(d->last), "%s", ts);
		return 0;
	}
	if (array_grow((void **)&s->dests, &s->capdests, s->ndests + 1, sizeof(*s->dests)) < 0)
		return -ENOMEM;
	d = &s->dests[s->ndests];
	*d = (struct report_dest){ .event = strdup(event), .op = strdup(op), .count = count };
	if (!d->event || !d->op) {
		free(d->event);
		free(d->op);
		return -ENOMEM;
	}
	d->where = TAKE_PTR(where);
	snprintf(d->first, sizeof(d->first), "%s", ts);
	snprintf(d->last, sizeof(d->last), "%s", ts);
	s->ndests++;
	return 0;
}

int report_line(struct report *report, const char *text, size_t len)
{
	_cleanup_(cJSON_Deletep) cJSON *line = cJSON_ParseWithLength(text, len);
	const char *event = line ? json_str(line, "event") : NULL;
	struct report_sandbox *s;
	const cJSON *code;

	if (!cJSON_IsObject(line) || !event)
		return -EBADMSG;
	s = report_sandbox_get(report, json_str(line, "policy") ?: "?",
			       json_str(line, "sandbox") ?: "?", json_str(line, "ts") ?: "");
	if (!s)
		return -ENOMEM;
	if (strcmp(event, "sandbox_start") == 0) {
		s->audit_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "audit_only"));
	} else if (strcmp(event, "deny") == 0 || strcmp(event, "would_deny") == 0) {
		if (report_refusal(s, line, event, json_str(line, "ts") ?: "") < 0)
			return -ENOMEM;
	} else if (strcmp(event, "events_lost") == 0) {
		s->lost_lines += json_u64(line, "count") + json_u64(line, "would_deny");
	} else if (strcmp(event, "sandbox_exit") == 0) {
		s->exited = true;
		code = cJSON_GetObjectItemCaseSensitive(line, "exit_code");
		s->exit_code = cJSON_IsNumber(code) ? (long long)code->valuedouble : -1;
		s->signal = (long long)json_u64(line, "signal");
		s->denied = json_u64(line, "denied");
		s->would_deny = json_u64(line, "would_deny");
		s->lost_exit = json_u64(line, "lost") + json_u64(line, "would_deny_lost");
		s->unwritten = json_u64(line, "unwritten");
		s->log_failed = json_u64(line, "log_failed");
		if (json_u64(line, "would_deny") ||
		    cJSON_GetObjectItemCaseSensitive(line, "would_deny_by_op"))
			s->audit_only = true;
	}
	return 1;
}

/* Most often refused first; then by kind and destination, so the text is stable. */
static int report_dest_cmp(const void *pa, const void *pb)
{
	const struct report_dest *a = pa, *b = pb;
	int c;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	c = strcmp(a->event, b->event);
	if (!c)
		c = strcmp(a->op, b->op);
	return c ? c : strcmp(a->where, b->where);
}

static int report_sandbox_cmp(const void *pa, const void *pb)
{
	const struct report_sandbox *a = pa, *b = pb;
	int c = strcmp(a->policy, b->policy);

	if (!c)
		c = strcmp(a->first, b->first);
	return c ? c : strcmp(a->sandbox, b->sandbox);
}

static void report_ending(FILE *f, const struct report_sandbox *s)
{
	if (!s->exited) {
		fprintf(f, "no sandbox_exit in the log");
		return;
	}
	if (s->exit_code >= 0)
		fprintf(f, "exit %lld", s->exit_code);
	else
		fprintf(f, "killed by signal %lld", s->signal);
	fprintf(f, ", denied %llu", s->denied);
	if (s->audit_only)
		fprintf(f, ", would_deny %llu", s->would_deny);
	fprintf(f, ", lost %llu", s->lost_exit);
	/* The log misses lines launch could not write: refusals among them, maybe. */
	if (s->unwritten || s->log_failed)
		fprintf(f, ", unwritten %llu (log incomplete: %llu line%s not written)",
			s->unwritten, s->log_failed ? s->log_failed : s->unwritten,
			(s->log_failed ? s->log_failed : s->unwritten) == 1 ? "" : "s");
}

static void report_sandbox_text(FILE *f, struct report_sandbox *s)
{
	int wevent = 5, wop = 2, wwhere = 11;

	fprintf(f, "policy %s, sandbox %s%s: ", s->policy, s->sandbox,
		s->audit_only ? " (audit-only)" : "");
	report_ending(f, s);
	fputc('\n', f);
	/* A killed launcher writes no sandbox_exit: its events_lost lines still count. */
	if (!s->exited && s->lost_lines)
		fprintf(f, "  lost: %llu events (events_lost)\n", s->lost_lines);
	if (!s->ndests) {
		fprintf(f, "  no refused destinations\n");
		return;
	}
	qsort(s->dests, s->ndests, sizeof(*s->dests), report_dest_cmp);
	for (size_t i = 0; i < s->ndests; i++) {
		int n;

		n = (int)strlen(s->dests[i].event);
		wevent = n > wevent ? n : wevent;
		n = (int)strlen(s->dests[i].op);
		wop = n > wop ? n : wop;
		n = (int)strlen(s->dests[i].where);
		wwhere = n > wwhere ? n : wwhere;
	}
	fprintf(f, "  %-*s  %-*s  %-*s  %6s  %-27s  %s\n", wevent, "event", wop, "op", wwhere,
		"destination", "count", "first seen", "last seen");
	for (size_t i = 0; i < s->ndests; i++) {
		const struct report_dest *d = &s->dests[i];

		fprintf(f, "  %-*s  %-*s  %-*s  %6llu  %-27s  %s\n", wevent, d->event, wop, d->op,
			wwhere, d->where, d->count, d->first, d->last);
	}
}

int report_text(struct report *report, char **ret_text)
{
	char *text = NULL;
	size_t len = 0, ended = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	if (report->nsandboxes)
		qsort(report->sandboxes, report->nsandboxes, sizeof(*report->sandboxes),
		      report_sandbox_cmp);
	for (size_t i = 0; i < report->nsandboxes; i++) {
		if (i)
			fputc('\n', f);
		report_sandbox_text(f, &report->sandboxes[i]);
	}
	fprintf(f, "\njobs that ended with denials:\n");
	for (size_t i = 0; i < report->nsandboxes; i++) {
		const struct report_sandbox *s = &report->sandboxes[i];

		if (!s->exited || (!s->denied && !s->would_deny))
			continue;
		fprintf(f, "  sandbox %s (policy %s): ", s->sandbox, s->policy);
		report_ending(f, s);
		fputc('\n', f);
		ended++;
	}
	if (!ended)
		fprintf(f, "  none\n");
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	return 0;
}
