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

/* A policy is a list of hosts; anything near this size is a mistake (or /dev/zero). */
#define POLICY_MAX_FILE_BYTES (16u * 1024 * 1024)
#define POLICY_NAME_MAX_LEN   64
#define DNS_NAME_MAX_LEN      253
#define DNS_LABEL_MAX_LEN     63
/* Bytes of an offending value repeated in a message; the rest is cut to keep one line. */
#define ERR_VALUE_SHOWN_LEN 64
/* Longest JSON path we name in messages: "allow[99999].ports[31]" and friends. */
#define KEY_PATH_LEN 128

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete)

struct parse_ctx {
	const char *path;
	char *errbuf;
	size_t errlen;
};

/* Writes "PATH: KEY: message" (or "PATH: message" without a key) and returns -EINVAL. */
__attribute__((format(printf, 3, 4))) static int parse_fail(const struct parse_ctx *ctx,
							    const char *key, const char *fmt, ...)
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
static const char *shown(const char *s, char *buf, size_t len)
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

static const char *json_type_name(const cJSON *item)
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
static int check_keys(const struct parse_ctx *ctx, const cJSON *obj, const char *where,
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
			return parse_fail(ctx, where, "unknown key \"%s\"",
					  shown(child->string, vbuf, sizeof(vbuf)));
		if (seen[i])
			return parse_fail(ctx, where, "duplicate key \"%s\"", known[i]);
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

static int parse_ports(const struct parse_ctx *ctx, const cJSON *ports, const char *key,
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
		return parse_fail(ctx, key, "must be an array, not %s", json_type_name(ports));
	count = cJSON_GetArraySize(ports);
	if (count == 0)
		return parse_fail(ctx, key,
				  "must not be empty (omit \"ports\" to allow every port)");
	if (count > MAX_PORT_RANGES)
		return parse_fail(ctx, key, "%d elements, at most %d (MAX_PORT_RANGES)", count,
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
				return parse_fail(ctx, ekey, "%g is not a port (1-65535)", v);
			range->lo = range->hi = (__u16)v;
		} else if (cJSON_IsString(item)) {
			if (policy_parse_port_range(item->valuestring, range) < 0)
				return parse_fail(ctx, ekey,
						  "\"%s\" is not a port or a range \"lo-hi\" "
						  "(1-65535, lo <= hi)",
						  shown(item->valuestring, vbuf, sizeof(vbuf)));
		} else {
			return parse_fail(ctx, ekey,
					  "must be a port number or a \"lo-hi\" string, not %s",
					  json_type_name(item));
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
		return parse_fail(ctx, key, "must be a string, not %s", json_type_name(item));
	shown(item->valuestring, vbuf, sizeof(vbuf));
	/* inet_aton too: it is what getaddrinfo uses, and it reads "0x7f000001" as 127.0.0.1. */
	if (inet_pton(AF_INET6, item->valuestring, &addr6) == 1 ||
	    inet_aton(item->valuestring, &addr4) != 0)
		return parse_fail(ctx, key, "\"%s\" is an IP address; use \"cidr\" for addresses",
				  vbuf);
	len = strlen(item->valuestring);
	if (len > DNS_NAME_MAX_LEN + 1)
		return parse_fail(ctx, key, "\"%s\" is longer than 253 characters", vbuf);
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
		return parse_fail(ctx, key, "\"%s\" is longer than 253 characters", vbuf);
	name = host;
	if (strncmp(host, "*.", 2) == 0)
		name = host + 2;
	else if (strcmp(host, "*") == 0)
		return parse_fail(ctx, key,
				  "\"*\" alone is not allowed; name a domain "
				  "(\"*.example.com\")");
	problem = policy_host_problem(name);
	if (problem)
		return parse_fail(ctx, key, "\"%s\" is not a valid host name: it %s", vbuf,
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
		return parse_fail(ctx, key, "must be a string, not %s", json_type_name(item));
	shown(item->valuestring, vbuf, sizeof(vbuf));
	switch (cidr_parse(item->valuestring, &addr, &prefixlen)) {
	case CIDR_OK:
		break;
	case CIDR_BAD_ADDR:
		return parse_fail(ctx, key,
				  "\"%s\" is not an IPv4 or IPv6 address (\"192.0.2.0/24\", "
				  "\"2001:db8::/32\")",
				  vbuf);
	case CIDR_BAD_PREFIXLEN:
		return parse_fail(ctx, key,
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
		return parse_fail(ctx, key,
				  "\"%s\" has host bits set beyond /%u (did you mean %s/%u?)", vbuf,
				  user_len, abuf, user_len);
	}
	}
	entry->addr = addr;
	entry->prefixlen = prefixlen;
	return 0;
}

static int parse_protocol(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			  unsigned int *ret_protos)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];

	if (!item) {
		*ret_protos = PROTO_TCP;
		return 0;
	}
	if (!cJSON_IsString(item))
		return parse_fail(ctx, key, "must be a string, not %s", json_type_name(item));
	if (strcmp(item->valuestring, "tcp") == 0)
		*ret_protos = PROTO_TCP;
	else if (strcmp(item->valuestring, "udp") == 0)
		*ret_protos = PROTO_UDP;
	else if (strcmp(item->valuestring, "any") == 0)
		*ret_protos = PROTO_ANY;
	else
		return parse_fail(ctx, key, "\"%s\" is not \"tcp\", \"udp\" or \"any\"",
				  shown(item->valuestring, vbuf, sizeof(vbuf)));
	return 0;
}

static int parse_entry(const struct parse_ctx *ctx, const cJSON *obj, size_t index,
		       struct policy_entry *entry)
{
	static const char *const known[] = { "host", "cidr", "ports", "protocol" };
	char key[KEY_PATH_LEN / 2], subkey[KEY_PATH_LEN + 16];
	const cJSON *host, *cidr;
	int r;

	snprintf(key, sizeof(key), "allow[%zu]", index);
	if (!cJSON_IsObject(obj))
		return parse_fail(ctx, key, "must be an object, not %s", json_type_name(obj));
	r = check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	host = cJSON_GetObjectItemCaseSensitive(obj, "host");
	cidr = cJSON_GetObjectItemCaseSensitive(obj, "cidr");
	if (!host == !cidr)
		return parse_fail(ctx, key, "needs exactly one of \"host\" or \"cidr\"");

	snprintf(subkey, sizeof(subkey), "%s.protocol", key);
	r = parse_protocol(ctx, cJSON_GetObjectItemCaseSensitive(obj, "protocol"), subkey,
			   &entry->protos);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.ports", key);
	r = parse_ports(ctx, cJSON_GetObjectItemCaseSensitive(obj, "ports"), subkey, entry);
	if (r < 0)
		return r;
	/* Each range carries the entry's protocols too, so a range read alone is complete. */
	for (unsigned int i = 0; i < entry->nports; i++)
		entry->ports[i].protos = entry->protos;
	if (host) {
		snprintf(subkey, sizeof(subkey), "%s.host", key);
		return parse_host(ctx, host, subkey, &entry->host);
	}
	snprintf(subkey, sizeof(subkey), "%s.cidr", key);
	return parse_cidr(ctx, cidr, subkey, entry);
}

static int parse_allow(const struct parse_ctx *ctx, const cJSON *allow, struct policy *policy)
{
	const cJSON *item;
	size_t i = 0;
	int count, r;

	if (!allow)
		return parse_fail(ctx, "allow", "missing (use [] to deny every destination)");
	if (!cJSON_IsArray(allow))
		return parse_fail(ctx, "allow", "must be an array, not %s", json_type_name(allow));
	count = cJSON_GetArraySize(allow);
	if (count > MAX_ALLOW_ENTRIES)
		return parse_fail(ctx, "allow", "%d entries, at most %d (MAX_ALLOW_ENTRIES)", count,
				  MAX_ALLOW_ENTRIES);
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

static int parse_unix(const struct parse_ctx *ctx, const cJSON *unix_paths, struct policy *policy)
{
	char key[KEY_PATH_LEN], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	int count;

	if (!unix_paths)
		return 0;
	if (!cJSON_IsArray(unix_paths))
		return parse_fail(ctx, "unix", "must be an array, not %s",
				  json_type_name(unix_paths));
	count = cJSON_GetArraySize(unix_paths);
	if (count > MAX_UNIX_PATHS)
		return parse_fail(ctx, "unix", "%d entries, at most %d (MAX_UNIX_PATHS)", count,
				  MAX_UNIX_PATHS);
	if (count == 0)
		return 0;
	policy->unix_paths = calloc((size_t)count, sizeof(*policy->unix_paths));
	if (!policy->unix_paths)
		return -ENOMEM;
	cJSON_ArrayForEach (item, unix_paths) {
		const char *path;
		size_t len;

		snprintf(key, sizeof(key), "unix[%zu]", policy->nunix);
		if (!cJSON_IsString(item))
			return parse_fail(ctx, key, "must be a string, not %s",
					  json_type_name(item));
		path = item->valuestring;
		len = strlen(path);
		shown(path, vbuf, sizeof(vbuf));
		if (path[0] != '/' && path[0] != '@')
			return parse_fail(ctx, key,
					  "\"%s\" must be an absolute path or \"@name\" for an "
					  "abstract socket",
					  vbuf);
		if (path[0] == '@' && len == 1)
			return parse_fail(ctx, key, "\"@\" needs a name after it");
		/* "@name" becomes sun_path "\0name": the same number of bytes. */
		if (len > UNIX_PATH_LEN - 1)
			return parse_fail(ctx, key, "\"%s\" is %zu bytes, at most %d", vbuf, len,
					  UNIX_PATH_LEN - 1);
		policy->unix_paths[policy->nunix] = strdup(path);
		if (!policy->unix_paths[policy->nunix])
			return -ENOMEM;
		policy->nunix++;
	}
	return 0;
}

/* An absolute path without "." or ".." components: what Landlock is given is what was meant. */
static const char *fs_path_problem(const char *path)
{
	const char *p = path;

	if (path[0] != '/')
		return "must be an absolute path";
	if (strcmp(path, "/") == 0)
		return "would make every file writable (use \"read_only\": false to say so)";
	if (strlen(path) >= PATH_MAX)
		return "is longer than PATH_MAX";
	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return "must not contain \".\" or \"..\" components";
		p += len;
	}
	return NULL;
}

static int parse_fs_write(const struct parse_ctx *ctx, const cJSON *write, struct policy *policy)
{
	char key[KEY_PATH_LEN], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	int count;

	if (!cJSON_IsArray(write))
		return parse_fail(ctx, "fs.write", "must be an array, not %s",
				  json_type_name(write));
	count = cJSON_GetArraySize(write);
	if (count > POLICY_MAX_FS_WRITE)
		return parse_fail(ctx, "fs.write", "%d entries, at most %d", count,
				  POLICY_MAX_FS_WRITE);
	if (count == 0)
		return 0;
	policy->fs_write = calloc((size_t)count, sizeof(*policy->fs_write));
	if (!policy->fs_write)
		return -ENOMEM;
	cJSON_ArrayForEach (item, write) {
		const char *problem;

		snprintf(key, sizeof(key), "fs.write[%zu]", policy->nfs_write);
		if (!cJSON_IsString(item))
			return parse_fail(ctx, key, "must be a string, not %s",
					  json_type_name(item));
		problem = fs_path_problem(item->valuestring);
		if (problem)
			return parse_fail(ctx, key, "\"%s\" %s",
					  shown(item->valuestring, vbuf, sizeof(vbuf)), problem);
		policy->fs_write[policy->nfs_write] = strdup(item->valuestring);
		if (!policy->fs_write[policy->nfs_write])
			return -ENOMEM;
		policy->nfs_write++;
	}
	return 0;
}

/*
 * One "limits" value as text for the limit_parse_* functions, which the command-line
 * options share: a string as is, a number in decimal (integers only, unless fractions are
 * allowed, as CPUs are).
 */
static int limit_text(const struct parse_ctx *ctx, const cJSON *item, const char *key,
		      bool fractions, char *buf, size_t len)
{
	if (cJSON_IsString(item)) {
		snprintf(buf, len, "%s", item->valuestring);
		return 0;
	}
	if (!cJSON_IsNumber(item))
		return parse_fail(ctx, key, "must be a number or a string, not %s",
				  json_type_name(item));
	if (item->valuedouble < 0 || item->valuedouble > 1e18 ||
	    (!fractions && item->valuedouble != (double)(long long)item->valuedouble))
		return parse_fail(ctx, key, "%g is not a %s", item->valuedouble,
				  fractions ? "positive number" : "positive integer");
	if (fractions)
		snprintf(buf, len, "%.6f", item->valuedouble);
	else
		snprintf(buf, len, "%lld", (long long)item->valuedouble);
	/* "1.500000": trailing zeros (and a trailing dot) go, so the parser takes it. */
	if (fractions && strchr(buf, '.')) {
		size_t n = strlen(buf);

		while (buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	return 0;
}

/* One "listen" entry: {"port": N or "lo-hi", "protocol": ...} or {"unix": "@name"}. */
static int parse_listen_entry(const struct parse_ctx *ctx, const cJSON *obj, size_t index,
			      struct policy *policy)
{
	static const char *const known[] = { "port", "protocol", "unix" };
	char key[KEY_PATH_LEN / 2], subkey[KEY_PATH_LEN + 16], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *port, *unix_name, *protocol;
	struct port_range range;
	unsigned int protos;
	int r;

	snprintf(key, sizeof(key), "listen[%zu]", index);
	if (!cJSON_IsObject(obj))
		return parse_fail(ctx, key, "must be an object, not %s", json_type_name(obj));
	r = check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	port = cJSON_GetObjectItemCaseSensitive(obj, "port");
	unix_name = cJSON_GetObjectItemCaseSensitive(obj, "unix");
	protocol = cJSON_GetObjectItemCaseSensitive(obj, "protocol");
	if (!port == !unix_name)
		return parse_fail(ctx, key, "needs exactly one of \"port\" or \"unix\"");
	if (unix_name) {
		const char *name;
		size_t len;

		snprintf(subkey, sizeof(subkey), "%s.unix", key);
		if (protocol)
			return parse_fail(ctx, key,
					  "\"protocol\" goes with \"port\", not \"unix\"");
		if (!cJSON_IsString(unix_name))
			return parse_fail(ctx, subkey, "must be a string, not %s",
					  json_type_name(unix_name));
		name = unix_name->valuestring;
		len = strlen(name);
		shown(name, vbuf, sizeof(vbuf));
		/* A path socket is a file: where the job may make one is the file system's say. */
		if (name[0] != '@' || len == 1)
			return parse_fail(ctx, subkey,
					  "\"%s\" must be \"@name\", an abstract socket name",
					  vbuf);
		if (len > UNIX_PATH_LEN - 1)
			return parse_fail(ctx, subkey, "\"%s\" is %zu bytes, at most %d", vbuf, len,
					  UNIX_PATH_LEN - 1);
		if (policy->nlisten_unix >= MAX_UNIX_PATHS)
			return parse_fail(ctx, subkey, "more than %d names (MAX_UNIX_PATHS)",
					  MAX_UNIX_PATHS);
		policy->listen_unix[policy->nlisten_unix] = strdup(name);
		if (!policy->listen_unix[policy->nlisten_unix])
			return -ENOMEM;
		policy->nlisten_unix++;
		return 0;
	}

	snprintf(subkey, sizeof(subkey), "%s.protocol", key);
	r = parse_protocol(ctx, protocol, subkey, &protos);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.port", key);
	if (cJSON_IsNumber(port)) {
		double v = port->valuedouble;

		/* As in "ports": the range test first, so that the cast is defined. */
		if (!(v >= 1 && v <= 65535) || v != (double)(unsigned int)v)
			return parse_fail(ctx, subkey, "%g is not a port (1-65535)", v);
		range.lo = range.hi = (__u16)v;
	} else if (cJSON_IsString(port)) {
		if (policy_parse_port_range(port->valuestring, &range) < 0)
			return parse_fail(ctx, subkey,
					  "\"%s\" is not a port or a range \"lo-hi\" (1-65535, "
					  "lo <= hi)",
					  shown(port->valuestring, vbuf, sizeof(vbuf)));
	} else {
		return parse_fail(ctx, subkey,
				  "must be a port number or a \"lo-hi\" string, not %s",
				  json_type_name(port));
	}
	if (policy->nlisten_ports >= MAX_LISTEN_PORTS)
		return parse_fail(ctx, subkey, "more than %d ports (MAX_LISTEN_PORTS)",
				  MAX_LISTEN_PORTS);
	range.protos = protos;
	policy->listen_ports[policy->nlisten_ports++] = range;
	return 0;
}

static int parse_listen(const struct parse_ctx *ctx, const cJSON *listen, struct policy *policy)
{
	const cJSON *item;
	size_t i = 0;
	int count, r;

	if (!listen)
		return 0;
	if (!cJSON_IsArray(listen))
		return parse_fail(ctx, "listen", "must be an array, not %s",
				  json_type_name(listen));
	count = cJSON_GetArraySize(listen);
	if (count > MAX_LISTEN_PORTS + MAX_UNIX_PATHS)
		return parse_fail(ctx, "listen", "%d entries, at most %d", count,
				  MAX_LISTEN_PORTS + MAX_UNIX_PATHS);
	if (count == 0)
		return 0;
	policy->listen_unix = calloc((size_t)count, sizeof(*policy->listen_unix));
	if (!policy->listen_unix)
		return -ENOMEM;
	cJSON_ArrayForEach (item, listen) {
		r = parse_listen_entry(ctx, item, i++, policy);
		if (r < 0)
			return r;
	}
	return 0;
}

/* "fs": {"write": [...], "read_only": true}; without it, the defaults (read-only but for the
 * working directory and the private /tmp). */
static int parse_fs(const struct parse_ctx *ctx, const cJSON *fs, struct policy *policy)
{
	static const char *const known[] = { "write", "read_only" };
	const cJSON *read_only, *write;
	int r;

	policy->fs_read_only = true;
	if (!fs)
		return 0;
	if (!cJSON_IsObject(fs))
		return parse_fail(ctx, "fs", "must be an object, not %s", json_type_name(fs));
	r = check_keys(ctx, fs, "fs", known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	policy->fs_set = true;
	read_only = cJSON_GetObjectItemCaseSensitive(fs, "read_only");
	if (read_only) {
		if (!cJSON_IsBool(read_only))
			return parse_fail(ctx, "fs.read_only", "must be true or false, not %s",
					  json_type_name(read_only));
		policy->fs_read_only = cJSON_IsTrue(read_only);
	}
	write = cJSON_GetObjectItemCaseSensitive(fs, "write");
	if (!write)
		return 0;
	if (!policy->fs_read_only)
		return parse_fail(ctx, "fs.write",
				  "has no effect with \"read_only\": false, which lets the job "
				  "write every file its user may");
	return parse_fs_write(ctx, write, policy);
}

/*
 * "limits": the job's resources, as the --pids-max, --memory-max, --cpu-max, --tmp-size and
 * --nofile options (which take precedence); each key also with a '-' for the '_'.
 */
static int parse_limits(const struct parse_ctx *ctx, const cJSON *limits, struct policy *policy)
{
	static const char *const known[] = { "pids_max",   "memory_max", "cpu_max",
					     "tmp_size",   "nofile",	 "pids-max",
					     "memory-max", "cpu-max",	 "tmp-size" };
	struct job_limits *l = &policy->limits;
	char key[KEY_PATH_LEN], text[128], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	int r;

	if (!limits)
		return 0;
	if (!cJSON_IsObject(limits))
		return parse_fail(ctx, "limits", "must be an object, not %s",
				  json_type_name(limits));
	r = check_keys(ctx, limits, "limits", known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	cJSON_ArrayForEach (item, limits) {
		char name[16];
		bool cpu;

		snprintf(name, sizeof(name), "%s", item->string);
		for (char *c = name; *c; c++)
			if (*c == '-')
				*c = '_';
		for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
			/* Both spellings of one key are one key. */
			if (i < 5 && strcmp(name, known[i]) == 0 &&
			    strcmp(item->string, known[i]) != 0 &&
			    cJSON_GetObjectItemCaseSensitive(limits, known[i]))
				return parse_fail(ctx, "limits", "duplicate key \"%s\"", known[i]);
		}
		snprintf(key, sizeof(key), "limits.%s", item->string);
		cpu = strcmp(name, "cpu_max") == 0;
		r = limit_text(ctx, item, key, cpu, text, sizeof(text));
		if (r < 0)
			return r;
		if (strcmp(name, "pids_max") == 0)
			r = limit_parse_pids(text, &l->pids_max);
		else if (strcmp(name, "memory_max") == 0)
			r = limit_parse_memory(text, &l->memory_max);
		else if (cpu)
			r = limit_parse_cpu(text, &l->cpu_quota_us, &l->cpu_period_us);
		else if (strcmp(name, "tmp_size") == 0)
			r = limit_parse_tmp(text, &l->tmp_bytes, &l->tmp_percent);
		else
			r = limit_parse_nofile(text, &l->nofile);
		if (r == 0)
			continue;
		shown(text, vbuf, sizeof(vbuf));
		if (strcmp(name, "pids_max") == 0)
			return parse_fail(ctx, key,
					  "\"%s\" is not a number of tasks (1-%u) or \"max\"", vbuf,
					  LIMIT_PIDS_CEILING);
		if (strcmp(name, "memory_max") == 0)
			return parse_fail(ctx, key,
					  "\"%s\" is not a size of at least 4M (bytes, or with K, "
					  "M, G, T) or \"max\"",
					  vbuf);
		if (cpu)
			return parse_fail(ctx, key,
					  "\"%s\" is not a number of CPUs (\"1.5\"), a percentage "
					  "of one (\"150%%\"), \"QUOTA PERIOD\" in microseconds or "
					  "\"max\"",
					  vbuf);
		if (strcmp(name, "tmp_size") == 0)
			return parse_fail(ctx, key,
					  "\"%s\" is not a size (bytes, or with K, M, G, T) or a "
					  "percentage of the RAM (1-100%%)",
					  vbuf);
		return parse_fail(ctx, key, "\"%s\" is not a number of descriptors (3-%u)", vbuf,
				  LIMIT_NOFILE_CEILING);
	}
	return 0;
}

static int parse_name(const struct parse_ctx *ctx, const cJSON *name, struct policy *policy)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	const char *p;

	if (!name)
		return parse_fail(ctx, "name", "missing");
	if (!cJSON_IsString(name))
		return parse_fail(ctx, "name", "must be a string, not %s", json_type_name(name));
	shown(name->valuestring, vbuf, sizeof(vbuf));
	if (name->valuestring[0] == '\0')
		return parse_fail(ctx, "name", "must not be empty");
	if (strlen(name->valuestring) > POLICY_NAME_MAX_LEN)
		return parse_fail(ctx, "name", "\"%s\" is longer than %d characters", vbuf,
				  POLICY_NAME_MAX_LEN);
	for (p = name->valuestring; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || is_digit(*p) ||
		      *p == '.' || *p == '_' || *p == '-'))
			return parse_fail(ctx, "name",
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
	static const char *const known[] = { "name", "description", "allow", "unix",
					     "fs",   "limits",	    "listen" };
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
		return parse_fail(&ctx, NULL, "not valid JSON near line %u",
				  line_of(json, end ? end : json));
	nul = find_escaped_nul(json);
	if (nul)
		return parse_fail(&ctx, NULL, "line %u: \"\\u0000\" in a string is not allowed",
				  line_of(json, nul));
	if (!cJSON_IsObject(root))
		return parse_fail(&ctx, NULL, "top level must be a JSON object, not %s",
				  json_type_name(root));
	r = check_keys(&ctx, root, NULL, known, ARRAY_SIZE(known));
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
			return parse_fail(&ctx, "description", "must be a string, not %s",
					  json_type_name(description));
		policy->description = strdup(description->valuestring);
		if (!policy->description)
			return -ENOMEM;
	}
	r = parse_allow(&ctx, cJSON_GetObjectItemCaseSensitive(root, "allow"), policy);
	if (r < 0)
		return r;
	r = parse_unix(&ctx, cJSON_GetObjectItemCaseSensitive(root, "unix"), policy);
	if (r < 0)
		return r;
	r = parse_fs(&ctx, cJSON_GetObjectItemCaseSensitive(root, "fs"), policy);
	if (r < 0)
		return r;
	r = parse_limits(&ctx, cJSON_GetObjectItemCaseSensitive(root, "limits"), policy);
	if (r < 0)
		return r;
	r = parse_listen(&ctx, cJSON_GetObjectItemCaseSensitive(root, "listen"), policy);
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
		parse_fail(&ctx, NULL, "larger than %u MiB, refusing to read it",
			   POLICY_MAX_FILE_BYTES / (1024 * 1024));
		return r;
	}
	if (r < 0) {
		parse_fail(&ctx, NULL, "cannot read: %s", strerror(-r));
		return r;
	}
	if (memchr(text, '\0', len))
		return parse_fail(&ctx, NULL, "contains a NUL byte; not a JSON text file");
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
	for (i = 0; i < policy->nentries; i++)
		free(policy->entries[i].host);
	free(policy->entries);
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
