// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The DNS proxy's audit lines: each allowed look-up (with --audit-dns-allowed) and each
 * refusal, the refusals of one name folded into one line per second, every one counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsproxy_internal.h"
#include "lib/util.h"

/* A refusal is counted with the others, in sandbox_exit's denied and denied_by_op. */
static void dnsproxy_deny_line(struct dnsproxy *p, const struct audit_dns *dns)
{
	audit_dns_deny(p->log, dns);
	/* would_deny lines are counted apart, one per look-up (stats.would_deny). */
	if (!dns->would_deny)
		p->stats.deny_lines++;
}

static void dnsproxy_refusal_line(struct dnsproxy *p, const struct dnsproxy_refusal *r)
{
	struct audit_dns dns = {
		.protocol = r->protocol,
		.qname = r->qname,
		.qtype = r->qtype,
		.rcode = r->rcode[0] ? r->rcode : NULL,
		.reason = r->reason,
		.pid = r->pid,
		.ts_ns = r->first_real_ns,
		.repeats = r->repeats,
	};

	dnsproxy_deny_line(p, &dns);
}

/* The key of a refusal: the name in any case, its type, why, how, and who asked. */
static uint32_t dnsproxy_refusal_hash(const struct audit_dns *dns)
{
	char key[DNS_NAME_TEXT_MAX + 64];
	size_t n = 0;

	for (const char *c = dns->qname; *c && n < DNS_NAME_TEXT_MAX; c++)
		key[n++] = (char)dnsproxy_ascii_lower((uint8_t)*c);
	n += (size_t)snprintf(key + n, sizeof(key) - n, "|%s|%s|%s|%d", dns->qtype, dns->reason,
			      dns->protocol, dns->pid);
	return hashtable_hash_bytes(key, n < sizeof(key) ? n : sizeof(key) - 1);
}

static bool dnsproxy_refusal_same(const struct dnsproxy_refusal *r, const struct audit_dns *dns)
{
	return strcasecmp(r->qname, dns->qname) == 0 && strcmp(r->qtype, dns->qtype) == 0 &&
	       strcmp(r->reason, dns->reason) == 0 && strcmp(r->protocol, dns->protocol) == 0 &&
	       r->pid == dns->pid;
}

/* Writes the oldest waiting refusal's line and forgets it. */
static void dnsproxy_refusal_pop(struct dnsproxy *p)
{
	struct dnsproxy_refusal *r = p->refusals[p->refusal_head];

	dnsproxy_refusal_line(p, r);
	hashtable_remove(&p->refusal_index, &r->node);
	free(r);
	p->refusals[p->refusal_head] = NULL;
	p->refusal_head = (p->refusal_head + 1) % DNSPROXY_REFUSALS_MAX;
	p->nrefusals--;
}

size_t dnsproxy_flush_refusals(struct dnsproxy *p, long long now_ms)
{
	size_t n = 0;

	/* One window for all: the oldest is the first to close. */
	while (p->nrefusals &&
	       now_ms - p->refusals[p->refusal_head]->first_ms >= DNSPROXY_REPEAT_WINDOW_MS) {
		dnsproxy_refusal_pop(p);
		n++;
	}
	return n;
}

long long dnsproxy_next_flush_ms(const struct dnsproxy *p)
{
	if (!p->nrefusals)
		return DNSPROXY_NEVER;
	return p->refusals[p->refusal_head]->first_ms + DNSPROXY_REPEAT_WINDOW_MS;
}

/*
 * A refused look-up: a resolver asks again after REFUSED (glibc does, at once), and a loop
 * asks without end, so identical refusals within DNSPROXY_REPEAT_WINDOW_MS of the first are
 * one line, written when the window closes, with the count of the others in "repeats".
 * Malformed messages are each written at once (each carries different bytes), and so are
 * --audit-only's would_deny look-ups (each was answered, and is counted in sandbox_exit).
 */
static void dnsproxy_refusal_note(struct dnsproxy *p, const struct audit_dns *dns)
{
	struct dnsproxy_refusal *r;
	struct timespec ts;
	uint32_t hash;

	if (!dns->qname || !dns->qtype || dns->would_deny) {
		dnsproxy_deny_line(p, dns);
		return;
	}
	dnsproxy_flush_refusals(p, p->now_ms);
	hash = dnsproxy_refusal_hash(dns);
	for (struct hashtable_node *n = hashtable_chain(&p->refusal_index, hash); n; n = n->next) {
		r = (struct dnsproxy_refusal *)n;
		if (n->hash == hash && dnsproxy_refusal_same(r, dns)) {
			r->repeats++;
			return;
		}
	}
	if (p->nrefusals == DNSPROXY_REFUSALS_MAX)
		dnsproxy_refusal_pop(p);
	r = calloc(1, sizeof(*r));
	if (!r || hashtable_reserve(&p->refusal_index) < 0) {
		/* Out of memory: a line for each rather than none. */
		free(r);
		dnsproxy_deny_line(p, dns);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	r->first_ms = p->now_ms;
	r->first_real_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	r->protocol = dns->protocol;
	r->reason = dns->reason;
	r->pid = dns->pid;
	snprintf(r->qname, sizeof(r->qname), "%s", dns->qname);
	snprintf(r->qtype, sizeof(r->qtype), "%s", dns->qtype);
	snprintf(r->rcode, sizeof(r->rcode), "%s", dns->rcode ? dns->rcode : "");
	hashtable_insert(&p->refusal_index, &r->node, hash);
	p->refusals[(p->refusal_head + p->nrefusals) % DNSPROXY_REFUSALS_MAX] = r;
	p->nrefusals++;
}

void dnsproxy_audit(struct dnsproxy *p, bool allow, struct audit_dns *dns)
{
	char line[AUDIT_LINE_MAX];
	int n;

	if (!p->log)
		return;
	/* Only refusals: a look-up costs a scan of /proc, which allowed ones need not pay. */
	if (!allow && p->pid_find && p->peerlen) {
		long long now_ms = monotonic_now_ms();

		if (p->pid_peerlen != p->peerlen || memcmp(&p->pid_peer, &p->peer, p->peerlen) ||
		    now_ms - p->pid_found_ms >= 1000) {
			int pid = p->pid_find(p->pid_ctx, (const struct sockaddr *)&p->peer,
					      p->peerlen, strcmp(dns->protocol, "tcp") == 0);

			p->pid_found = pid > 0 ? pid : 0;
			p->pid_found_ms = now_ms;
			memcpy(&p->pid_peer, &p->peer, p->peerlen);
			p->pid_peerlen = p->peerlen;
		}
		dns->pid = p->pid_found;
	}
	if (!allow) {
		dnsproxy_refusal_note(p, dns);
		return;
	}
	n = audit_format_dns_allow(p->log, dns, line, sizeof(line));
	audit_append_formatted(p->log, AUDIT_KIND_OTHER, line, n);
}
