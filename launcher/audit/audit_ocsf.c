// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --audit-format ocsf: one of launch's lines as an OCSF 1.3.0 event (Network Activity, DNS
 * Activity, HTTP Activity, Kernel Activity, Process Activity, Entity Management),
 * docs/audit-log.md's table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_schema_internal.h"

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

/* HTTP Activity's activity: the method, as OCSF 1.3.0 numbers them (others are 99). */
static void ocsf_http_activity(const struct schema_field *method, struct ocsf_class *ret)
{
	static const char *const methods[] = { "CONNECT", "DELETE", "GET", "HEAD",
					       "OPTIONS", "POST",   "PUT", "TRACE" };
	static const char *const names[] = { "Connect", "Delete", "Get", "Head",
					     "Options", "Post",	  "Put", "Trace" };

	ret->activity_id = 99, ret->activity_name = "Other";
	for (int i = 0; i < 8; i++)
		if (schema_is(method, methods[i]))
			ret->activity_id = i + 1, ret->activity_name = names[i];
}

static void ocsf_classify(const struct schema_event *e, const struct schema_line *line,
			  struct ocsf_class *ret)
{
	static const struct ocsf_class network = { .uid = 4001,
						   .name = "Network Activity",
						   .category_uid = 4,
						   .category_name = "Network Activity" },
				       http = { .uid = 4002,
						.name = "HTTP Activity",
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
	case SCHEMA_KIND_HTTP:
		*ret = http;
		ocsf_http_activity(schema_find((struct schema_line *)line, "method"), ret);
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
	schema_out_open(o, "actor", '{');
	schema_out_open(o, "process", '{');
	schema_out_value(o, "pid", pid);
	if (schema_is_number(tid))
		schema_out_value(o, "tid", tid);
	if (schema_is_string(comm))
		schema_out_value(o, "name", comm);
	if (schema_is_string(exe)) {
		schema_out_open(o, "file", '{');
		schema_out_basename(o, "name", exe);
		schema_out_value(o, "path", exe);
		schema_out_int(o, "type_id", 1);
		schema_out_str(o, "type", "Regular File");
		schema_out_close(o, '}');
	}
	if (schema_is_number(uid)) {
		schema_out_open(o, "user", '{');
		schema_out_number_string(o, "uid", uid);
		schema_out_close(o, '}');
	}
	if (schema_is_string(sandbox))
		schema_out_value(o, "sandbox", sandbox);
	schema_out_close(o, '}');
	schema_out_close(o, '}');
}

/* connection_info: the protocol, the IP version and the direction. */
static void ocsf_connection_info(struct schema_out *o, struct schema_line *line, bool inbound)
{
	struct schema_field *protocol = schema_take(line, "protocol"),
			    *family = schema_find(line, "family");
	int number = schema_protocol_number(protocol, family);

	schema_out_open(o, "connection_info", '{');
	if (schema_is_string(protocol))
		schema_out_value(o, "protocol_name", protocol);
	if (number >= 0)
		schema_out_int(o, "protocol_num", number);
	if (schema_is(family, "ipv4") || schema_is(family, "ipv6")) {
		schema_out_int(o, "protocol_ver_id", schema_is(family, "ipv4") ? 4 : 6);
		schema_out_str(o, "protocol_ver",
			       schema_is(family, "ipv4") ? "Internet Protocol version 4 (IPv4)"
							 : "Internet Protocol version 6 (IPv6)");
	}
	schema_out_int(o, "direction_id", inbound ? 1 : 2);
	schema_out_str(o, "direction", inbound ? "Inbound" : "Outbound");
	schema_out_close(o, '}');
}

static void ocsf_endpoint(struct schema_out *o, const char *key, struct schema_line *line,
			  const char *ip_key, const char *port_key, const char *name_key)
{
	struct schema_field *ip = schema_take(line, ip_key), *port = schema_take(line, port_key),
			    *name = name_key ? schema_take(line, name_key) : NULL;

	schema_out_open(o, key, '{');
	if (schema_is_string(name))
		schema_out_value(o, "hostname", name);
	if (schema_is_string(ip))
		schema_out_value(o, "ip", ip);
	if (schema_is_number(port))
		schema_out_value(o, "port", port);
	schema_out_close(o, '}');
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
			schema_out_open(o, "src_endpoint", '{');
			schema_out_value(o, "hostname", host);
			schema_out_close(o, '}');
		}
		if (e->listening && schema_find(line, "local_ip")) {
			ocsf_endpoint(o, "dst_endpoint", line, "local_ip", "local_port", NULL);
		} else if (schema_find(line, "dst_path") || schema_find(line, "path")) {
			/* An AF_UNIX socket: its path (or @name) names the endpoint. */
			struct schema_field *path = schema_take(line, "dst_path");

			if (!path)
				path = schema_take(line, "path");
			schema_out_open(o, "dst_endpoint", '{');
			schema_out_value(o, "name", path);
			schema_out_close(o, '}');
		} else if (!e->no_destination && schema_find(line, "dst_ip")) {
			ocsf_endpoint(o, "dst_endpoint", line, "dst_ip", "dst_port", "dst_name");
		} else {
			/* A socket refused at creation has no destination; the class needs one. */
			schema_out_open(o, "dst_endpoint", '{');
			schema_out_str(o, "name", "unknown");
			schema_out_int(o, "type_id", 0);
			schema_out_str(o, "type", "Unknown");
			schema_out_close(o, '}');
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
		schema_out_open(o, "actor", '{');
		schema_out_open(o, "process", '{');
		schema_out_str(o, "name", "launch");
		schema_out_value(o, "pid", pid);
		if (schema_is_number(uid)) {
			schema_out_open(o, "user", '{');
			schema_out_number_string(o, "uid", uid);
			schema_out_close(o, '}');
		}
		schema_out_close(o, '}');
		schema_out_close(o, '}');
	}
	schema_out_open(o, "entity", '{');
	if (schema_is_string(sandbox)) {
		schema_out_value(o, "name", sandbox);
		schema_out_value(o, "uid", sandbox);
	}
	schema_out_str(o, "type", "Sandbox");
	if (schema_is_string(policy)) {
		schema_out_open(o, "policy", '{');
		schema_out_value(o, "name", policy);
		schema_out_key(o, "is_applied");
		line_buf_append(&o->out, "true", 4);
		schema_out_close(o, '}');
	}
	schema_out_close(o, '}');
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
		schema_out_open(o, "query", '{');
		schema_out_value(o, "hostname", qname);
		if (schema_is_string(qtype))
			schema_out_value(o, "type", qtype);
		schema_out_str(o, "class", "IN");
		schema_out_close(o, '}');
	}
	/* Identical refusals folded into this line (launch's `repeats`): OCSF counts them all. */
	if (schema_is_number(repeats))
		schema_out_int(o, "count", (long long)schema_number(repeats) + 1);
	if (schema_is_string(rcode)) {
		int id = schema_rcode_id(rcode, &caption);

		schema_out_int(o, "rcode_id", id);
		schema_out_str(o, "rcode", caption);
	}
	if (addrs && addrs->value[0] == '[') {
		const char *p = addrs->value + 1, *end = addrs->value + addrs->value_len - 1;

		schema_out_open(o, "answers", '[');
		while (p < end) {
			const char *elem_end = audit_json_skip_value(p, end);

			if (!elem_end)
				break;
			schema_out_open(o, NULL, '{');
			schema_out_key(o, "rdata");
			line_buf_append(&o->out, p, (size_t)(elem_end - p));
			if (schema_is_number(ttl))
				schema_out_value(o, "ttl", ttl);
			schema_out_close(o, '}');
			p = elem_end + (elem_end < end && *elem_end == ',');
		}
		schema_out_close(o, ']');
	}
	ocsf_connection_info(o, line, false);
}

/*
 * A request of the job through the gateway: http_request, http_response, the provider (the
 * line's "host": the request's, on an http line).
 */
static void ocsf_http(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *method = schema_take(line, "method"),
			    *host = schema_take(line, "host"), *path = schema_take(line, "path"),
			    *status = schema_take(line, "status"),
			    *reason = schema_find(line, "reason");

	ocsf_actor_process(o, line);
	schema_out_open(o, "http_request", '{');
	if (schema_is_string(method))
		schema_out_value(o, "http_method", method);
	schema_out_open(o, "url", '{');
	schema_out_str(o, "scheme", "https");
	if (schema_is_string(host))
		schema_out_value(o, "hostname", host);
	schema_out_value(o, "path", path);
	schema_out_close(o, '}');
	schema_out_str(o, "version", "HTTP/1.1");
	schema_out_close(o, '}');
	schema_out_open(o, "http_response", '{');
	schema_out_value(o, "code", status);
	schema_out_close(o, '}');
	if (schema_is_number(status))
		schema_out_value(o, "http_status", status);
	schema_out_open(o, "dst_endpoint", '{');
	schema_out_value(o, "hostname", host);
	schema_out_close(o, '}');
	/* The gateway's own reason for a refusal: host, rule, credential, malformed... */
	if (schema_is_string(reason) && reason->value_len > 2) {
		reason->used = true;
		schema_out_value(o, "status_detail", reason);
	}
}

static void ocsf_syscall(struct schema_out *o, struct schema_line *line,
			 const struct schema_event *e)
{
	struct schema_field *syscall = schema_take(line, "syscall");

	ocsf_actor_process(o, line);
	schema_out_open(o, "kernel", '{');
	/* The call refused, by name; userns and io_uring without one are named by their op. */
	schema_out_value(o, "name", schema_is_string(syscall) ? syscall : e->op);
	if (schema_is_string(syscall))
		schema_out_value(o, "system_call", syscall);
	schema_out_int(o, "type_id", 2);
	schema_out_str(o, "type", "System Call");
	schema_out_close(o, '}');
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

		schema_out_open(o, "actor", '{');
		schema_out_open(o, "process", '{');
		schema_out_str(o, "name", "launch");
		schema_out_int(o, "pid", ctx->launcher_pid);
		schema_out_close(o, '}');
		schema_out_close(o, '}');
		schema_out_open(o, "process", '{');
		if (schema_is_number(pid))
			schema_out_value(o, "pid", pid);
		if (argv && argv->value_len > 2 && argv->value[1] == '"') {
			struct schema_field first = { .value = argv->value + 1 };
			const char *end =
				audit_json_skip_value(first.value, argv->value + argv->value_len);

			first.value_len = end ? (size_t)(end - first.value) : 0;
			if (schema_is_string(&first))
				schema_out_basename(o, "name", &first);
			if (!schema_out_joined(o, "cmd_line", argv, o->value_max))
				schema_out_omitted(o, argv);
		}
		if (schema_is_number(uid)) {
			schema_out_open(o, "user", '{');
			schema_out_number_string(o, "uid", uid);
			schema_out_close(o, '}');
		}
		if (schema_is_string(sandbox))
			schema_out_value(o, "sandbox", sandbox);
		schema_out_close(o, '}');
		return;
	}
	schema_out_open(o, "actor", '{');
	schema_out_open(o, "process", '{');
	schema_out_str(o, "name", "launch");
	schema_out_int(o, "pid", ctx->launcher_pid);
	schema_out_close(o, '}');
	schema_out_close(o, '}');
	schema_out_open(o, "process", '{');
	/* No sandbox_start seen: the sandbox names the job (OCSF wants a pid or a uid). */
	if (ctx->job_pid)
		schema_out_int(o, "pid", (long long)ctx->job_pid);
	else if (schema_is_string(sandbox))
		schema_out_value(o, "uid", sandbox);
	else
		schema_out_str(o, "uid", "unknown");
	if (schema_is_string(sandbox))
		schema_out_value(o, "sandbox", sandbox);
	schema_out_close(o, '}');
	if (e->kind == SCHEMA_KIND_EXIT) {
		struct schema_field *code = schema_take(line, "exit_code"),
				    *duration = schema_take(line, "duration_ms");

		if (schema_is_number(code))
			schema_out_value(o, "exit_code", code);
		if (schema_is_number(duration))
			schema_out_value(o, "duration", duration);
	}
}

/* OCSF 1.3.0's security_control profile: the action, and what came of it. */
static void ocsf_security_control(struct schema_out *o, const struct schema_event *e)
{
	bool allowed = e->verdict != SCHEMA_VERDICT_DENIED;
	bool dropped = schema_is(e->op, "packet");

	schema_out_int(o, "action_id", allowed ? 1 : 2);
	schema_out_str(o, "action", allowed ? "Allowed" : "Denied");
	schema_out_int(o, "disposition_id",
		       e->verdict == SCHEMA_VERDICT_ALLOWED	 ? 1
		       : e->verdict == SCHEMA_VERDICT_WOULD_DENY ? 15
		       : dropped				 ? 6
								 : 2);
	schema_out_str(o, "disposition",
		       e->verdict == SCHEMA_VERDICT_ALLOWED	 ? "Allowed"
		       : e->verdict == SCHEMA_VERDICT_WOULD_DENY ? "Detected"
		       : dropped				 ? "Dropped"
								 : "Blocked");
}

void ocsf_translate(struct schema_out *o, struct schema_line *line,
		    const struct audit_schema_ctx *ctx, const struct schema_event *e)
{
	struct schema_field *seq = schema_take(line, "seq"), *host = schema_take_machine(line, e),
			    *sandbox = schema_find(line, "sandbox"), *ts = schema_find(line, "ts");
	bool control = e->verdict != SCHEMA_VERDICT_NONE, valid_time;
	long long time_ms = 0;
	struct ocsf_class c;

	ocsf_classify(e, line, &c);
	schema_out_open(o, NULL, '{');
	schema_out_int(o, "class_uid", c.uid);
	schema_out_str(o, "class_name", c.name);
	schema_out_int(o, "category_uid", c.category_uid);
	schema_out_str(o, "category_name", c.category_name);
	schema_out_int(o, "activity_id", c.activity_id);
	schema_out_str(o, "activity_name", c.activity_name);
	schema_out_int(o, "type_uid", c.uid * 100LL + c.activity_id);
	line_buf_printf(&o->out, ",\"type_name\":\"%s: %s\"", c.name, c.activity_name);
	schema_out_int(o, "severity_id", c.severity_id);
	schema_out_str(o, "severity", c.severity);
	/* OCSF requires a time: a line without a readable ts (none of launch's) gets 0. */
	valid_time = schema_time_ms(ts, &time_ms);
	schema_out_int(o, "time", valid_time ? time_ms : 0);
	/* The datetime profile keeps the line's microseconds, which "time" cannot. */
	if (valid_time) {
		ts->used = true;
		schema_out_value(o, "time_dt", ts);
	}
	if (control)
		ocsf_security_control(o, e);
	/* Whether what the job (or launch, for the start) tried succeeded. */
	if (control || e->kind == SCHEMA_KIND_START || e->kind == SCHEMA_KIND_EXIT) {
		const struct schema_field *code = schema_find(line, "exit_code");
		bool failed = e->verdict == SCHEMA_VERDICT_DENIED ||
			      (e->kind == SCHEMA_KIND_EXIT &&
			       (!schema_is_number(code) || schema_number(code) != 0));

		schema_out_int(o, "status_id", failed ? 2 : 1);
		schema_out_str(o, "status", failed ? "Failure" : "Success");
	}
	if (e->kind == SCHEMA_KIND_LOST) {
		struct schema_field *count = schema_take(line, "count");

		if (schema_is_number(count))
			schema_out_value(o, "count", count);
		schema_out_str(o, "message",
			       "refusals whose details the kernel's ring buffer had no room for");
	}
	schema_out_open(o, "metadata", '{');
	schema_out_str(o, "version", AUDIT_SCHEMA_OCSF_VERSION);
	schema_out_open(o, "product", '{');
	schema_out_str(o, "name", "launch");
	schema_out_str(o, "vendor_name", "launch");
	schema_out_str(o, "version", ctx->version);
	schema_out_close(o, '}');
	schema_out_line_id(o, "uid", sandbox, seq);
	if (schema_is_number(seq))
		schema_out_value(o, "sequence", seq);
	if (schema_is_string(sandbox))
		schema_out_value(o, "correlation_uid", sandbox);
	schema_out_str(o, "log_name", "audit");
	schema_out_open(o, "profiles", '[');
	schema_out_str(o, NULL, "datetime");
	if (e->kind != SCHEMA_KIND_LOST && e->kind != SCHEMA_KIND_OTHER)
		schema_out_str(o, NULL, "host");
	if (control)
		schema_out_str(o, NULL, "security_control");
	schema_out_close(o, ']');
	schema_out_close(o, '}');
	if (e->kind != SCHEMA_KIND_LOST && e->kind != SCHEMA_KIND_OTHER && schema_is_string(host)) {
		schema_out_open(o, "device", '{');
		schema_out_value(o, "hostname", host);
		schema_out_int(o, "type_id", 0);
		schema_out_str(o, "type", "Unknown");
		schema_out_close(o, '}');
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
	case SCHEMA_KIND_HTTP:
		ocsf_http(o, line);
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
	schema_out_open(o, "unmapped", '{');
	schema_out_leftovers(o, line);
	schema_out_close(o, '}');
	schema_out_close(o, '}');
}
