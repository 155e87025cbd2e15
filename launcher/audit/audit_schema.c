// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --audit-format: one of launch's JSON lines in, one OCSF event or ECS document out. The
 * mapping is docs/audit-log.md's tables; values are copied as the line has them (already
 * JSON text, escapes and all), and every field the mapping does not place is kept under
 * "unmapped" (OCSF) or "launch" (ECS): nothing of a line is lost.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_schema.h"
#include "lib/util.h"

/* Top-level fields of one line: launch's widest line has about 25. */
#define SCHEMA_FIELDS_MAX 64
/* Nesting of the documents written: at most four objects deep. */
#define SCHEMA_DEPTH_MAX 8
/*
 * Lines are at most 4,095 bytes, and documents must be too (whole-line writes to a pipe). The
 * only ones that can come near are sandbox_start's: on a second (third) try the command line
 * is cut at 512 (64) bytes and left-over values longer than that are left out, and named.
 */
static const size_t SCHEMA_LEAN_VALUE_MAX[] = { (size_t)-1, 512, 64 };
#define SCHEMA_LEAN_LEVELS 3
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

int audit_schema_parse(const char *name, enum audit_schema *ret_schema)
{
	if (strcmp(name, "json") == 0)
		*ret_schema = AUDIT_SCHEMA_JSON;
	else if (strcmp(name, "ocsf") == 0)
		*ret_schema = AUDIT_SCHEMA_OCSF;
	else if (strcmp(name, "ecs") == 0)
		*ret_schema = AUDIT_SCHEMA_ECS;
	else
		return -EINVAL;
	return 0;
}

/* --- reading a line ------------------------------------------------------------------------ */

/*
 * The end of the JSON value at p (a string, a number, a literal, an array or an object), or
 * NULL when the text ends inside it.
 */
const char *audit_json_skip_value(const char *p, const char *end)
{
	int depth = 0;
	bool in_string = false;

	for (; p < end; p++) {
		if (in_string) {
			if (*p == '\\')
				p++;
			else if (*p == '"') {
				in_string = false;
				if (depth == 0)
					return p + 1;
			}
		} else if (*p == '"') {
			in_string = true;
		} else if (*p == '[' || *p == '{') {
			depth++;
		} else if (*p == ']' || *p == '}') {
			if (depth == 0)
				return p;
			if (--depth == 0)
				return p + 1;
		} else if (*p == ',' && depth == 0) {
			return p;
		}
	}
	/* A number or a literal may end where the text does. */
	return depth == 0 && !in_string ? end : NULL;
}

/* Splits one of launch's lines (a flat object, keys without escapes, no spaces) into fields. */
static int schema_split(const char *line, size_t len, struct schema_line *ret)
{
	const char *p = line, *end = line + len;

	ret->n = 0;
	if (len && end[-1] == '\n')
		end--;
	if (p >= end || *p != '{' || end[-1] != '}')
		return -EINVAL;
	end--;
	p++;
	while (p < end) {
		struct schema_field *f;
		const char *name_end, *value_end;

		if (*p != '"' || ret->n == SCHEMA_FIELDS_MAX)
			return -EINVAL;
		name_end = memchr(p + 1, '"', (size_t)(end - p - 1));
		if (!name_end || name_end + 1 >= end || name_end[1] != ':')
			return -EINVAL;
		value_end = audit_json_skip_value(name_end + 2, end);
		if (!value_end || value_end == name_end + 2)
			return -EINVAL;
		f = &ret->fields[ret->n++];
		*f = (struct schema_field){ .key = p + 1,
					    .key_len = (size_t)(name_end - p - 1),
					    .value = name_end + 2,
					    .value_len = (size_t)(value_end - name_end - 2) };
		p = value_end;
		if (p < end && *p == ',')
			p++;
	}
	return 0;
}

static struct schema_field *schema_find(struct schema_line *line, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < line->n; i++)
		if (line->fields[i].key_len == klen && memcmp(line->fields[i].key, key, klen) == 0)
			return &line->fields[i];
	return NULL;
}

/* As schema_find, and the field is placed: not among the left-overs. */
static struct schema_field *schema_take(struct schema_line *line, const char *key)
{
	struct schema_field *f = schema_find(line, key);

	if (f)
		f->used = true;
	return f;
}

static bool schema_is_string(const struct schema_field *f)
{
	return f && f->value_len >= 2 && f->value[0] == '"';
}

/* The escaped text inside a string's quotes. */
static size_t schema_body(const struct schema_field *f, const char **ret_body)
{
	*ret_body = f->value + 1;
	return f->value_len - 2;
}

/* Whether a string field has exactly this (escape-free) text. */
static bool schema_is(const struct schema_field *f, const char *text)
{
	size_t n = strlen(text);

	return schema_is_string(f) && f->value_len == n + 2 && memcmp(f->value + 1, text, n) == 0;
}

static bool schema_is_number(const struct schema_field *f)
{
	return f && f->value_len > 0 && f->value[0] >= '0' && f->value[0] <= '9';
}

static unsigned long long schema_number(const struct schema_field *f)
{
	char text[32];

	if (!schema_is_number(f) || f->value_len >= sizeof(text))
		return 0;
	memcpy(text, f->value, f->value_len);
	text[f->value_len] = '\0';
	return strtoull(text, NULL, 10);
}

/*
 * Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil): timegm()
 * costs more than the rest of a translation.
 */
static long long schema_days_from_civil(long long y, unsigned int m, unsigned int d)
{
	long long era;
	unsigned int yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

/* "2026-11-30T16:52:30.322886Z" as milliseconds since the epoch; false when it is not that. */
static bool schema_time_ms(const struct schema_field *f, long long *ret_ms)
{
	/* Where the digits are in "YYYY-MM-DDTHH:MM:SS.uuuuuuZ", and the separators. */
	static const char PATTERN[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";
	const char *body;
	long long value[7] = { 0 };
	size_t len, field = 0;

	if (!schema_is_string(f))
		return false;
	len = schema_body(f, &body);
	if (len != sizeof(PATTERN) - 1)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (PATTERN[i] != 'd') {
			if (body[i] != PATTERN[i])
				return false;
			field++;
			continue;
		}
		if (body[i] < '0' || body[i] > '9')
			return false;
		value[field] = value[field] * 10 + (body[i] - '0');
	}
	if (value[1] < 1 || value[1] > 12 || value[2] < 1 || value[2] > 31)
		return false;
	*ret_ms =
		(schema_days_from_civil(value[0], (unsigned int)value[1], (unsigned int)value[2]) *
			 86400LL +
		 value[3] * 3600LL + value[4] * 60LL + value[5]) *
			1000 +
		value[6] / 1000;
	return true;
}

/* --- writing a document -------------------------------------------------------------------- */

/* The comma before a member, and its key (NULL: an array element). */
static void out_key(struct schema_out *o, const char *key)
{
	if (!o->first[o->depth])
		line_buf_append(&o->out, ",", 1);
	o->first[o->depth] = false;
	if (key) {
		line_buf_append(&o->out, "\"", 1);
		line_buf_append(&o->out, key, strlen(key));
		line_buf_append(&o->out, "\":", 2);
	}
}

static void out_open(struct schema_out *o, const char *key, char bracket)
{
	out_key(o, key);
	line_buf_append(&o->out, &bracket, 1);
	if (o->depth + 1 < SCHEMA_DEPTH_MAX)
		o->first[++o->depth] = true;
	else
		o->out.overflow = true;
}

static void out_close(struct schema_out *o, char bracket)
{
	line_buf_append(&o->out, &bracket, 1);
	if (o->depth > 0)
		o->depth--;
}

/* A string of ours (no escaping needed). */
static void out_str(struct schema_out *o, const char *key, const char *s)
{
	out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, s, strlen(s));
	line_buf_append(&o->out, "\"", 1);
}

static void out_int(struct schema_out *o, const char *key, long long value)
{
	out_key(o, key);
	line_buf_printf(&o->out, "%lld", value);
}

/* A value of the line, as the line has it. */
static void out_value(struct schema_out *o, const char *key, const struct schema_field *f)
{
	out_key(o, key);
	line_buf_append(&o->out, f->value, f->value_len);
}

/* A number of the line written as a string (OCSF user.uid, ECS user.id are strings). */
static void out_number_string(struct schema_out *o, const char *key, const struct schema_field *f)
{
	out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, f->value, f->value_len);
	line_buf_append(&o->out, "\"", 1);
}

/* The part of a path string after its last '/' (a '/' is never part of one of our escapes). */
static void out_basename(struct schema_out *o, const char *key, const struct schema_field *f)
{
	const char *body, *slash;
	size_t len = schema_body(f, &body);

	slash = memrchr(body, '/', len);
	if (slash) {
		len -= (size_t)(slash + 1 - body);
		body = slash + 1;
	}
	out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, body, len);
	line_buf_append(&o->out, "\"", 1);
}

/*
 * An array of strings joined by spaces into one string, at most max escaped bytes of it
 * (an escape is never cut). Returns false when cut.
 */
static bool out_joined(struct schema_out *o, const char *key, const struct schema_field *f,
		       size_t max)
{
	const char *p = f->value + 1, *end = f->value + f->value_len - 1;
	size_t used = 0;
	bool whole = true;

	out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	while (p < end) {
		const char *elem_end = audit_json_skip_value(p, end);

		if (!elem_end || *p != '"')
			break;
		for (const char *c = p + 1; c < elem_end - 1; c++) {
			size_t n = *c == '\\' ? (c[1] == 'u' ? 6 : 2) : 1;

			if (used + n + (used ? 1 : 0) > max) {
				whole = false;
				break;
			}
			if (c == p + 1 && used)
				line_buf_append(&o->out, " ", 1), used++;
			line_buf_append(&o->out, c, n);
			used += n;
			c += n - 1;
		}
		if (!whole)
			break;
		p = elem_end;
		if (p < end && *p == ',')
			p++;
	}
	line_buf_append(&o->out, "\"", 1);
	return whole;
}

/* A field cut or left out to make the document fit: listed in "omitted". */
static void out_omitted(struct schema_out *o, const struct schema_field *f)
{
	if (o->nomitted < SCHEMA_OMITTED_MAX) {
		o->omitted[o->nomitted] = f->key;
		o->omitted_len[o->nomitted++] = f->key_len;
	}
}

/* Every field the mapping did not place, as "key": value; on a later try, short ones only. */
static void out_leftovers(struct schema_out *o, struct schema_line *line)
{
	for (size_t i = 0; i < line->n; i++) {
		struct schema_field *f = &line->fields[i];

		if (f->used)
			continue;
		if (f->value_len > o->value_max) {
			out_omitted(o, f);
			continue;
		}
		out_key(o, NULL);
		line_buf_append(&o->out, "\"", 1);
		line_buf_append(&o->out, f->key, f->key_len);
		line_buf_append(&o->out, "\":", 2);
		line_buf_append(&o->out, f->value, f->value_len);
	}
	if (o->nomitted) {
		out_open(o, "omitted", '[');
		for (size_t i = 0; i < o->nomitted; i++) {
			out_key(o, NULL);
			line_buf_printf(&o->out, "\"%.*s\"", (int)o->omitted_len[i], o->omitted[i]);
		}
		out_close(o, ']');
	}
}

/* "SANDBOX:SEQ", which names a line among all sandboxes' (deduplication after a retry). */
static void out_line_id(struct schema_out *o, const char *key, const struct schema_field *sandbox,
			const struct schema_field *seq)
{
	const char *body;
	size_t len;

	if (!schema_is_string(sandbox) || !schema_is_number(seq))
		return;
	len = schema_body(sandbox, &body);
	out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, body, len);
	line_buf_append(&o->out, ":", 1);
	line_buf_append(&o->out, seq->value, seq->value_len);
	line_buf_append(&o->out, "\"", 1);
}

/* --- what a line is ------------------------------------------------------------------------ */

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

static struct schema_event schema_classify(struct schema_line *line)
{
	struct schema_field *event = schema_find(line, "event"), *op = schema_find(line, "op");
	struct schema_event e = { .op = op };

	if (schema_is(event, "sandbox_start"))
		e.kind = SCHEMA_KIND_START;
	else if (schema_is(event, "sandbox_exit"))
		e.kind = SCHEMA_KIND_EXIT;
	else if (schema_is(event, "limit"))
		e.kind = SCHEMA_KIND_LIMIT;
	else if (schema_is(event, "policy_update"))
		e.kind = SCHEMA_KIND_UPDATE;
	else if (schema_is(event, "events_lost"))
		e.kind = SCHEMA_KIND_LOST;
	else if (schema_is(event, "dns_allow")) {
		e.kind = SCHEMA_KIND_DNS;
		e.verdict = SCHEMA_VERDICT_ALLOWED;
	} else if (schema_is(event, "deny") || schema_is(event, "would_deny") ||
		   schema_is(event, "allow")) {
		e.verdict = schema_is(event, "deny")	     ? SCHEMA_VERDICT_DENIED
			    : schema_is(event, "would_deny") ? SCHEMA_VERDICT_WOULD_DENY
							     : SCHEMA_VERDICT_ALLOWED;
		if (schema_is(op, "dns"))
			e.kind = SCHEMA_KIND_DNS;
		else if (schema_is(op, "userns") || schema_is(op, "io_uring") ||
			 schema_is(op, "syscall"))
			e.kind = SCHEMA_KIND_SYSCALL;
		else
			e.kind = SCHEMA_KIND_NET;
		e.inbound =
			schema_is(op, "listen") && schema_is(schema_find(line, "reason"), "peer");
		e.listening = (schema_is(op, "bind") || schema_is(op, "listen")) && !e.inbound;
		e.no_destination = schema_is(op, "socket") || schema_is(op, "setsockopt");
	}
	return e;
}

/*
 * IANA protocol numbers of the names launch writes (audit.c ip_proto_name); a bare number
 * only on an IP socket (an AF_PACKET socket's protocol is an EtherType).
 */
static int schema_protocol_number(const struct schema_field *f, const struct schema_field *family)
{
	static const struct {
		const char *name;
		int number;
	} protocols[] = { { "icmp", 1 },   { "igmp", 2 },      { "tcp", 6 },  { "udp", 17 },
			  { "ipv6", 41 },  { "gre", 47 },      { "esp", 50 }, { "icmpv6", 58 },
			  { "sctp", 132 }, { "udplite", 136 }, { "raw", 255 } };

	if (schema_is_number(f))
		return schema_is(family, "ipv4") || schema_is(family, "ipv6")
			       ? (int)schema_number(f)
			       : -1;
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
		if (schema_is(f, protocols[i].name))
			return protocols[i].number;
	return -1;
}

/* RFC 6895 response codes, as OCSF 1.3.0's dns_activity rcode_id enum names them. */
static int schema_rcode_id(const struct schema_field *f, const char **ret_caption)
{
	static const struct {
		const char *rcode, *caption;
		int id;
	} rcodes[] = {
		{ "NOERROR", "NoError", 0 },	{ "FORMERR", "FormError", 1 },
		{ "SERVFAIL", "ServError", 2 }, { "NXDOMAIN", "NXDomain", 3 },
		{ "NOTIMP", "NotImp", 4 },	{ "REFUSED", "Refused", 5 },
	};

	for (size_t i = 0; i < sizeof(rcodes) / sizeof(rcodes[0]); i++)
		if (schema_is(f, rcodes[i].rcode)) {
			*ret_caption = rcodes[i].caption;
			return rcodes[i].id;
		}
	*ret_caption = "Other";
	return 99;
}

/* --- OCSF ---------------------------------------------------------------------------------- */

struct ocsf_class {
	int uid;
	const char *name;
	int category_uid;
	const char *category_name;
	int activity_id;
	const char *activity_name;
	int severity_id;
	const char *severity;
};

static void ocsf_classify(const struct schema_event *e, const struct schema_line *line,
			  struct ocsf_class *ret)
{
	static const struct ocsf_class network = { .uid = 4001,
						   .name = "Network Activity",
						   .category_uid = 4,
						   .category_name = "Network Activity" },
				       dns = { .uid = 4003,
					       .name = "DNS Activity",
					       .category_uid = 4,
					       .category_name = "Network Activity" },
				       kernel = { .uid = 1003,
						  .name = "Kernel Activity",
						  .category_uid = 1,
						  .category_name = "System Activity" },
				       process = { .uid = 1007,
						   .name = "Process Activity",
						   .category_uid = 1,
						   .category_name = "System Activity" },
				       entity = { .uid = 3004,
						  .name = "Entity Management",
						  .category_uid = 3,
						  .category_name = "Identity & Access Management" },
				       base = { .uid = 0,
						.name = "Base Event",
						.category_uid = 0,
						.category_name = "Uncategorized" };
	bool denied = e->verdict == SCHEMA_VERDICT_DENIED;

	switch (e->kind) {
	case SCHEMA_KIND_NET:
		*ret = network;
		/* Audit-only lets a would-be refusal through: the connection opened. */
		if (e->verdict != SCHEMA_VERDICT_DENIED)
			ret->activity_id = 1, ret->activity_name = "Open";
		else if (e->listening)
			ret->activity_id = 7, ret->activity_name = "Listen";
		else
			ret->activity_id = 5, ret->activity_name = "Refuse";
		break;
	case SCHEMA_KIND_DNS:
		*ret = dns;
		/* A look-up launch answered is request and response; one it dropped, a query. */
		if (schema_find((struct schema_line *)line, "rcode"))
			ret->activity_id = 6, ret->activity_name = "Traffic";
		else
			ret->activity_id = 1, ret->activity_name = "Query";
		break;
	case SCHEMA_KIND_SYSCALL:
		*ret = kernel;
		ret->activity_id = 4, ret->activity_name = "Invoke";
		break;
	case SCHEMA_KIND_START:
		*ret = process;
		ret->activity_id = 1, ret->activity_name = "Launch";
		break;
	case SCHEMA_KIND_EXIT:
		*ret = process;
		ret->activity_id = 2, ret->activity_name = "Terminate";
		break;
	case SCHEMA_KIND_LIMIT:
		*ret = process;
		ret->activity_id = 99, ret->activity_name = "Other";
		break;
	case SCHEMA_KIND_UPDATE:
		*ret = entity;
		ret->activity_id = 3, ret->activity_name = "Update";
		break;
	case SCHEMA_KIND_LOST:
	case SCHEMA_KIND_OTHER:
	default: /* gcc cannot tell that the cases above cover every kind */
		*ret = base;
		ret->activity_id = 99, ret->activity_name = "Other";
		break;
	}
	if (denied || e->kind == SCHEMA_KIND_LOST || e->kind == SCHEMA_KIND_LIMIT)
		ret->severity_id = 3, ret->severity = "Medium";
	else if (e->verdict == SCHEMA_VERDICT_WOULD_DENY)
		ret->severity_id = 2, ret->severity = "Low";
	else
		ret->severity_id = 1, ret->severity = "Informational";
}

/* actor.process for a line's pid, tid, comm, uid, exe (and the sandbox it runs in). */
static void ocsf_actor_process(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *pid = schema_take(line, "pid"), *tid = schema_take(line, "tid"),
			    *comm = schema_take(line, "comm"), *uid = schema_take(line, "uid"),
			    *exe = schema_take(line, "exe"),
			    *sandbox = schema_find(line, "sandbox");

	/* OCSF 1.3.0 process: at least one of pid and uid. */
	if (!schema_is_number(pid))
		return;
	out_open(o, "actor", '{');
	out_open(o, "process", '{');
	out_value(o, "pid", pid);
	if (schema_is_number(tid))
		out_value(o, "tid", tid);
	if (schema_is_string(comm))
		out_value(o, "name", comm);
	if (schema_is_string(exe)) {
		out_open(o, "file", '{');
		out_basename(o, "name", exe);
		out_value(o, "path", exe);
		out_int(o, "type_id", 1);
		out_str(o, "type", "Regular File");
		out_close(o, '}');
	}
	if (schema_is_number(uid)) {
		out_open(o, "user", '{');
		out_number_string(o, "uid", uid);
		out_close(o, '}');
	}
	if (schema_is_string(sandbox))
		out_value(o, "sandbox", sandbox);
	out_close(o, '}');
	out_close(o, '}');
}

/* connection_info: the protocol, the IP version and the direction. */
static void ocsf_connection_info(struct schema_out *o, struct schema_line *line, bool inbound)
{
	struct schema_field *protocol = schema_take(line, "protocol"),
			    *family = schema_find(line, "family");
	int number = schema_protocol_number(protocol, family);

	out_open(o, "connection_info", '{');
	if (schema_is_string(protocol))
		out_value(o, "protocol_name", protocol);
	if (number >= 0)
		out_int(o, "protocol_num", number);
	if (schema_is(family, "ipv4") || schema_is(family, "ipv6")) {
		out_int(o, "protocol_ver_id", schema_is(family, "ipv4") ? 4 : 6);
		out_str(o, "protocol_ver",
			schema_is(family, "ipv4") ? "Internet Protocol version 4 (IPv4)"
						  : "Internet Protocol version 6 (IPv6)");
	}
	out_int(o, "direction_id", inbound ? 1 : 2);
	out_str(o, "direction", inbound ? "Inbound" : "Outbound");
	out_close(o, '}');
}

static void ocsf_endpoint(struct schema_out *o, const char *key, struct schema_line *line,
			  const char *ip_key, const char *port_key, const char *name_key)
{
	struct schema_field *ip = schema_take(line, ip_key), *port = schema_take(line, port_key),
			    *name = name_key ? schema_take(line, name_key) : NULL;

	out_open(o, key, '{');
	if (schema_is_string(name))
		out_value(o, "hostname", name);
	if (schema_is_string(ip))
		out_value(o, "ip", ip);
	if (schema_is_number(port))
		out_value(o, "port", port);
	out_close(o, '}');
}

static void ocsf_network(struct schema_out *o, struct schema_line *line,
			 const struct schema_event *e)
{
	struct schema_field *host = schema_find(line, "host");

	ocsf_actor_process(o, line);
	if (e->inbound) {
		ocsf_endpoint(o, "src_endpoint", line, "peer_ip", "peer_port", NULL);
		ocsf_endpoint(o, "dst_endpoint", line, "local_ip", "local_port", NULL);
	} else {
		/*
		 * The initiator is this host: its address is not known before the connect. A
		 * listener has no initiator yet.
		 */
		if (schema_is_string(host) && !e->listening) {
			out_open(o, "src_endpoint", '{');
			out_value(o, "hostname", host);
			out_close(o, '}');
		}
		if (e->listening && schema_find(line, "local_ip")) {
			ocsf_endpoint(o, "dst_endpoint", line, "local_ip", "local_port", NULL);
		} else if (schema_find(line, "dst_path") || schema_find(line, "path")) {
			/* An AF_UNIX socket: its path (or @name) names the endpoint. */
			struct schema_field *path = schema_take(line, "dst_path");

			if (!path)
				path = schema_take(line, "path");
			out_open(o, "dst_endpoint", '{');
			out_value(o, "name", path);
			out_close(o, '}');
		} else if (!e->no_destination && schema_find(line, "dst_ip")) {
			ocsf_endpoint(o, "dst_endpoint", line, "dst_ip", "dst_port", "dst_name");
		} else {
			/* A socket refused at creation has no destination; the class needs one. */
			out_open(o, "dst_endpoint", '{');
			out_str(o, "name", "unknown");
			out_int(o, "type_id", 0);
			out_str(o, "type", "Unknown");
			out_close(o, '}');
		}
	}
	/* A listener waits for inbound connections. */
	ocsf_connection_info(o, line, e->inbound || e->listening);
}

/*
 * policy_update as Entity Management's Update: the managed entity is the sandbox, with the
 * policies now in force; the actor is the `launch update` that asked.
 */
static void ocsf_update(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *sandbox = schema_find(line, "sandbox"),
			    *policy = schema_find(line, "policy"),
			    *pid = schema_take(line, "requester_pid"),
			    *uid = schema_take(line, "requester_uid");

	if (schema_is_number(pid)) {
		out_open(o, "actor", '{');
		out_open(o, "process", '{');
		out_str(o, "name", "launch");
		out_value(o, "pid", pid);
		if (schema_is_number(uid)) {
			out_open(o, "user", '{');
			out_number_string(o, "uid", uid);
			out_close(o, '}');
		}
		out_close(o, '}');
		out_close(o, '}');
	}
	out_open(o, "entity", '{');
	if (schema_is_string(sandbox)) {
		out_value(o, "name", sandbox);
		out_value(o, "uid", sandbox);
	}
	out_str(o, "type", "Sandbox");
	if (schema_is_string(policy)) {
		out_open(o, "policy", '{');
		out_value(o, "name", policy);
		out_key(o, "is_applied");
		line_buf_append(&o->out, "true", 4);
		out_close(o, '}');
	}
	out_close(o, '}');
}

static void ocsf_dns(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *qname = schema_take(line, "qname"),
			    *qtype = schema_take(line, "qtype"),
			    *rcode = schema_find(line, "rcode"),
			    *addrs = schema_take(line, "addrs"), *ttl = schema_find(line, "ttl"),
			    *repeats = schema_find(line, "repeats");
	const char *caption;

	ocsf_actor_process(o, line);
	if (schema_is_string(qname)) {
		out_open(o, "query", '{');
		out_value(o, "hostname", qname);
		if (schema_is_string(qtype))
			out_value(o, "type", qtype);
		out_str(o, "class", "IN");
		out_close(o, '}');
	}
	/* Identical refusals folded into this line (launch's `repeats`): OCSF counts them all. */
	if (schema_is_number(repeats))
		out_int(o, "count", (long long)schema_number(repeats) + 1);
	if (schema_is_string(rcode)) {
		int id = schema_rcode_id(rcode, &caption);

		out_int(o, "rcode_id", id);
		out_str(o, "rcode", caption);
	}
	if (addrs && addrs->value[0] == '[') {
		const char *p = addrs->value + 1, *end = addrs->value + addrs->value_len - 1;

		out_open(o, "answers", '[');
		while (p < end) {
			const char *elem_end = audit_json_skip_value(p, end);

			if (!elem_end)
				break;
			out_open(o, NULL, '{');
			out_key(o, "rdata");
			line_buf_append(&o->out, p, (size_t)(elem_end - p));
			if (schema_is_number(ttl))
				out_value(o, "ttl", ttl);
			out_close(o, '}');
			p = elem_end + (elem_end < end && *elem_end == ',');
		}
		out_close(o, ']');
	}
	ocsf_connection_info(o, line, false);
}

static void ocsf_syscall(struct schema_out *o, struct schema_line *line,
			 const struct schema_event *e)
{
	struct schema_field *syscall = schema_take(line, "syscall");

	ocsf_actor_process(o, line);
	out_open(o, "kernel", '{');
	/* The call refused, by name; userns and io_uring without one are named by their op. */
	out_value(o, "name", schema_is_string(syscall) ? syscall : e->op);
	if (schema_is_string(syscall))
		out_value(o, "system_call", syscall);
	out_int(o, "type_id", 2);
	out_str(o, "type", "System Call");
	out_close(o, '}');
}

/* The job, as Process Activity's process: sandbox_start knows it, later lines its pid. */
static void ocsf_process(struct schema_out *o, struct schema_line *line,
			 const struct audit_schema_ctx *ctx, const struct schema_event *e)
{
	struct schema_field *sandbox = schema_find(line, "sandbox");

	if (e->kind == SCHEMA_KIND_START) {
		struct schema_field *argv = schema_take(line, "argv"),
				    *pid = schema_take(line, "pid"),
				    *uid = schema_take(line, "uid");

		out_open(o, "actor", '{');
		out_open(o, "process", '{');
		out_str(o, "name", "launch");
		out_int(o, "pid", ctx->launcher_pid);
		out_close(o, '}');
		out_close(o, '}');
		out_open(o, "process", '{');
		if (schema_is_number(pid))
			out_value(o, "pid", pid);
		if (argv && argv->value_len > 2 && argv->value[1] == '"') {
			struct schema_field first = { .value = argv->value + 1 };
			const char *end =
				audit_json_skip_value(first.value, argv->value + argv->value_len);

			first.value_len = end ? (size_t)(end - first.value) : 0;
			if (schema_is_string(&first))
				out_basename(o, "name", &first);
			if (!out_joined(o, "cmd_line", argv, o->value_max))
				out_omitted(o, argv);
		}
		if (schema_is_number(uid)) {
			out_open(o, "user", '{');
			out_number_string(o, "uid", uid);
			out_close(o, '}');
		}
		if (schema_is_string(sandbox))
			out_value(o, "sandbox", sandbox);
		out_close(o, '}');
		return;
	}
	out_open(o, "actor", '{');
	out_open(o, "process", '{');
	out_str(o, "name", "launch");
	out_int(o, "pid", ctx->launcher_pid);
	out_close(o, '}');
	out_close(o, '}');
	out_open(o, "process", '{');
	/* No sandbox_start seen: the sandbox names the job (OCSF wants a pid or a uid). */
	if (ctx->job_pid)
		out_int(o, "pid", (long long)ctx->job_pid);
	else if (schema_is_string(sandbox))
		out_value(o, "uid", sandbox);
	else
		out_str(o, "uid", "unknown");
	if (schema_is_string(sandbox))
		out_value(o, "sandbox", sandbox);
	out_close(o, '}');
	if (e->kind == SCHEMA_KIND_EXIT) {
		struct schema_field *code = schema_take(line, "exit_code"),
				    *duration = schema_take(line, "duration_ms");

		if (schema_is_number(code))
			out_value(o, "exit_code", code);
		if (schema_is_number(duration))
			out_value(o, "duration", duration);
	}
}

static void ocsf_translate(struct schema_out *o, struct schema_line *line,
			   const struct audit_schema_ctx *ctx, const struct schema_event *e)
{
	struct schema_field *seq = schema_take(line, "seq"), *host = schema_take(line, "host"),
			    *sandbox = schema_find(line, "sandbox"), *ts = schema_find(line, "ts");
	bool control = e->verdict != SCHEMA_VERDICT_NONE, valid_time;
	long long time_ms = 0;
	struct ocsf_class c;

	ocsf_classify(e, line, &c);
	out_open(o, NULL, '{');
	out_int(o, "class_uid", c.uid);
	out_str(o, "class_name", c.name);
	out_int(o, "category_uid", c.category_uid);
	out_str(o, "category_name", c.category_name);
	out_int(o, "activity_id", c.activity_id);
	out_str(o, "activity_name", c.activity_name);
	out_int(o, "type_uid", c.uid * 100LL + c.activity_id);
	line_buf_printf(&o->out, ",\"type_name\":\"%s: %s\"", c.name, c.activity_name);
	out_int(o, "severity_id", c.severity_id);
	out_str(o, "severity", c.severity);
	/* OCSF requires a time: a line without a readable ts (none of launch's) gets 0. */
	valid_time = schema_time_ms(ts, &time_ms);
	out_int(o, "time", valid_time ? time_ms : 0);
	/* The datetime profile keeps the line's microseconds, which "time" cannot. */
	if (valid_time) {
		ts->used = true;
		out_value(o, "time_dt", ts);
	}
	if (control) {
		/* OCSF 1.3.0 security_control profile: the action and what came of it. */
		bool allowed = e->verdict != SCHEMA_VERDICT_DENIED;
		bool dropped = schema_is(e->op, "packet");

		out_int(o, "action_id", allowed ? 1 : 2);
		out_str(o, "action", allowed ? "Allowed" : "Denied");
		out_int(o, "disposition_id",
			e->verdict == SCHEMA_VERDICT_ALLOWED	  ? 1
			: e->verdict == SCHEMA_VERDICT_WOULD_DENY ? 15
			: dropped				  ? 6
								  : 2);
		out_str(o, "disposition",
			e->verdict == SCHEMA_VERDICT_ALLOWED	  ? "Allowed"
			: e->verdict == SCHEMA_VERDICT_WOULD_DENY ? "Detected"
			: dropped				  ? "Dropped"
								  : "Blocked");
	}
	/* Whether what the job (or launch, for the start) tried succeeded. */
	if (control || e->kind == SCHEMA_KIND_START || e->kind == SCHEMA_KIND_EXIT) {
		const struct schema_field *code = schema_find(line, "exit_code");
		bool failed = e->verdict == SCHEMA_VERDICT_DENIED ||
			      (e->kind == SCHEMA_KIND_EXIT &&
			       (!schema_is_number(code) || schema_number(code) != 0));

		out_int(o, "status_id", failed ? 2 : 1);
		out_str(o, "status", failed ? "Failure" : "Success");
	}
	if (e->kind == SCHEMA_KIND_LOST) {
		struct schema_field *count = schema_take(line, "count");

		if (schema_is_number(count))
			out_value(o, "count", count);
		out_str(o, "message",
			"refusals whose details the kernel's ring buffer had no room for");
	}
	out_open(o, "metadata", '{');
	out_str(o, "version", AUDIT_SCHEMA_OCSF_VERSION);
	out_open(o, "product", '{');
	out_str(o, "name", "launch");
	out_str(o, "vendor_name", "launch");
	out_str(o, "version", ctx->version);
	out_close(o, '}');
	out_line_id(o, "uid", sandbox, seq);
	if (schema_is_number(seq))
		out_value(o, "sequence", seq);
	if (schema_is_string(sandbox))
		out_value(o, "correlation_uid", sandbox);
	out_str(o, "log_name", "audit");
	out_open(o, "profiles", '[');
	out_str(o, NULL, "datetime");
	if (e->kind != SCHEMA_KIND_LOST && e->kind != SCHEMA_KIND_OTHER)
		out_str(o, NULL, "host");
	if (control)
		out_str(o, NULL, "security_control");
	out_close(o, ']');
	out_close(o, '}');
	if (e->kind != SCHEMA_KIND_LOST && e->kind != SCHEMA_KIND_OTHER && schema_is_string(host)) {
		out_open(o, "device", '{');
		out_value(o, "hostname", host);
		out_int(o, "type_id", 0);
		out_str(o, "type", "Unknown");
		out_close(o, '}');
	} else if (host) {
		host->used = false; /* Base Event has no device: the host stays in unmapped */
	}
	switch (e->kind) {
	case SCHEMA_KIND_NET:
		ocsf_network(o, line, e);
		break;
	case SCHEMA_KIND_DNS:
		ocsf_dns(o, line);
		break;
	case SCHEMA_KIND_SYSCALL:
		ocsf_syscall(o, line, e);
		break;
	case SCHEMA_KIND_START:
	case SCHEMA_KIND_EXIT:
	case SCHEMA_KIND_LIMIT:
		ocsf_process(o, line, ctx, e);
		break;
	case SCHEMA_KIND_UPDATE:
		ocsf_update(o, line);
		break;
	default:
		break;
	}
	out_open(o, "unmapped", '{');
	out_leftovers(o, line);
	out_close(o, '}');
	out_close(o, '}');
}

/* --- ECS ----------------------------------------------------------------------------------- */

static void ecs_process(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *pid = schema_take(line, "pid"), *tid = schema_take(line, "tid"),
			    *comm = schema_take(line, "comm"), *uid = schema_take(line, "uid"),
			    *exe = schema_take(line, "exe");

	if (!schema_is_number(pid))
		return;
	out_open(o, "process", '{');
	out_value(o, "pid", pid);
	if (schema_is_number(tid)) {
		out_open(o, "thread", '{');
		out_value(o, "id", tid);
		out_close(o, '}');
	}
	if (schema_is_string(comm))
		out_value(o, "name", comm);
	if (schema_is_string(exe))
		out_value(o, "executable", exe);
	if (schema_is_number(uid)) {
		out_open(o, "user", '{');
		out_number_string(o, "id", uid);
		out_close(o, '}');
	}
	out_close(o, '}');
}

static void ecs_address(struct schema_out *o, const char *key, struct schema_line *line,
			const char *ip_key, const char *port_key, const char *name_key)
{
	struct schema_field *ip = schema_take(line, ip_key), *port = schema_take(line, port_key),
			    *name = name_key ? schema_take(line, name_key) : NULL;

	if (!schema_is_string(ip))
		return;
	out_open(o, key, '{');
	out_value(o, "address", ip);
	out_value(o, "ip", ip);
	if (schema_is_number(port))
		out_value(o, "port", port);
	if (schema_is_string(name))
		out_value(o, "domain", name);
	out_close(o, '}');
}

static void ecs_network(struct schema_out *o, struct schema_line *line, bool inbound, bool dns)
{
	struct schema_field *protocol = schema_find(line, "protocol"),
			    *family = schema_find(line, "family");
	int number = schema_protocol_number(protocol, family);

	out_open(o, "network", '{');
	/* A bare number (an EtherType, say) stays in launch.protocol. */
	if (schema_is_string(protocol)) {
		protocol->used = true;
		out_value(o, "transport", protocol);
	}
	if (number >= 0) {
		out_key(o, "iana_number");
		line_buf_printf(&o->out, "\"%d\"", number);
	}
	if (schema_is(family, "ipv4") || schema_is(family, "ipv6"))
		out_value(o, "type", family);
	if (dns)
		out_str(o, "protocol", "dns");
	out_str(o, "direction", inbound ? "ingress" : "egress");
	out_close(o, '}');
}

static void ecs_translate(struct schema_out *o, struct schema_line *line,
			  const struct audit_schema_ctx *ctx, const struct schema_event *e)
{
	struct schema_field *seq = schema_take(line, "seq"), *host = schema_take(line, "host"),
			    *ts = schema_take(line, "ts"), *event = schema_find(line, "event"),
			    *reason = schema_take(line, "reason");
	const char *category = "network", *type1 = NULL, *type2 = NULL, *outcome = "success";
	bool denied = e->verdict == SCHEMA_VERDICT_DENIED;
	const char *body;
	size_t len;

	switch (e->kind) {
	case SCHEMA_KIND_NET:
		type1 = e->no_destination || e->listening ? NULL : "connection";
		type2 = denied ? "denied" : "allowed";
		break;
	case SCHEMA_KIND_DNS:
		type1 = "protocol";
		type2 = denied ? "denied" : "allowed";
		break;
	case SCHEMA_KIND_SYSCALL:
		category = "api";
		type2 = "denied";
		break;
	case SCHEMA_KIND_START:
		category = "process";
		type2 = "start";
		break;
	case SCHEMA_KIND_EXIT:
		category = "process";
		type2 = "end";
		if (schema_number(schema_find(line, "exit_code")) != 0 ||
		    !schema_is_number(schema_find(line, "exit_code")))
			outcome = "failure";
		break;
	case SCHEMA_KIND_LIMIT:
		category = "process";
		type2 = schema_is(schema_find(line, "action"), "stopped") ? "end" : "info";
		outcome = type2[0] == 'e' ? "failure" : "unknown";
		break;
	case SCHEMA_KIND_LOST:
		type2 = "denied";
		break;
	case SCHEMA_KIND_UPDATE:
		category = "configuration";
		type2 = "change";
		break;
	case SCHEMA_KIND_OTHER:
		category = "host";
		type2 = "info";
		outcome = "unknown";
		break;
	}
	/* From the job's side: what it tried failed; audit-only, it went through. */
	if (denied || e->kind == SCHEMA_KIND_LOST)
		outcome = "failure";

	out_open(o, NULL, '{');
	if (schema_is_string(ts))
		out_value(o, "@timestamp", ts);
	out_open(o, "ecs", '{');
	out_str(o, "version", AUDIT_SCHEMA_ECS_VERSION);
	out_close(o, '}');
	out_open(o, "event", '{');
	out_str(o, "kind", "event");
	out_open(o, "category", '[');
	out_str(o, NULL, category);
	out_close(o, ']');
	out_open(o, "type", '[');
	if (type1)
		out_str(o, NULL, type1);
	out_str(o, NULL, type2);
	out_close(o, ']');
	out_str(o, "outcome", outcome);
	if (schema_is_string(event)) {
		/* launch's event, and for a refusal its op: "deny_connect", "would_deny_dns". */
		out_key(o, "action");
		len = schema_body(event, &body);
		line_buf_printf(&o->out, "\"%.*s", (int)len, body);
		if (schema_is_string(e->op)) {
			len = schema_body(e->op, &body);
			line_buf_printf(&o->out, "_%.*s", (int)len, body);
		}
		line_buf_append(&o->out, "\"", 1);
	}
	if (schema_is_string(reason))
		out_value(o, "reason", reason);
	if (schema_is_number(seq))
		out_value(o, "sequence", seq);
	out_line_id(o, "id", schema_find(line, "sandbox"), seq);
	out_int(o, "severity", denied || e->kind == SCHEMA_KIND_LOST ? 4 : 6);
	out_str(o, "module", "launch");
	out_str(o, "dataset", "launch.audit");
	out_str(o, "provider", "launch");
	if (e->kind == SCHEMA_KIND_EXIT && schema_is_number(schema_find(line, "duration_ms")))
		out_int(o, "duration",
			/* nanoseconds; launch.duration_ms keeps the line's milliseconds */
			(long long)schema_number(schema_find(line, "duration_ms")) * 1000000LL);
	out_close(o, '}');
	if (schema_is_string(host)) {
		out_open(o, "host", '{');
		out_value(o, "hostname", host);
		out_value(o, "name", host);
		out_close(o, '}');
	}
	out_open(o, "observer", '{');
	out_str(o, "product", "launch");
	out_str(o, "vendor", "launch");
	out_str(o, "version", ctx->version);
	out_close(o, '}');

	switch (e->kind) {
	case SCHEMA_KIND_NET:
		ecs_process(o, line);
		if (e->inbound) {
			ecs_address(o, "source", line, "peer_ip", "peer_port", NULL);
			ecs_address(o, "destination", line, "local_ip", "local_port", NULL);
		} else if (e->listening) {
			ecs_address(o, "server", line, "local_ip", "local_port", NULL);
		} else if (!e->no_destination) {
			struct schema_field *path = schema_take(line, "dst_path");

			if (schema_is_string(path)) {
				/* ECS: destination.address may be a unix socket. */
				out_open(o, "destination", '{');
				out_value(o, "address", path);
				out_close(o, '}');
			} else {
				ecs_address(o, "destination", line, "dst_ip", "dst_port",
					    "dst_name");
			}
		}
		ecs_network(o, line, e->inbound || e->listening, false);
		break;
	case SCHEMA_KIND_DNS: {
		struct schema_field *qname = schema_take(line, "qname"),
				    *qtype = schema_take(line, "qtype"),
				    *rcode = schema_take(line, "rcode"),
				    *addrs = schema_take(line, "addrs");

		ecs_process(o, line);
		out_open(o, "dns", '{');
		out_str(o, "type", rcode ? "answer" : "query");
		if (schema_is_string(qname) || schema_is_string(qtype)) {
			out_open(o, "question", '{');
			if (schema_is_string(qname))
				out_value(o, "name", qname);
			if (schema_is_string(qtype))
				out_value(o, "type", qtype);
			out_str(o, "class", "IN");
			out_close(o, '}');
		}
		if (schema_is_string(rcode))
			out_value(o, "response_code", rcode);
		if (addrs && addrs->value_len > 2)
			out_value(o, "resolved_ip", addrs);
		out_close(o, '}');
		ecs_network(o, line, false, true);
		break;
	}
	case SCHEMA_KIND_SYSCALL:
		ecs_process(o, line);
		break;
	case SCHEMA_KIND_UPDATE: {
		/* The process of the event: the `launch update` that asked. */
		struct schema_field *pid = schema_take(line, "requester_pid"),
				    *uid = schema_take(line, "requester_uid");

		if (!schema_is_number(pid))
			break;
		out_open(o, "process", '{');
		out_value(o, "pid", pid);
		out_str(o, "name", "launch");
		if (schema_is_number(uid)) {
			out_open(o, "user", '{');
			out_number_string(o, "id", uid);
			out_close(o, '}');
		}
		out_close(o, '}');
		break;
	}
	case SCHEMA_KIND_START: {
		struct schema_field *argv = schema_take(line, "argv"),
				    *pid = schema_take(line, "pid"),
				    *uid = schema_take(line, "uid"),
				    *argc = schema_take(line, "argc");

		out_open(o, "process", '{');
		if (schema_is_number(pid))
			out_value(o, "pid", pid);
		if (argv && argv->value[0] == '[') {
			if (argv->value_len <= o->value_max) {
				out_value(o, "args", argv);
				/* A second copy only while there is room for everything. */
				if (o->value_max == (size_t)-1)
					out_joined(o, "command_line", argv, (size_t)-1);
			} else {
				out_omitted(o, argv);
			}
		}
		if (schema_is_number(argc))
			out_value(o, "args_count", argc);
		if (schema_is_number(uid)) {
			out_open(o, "user", '{');
			out_number_string(o, "id", uid);
			out_close(o, '}');
		}
		out_open(o, "parent", '{');
		out_int(o, "pid", ctx->launcher_pid);
		out_str(o, "name", "launch");
		out_close(o, '}');
		out_close(o, '}');
		break;
	}
	case SCHEMA_KIND_EXIT:
	case SCHEMA_KIND_LIMIT: {
		struct schema_field *code = schema_take(line, "exit_code");

		if (!ctx->job_pid && !schema_is_number(code))
			break;
		out_open(o, "process", '{');
		if (ctx->job_pid)
			out_int(o, "pid", (long long)ctx->job_pid);
		if (schema_is_number(code))
			out_value(o, "exit_code", code);
		out_close(o, '}');
		break;
	}
	default:
		break;
	}
	/* Custom fields (ECS's advice: a name of our own, which ECS will not take). */
	out_open(o, "launch", '{');
	out_leftovers(o, line);
	out_close(o, '}');
	out_close(o, '}');
}

/* --- the entry point ----------------------------------------------------------------------- */

static int schema_translate_once(struct audit_schema_ctx *ctx, const char *line, size_t len,
				 char *buf, size_t cap, size_t value_max)
{
	struct schema_line fields;
	struct schema_out o = { .out = { .buf = buf, .cap = cap },
				.value_max = value_max,
				.first = { true } };
	struct schema_event e;
	int r = schema_split(line, len, &fields);

	if (r < 0)
		return r;
	e = schema_classify(&fields);
	if (e.kind == SCHEMA_KIND_START) {
		struct schema_field *pid = schema_find(&fields, "pid");

		if (schema_is_number(pid))
			ctx->job_pid = schema_number(pid);
	}
	if (ctx->schema == AUDIT_SCHEMA_OCSF)
		ocsf_translate(&o, &fields, ctx, &e);
	else
		ecs_translate(&o, &fields, ctx, &e);
	line_buf_append(&o.out, "\n", 1);
	if (o.out.overflow)
		return -ENOBUFS;
	buf[o.out.len] = '\0';
	return (int)o.out.len;
}

int audit_schema_translate(struct audit_schema_ctx *ctx, const char *line, size_t len, char *buf,
			   size_t cap)
{
	int r;

	if (ctx->schema == AUDIT_SCHEMA_JSON) {
		if (len + 1 > cap)
			return -ENOBUFS;
		memcpy(buf, line, len);
		buf[len] = '\0';
		return (int)len;
	}
	r = -ENOBUFS;
	for (size_t i = 0; i < SCHEMA_LEAN_LEVELS && r == -ENOBUFS; i++)
		r = schema_translate_once(ctx, line, len, buf, cap, SCHEMA_LEAN_VALUE_MAX[i]);
	return r;
}
