// SPDX-License-Identifier: LGPL-2.1-or-later
/* --audit-format ecs: one of launch's lines as an Elastic Common Schema 8.11 document. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_schema_internal.h"

static void ecs_process(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *pid = schema_take(line, "pid"), *tid = schema_take(line, "tid"),
			    *comm = schema_take(line, "comm"), *uid = schema_take(line, "uid"),
			    *exe = schema_take(line, "exe");

	if (!schema_is_number(pid))
		return;
	schema_out_open(o, "process", '{');
	schema_out_value(o, "pid", pid);
	if (schema_is_number(tid)) {
		schema_out_open(o, "thread", '{');
		schema_out_value(o, "id", tid);
		schema_out_close(o, '}');
	}
	if (schema_is_string(comm))
		schema_out_value(o, "name", comm);
	if (schema_is_string(exe))
		schema_out_value(o, "executable", exe);
	if (schema_is_number(uid)) {
		schema_out_open(o, "user", '{');
		schema_out_number_string(o, "id", uid);
		schema_out_close(o, '}');
	}
	schema_out_close(o, '}');
}

static void ecs_address(struct schema_out *o, const char *key, struct schema_line *line,
			const char *ip_key, const char *port_key, const char *name_key)
{
	struct schema_field *ip = schema_take(line, ip_key), *port = schema_take(line, port_key),
			    *name = name_key ? schema_take(line, name_key) : NULL;

	if (!schema_is_string(ip))
		return;
	schema_out_open(o, key, '{');
	schema_out_value(o, "address", ip);
	schema_out_value(o, "ip", ip);
	if (schema_is_number(port))
		schema_out_value(o, "port", port);
	if (schema_is_string(name))
		schema_out_value(o, "domain", name);
	schema_out_close(o, '}');
}

static void ecs_network(struct schema_out *o, struct schema_line *line, bool inbound, bool dns)
{
	struct schema_field *protocol = schema_find(line, "protocol"),
			    *family = schema_find(line, "family");
	int number = schema_protocol_number(protocol, family);

	schema_out_open(o, "network", '{');
	/* A bare number (an EtherType, say) stays in launch.protocol. */
	if (schema_is_string(protocol)) {
		protocol->used = true;
		schema_out_value(o, "transport", protocol);
	}
	if (number >= 0) {
		schema_out_key(o, "iana_number");
		line_buf_printf(&o->out, "\"%d\"", number);
	}
	if (schema_is(family, "ipv4") || schema_is(family, "ipv6"))
		schema_out_value(o, "type", family);
	if (dns)
		schema_out_str(o, "protocol", "dns");
	schema_out_str(o, "direction", inbound ? "ingress" : "egress");
	schema_out_close(o, '}');
}

/* ECS's event.category, event.type (one or two) and event.outcome for the line's kind. */
static const char *ecs_kind(const struct schema_event *e, struct schema_line *line,
			    const char **ret_type1, const char **ret_type2,
			    const char **ret_outcome)
{
	const char *category = "network", *type1 = NULL, *type2 = NULL, *outcome = "success";
	bool denied = e->verdict == SCHEMA_VERDICT_DENIED;

	switch (e->kind) {
	case SCHEMA_KIND_NET:
		type1 = e->no_destination || e->listening ? NULL : "connection";
		type2 = denied ? "denied" : "allowed";
		break;
	case SCHEMA_KIND_DNS:
		type1 = "protocol";
		type2 = denied ? "denied" : "allowed";
		break;
	case SCHEMA_KIND_HTTP:
		/* ECS's web category has no "denied": a refused request is a failed access. */
		category = "web";
		type2 = "access";
		outcome = denied ? "failure" : "success";
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
	*ret_type1 = type1;
	*ret_type2 = type2;
	*ret_outcome = outcome;
	return category;
}

/* A look-up: the job's process, dns.question and the answer, the network. */
static void ecs_dns(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *qname = schema_take(line, "qname"),
			    *qtype = schema_take(line, "qtype"),
			    *rcode = schema_take(line, "rcode"),
			    *addrs = schema_take(line, "addrs");

	ecs_process(o, line);
	schema_out_open(o, "dns", '{');
	schema_out_str(o, "type", rcode ? "answer" : "query");
	if (schema_is_string(qname) || schema_is_string(qtype)) {
		schema_out_open(o, "question", '{');
		if (schema_is_string(qname))
			schema_out_value(o, "name", qname);
		if (schema_is_string(qtype))
			schema_out_value(o, "type", qtype);
		schema_out_str(o, "class", "IN");
		schema_out_close(o, '}');
	}
	if (schema_is_string(rcode))
		schema_out_value(o, "response_code", rcode);
	if (addrs && addrs->value_len > 2)
		schema_out_value(o, "resolved_ip", addrs);
	schema_out_close(o, '}');
	ecs_network(o, line, false, true);
}

/* A request through the gateway: http.*, url.* (the line's "host", the request's), the job. */
static void ecs_http(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *method = schema_take(line, "method"),
			    *host = schema_take(line, "host"), *path = schema_take(line, "path"),
			    *status = schema_take(line, "status"),
			    *bytes_out = schema_take(line, "bytes_out"),
			    *bytes_in = schema_take(line, "bytes_in");

	ecs_process(o, line);
	schema_out_open(o, "http", '{');
	schema_out_open(o, "request", '{');
	if (schema_is_string(method))
		schema_out_value(o, "method", method);
	if (schema_is_number(bytes_out)) {
		schema_out_open(o, "body", '{');
		schema_out_value(o, "bytes", bytes_out);
		schema_out_close(o, '}');
	}
	schema_out_close(o, '}');
	schema_out_open(o, "response", '{');
	if (schema_is_number(status))
		schema_out_value(o, "status_code", status);
	if (schema_is_number(bytes_in)) {
		schema_out_open(o, "body", '{');
		schema_out_value(o, "bytes", bytes_in);
		schema_out_close(o, '}');
	}
	schema_out_close(o, '}');
	schema_out_str(o, "version", "1.1");
	schema_out_close(o, '}');
	schema_out_open(o, "url", '{');
	schema_out_str(o, "scheme", "https");
	if (schema_is_string(host))
		schema_out_value(o, "domain", host);
	if (schema_is_string(path))
		schema_out_value(o, "path", path);
	schema_out_close(o, '}');
}

/* policy_update: the process of the event is the `launch update` that asked. */
static void ecs_update(struct schema_out *o, struct schema_line *line)
{
	struct schema_field *pid = schema_take(line, "requester_pid"),
			    *uid = schema_take(line, "requester_uid");

	if (!schema_is_number(pid))
		return;
	schema_out_open(o, "process", '{');
	schema_out_value(o, "pid", pid);
	schema_out_str(o, "name", "launch");
	if (schema_is_number(uid)) {
		schema_out_open(o, "user", '{');
		schema_out_number_string(o, "id", uid);
		schema_out_close(o, '}');
	}
	schema_out_close(o, '}');
}

/* sandbox_start: the job's process, its command line, launch as its parent. */
static void ecs_start(struct schema_out *o, struct schema_line *line,
		      const struct audit_schema_ctx *ctx)
{
	struct schema_field *argv = schema_take(line, "argv"), *pid = schema_take(line, "pid"),
			    *uid = schema_take(line, "uid"), *argc = schema_take(line, "argc");

	schema_out_open(o, "process", '{');
	if (schema_is_number(pid))
		schema_out_value(o, "pid", pid);
	if (argv && argv->value[0] == '[') {
		if (argv->value_len <= o->value_max) {
			schema_out_value(o, "args", argv);
			/* A second copy only while there is room for everything. */
			if (o->value_max == (size_t)-1)
				schema_out_joined(o, "command_line", argv, (size_t)-1);
		} else {
			schema_out_omitted(o, argv);
		}
	}
	if (schema_is_number(argc))
		schema_out_value(o, "args_count", argc);
	if (schema_is_number(uid)) {
		schema_out_open(o, "user", '{');
		schema_out_number_string(o, "id", uid);
		schema_out_close(o, '}');
	}
	schema_out_open(o, "parent", '{');
	schema_out_int(o, "pid", ctx->launcher_pid);
	schema_out_str(o, "name", "launch");
	schema_out_close(o, '}');
	schema_out_close(o, '}');
}

/* sandbox_exit and limit: the job's pid and exit code. */
static void ecs_exit(struct schema_out *o, struct schema_line *line,
		     const struct audit_schema_ctx *ctx)
{
	struct schema_field *code = schema_take(line, "exit_code");

	if (!ctx->job_pid && !schema_is_number(code))
		return;
	schema_out_open(o, "process", '{');
	if (ctx->job_pid)
		schema_out_int(o, "pid", (long long)ctx->job_pid);
	if (schema_is_number(code))
		schema_out_value(o, "exit_code", code);
	schema_out_close(o, '}');
}

void ecs_translate(struct schema_out *o, struct schema_line *line,
		   const struct audit_schema_ctx *ctx, const struct schema_event *e)
{
	struct schema_field *seq = schema_take(line, "seq"), *host = schema_take_machine(line, e),
			    *ts = schema_take(line, "ts"), *event = schema_find(line, "event"),
			    *reason = schema_take(line, "reason");
	const char *category, *type1, *type2, *outcome;
	bool denied = e->verdict == SCHEMA_VERDICT_DENIED;
	const char *body;
	size_t len;

	category = ecs_kind(e, line, &type1, &type2, &outcome);
	/* From the job's side: what it tried failed; audit-only, it went through. */
	if (denied || e->kind == SCHEMA_KIND_LOST)
		outcome = "failure";

	schema_out_open(o, NULL, '{');
	if (schema_is_string(ts))
		schema_out_value(o, "@timestamp", ts);
	schema_out_open(o, "ecs", '{');
	schema_out_str(o, "version", AUDIT_SCHEMA_ECS_VERSION);
	schema_out_close(o, '}');
	schema_out_open(o, "event", '{');
	schema_out_str(o, "kind", "event");
	schema_out_open(o, "category", '[');
	schema_out_str(o, NULL, category);
	schema_out_close(o, ']');
	schema_out_open(o, "type", '[');
	if (type1)
		schema_out_str(o, NULL, type1);
	schema_out_str(o, NULL, type2);
	schema_out_close(o, ']');
	schema_out_str(o, "outcome", outcome);
	if (schema_is_string(event)) {
		/* launch's event, and for a refusal its op: "deny_connect", "would_deny_dns". */
		schema_out_key(o, "action");
		len = schema_body(event, &body);
		line_buf_printf(&o->out, "\"%.*s", (int)len, body);
		if (schema_is_string(e->op)) {
			len = schema_body(e->op, &body);
			line_buf_printf(&o->out, "_%.*s", (int)len, body);
		}
		line_buf_append(&o->out, "\"", 1);
	}
	if (schema_is_string(reason))
		schema_out_value(o, "reason", reason);
	if (schema_is_number(seq))
		schema_out_value(o, "sequence", seq);
	schema_out_line_id(o, "id", schema_find(line, "sandbox"), seq);
	schema_out_int(o, "severity", denied || e->kind == SCHEMA_KIND_LOST ? 4 : 6);
	schema_out_str(o, "module", "launch");
	schema_out_str(o, "dataset", "launch.audit");
	schema_out_str(o, "provider", "launch");
	if (e->kind == SCHEMA_KIND_EXIT && schema_is_number(schema_find(line, "duration_ms")))
		schema_out_int(o, "duration",
			       /* nanoseconds; launch.duration_ms keeps the line's milliseconds */
			       (long long)schema_number(schema_find(line, "duration_ms")) *
				       1000000LL);
	schema_out_close(o, '}');
	if (schema_is_string(host)) {
		schema_out_open(o, "host", '{');
		schema_out_value(o, "hostname", host);
		schema_out_value(o, "name", host);
		schema_out_close(o, '}');
	}
	schema_out_open(o, "observer", '{');
	schema_out_str(o, "product", "launch");
	schema_out_str(o, "vendor", "launch");
	schema_out_str(o, "version", ctx->version);
	schema_out_close(o, '}');

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
				schema_out_open(o, "destination", '{');
				schema_out_value(o, "address", path);
				schema_out_close(o, '}');
			} else {
				ecs_address(o, "destination", line, "dst_ip", "dst_port",
					    "dst_name");
			}
		}
		ecs_network(o, line, e->inbound || e->listening, false);
		break;
	case SCHEMA_KIND_DNS:
	case SCHEMA_KIND_HTTP: /* the job's process, its protocol's fields, where it went */
		(e->kind == SCHEMA_KIND_DNS ? ecs_dns : ecs_http)(o, line);
		break;
	case SCHEMA_KIND_SYSCALL:
		ecs_process(o, line);
		break;
	case SCHEMA_KIND_UPDATE:
		ecs_update(o, line);
		break;
	case SCHEMA_KIND_START:
		ecs_start(o, line, ctx);
		break;
	case SCHEMA_KIND_EXIT:
	case SCHEMA_KIND_LIMIT:
		ecs_exit(o, line, ctx);
		break;
	default:
		break;
	}
	/* Custom fields (ECS's advice: a name of our own, which ECS will not take). */
	schema_out_open(o, "launch", '{');
	schema_out_leftovers(o, line);
	schema_out_close(o, '}');
	schema_out_close(o, '}');
}
