// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `launch learn`: the smallest policy that allows what an audit log shows a job doing (its
 * allow, would_deny and deny lines), without I/O: the caller feeds lines and prints the text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cjson/cJSON.h>

#include "lib/dnswire.h"
#include "lib/json.h"
#include "learn.h"
#include "policy/policy.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

#define LEARN_PORT_WORDS (65536 / 64)

/* Where the job went: a name it looked up, or an address no look-up explains. */
struct learn_dest {
	char *host;	      /* lower case; NULL for an address */
	struct in6_addr addr; /* no host: IPv4 as ::ffff:a.b.c.d */
	unsigned int proto;   /* PROTO_TCP, PROTO_UDP; PROTO_ANY once merged */
	uint64_t ports[LEARN_PORT_WORDS];
};

/* Something the log shows that no policy can allow, and how often. */
struct learn_note {
	char *what;
	size_t count;
};

struct learn {
	struct learn_options options;
	size_t nlines;
	struct learn_dest **dests;
	size_t ndests, capdests;
	char **unix_paths;
	size_t nunix, capunix;
	char **looked_up; /* names the job asked the proxy for (lower case) */
	size_t nlooked, caplooked;
	struct learn_note *notes;
	size_t nnotes, capnotes;
	/* What the log says it lacks: events_lost lines, and sandbox_exit's own counts. */
	unsigned long long lost_lines, lost_exit, unwritten;
};

int learn_new(const struct learn_options *options, struct learn **ret_learn)
{
	struct learn *learn = calloc(1, sizeof(*learn));

	if (!learn)
		return -ENOMEM;
	learn->options = *options;
	if (!learn->options.name)
		learn->options.name = LEARN_DEFAULT_NAME;
	*ret_learn = learn;
	return 0;
}

void learn_free(struct learn *learn)
{
	if (!learn)
		return;
	for (size_t i = 0; i < learn->ndests; i++) {
		free(learn->dests[i]->host);
		free(learn->dests[i]);
	}
	for (size_t i = 0; i < learn->nunix; i++)
		free(learn->unix_paths[i]);
	for (size_t i = 0; i < learn->nlooked; i++)
		free(learn->looked_up[i]);
	for (size_t i = 0; i < learn->nnotes; i++)
		free(learn->notes[i].what);
	free(learn->dests);
	free(learn->unix_paths);
	free(learn->looked_up);
	free(learn->notes);
	free(learn);
}

size_t learn_lines(const struct learn *learn)
{
	return learn->nlines;
}

void learn_gaps(const struct learn *learn, struct learn_gaps *ret_gaps)
{
	/* sandbox_exit sums its events_lost lines; a killed launcher wrote only the latter. */
	ret_gaps->lost =
		learn->lost_exit > learn->lost_lines ? learn->lost_exit : learn->lost_lines;
	ret_gaps->unwritten = learn->unwritten;
}

/* Adds a string to a set, unless it is there already. */
static int learn_set_add(char ***set, size_t *n, size_t *cap, const char *text)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*set)[i], text) == 0)
			return 0;
	if (array_grow((void **)set, cap, *n + 1, sizeof(**set)) < 0)
		return -ENOMEM;
	(*set)[*n] = strdup(text);
	if (!(*set)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static bool learn_set_has(char *const *set, size_t n, const char *text)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], text) == 0)
			return true;
	return false;
}

static int learn_note(struct learn *learn, const char *what)
{
	for (size_t i = 0; i < learn->nnotes; i++)
		if (strcmp(learn->notes[i].what, what) == 0) {
			learn->notes[i].count++;
			return 0;
		}
	if (array_grow((void **)&learn->notes, &learn->capnotes, learn->nnotes + 1,
		       sizeof(*learn->notes)) < 0)
		return -ENOMEM;
	learn->notes[learn->nnotes].what = strdup(what);
	if (!learn->notes[learn->nnotes].what)
		return -ENOMEM;
	learn->notes[learn->nnotes++].count = 1;
	return 0;
}

/*
 * A name as a policy host, lower-cased into buf; false when it is none. The name comes from
 * the job (what it asked the DNS proxy): whatever the policy parser would refuse (a "*", a
 * '_', an address written as a name) is learned as an address instead.
 */
static bool learn_host_name(const char *name, char *buf, size_t len)
{
	size_t n = name ? strlen(name) : 0;

	if (n > 1 && name[n - 1] == '.')
		n--;
	if (n == 0 || n >= len)
		return false;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	buf[n] = '\0';
	return policy_host_problem(buf) == NULL;
}

static struct learn_dest *learn_dest_get(struct learn *learn, const char *host,
					 const struct in6_addr *addr, unsigned int proto)
{
	struct learn_dest *dest;

	for (size_t i = 0; i < learn->ndests; i++) {
		dest = learn->dests[i];
		if (dest->proto != proto)
			continue;
		if (host ? dest->host && strcmp(dest->host, host) == 0
			 : !dest->host && memcmp(&dest->addr, addr, sizeof(*addr)) == 0)
			return dest;
	}
	if (array_grow((void **)&learn->dests, &learn->capdests, learn->ndests + 1,
		       sizeof(*learn->dests)) < 0)
		return NULL;
	dest = calloc(1, sizeof(*dest));
	if (!dest)
		return NULL;
	if (host) {
		dest->host = strdup(host);
		if (!dest->host) {
			free(dest);
			return NULL;
		}
	} else {
		dest->addr = *addr;
	}
	dest->proto = proto;
	learn->dests[learn->ndests++] = dest;
	return dest;
}

static void port_set(uint64_t *ports, unsigned int port)
{
	ports[port / 64] |= 1ULL << (port % 64);
}

static bool port_has(const uint64_t *ports, unsigned int port)
{
	return ports[port / 64] & (1ULL << (port % 64));
}

/* A connect or sendmsg: to its name when a look-up explains the address, else the address. */
static int learn_inet(struct learn *learn, const cJSON *line, const char *event, const char *op)
{
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(line, "dst_port");
	const char *ip = json_str(line, "dst_ip"), *protocol = json_str(line, "protocol");
	char host[256], what[128];
	struct learn_dest *dest;
	struct in6_addr addr;
	unsigned int prefixlen, proto;

	if (!ip || !cJSON_IsNumber(port) || policy_parse_cidr(ip, &addr, &prefixlen) < 0 ||
	    prefixlen != 128)
		return learn_note(learn, "connect or sendmsg lines without an address");
	proto = protocol && strcmp(protocol, "tcp") == 0   ? PROTO_TCP
		: protocol && strcmp(protocol, "udp") == 0 ? PROTO_UDP
							   : 0;
	if (!proto || !(port->valuedouble >= 1 && port->valuedouble <= 65535)) {
		snprintf(what, sizeof(what), "%s %s to port %g over %s", event, op,
			 port->valuedouble, protocol ? protocol : "?");
		return learn_note(learn, what);
	}
	dest = learn_dest_get(
		learn,
		learn_host_name(json_str(line, "dst_name"), host, sizeof(host)) ? host : NULL,
		&addr, proto);
	if (!dest)
		return -ENOMEM;
	port_set(dest->ports, (unsigned int)port->valuedouble);
	return 0;
}

/* A look-up the proxy refused (or, audit-only, would have): its name must be allowed. */
static int learn_dns(struct learn *learn, const cJSON *line, const char *event)
{
	const char *reason = json_str(line, "reason"), *qtype = json_str(line, "qtype");
	char host[256], what[128];

	if (reason && strcmp(reason, "name") == 0 &&
	    learn_host_name(json_str(line, "qname"), host, sizeof(host)))
		return learn_set_add(&learn->looked_up, &learn->nlooked, &learn->caplooked, host);
	if (reason && strcmp(reason, "qtype") == 0)
		snprintf(what, sizeof(what), "%s dns look-ups of type %s", event,
			 qtype ? qtype : "?");
	else
		snprintf(what, sizeof(what), "%s dns messages (reason %s)", event,
			 reason ? reason : "?");
	return learn_note(learn, what);
}

int learn_line(struct learn *learn, const char *text, size_t len)
{
	_cleanup_(cJSON_Deletep) cJSON *line = cJSON_ParseWithLength(text, len);
	const char *event = line ? json_str(line, "event") : NULL, *sandbox, *op, *path;
	char what[128], host[256];

	if (!cJSON_IsObject(line) || !event)
		return -EBADMSG;
	sandbox = json_str(line, "sandbox");
	if (learn->options.sandbox && (!sandbox || strcmp(sandbox, learn->options.sandbox) != 0))
		return 0;
	learn->nlines++;
	/* allow lines lost matter as much: the policy is made from them too. */
	if (strcmp(event, "events_lost") == 0) {
		learn->lost_lines += json_u64(line, "count") + json_u64(line, "would_deny") +
				     json_u64(line, "allow");
		return 1;
	}
	if (strcmp(event, "sandbox_exit") == 0) {
		unsigned long long failed = json_u64(line, "log_failed");

		learn->lost_exit += json_u64(line, "lost") + json_u64(line, "would_deny_lost") +
				    json_u64(line, "allowed_lost");
		/* log_failed counts lines of any kind; unwritten only the refusals among them. */
		learn->unwritten += failed ? failed : json_u64(line, "unwritten");
		return 1;
	}
	if (strcmp(event, "dns_allow") == 0) {
		if (learn_host_name(json_str(line, "qname"), host, sizeof(host)))
			return learn_set_add(&learn->looked_up, &learn->nlooked, &learn->caplooked,
					     host) < 0
				       ? -ENOMEM
				       : 1;
		return 1;
	}
	if (strcmp(event, "deny") != 0 && strcmp(event, "would_deny") != 0 &&
	    strcmp(event, "allow") != 0)
		return 1;
	op = json_str(line, "op");
	if (!op)
		op = "?";
	if (strcmp(op, "connect") == 0 || strcmp(op, "sendmsg") == 0)
		return learn_inet(learn, line, event, op) < 0 ? -ENOMEM : 1;
	if (strcmp(op, "dns") == 0)
		return learn_dns(learn, line, event) < 0 ? -ENOMEM : 1;
	path = json_str(line, "dst_path");
	if ((strcmp(op, "connect_unix") == 0 || strcmp(op, "sendmsg_unix") == 0) && path) {
		/*
		 * A policy names an absolute path or an abstract "@name" without NULs: a
		 * relative path (resolved against a working directory) or an abstract name with
		 * a NUL in it (cut short by the JSON parser) would allow something else.
		 */
		if ((path[0] != '/' && path[0] != '@') || path[1] == '\0' ||
		    (path[0] == '@' && memmem(text, len, "\\u0000", 6)))
			snprintf(what, sizeof(what),
				 "%s %s to a relative path or an abstract name with a NUL", event,
				 op);
		else
			return learn_set_add(&learn->unix_paths, &learn->nunix, &learn->capunix,
					     path) < 0
				       ? -ENOMEM
				       : 1;
		return learn_note(learn, what) < 0 ? -ENOMEM : 1;
	}
	/* Socket kinds, socket options, namespaces...: refused under every policy. */
	snprintf(what, sizeof(what), "%s %s", event, op);
	return learn_note(learn, what) < 0 ? -ENOMEM : 1;
}

/* The parent domain that "*.parent" would cover, or NULL when too short to be one. */
static const char *learn_parent(const char *host)
{
	const char *dot = strchr(host, '.');

	/* "*.com" would allow a whole top-level domain: at least two labels stay. */
	return dot && strchr(dot + 1, '.') ? dot + 1 : NULL;
}

/*
 * --wildcards: names that share a parent domain with another learned name become
 * "*.parent" (which covers every name below it, not the parent itself).
 */
static int learn_wildcards(struct learn *learn)
{
	char **wild = NULL;
	size_t nwild = 0, capwild = 0;
	int r = 0;

	for (size_t i = 0; i < learn->ndests && r == 0; i++) {
		const char *parent =
			learn->dests[i]->host ? learn_parent(learn->dests[i]->host) : NULL;

		if (!parent)
			continue;
		for (size_t k = 0; k < learn->ndests; k++) {
			const char *other = learn->dests[k]->host;

			if (other && strcmp(other, learn->dests[i]->host) != 0 &&
			    learn_parent(other) && strcmp(learn_parent(other), parent) == 0) {
				r = learn_set_add(&wild, &nwild, &capwild, parent);
				break;
			}
		}
	}
	for (size_t i = 0; i < learn->ndests && r == 0; i++) {
		struct learn_dest *dest = learn->dests[i];
		const char *parent = dest->host ? learn_parent(dest->host) : NULL;
		char *pattern;

		if (!parent || !learn_set_has(wild, nwild, parent))
			continue;
		if (asprintf(&pattern, "*.%s", parent) < 0) {
			r = -ENOMEM;
			break;
		}
		free(dest->host);
		dest->host = pattern;
	}
	for (size_t i = 0; i < nwild; i++)
		free(wild[i]);
	free(wild);
	return r;
}

/* Folds destinations that became the same (wildcards) into one, ports unioned. */
static void learn_merge_same(struct learn *learn)
{
	for (size_t i = 0; i < learn->ndests; i++)
		for (size_t k = i + 1; k < learn->ndests;) {
			struct learn_dest *a = learn->dests[i], *b = learn->dests[k];
			bool same = a->proto == b->proto &&
				    (a->host ? b->host && strcmp(a->host, b->host) == 0
					     : !b->host && memcmp(&a->addr, &b->addr,
								  sizeof(a->addr)) == 0);

			if (!same) {
				k++;
				continue;
			}
			for (size_t w = 0; w < LEARN_PORT_WORDS; w++)
				a->ports[w] |= b->ports[w];
			free(b->host);
			free(b);
			memmove(&learn->dests[k], &learn->dests[k + 1],
				(learn->ndests - k - 1) * sizeof(*learn->dests));
			learn->ndests--;
		}
}

/* A destination reached over TCP and UDP on the same ports is one "any" entry. */
static void learn_merge_protocols(struct learn *learn)
{
	for (size_t i = 0; i < learn->ndests; i++)
		for (size_t k = i + 1; k < learn->ndests; k++) {
			struct learn_dest *a = learn->dests[i], *b = learn->dests[k];

			if (a->proto == PROTO_ANY || b->proto == PROTO_ANY ||
			    a->proto == b->proto ||
			    (a->host ? !b->host || strcmp(a->host, b->host) != 0
				     : b->host || memcmp(&a->addr, &b->addr, sizeof(a->addr))) ||
			    memcmp(a->ports, b->ports, sizeof(a->ports)) != 0)
				continue;
			a->proto = PROTO_ANY;
			free(b->host);
			free(b);
			memmove(&learn->dests[k], &learn->dests[k + 1],
				(learn->ndests - k - 1) * sizeof(*learn->dests));
			learn->ndests--;
			break;
		}
}

/* Names first, by name, then addresses (IPv4 before IPv6, by value); tcp, udp, any. */
static int learn_dest_cmp(const void *pa, const void *pb)
{
	const struct learn_dest *a = *(struct learn_dest *const *)pa;
	const struct learn_dest *b = *(struct learn_dest *const *)pb;
	int c;

	if (!a->host != !b->host)
		return a->host ? -1 : 1;
	if (a->host)
		c = strcmp(a->host, b->host);
	else if (policy_addr_is_v4(&a->addr) != policy_addr_is_v4(&b->addr))
		c = policy_addr_is_v4(&a->addr) ? -1 : 1;
	else
		c = memcmp(&a->addr, &b->addr, sizeof(a->addr));
	return c ? c : (int)a->proto - (int)b->proto;
}

static int learn_str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The ports as "ports": numbers and "lo-hi" ranges. Beyond MAX_PORT_RANGES ranges, the two
 * nearest are joined (the smallest gap first) until they fit: the policy then allows a few
 * ports the job did not use, which the notes say.
 */
static cJSON *learn_ports_json(const uint64_t *ports, bool *ret_widened)
{
	struct port_range ranges[MAX_PORT_RANGES + 1];
	size_t n = 0;
	cJSON *array = cJSON_CreateArray();

	if (!array)
		return NULL;
	*ret_widened = false;
	for (unsigned int port = 1; port <= 65535; port++) {
		if (!port_has(ports, port))
			continue;
		if (n && ranges[n - 1].hi + 1u == port) {
			ranges[n - 1].hi = (__u16)port;
			continue;
		}
		ranges[n++] = (struct port_range){ .lo = (__u16)port, .hi = (__u16)port };
		if (n > MAX_PORT_RANGES) {
			size_t best = 0;

			for (size_t i = 1; i + 1 < n; i++)
				if (ranges[i + 1].lo - ranges[i].hi <
				    ranges[best + 1].lo - ranges[best].hi)
					best = i;
			ranges[best].hi = ranges[best + 1].hi;
			memmove(&ranges[best + 1], &ranges[best + 2],
				(n - best - 2) * sizeof(*ranges));
			n--;
			*ret_widened = true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		cJSON *item;
		char text[16];

		if (ranges[i].lo == ranges[i].hi) {
			item = cJSON_CreateNumber(ranges[i].lo);
		} else {
			snprintf(text, sizeof(text), "%u-%u", ranges[i].lo, ranges[i].hi);
			item = cJSON_CreateString(text);
		}
		if (!item || !cJSON_AddItemToArray(array, item)) {
			cJSON_Delete(item);
			cJSON_Delete(array);
			return NULL;
		}
	}
	return array;
}

static cJSON *learn_entry_json(const struct learn_dest *dest, bool *ret_widened)
{
	cJSON *entry = cJSON_CreateObject(), *ports;
	char addr[INET6_ADDRSTRLEN], cidr[INET6_ADDRSTRLEN + 8];
	const char *protocol = dest->proto == PROTO_ANY	  ? "any"
			       : dest->proto == PROTO_UDP ? "udp"
							  : "tcp";

	if (!entry)
		return NULL;
	if (dest->host) {
		if (!cJSON_AddStringToObject(entry, "host", dest->host))
			goto fail;
	} else {
		policy_format_addr(&dest->addr, addr, sizeof(addr));
		/* One address: /32 or /128, the narrowest the policy can say. */
		snprintf(cidr, sizeof(cidr), "%s/%d", addr,
			 policy_addr_is_v4(&dest->addr) ? 32 : 128);
		if (!cJSON_AddStringToObject(entry, "cidr", cidr))
			goto fail;
	}
	ports = learn_ports_json(dest->ports, ret_widened);
	if (!ports || !cJSON_AddItemToObject(entry, "ports", ports)) {
		cJSON_Delete(ports);
		goto fail;
	}
	if (!cJSON_AddStringToObject(entry, "protocol", protocol))
		goto fail;
	return entry;
fail:
	cJSON_Delete(entry);
	return NULL;
}

/* Whether a learned host entry lets the job look `name` up. */
static bool learn_covers(const struct learn *learn, const char *name)
{
	for (size_t i = 0; i < learn->ndests; i++)
		if (learn->dests[i]->host && dns_name_matches(learn->dests[i]->host, name))
			return true;
	return false;
}

static int learn_notes_text(const struct learn *learn, bool widened, char **ret_notes)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < learn->nnotes; i++)
		fprintf(f, "%zu %s: no policy allows %s, left out\n", learn->notes[i].count,
			learn->notes[i].what, learn->notes[i].count == 1 ? "it" : "them");
	for (size_t i = 0; i < learn->nlooked; i++)
		if (!learn_covers(learn, learn->looked_up[i]))
			fprintf(f,
				"%s was looked up but never connected to: left out (its look-ups "
				"will be refused)\n",
				learn->looked_up[i]);
	if (widened)
		fprintf(f,
			"more than %d port ranges for one destination: the nearest were "
			"joined, allowing ports the job did not use\n",
			MAX_PORT_RANGES);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret_notes = text;
	return 0;
}

/*
 * The policy as text a person edits: one key per line, one allow entry per line (each as
 * compact JSON, which escapes what needs it).
 */
static int learn_print(const cJSON *policy, char **ret_text)
{
	const char *keys[] = { "name", "description", "allow", "unix" };
	char *text = NULL;
	size_t len = 0;
	bool first = true, failed = false;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fputs("{", f);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(policy, keys[k]), *item;
		bool first_item = true;
		char *json;

		if (!value)
			continue;
		fprintf(f, "%s\n  \"%s\": ", first ? "" : ",", keys[k]);
		first = false;
		if (!cJSON_IsArray(value) || cJSON_GetArraySize(value) == 0) {
			json = cJSON_PrintUnformatted(value);
			failed |= !json;
			fputs(json ? json : "", f);
			free(json);
			continue;
		}
		fputs("[", f);
		cJSON_ArrayForEach (item, value) {
			json = cJSON_PrintUnformatted(item);
			failed |= !json;
			fprintf(f, "%s\n    %s", first_item ? "" : ",", json ? json : "");
			free(json);
			first_item = false;
		}
		fputs("\n  ]", f);
	}
	fputs("\n}\n", f);
	if (fclose(f) != 0 || failed) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	return 0;
}

int learn_policy(struct learn *learn, char **ret_policy, char **ret_notes)
{
	_cleanup_(cJSON_Deletep) cJSON *policy = cJSON_CreateObject();
	cJSON *allow, *unix_paths;
	bool widened = false;
	int r;

	*ret_policy = NULL;
	*ret_notes = NULL;
	if (!policy)
		return -ENOMEM;
	if (learn->options.wildcards) {
		r = learn_wildcards(learn);
		if (r < 0)
			return r;
		learn_merge_same(learn);
	}
	learn_merge_protocols(learn);
	if (learn->ndests)
		qsort(learn->dests, learn->ndests, sizeof(*learn->dests), learn_dest_cmp);
	if (learn->nunix)
		qsort(learn->unix_paths, learn->nunix, sizeof(*learn->unix_paths), learn_str_cmp);
	if (!cJSON_AddStringToObject(policy, "name", learn->options.name) ||
	    !cJSON_AddStringToObject(policy, "description",
				     "learned by launch learn from an audit log"))
		return -ENOMEM;
	allow = cJSON_AddArrayToObject(policy, "allow");
	if (!allow)
		return -ENOMEM;
	for (size_t i = 0; i < learn->ndests; i++) {
		bool entry_widened;
		cJSON *entry = learn_entry_json(learn->dests[i], &entry_widened);

		if (!entry || !cJSON_AddItemToArray(allow, entry)) {
			cJSON_Delete(entry);
			return -ENOMEM;
		}
		widened |= entry_widened;
	}
	if (learn->nunix) {
		unix_paths = cJSON_AddArrayToObject(policy, "unix");
		if (!unix_paths)
			return -ENOMEM;
		for (size_t i = 0; i < learn->nunix; i++) {
			cJSON *item = cJSON_CreateString(learn->unix_paths[i]);

			if (!item || !cJSON_AddItemToArray(unix_paths, item)) {
				cJSON_Delete(item);
				return -ENOMEM;
			}
		}
	}
	r = learn_print(policy, ret_policy);
	if (r < 0)
		return r;
	r = learn_notes_text(learn, widened, ret_notes);
	if (r < 0) {
		free(*ret_policy);
		*ret_policy = NULL;
	}
	return r;
}
