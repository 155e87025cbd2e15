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
#include "audit_schema_internal.h"
#include "lib/util.h"

/*
 * Lines are at most 4,095 bytes, and documents must be too (whole-line writes to a pipe). The
 * only ones that can come near are sandbox_start's: on a second (third) try the command line
 * is cut at 512 (64) bytes and left-over values longer than that are left out, and named.
 */
static const size_t SCHEMA_LEAN_VALUE_MAX[] = { (size_t)-1, 512, 64 };
#define SCHEMA_LEAN_LEVELS 3

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

struct schema_field *schema_find(struct schema_line *line, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < line->n; i++)
		if (line->fields[i].key_len == klen && memcmp(line->fields[i].key, key, klen) == 0)
			return &line->fields[i];
	return NULL;
}

/* As schema_find, and the field is placed: not among the left-overs. */
struct schema_field *schema_take(struct schema_line *line, const char *key)
{
	struct schema_field *f = schema_find(line, key);

	if (f)
		f->used = true;
	return f;
}

struct schema_field *schema_take_machine(struct schema_line *line, const struct schema_event *e)
{
	/* An http line's "host" is the request's, as the gateway's users name it. */
	return schema_take(line, e->kind == SCHEMA_KIND_HTTP ? "hostname" : "host");
}

bool schema_is_string(const struct schema_field *f)
{
	return f && f->value_len >= 2 && f->value[0] == '"';
}

/* The escaped text inside a string's quotes. */
size_t schema_body(const struct schema_field *f, const char **ret_body)
{
	*ret_body = f->value + 1;
	return f->value_len - 2;
}

/* Whether a string field has exactly this (escape-free) text. */
bool schema_is(const struct schema_field *f, const char *text)
{
	size_t n = strlen(text);

	return schema_is_string(f) && f->value_len == n + 2 && memcmp(f->value + 1, text, n) == 0;
}

bool schema_is_number(const struct schema_field *f)
{
	return f && f->value_len > 0 && f->value[0] >= '0' && f->value[0] <= '9';
}

unsigned long long schema_number(const struct schema_field *f)
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
bool schema_time_ms(const struct schema_field *f, long long *ret_ms)
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
void schema_out_key(struct schema_out *o, const char *key)
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

void schema_out_open(struct schema_out *o, const char *key, char bracket)
{
	schema_out_key(o, key);
	line_buf_append(&o->out, &bracket, 1);
	if (o->depth + 1 < SCHEMA_DEPTH_MAX)
		o->first[++o->depth] = true;
	else
		o->out.overflow = true;
}

void schema_out_close(struct schema_out *o, char bracket)
{
	line_buf_append(&o->out, &bracket, 1);
	if (o->depth > 0)
		o->depth--;
}

/* A string of ours (no escaping needed). */
void schema_out_str(struct schema_out *o, const char *key, const char *s)
{
	schema_out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, s, strlen(s));
	line_buf_append(&o->out, "\"", 1);
}

void schema_out_int(struct schema_out *o, const char *key, long long value)
{
	schema_out_key(o, key);
	line_buf_printf(&o->out, "%lld", value);
}

/* A value of the line, as the line has it. */
void schema_out_value(struct schema_out *o, const char *key, const struct schema_field *f)
{
	schema_out_key(o, key);
	line_buf_append(&o->out, f->value, f->value_len);
}

/* A number of the line written as a string (OCSF user.uid, ECS user.id are strings). */
void schema_out_number_string(struct schema_out *o, const char *key, const struct schema_field *f)
{
	schema_out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, f->value, f->value_len);
	line_buf_append(&o->out, "\"", 1);
}

/* The part of a path string after its last '/' (a '/' is never part of one of our escapes). */
void schema_out_basename(struct schema_out *o, const char *key, const struct schema_field *f)
{
	const char *body, *slash;
	size_t len = schema_body(f, &body);

	slash = memrchr(body, '/', len);
	if (slash) {
		len -= (size_t)(slash + 1 - body);
		body = slash + 1;
	}
	schema_out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, body, len);
	line_buf_append(&o->out, "\"", 1);
}

/*
 * An array of strings joined by spaces into one string, at most max escaped bytes of it
 * (an escape is never cut). Returns false when cut.
 */
bool schema_out_joined(struct schema_out *o, const char *key, const struct schema_field *f,
		       size_t max)
{
	const char *p = f->value + 1, *end = f->value + f->value_len - 1;
	size_t used = 0;
	bool whole = true;

	schema_out_key(o, key);
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
void schema_out_omitted(struct schema_out *o, const struct schema_field *f)
{
	if (o->nomitted < SCHEMA_OMITTED_MAX) {
		o->omitted[o->nomitted] = f->key;
		o->omitted_len[o->nomitted++] = f->key_len;
	}
}

/* Every field the mapping did not place, as "key": value; on a later try, short ones only. */
void schema_out_leftovers(struct schema_out *o, struct schema_line *line)
{
	for (size_t i = 0; i < line->n; i++) {
		struct schema_field *f = &line->fields[i];

		if (f->used)
			continue;
		if (f->value_len > o->value_max) {
			schema_out_omitted(o, f);
			continue;
		}
		schema_out_key(o, NULL);
		line_buf_append(&o->out, "\"", 1);
		line_buf_append(&o->out, f->key, f->key_len);
		line_buf_append(&o->out, "\":", 2);
		line_buf_append(&o->out, f->value, f->value_len);
	}
	if (o->nomitted) {
		schema_out_open(o, "omitted", '[');
		for (size_t i = 0; i < o->nomitted; i++) {
			schema_out_key(o, NULL);
			line_buf_printf(&o->out, "\"%.*s\"", (int)o->omitted_len[i], o->omitted[i]);
		}
		schema_out_close(o, ']');
	}
}

/* "SANDBOX:SEQ", which names a line among all sandboxes' (deduplication after a retry). */
void schema_out_line_id(struct schema_out *o, const char *key, const struct schema_field *sandbox,
			const struct schema_field *seq)
{
	const char *body;
	size_t len;

	if (!schema_is_string(sandbox) || !schema_is_number(seq))
		return;
	len = schema_body(sandbox, &body);
	schema_out_key(o, key);
	line_buf_append(&o->out, "\"", 1);
	line_buf_append(&o->out, body, len);
	line_buf_append(&o->out, ":", 1);
	line_buf_append(&o->out, seq->value, seq->value_len);
	line_buf_append(&o->out, "\"", 1);
}

/* --- what a line is ------------------------------------------------------------------------ */
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
	else if (schema_is(event, "http")) {
		e.kind = SCHEMA_KIND_HTTP;
		e.verdict = schema_is(schema_find(line, "decision"), "deny")
				    ? SCHEMA_VERDICT_DENIED
				    : SCHEMA_VERDICT_ALLOWED;
	} else if (schema_is(event, "dns_allow")) {
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
int schema_protocol_number(const struct schema_field *f, const struct schema_field *family)
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
int schema_rcode_id(const struct schema_field *f, const char **ret_caption)
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
