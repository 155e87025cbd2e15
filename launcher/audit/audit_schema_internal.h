/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What audit_schema.c (reading a line, writing a document, what a line is, the entry point),
 * audit_ocsf.c and audit_ecs.c share. Private to audit/.
 */
#ifndef LAUNCH_AUDIT_SCHEMA_INTERNAL_H
#define LAUNCH_AUDIT_SCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "audit_schema.h"
#include "lib/util.h"

/* Top-level fields of one line: launch's widest line has about 25. */
#define SCHEMA_FIELDS_MAX 64
/* Nesting of the documents written: at most four objects deep. */
#define SCHEMA_DEPTH_MAX   8
#define SCHEMA_OMITTED_MAX 8

struct schema_field {
	const char *key;
	size_t key_len;
	const char *value; /* JSON text: a string with its quotes */
	size_t value_len;
	bool used; /* placed by the mapping: not repeated among the left-overs */
};

struct schema_line {
	struct schema_field fields[SCHEMA_FIELDS_MAX];
	size_t n;
};

struct schema_out {
	struct line_buf out;
	size_t value_max; /* longest value kept whole: shorter on each try */
	int depth;
	bool first[SCHEMA_DEPTH_MAX];
	const char *omitted[SCHEMA_OMITTED_MAX];
	size_t omitted_len[SCHEMA_OMITTED_MAX];
	size_t nomitted;
};

enum schema_kind {
	SCHEMA_KIND_OTHER = 0, /* an event this mapping does not know: kept whole */
	SCHEMA_KIND_START,
	SCHEMA_KIND_EXIT,
	SCHEMA_KIND_LIMIT,
	SCHEMA_KIND_LOST,
	SCHEMA_KIND_UPDATE, /* policy_update: launch update swapped the sandbox's policies */
	SCHEMA_KIND_NET, /* a refusal (or, audit-only, a would-be one, or an allowed connection) */
	SCHEMA_KIND_SYSCALL, /* userns, io_uring, another ABI's call: no socket */
	SCHEMA_KIND_DNS,
	SCHEMA_KIND_HTTP, /* a request the HTTPS gateway judged */
};

/* What launch did about the operation. */
enum schema_verdict {
	SCHEMA_VERDICT_NONE = 0,
	SCHEMA_VERDICT_DENIED,
	SCHEMA_VERDICT_WOULD_DENY, /* audit-only: logged, not refused */
	SCHEMA_VERDICT_ALLOWED,
};

struct schema_event {
	enum schema_kind kind;
	enum schema_verdict verdict;
	const struct schema_field *op;
	bool inbound;	     /* listen, reason "peer": a connection request from outside */
	bool listening;	     /* bind, listen: an address to serve on */
	bool no_destination; /* socket, setsockopt: the refusal concerns no address */
};

struct schema_field *schema_find(struct schema_line *line, const char *key);

/* As schema_find, and the field is placed: not among the left-overs. */
struct schema_field *schema_take(struct schema_line *line, const char *key);

/* Takes the machine's name: "host" of every line, but "hostname" of an http line. */
struct schema_field *schema_take_machine(struct schema_line *line, const struct schema_event *e);

bool schema_is_string(const struct schema_field *f);

/* The escaped text inside a string's quotes. */
size_t schema_body(const struct schema_field *f, const char **ret_body);

/* Whether a string field has exactly this (escape-free) text. */
bool schema_is(const struct schema_field *f, const char *text);

bool schema_is_number(const struct schema_field *f);

unsigned long long schema_number(const struct schema_field *f);

/* "2026-11-30T16:52:30.322886Z" as milliseconds since the epoch; false when it is not that. */
bool schema_time_ms(const struct schema_field *f, long long *ret_ms);

/* The comma before a member, and its key (NULL: an array element). */
void schema_out_key(struct schema_out *o, const char *key);

void schema_out_open(struct schema_out *o, const char *key, char bracket);

void schema_out_close(struct schema_out *o, char bracket);

/* A string of ours (no escaping needed). */
void schema_out_str(struct schema_out *o, const char *key, const char *s);

void schema_out_int(struct schema_out *o, const char *key, long long value);

/* A value of the line, as the line has it. */
void schema_out_value(struct schema_out *o, const char *key, const struct schema_field *f);

/* A number of the line written as a string (OCSF user.uid, ECS user.id are strings). */
void schema_out_number_string(struct schema_out *o, const char *key, const struct schema_field *f);

/* The part of a path string after its last '/' (a '/' is never part of one of our escapes). */
void schema_out_basename(struct schema_out *o, const char *key, const struct schema_field *f);

/*
 * An array of strings joined by spaces into one string, at most max escaped bytes of it
 * (an escape is never cut). Returns false when cut.
 */
bool schema_out_joined(struct schema_out *o, const char *key, const struct schema_field *f,
		       size_t max);

/* A field cut or left out to make the document fit: listed in "omitted". */
void schema_out_omitted(struct schema_out *o, const struct schema_field *f);

/* Every field the mapping did not place, as "key": value; on a later try, short ones only. */
void schema_out_leftovers(struct schema_out *o, struct schema_line *line);

/* "SANDBOX:SEQ", which names a line among all sandboxes' (deduplication after a retry). */
void schema_out_line_id(struct schema_out *o, const char *key, const struct schema_field *sandbox,
			const struct schema_field *seq);

/*
 * IANA protocol numbers of the names launch writes (audit.c ip_proto_name); a bare number
 * only on an IP socket (an AF_PACKET socket's protocol is an EtherType).
 */
int schema_protocol_number(const struct schema_field *f, const struct schema_field *family);

/* RFC 6895 response codes, as OCSF 1.3.0's dns_activity rcode_id enum names them. */
int schema_rcode_id(const struct schema_field *f, const char **ret_caption);

/* The line as an OCSF 1.3.0 event (audit_ocsf.c). */
void ocsf_translate(struct schema_out *o, struct schema_line *line,
		    const struct audit_schema_ctx *ctx, const struct schema_event *e);
/* The line as an ECS 8.11 document (audit_ecs.c). */
void ecs_translate(struct schema_out *o, struct schema_line *line,
		   const struct audit_schema_ctx *ctx, const struct schema_event *e);

#endif /* LAUNCH_AUDIT_SCHEMA_INTERNAL_H */
