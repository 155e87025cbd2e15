// SPDX-License-Identifier: LGPL-2.1-or-later
/* A refusal as a person or a model reads it, from an audit log's "deny" line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "lib/json.h"
#include "refusal.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Where the refused operation was going, in the form a person would type it. */
static void refusal_destination(const cJSON *line, struct refusal *refusal)
{
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(line, "dst_port");
	const char *ip = json_str(line, "dst_ip"), *family = json_str(line, "family");
	const char *type = json_str(line, "type"), *protocol = json_str(line, "protocol");

	if (strcmp(refusal->op, "dns") == 0) {
		const char *qtype = json_str(line, "qtype");

		copy(refusal->destination, sizeof(refusal->destination), json_str(line, "qname"));
		copy(refusal->name, sizeof(refusal->name), json_str(line, "qname"));
		/* A refused type, not name: say which type. */
		if (qtype && json_str(line, "reason") && strcmp(json_str(line, "reason"), "name"))
			snprintf(refusal->destination + strlen(refusal->destination),
				 sizeof(refusal->destination) - strlen(refusal->destination),
				 " type %s", qtype);
	} else if (ip && cJSON_IsNumber(port)) {
		snprintf(refusal->destination, sizeof(refusal->destination),
			 strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, port->valueint);
		/* A refused TLS hello: the name it asked for, which is what was refused. */
		copy(refusal->name, sizeof(refusal->name),
		     strcmp(refusal->op, "tls") == 0 && json_str(line, "sni")
			     ? json_str(line, "sni")
			     : json_str(line, "dst_name"));
	} else if (json_str(line, "option")) {
		/* A socket option that would route packets elsewhere: "IPV6_RTHDR". */
		copy(refusal->destination, sizeof(refusal->destination), json_str(line, "option"));
	} else if (json_str(line, "dst_path")) {
		copy(refusal->destination, sizeof(refusal->destination),
		     json_str(line, "dst_path"));
	} else if (family) {
		/* A socket kind: "packet raw", "inet6 raw icmpv6". */
		snprintf(refusal->destination, sizeof(refusal->destination), "%s%s%s%s%s", family,
			 type ? " " : "", type ? type : "", protocol ? " " : "",
			 protocol ? protocol : "");
	}
}

int refusal_parse(const char *text, size_t len, struct refusal *ret_refusal)
{
	_cleanup_(cJSON_Deletep) cJSON *line = cJSON_ParseWithLength(text, len);
	const char *event, *op;

	if (!line)
		return 0;
	event = json_str(line, "event");
	op = json_str(line, "op");
	if (!event || (strcmp(event, "deny") != 0 && strcmp(event, "would_deny") != 0) || !op)
		return 0;
	memset(ret_refusal, 0, sizeof(*ret_refusal));
	ret_refusal->would = strcmp(event, "would_deny") == 0;
	copy(ret_refusal->op, sizeof(ret_refusal->op), op);
	copy(ret_refusal->policy, sizeof(ret_refusal->policy), json_str(line, "policy"));
	copy(ret_refusal->ts, sizeof(ret_refusal->ts), json_str(line, "ts"));
	ret_refusal->count = 1 + json_u64(line, "repeats");
	refusal_destination(line, ret_refusal);
	return 1;
}

int refusal_format(const struct refusal *refusal, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s %s%s%s (policy %s)%s%s%s",
			 refusal->would ? "would refuse" : "refused", refusal->op,
			 refusal->destination[0] ? " " : "", refusal->destination, refusal->policy,
			 refusal->name[0] && strcmp(refusal->op, "dns") ? " [" : "",
			 strcmp(refusal->op, "dns") ? refusal->name : "",
			 refusal->name[0] && strcmp(refusal->op, "dns") ? "]" : "");

	return n < 0 || (size_t)n >= len ? -ENOBUFS : n;
}

bool refusal_since(const struct refusal *refusal, const char *since)
{
	return !since || !since[0] || strcmp(refusal->ts, since) >= 0;
}
