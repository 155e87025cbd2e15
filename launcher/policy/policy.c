// SPDX-License-Identifier: LGPL-2.1-or-later
/* Policy files: strict JSON parsing and validation into allow entries. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>

#include "policy.h"
#include "policy_internal.h"

/* A policy is a list of hosts; anything near this size is a mistake (or /dev/zero). */
#define POLICY_MAX_FILE_BYTES (16u * 1024 * 1024)
#define POLICY_NAME_MAX_LEN   64
#define DNS_NAME_MAX_LEN      253
#define DNS_LABEL_MAX_LEN     63

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete)

/* Writes "PATH: KEY: message" (or "PATH: message" without a key) and returns -EINVAL. */
__attribute__((format(printf, 3, 4))) int policy_fail(const struct parse_ctx *ctx, const char *key,
						      const char *fmt, ...)
{
	char msg[POLICY_ERR_LEN];
	va_list ap;

	if (!ctx->errbuf || ctx->errlen == 0)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key && *key)
		snprintf(ctx->errbuf, ctx->errlen, "%s: %s: %s", ctx->path, key, msg);
	else
		snprintf(ctx->errbuf, ctx->errlen, "%s: %s", ctx->path, msg);
	return -EINVAL;
}

/*
 * Copies a user-supplied string for a message: control and non-ASCII bytes become '?' so
 * the message stays one printable line, and long values are cut.
 */
const char *policy_shown(const char *s, char *buf, size_t len)
{
	size_t i, n = strlen(s);
	bool cut = n > len - 1;

	if (cut)
		n = len - 4;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	if (cut) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

const char *policy_json_type(const cJSON *item)
{
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	return "an invalid value";
}

/*
 * Refuses keys outside `known` and keys given twice: cJSON keeps both copies of a duplicate
 * and lookups return the first, so a second "ports" would otherwise be ignored silently.
 */
int policy_check_keys(const struct parse_ctx *ctx, const cJSON *obj, const char *where,
		      const char *const *known, size_t nknown)
{
	bool seen[16] = { false };
	const cJSON *child;
	char vbuf[ERR_VALUE_SHOWN_LEN];

	if (nknown > ARRAY_SIZE(seen))
		return -EINVAL;
	cJSON_ArrayForEach (child, obj) {
		size_t i;

		for (i = 0; i < nknown; i++)
			if (strcmp(child->string, known[i]) == 0)
				break;
		if (i == nknown)
			return policy_fail(ctx, where, "unknown key \"%s\"",
					   policy_shown(child->string, vbuf, sizeof(vbuf)));
		if (seen[i])
			return policy_fail(ctx, where, "duplicate key \"%s\"", known[i]);
		seen[i] = true;
	}
	return 0;
}

bool policy_addr_is_v4(const struct in6_addr *addr)
{
	return IN6_IS_ADDR_V4MAPPED(addr);
}

const char *policy_format_addr(const struct in6_addr *addr, char *buf, size_t len)
{
	const char *text;

	if (policy_addr_is_v4(addr))
		text = inet_ntop(AF_INET, &addr->s6_addr[12], buf, len);
	else
		text = inet_ntop(AF_INET6, addr, buf, len);
	return text ? text : "?";
}

/* Parses 1-3 decimal digits (no sign, no blanks) no larger than max. */
static int parse_prefixlen(const char *text, unsigned int max, unsigned int *ret)
{
	unsigned int value = 0;
	size_t n = strlen(text);

	if (n == 0 || n > 3)
		return -EINVAL;
	for (; *text; text++) {
		if (*text < '0' || *text > '9')
			return -EINVAL;
		value = value * 10 + (unsigned int)(*text - '0');
	}
	if (value > max)
		return -EINVAL;
	*ret = value;
	return 0;
}

static bool host_bits_clear(const struct in6_addr *addr, unsigned int prefixlen)
{
	unsigned int i;

	for (i = prefixlen; i < 128; i++)
		if (addr->s6_addr[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

static void mask_addr(struct in6_addr *addr, unsigned int prefixlen)
{
	unsigned int i;

	for (i = prefixlen; i < 128; i++)
		addr->s6_addr[i / 8] &= (uint8_t) ~(0x80 >> (i % 8));
}

enum cidr_error {
	CIDR_OK,
	CIDR_BAD_ADDR,
	CIDR_BAD_PREFIXLEN,
	CIDR_HOST_BITS,
};

/*
 * On CIDR_HOST_BITS the address and prefix length are still returned, unmasked, so the
 * caller can suggest the prefix that was probably meant.
 */
static enum cidr_error cidr_parse(const char *text, struct in6_addr *ret_addr,
				  unsigned int *ret_prefixlen)
{
	char buf[INET6_ADDRSTRLEN + 5];
	struct in6_addr addr = { 0 };
	unsigned int prefixlen;
	char *slash;
	bool v6;

	if (strlen(text) >= sizeof(buf))
		return CIDR_BAD_ADDR;
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	v6 = strchr(buf, ':') != NULL;
	if (v6) {
		if (inet_pton(AF_INET6, buf, &addr) != 1)
			return CIDR_BAD_ADDR;
	} else {
		/* Mapped form: the kernel side sees IPv4 destinations as ::ffff:a.b.c.d. */
		addr.s6_addr[10] = 0xff;
		addr.s6_addr[11] = 0xff;
		if (inet_pton(AF_INET, buf, &addr.s6_addr[12]) != 1)
			return CIDR_BAD_ADDR;
	}
	if (!slash)
		prefixlen = 128;
	else if (parse_prefixlen(slash + 1, v6 ? 128 : 32, &prefixlen) < 0)
		return CIDR_BAD_PREFIXLEN;
	else if (!v6)
		prefixlen += 96;
	*ret_addr = addr;
	*ret_prefixlen = prefixlen;
	return host_bits_clear(&addr, prefixlen) ? CIDR_OK : CIDR_HOST_BITS;
}

int policy_parse_cidr(const char *text, struct in6_addr *ret_addr, unsigned int *ret_prefixlen)
{
	struct in6_addr addr;
	unsigned int prefixlen;

	if (!text || cidr_parse(text, &addr, &prefixlen) != CIDR_OK)
		return -EINVAL;
	*ret_addr = addr;
	*ret_prefixlen = prefixlen;
	return 0;
}

/* Parses 1-5 decimal digits (no sign, no blanks) into a port 1-65535. */
static int parse_port_number(const char *text, size_t len, unsigned int *ret)
{
	unsigned int value = 0;
	size_t i;

	if (len == 0 || len > 5)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -EINVAL;
		value = value * 10 + (unsigned int)(text[i] - '0');
	}
	if (value < 1 || value > 65535)
		return -EINVAL;
	*ret = value;
	return 0;
}

/* The caller fills in ret_range->protos, which is left 0 here. */
int policy_parse_port_range(const char *text, struct port_range *ret_range)
{
	unsigned int lo, hi;
	const char *dash;

	if (!text)
		return -EINVAL;
	dash = strchr(text, '-');
	if (!dash) {
		if (parse_port_number(text, strlen(text), &lo) < 0)
			return -EINVAL;
		hi = lo;
	} else {
		if (parse_port_number(text, (size_t)(dash - text), &lo) < 0 ||
		    parse_port_number(dash + 1, strlen(dash + 1), &hi) < 0 || lo > hi)
			return -EINVAL;
	}
	*ret_range = (struct port_range){ .lo = (__u16)lo, .hi = (__u16)hi, .protos = 0 };
	return 0;
}

int policy_parse_ports(const struct parse_ctx *ctx, const cJSON *ports, const char *key,
		       struct policy_entry *entry)
{
	char ekey[KEY_PATH_LEN * 2], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	unsigned int n = 0;
	int count;

	if (!ports) {
		entry->ports[0] = (struct port_range){ .lo = 0, .hi = 65535 };
		entry->nports = 1;
		return 0;
	}
	if (!cJSON_IsArray(ports))
		return policy_fail(ctx, key, "must be an array, not %s", policy_json_type(ports));
	count = cJSON_GetArraySize(ports);
	if (count == 0)
		return policy_fail(ctx, key,
				   "must not be empty (omit \"ports\" to allow every port)");
	if (count > MAX_PORT_RANGES)
		return policy_fail(ctx, key, "%d elements, at most %d (MAX_PORT_RANGES)", count,
				   MAX_PORT_RANGES);

	cJSON_ArrayForEach (item, ports) {
		struct port_range *range = &entry->ports[n];

		snprintf(ekey, sizeof(ekey), "%s[%u]", key, n);
		if (cJSON_IsNumber(item)) {
			double v = item->valuedouble;

			/*
			 * cJSON keeps numbers as doubles: 443.5 and 1e9 must not truncate. The
			 * range test comes first (NaN fails it) so the cast is defined; no
			 * floor(), which would pull in libm for this one line.
			 */
			if (!(v >= 1 && v <= 65535) || v != (double)(unsigned int)v)
				return policy_fail(ctx, ekey, "%g is not a port (1-65535)", v);
			range->lo = range->hi = (__u16)v;
		} else if (cJSON_IsString(item)) {
			if (policy_parse_port_range(item->valuestring, range) < 0)
				return policy_fail(
					ctx, ekey,
					"\"%s\" is not a port or a range \"lo-hi\" "
					"(1-65535, lo <= hi)",
					policy_shown(item->valuestring, vbuf, sizeof(vbuf)));
		} else {
			return policy_fail(ctx, ekey,
					   "must be a port number or a \"lo-hi\" string, not %s",
					   policy_json_type(item));
		}
		n++;
	}
	entry->nports = n;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ldh(char c)
{
	return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-';
}

/*
 * Checks a lower-case DNS name without trailing dot: labels of 1-63 letters, digits and
 * hyphens, no hyphen at either end of a label (RFC 1123), and a last label that is not
 * all digits, since no top-level domain is and getaddrinfo would read "10.1" as 10.0.0.1.
 */
const char *policy_host_problem(const char *name)
{
	const char *label = name, *p;
	bool all_digits = true;

	if (*name == '\0')
		return "is empty";
	if (strlen(name) > DNS_NAME_MAX_LEN)
		return "is longer than 253 characters";
	for (p = name;; p++) {
		if (*p == '.' || *p == '\0') {
			size_t len = (size_t)(p - label);

			if (len == 0)
				return "has an empty label";
			if (len > DNS_LABEL_MAX_LEN)
				return "has a label longer than 63 characters";
			if (label[0] == '-' || p[-1] == '-')
				return "has a label that starts or ends with '-'";
			if (*p == '\0')
				break;
			label = p + 1;
			all_digits = true;
			continue;
		}
		if (*p == '*')
			return "may only use '*' as a whole leading label (\"*.example.com\")";
		if (!is_ldh(*p))
			return "may contain only letters, digits, '-' and '.'";
		if (!is_digit(*p))
			all_digits = false;
	}
	if (all_digits)
		return "looks like an IP address; use \"cidr\" for addresses";
	return NULL;
}

static int parse_host(const struct parse_ctx *ctx, const cJSON *item, const char *key,
		      char **ret_host)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	_cleanup_free_ char *host = NULL;
	const char *problem, *name;
	struct in6_addr addr6;
	struct in_addr addr4;
	size_t len, i;

	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	/* inet_aton too: it is what getaddrinfo uses, and it reads "0x7f000001" as 127.0.0.1. */
	if (inet_pton(AF_INET6, item->valuestring, &addr6) == 1 ||
	    inet_aton(item->valuestring, &addr4) != 0)
		return policy_fail(ctx, key, "\"%s\" is an IP address; use \"cidr\" for addresses",
				   vbuf);
	len = strlen(item->valuestring);
	if (len > DNS_NAME_MAX_LEN + 1)
		return policy_fail(ctx, key, "\"%s\" is longer than 253 characters", vbuf);
	host = strdup(item->valuestring);
	if (!host)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		if (host[i] >= 'A' && host[i] <= 'Z')
			host[i] = (char)(host[i] - 'A' + 'a');
	/* "example.com." is the same name, fully qualified. */
	if (len > 1 && host[len - 1] == '.')
		host[--len] = '\0';
	if (len > DNS_NAME_MAX_LEN)
		return policy_fail(ctx, key, "\"%s\" is longer than 253 characters", vbuf);
	name = host;
	if (strncmp(host, "*.", 2) == 0)
		name = host + 2;
	else if (strcmp(host, "*") == 0)
		return policy_fail(ctx, key,
				   "\"*\" alone is not allowed; name a domain "
				   "(\"*.example.com\")");
	problem = policy_host_problem(name);
	if (problem)
		return policy_fail(ctx, key, "\"%s\" is not a valid host name: it %s", vbuf,
				   problem);
	*ret_host = TAKE_PTR(host);
	return 0;
}

static int parse_cidr(const struct parse_ctx *ctx, const cJSON *item, const char *key,
		      struct policy_entry *entry)
{
	char vbuf[ERR_VALUE_SHOWN_LEN], abuf[INET6_ADDRSTRLEN];
	struct in6_addr addr;
	unsigned int prefixlen = 0;

	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	switch (cidr_parse(item->valuestring, &addr, &prefixlen)) {
	case CIDR_OK:
		break;
	case CIDR_BAD_ADDR:
		return policy_fail(ctx, key,
				   "\"%s\" is not an IPv4 or IPv6 address (\"192.0.2.0/24\", "
				   "\"2001:db8::/32\")",
				   vbuf);
	case CIDR_BAD_PREFIXLEN:
		return policy_fail(ctx, key,
				   "\"%s\" has a bad prefix length (0-32 for IPv4, 0-128 for IPv6)",
				   vbuf);
	case CIDR_HOST_BITS: {
		/* Suggest the prefix in the notation of the file: "/8" for IPv4, not "/104". */
		bool v6 = strchr(item->valuestring, ':') != NULL;
		unsigned int user_len = v6 ? prefixlen : prefixlen - 96;

		mask_addr(&addr, prefixlen);
		if (v6)
			inet_ntop(AF_INET6, &addr, abuf, sizeof(abuf));
		else
			policy_format_addr(&addr, abuf, sizeof(abuf));
		return policy_fail(ctx, key,
				   "\"%s\" has host bits set beyond /%u (did you mean %s/%u?)",
				   vbuf, user_len, abuf, user_len);
	}
	}
	entry->addr = addr;
	entry->prefixlen = prefixlen;
	return 0;
}

int policy_parse_protocol(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			  unsigned int *ret_protos)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];

	if (!item) {
		*ret_protos = PROTO_TCP;
		return 0;
	}
	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	if (strcmp(item->valuestring, "tcp") == 0)
		*ret_protos = PROTO_TCP;
	else if (strcmp(item->valuestring, "udp") == 0)
		*ret_protos = PROTO_UDP;
	else if (strcmp(item->valuestring, "any") == 0)
		*ret_protos = PROTO_ANY;
	else
		return policy_fail(ctx, key, "\"%s\" is not \"tcp\", \"udp\" or \"any\"",
				   policy_shown(item->valuestring, vbuf, sizeof(vbuf)));
	return 0;
}

/*
 * "sni": on by default for a host rule whose ports are all 443 over TCP; given, a boolean, on
 * a host rule (a cidr rule has no name to check) over TCP, with its ports named, at most
 * SNI_MAX_PORTS of them (each is a key of the kernel's SNI map per address).
 */
static int parse_sni(const struct parse_ctx *ctx, const cJSON *item, const char *key, bool host,
		     bool ports_given, struct policy_entry *entry)
{
	unsigned int nports = 0;
	bool all_443 = ports_given;

	for (unsigned int i = 0; i < entry->nports; i++) {
		nports += (unsigned int)entry->ports[i].hi - entry->ports[i].lo + 1;
		all_443 &= entry->ports[i].lo == 443 && entry->ports[i].hi == 443;
	}
	if (!item) {
		entry->sni = host && all_443 && (entry->protos & PROTO_TCP);
		return 0;
	}
	if (!cJSON_IsBool(item))
		return policy_fail(ctx, key, "must be true or false, not %s",
				   policy_json_type(item));
	entry->sni = cJSON_IsTrue(item);
	if (!entry->sni)
		return 0;
	if (!host)
		return policy_fail(ctx, key,
				   "true needs a \"host\" rule: a \"cidr\" rule has no name to "
				   "check");
	if (!(entry->protos & PROTO_TCP))
		return policy_fail(ctx, key, "true needs TCP: TLS runs over \"tcp\" (or \"any\")");
	if (!ports_given)
		return policy_fail(ctx, key, "true needs \"ports\" (at most %d ports)",
				   SNI_MAX_PORTS);
	if (nports > SNI_MAX_PORTS)
		return policy_fail(ctx, key, "true allows at most %d ports, and \"ports\" has %u",
				   SNI_MAX_PORTS, nports);
	return 0;
}

static int parse_entry(const struct parse_ctx *ctx, const cJSON *obj, size_t index,
		       struct policy_entry *entry)
{
	static const char *const known[] = { "host", "cidr", "ports", "protocol", "sni", "http" };
	char key[KEY_PATH_LEN / 2], subkey[KEY_PATH_LEN + 16];
	const cJSON *host, *cidr;
	int r;

	snprintf(key, sizeof(key), "allow[%zu]", index);
	if (!cJSON_IsObject(obj))
		return policy_fail(ctx, key, "must be an object, not %s", policy_json_type(obj));
	r = policy_check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	host = cJSON_GetObjectItemCaseSensitive(obj, "host");
	cidr = cJSON_GetObjectItemCaseSensitive(obj, "cidr");
	if (!host == !cidr)
		return policy_fail(ctx, key, "needs exactly one of \"host\" or \"cidr\"");

	snprintf(subkey, sizeof(subkey), "%s.protocol", key);
	r = policy_parse_protocol(ctx, cJSON_GetObjectItemCaseSensitive(obj, "protocol"), subkey,
				  &entry->protos);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.ports", key);
	r = policy_parse_ports(ctx, cJSON_GetObjectItemCaseSensitive(obj, "ports"), subkey, entry);
	if (r < 0)
		return r;
	/* Each range carries the entry's protocols too, so a range read alone is complete. */
	for (unsigned int i = 0; i < entry->nports; i++)
		entry->ports[i].protos = entry->protos;
	snprintf(subkey, sizeof(subkey), "%s.sni", key);
	r = parse_sni(ctx, cJSON_GetObjectItemCaseSensitive(obj, "sni"), subkey, host != NULL,
		      cJSON_GetObjectItemCaseSensitive(obj, "ports") != NULL, entry);
	if (r < 0)
		return r;
	if (host) {
		snprintf(subkey, sizeof(subkey), "%s.host", key);
		r = parse_host(ctx, host, subkey, &entry->host);
	} else {
		snprintf(subkey, sizeof(subkey), "%s.cidr", key);
		r = parse_cidr(ctx, cidr, subkey, entry);
	}
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.http", key);
	return policy_parse_http(ctx, cJSON_GetObjectItemCaseSensitive(obj, "http"), subkey, entry);
}

static int parse_allow(const struct parse_ctx *ctx, const cJSON *allow, struct policy *policy)
{
	const cJSON *item;
	size_t i = 0;
	int count, r;

	if (!allow)
		return policy_fail(ctx, "allow", "missing (use [] to deny every destination)");
	if (!cJSON_IsArray(allow))
		return policy_fail(ctx, "allow", "must be an array, not %s",
				   policy_json_type(allow));
	count = cJSON_GetArraySize(allow);
	if (count > MAX_ALLOW_ENTRIES)
		return policy_fail(ctx, "allow", "%d entries, at most %d (MAX_ALLOW_ENTRIES)",
				   count, MAX_ALLOW_ENTRIES);
	if (count == 0)
		return 0;
	policy->entries = calloc((size_t)count, sizeof(*policy->entries));
	if (!policy->entries)
		return -ENOMEM;
	cJSON_ArrayForEach (item, allow) {
		/* Counted before parsing so policy_free releases a half-parsed entry's host. */
		policy->nentries = i + 1;
		r = parse_entry(ctx, item, i, &policy->entries[i]);
		if (r < 0)
			return r;
		i++;
	}
	return 0;
}

static int parse_name(const struct parse_ctx *ctx, const cJSON *name, struct policy *policy)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	const char *p;

	if (!name)
		return policy_fail(ctx, "name", "missing");
	if (!cJSON_IsString(name))
		return policy_fail(ctx, "name", "must be a string, not %s", policy_json_type(name));
	policy_shown(name->valuestring, vbuf, sizeof(vbuf));
	if (name->valuestring[0] == '\0')
		return policy_fail(ctx, "name", "must not be empty");
	if (strlen(name->valuestring) > POLICY_NAME_MAX_LEN)
		return policy_fail(ctx, "name", "\"%s\" is longer than %d characters", vbuf,
				   POLICY_NAME_MAX_LEN);
	for (p = name->valuestring; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || is_digit(*p) ||
		      *p == '.' || *p == '_' || *p == '-'))
			return policy_fail(ctx, "name",
					   "\"%s\" may contain only letters, digits, '.', '_' "
					   "and '-'",
					   vbuf);
	policy->name = strdup(name->valuestring);
	return policy->name ? 0 : -ENOMEM;
}

static unsigned int line_of(const char *text, const char *pos)
{
	unsigned int line = 1;

	for (; text < pos && *text; text++)
		if (*text == '\n')
			line++;
	return line;
}

/*
 * cJSON turns "\u0000" into a NUL inside the string, which would silently cut a name or
 * path short. Run on text cJSON accepted, where a backslash only occurs inside strings.
 */
static const char *find_escaped_nul(const char *json)
{
	const char *p;

	for (p = json; *p; p++) {
		if (*p != '\\')
			continue;
		if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0)
			return p;
		if (p[1] == '\0')
			break;
		p++;
	}
	return NULL;
}

int policy_parse(const char *path, const char *json, struct policy **ret_policy, char *errbuf,
		 size_t errlen)
{
	static const char *const known[] = { "name", "description", "allow",  "unix",
					     "fs",   "limits",	    "listen", "secrets" };
	const struct parse_ctx ctx = { .path = path ? path : "(policy)",
				       .errbuf = errbuf,
				       .errlen = errlen };
	_cleanup_(policy_freep) struct policy *policy = NULL;
	_cleanup_(cJSON_Deletep) cJSON *root = NULL;
	const cJSON *description;
	const char *end = NULL, *nul;
	int r;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!json || !ret_policy)
		return -EINVAL;
	/* The length includes the NUL: cJSON wants to see it to accept the text as complete. */
	root = cJSON_ParseWithLengthOpts(json, strlen(json) + 1, &end, true);
	if (!root)
		return policy_fail(&ctx, NULL, "not valid JSON near line %u",
				   line_of(json, end ? end : json));
	nul = find_escaped_nul(json);
	if (nul)
		return policy_fail(&ctx, NULL, "line %u: \"\\u0000\" in a string is not allowed",
				   line_of(json, nul));
	if (!cJSON_IsObject(root))
		return policy_fail(&ctx, NULL, "top level must be a JSON object, not %s",
				   policy_json_type(root));
	r = policy_check_keys(&ctx, root, NULL, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;

	policy = calloc(1, sizeof(*policy));
	if (!policy)
		return -ENOMEM;
	policy->path = strdup(ctx.path);
	if (!policy->path)
		return -ENOMEM;
	r = parse_name(&ctx, cJSON_GetObjectItemCaseSensitive(root, "name"), policy);
	if (r < 0)
		return r;
	description = cJSON_GetObjectItemCaseSensitive(root, "description");
	if (description) {
		if (!cJSON_IsString(description))
			return policy_fail(&ctx, "description", "must be a string, not %s",
					   policy_json_type(description));
		policy->description = strdup(description->valuestring);
		if (!policy->description)
			return -ENOMEM;
	}
	r = parse_allow(&ctx, cJSON_GetObjectItemCaseSensitive(root, "allow"), policy);
	if (r < 0)
		return r;
	r = policy_check_http_hosts(&ctx, policy);
	if (r < 0)
		return r;
	r = policy_parse_secrets(&ctx, cJSON_GetObjectItemCaseSensitive(root, "secrets"), policy);
	if (r < 0)
		return r;
	r = policy_parse_unix(&ctx, cJSON_GetObjectItemCaseSensitive(root, "unix"), policy);
	if (r < 0)
		return r;
	r = policy_parse_fs(&ctx, cJSON_GetObjectItemCaseSensitive(root, "fs"), policy);
	if (r < 0)
		return r;
	r = policy_parse_limits(&ctx, cJSON_GetObjectItemCaseSensitive(root, "limits"), policy);
	if (r < 0)
		return r;
	r = policy_parse_listen(&ctx, cJSON_GetObjectItemCaseSensitive(root, "listen"), policy);
	if (r < 0)
		return r;
	*ret_policy = TAKE_PTR(policy);
	return 0;
}

/* Reads the whole file; pipes and /dev/stdin work too, which is why there is no mmap. */
static int read_policy_file(const char *path, char **ret_text, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode) && st.st_size > (off_t)POLICY_MAX_FILE_BYTES)
		return -EFBIG;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *bigger;

			cap = cap ? cap * 2 : 16384;
			/* One byte beyond the limit so a file just too large is noticed. */
			if (cap > POLICY_MAX_FILE_BYTES + 2)
				cap = POLICY_MAX_FILE_BYTES + 2;
			bigger = realloc(buf, cap);
			if (!bigger)
				return -ENOMEM;
			buf = bigger;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > POLICY_MAX_FILE_BYTES)
			return -EFBIG;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return -ENOMEM;
	}
	buf[len] = '\0';
	*ret_text = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int policy_load(const char *path, struct policy **ret_policy, char *errbuf, size_t errlen)
{
	const struct parse_ctx ctx = { .path = path ? path : "(null)",
				       .errbuf = errbuf,
				       .errlen = errlen };
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!path || !ret_policy)
		return -EINVAL;
	r = read_policy_file(path, &text, &len);
	if (r == -EFBIG) {
		policy_fail(&ctx, NULL, "larger than %u MiB, refusing to read it",
			    POLICY_MAX_FILE_BYTES / (1024 * 1024));
		return r;
	}
	if (r < 0) {
		policy_fail(&ctx, NULL, "cannot read: %s", strerror(-r));
		return r;
	}
	if (memchr(text, '\0', len))
		return policy_fail(&ctx, NULL, "contains a NUL byte; not a JSON text file");
	r = policy_parse(path, text, ret_policy, errbuf, errlen);
	if (r < 0)
		return r;
	/* The very bytes parsed: the audit log names the policy that was in force. */
	sha256_hex(text, len, (*ret_policy)->sha256);
	return 0;
}

void policy_free(struct policy *policy)
{
	size_t i;

	if (!policy)
		return;
	for (i = 0; i < policy->nentries; i++) {
		free(policy->entries[i].host);
		policy_http_free(policy->entries[i].http);
	}
	free(policy->entries);
	for (i = 0; i < policy->nsecrets; i++)
		policy_secret_clear(&policy->secrets[i]);
	free(policy->secrets);
	for (i = 0; i < policy->nunix; i++)
		free(policy->unix_paths[i]);
	free(policy->unix_paths);
	for (i = 0; i < policy->nfs_write; i++)
		free(policy->fs_write[i]);
	free(policy->fs_write);
	for (i = 0; i < policy->nlisten_unix; i++)
		free(policy->listen_unix[i]);
	free(policy->listen_unix);
	free(policy->description);
	free(policy->name);
	free(policy->path);
	free(policy);
}
