// SPDX-License-Identifier: LGPL-2.1-or-later
/* A policy's HTTPS-gateway keys: a host rule's "http" and the top-level "secrets". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cjson/cJSON.h>

#include "http_rules.h"
#include "policy.h"
#include "policy_internal.h"

/* Headers one host's "pass_headers" may name, and the length of a header name or method. */
#define POLICY_PASS_HEADERS_MAX 32
#define HTTP_TOKEN_MAX_LEN	64
#define SECRET_NAME_MAX_LEN	128
#define SECRET_FORMAT_MAX_LEN	256
/* 2^53: the largest integer a JSON number (a double in cJSON) holds exactly. */
#define MAX_BODY_BYTES_LIMIT (1ULL << 53)
/* Key paths grow a level at a time ("allow[1].http" .deny [2] .path): each buffer holds its
 * parent's and what it appends, so that no message is cut. */
#define KEY_LEN_1 (KEY_PATH_LEN * 2)
#define KEY_LEN_2 (KEY_PATH_LEN * 3)
#define KEY_LEN_3 (KEY_PATH_LEN * 4)

/* RFC 9110's tchar: what a method and a header name are made of. */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_token(const char *s)
{
	if (*s == '\0' || strlen(s) > HTTP_TOKEN_MAX_LEN)
		return false;
	for (; *s; s++)
		if (!is_tchar(*s))
			return false;
	return true;
}

/*
 * Headers that frame or route the request: a secret injected into one of them would change
 * what the upstream reads as the request's end or its host, so none may be named.
 */
static bool is_framing_header(const char *name)
{
	static const char *const framing[] = { "host",
					       "content-length",
					       "transfer-encoding",
					       "connection",
					       "upgrade",
					       "te",
					       "trailer",
					       "expect",
					       "keep-alive",
					       "proxy-connection" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(framing); i++)
		if (strcasecmp(name, framing[i]) == 0)
			return true;
	return false;
}

static char *strdup_lower(const char *s)
{
	char *copy = strdup(s), *p;

	if (copy)
		for (p = copy; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
	return copy;
}

static int parse_method(const struct parse_ctx *ctx, const cJSON *item, const char *key, char **ret)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	const char *p;

	if (!item) {
		*ret = strdup("*");
		return *ret ? 0 : -ENOMEM;
	}
	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	if (strcmp(item->valuestring, "*") != 0) {
		if (!is_token(item->valuestring))
			return policy_fail(ctx, key,
					   "\"%s\" is not an HTTP method (\"GET\", \"*\")", vbuf);
		/* Methods are case-sensitive and the gateway compares them as sent. */
		for (p = item->valuestring; *p; p++)
			if (*p >= 'a' && *p <= 'z')
				return policy_fail(ctx, key,
						   "\"%s\" must be upper case (methods are "
						   "case-sensitive)",
						   vbuf);
	}
	*ret = strdup(item->valuestring);
	return *ret ? 0 : -ENOMEM;
}

/*
 * A path glob: "*" alone, or '/' then printable bytes. No '%': the rule is matched against
 * the decoded path, so "%2F" in a rule would only ever match a literal "%2F" there.
 */
static int parse_path(const struct parse_ctx *ctx, const cJSON *item, const char *key, char **ret)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	const unsigned char *p;

	if (!item) {
		*ret = strdup("*");
		return *ret ? 0 : -ENOMEM;
	}
	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	if (strlen(item->valuestring) > HTTP_RULE_PATH_MAX)
		return policy_fail(ctx, key, "\"%s\" is longer than %d bytes (HTTP_RULE_PATH_MAX)",
				   vbuf, HTTP_RULE_PATH_MAX);
	if (item->valuestring[0] != '/' && item->valuestring[0] != '*')
		return policy_fail(ctx, key, "\"%s\" must start with '/' or '*'", vbuf);
	for (p = (const unsigned char *)item->valuestring; *p; p++) {
		if (*p < 0x21 || *p == 0x7f)
			return policy_fail(ctx, key, "\"%s\" holds a space or control character",
					   vbuf);
		if (*p == '%')
			return policy_fail(ctx, key,
					   "\"%s\" holds '%%': paths are matched decoded, write "
					   "the character itself",
					   vbuf);
		if (*p == '#')
			return policy_fail(ctx, key, "\"%s\" holds '#'", vbuf);
	}
	if (strchr(item->valuestring, '?') && strchr(item->valuestring, '=')) {
		/* "/v1/x?limit=3" reads as a query, which rules never see; '?' is a glob. */
		return policy_fail(ctx, key,
				   "\"%s\" looks like it has a query; rules match the path "
				   "without its query ('?' matches one character)",
				   vbuf);
	}
	*ret = strdup(item->valuestring);
	return *ret ? 0 : -ENOMEM;
}

static int parse_rule(const struct parse_ctx *ctx, const cJSON *obj, const char *key,
		      struct http_rule *rule)
{
	static const char *const known[] = { "method", "path" };
	const cJSON *method, *path;
	char subkey[KEY_LEN_3];
	int r;

	if (!cJSON_IsObject(obj))
		return policy_fail(ctx, key, "must be an object, not %s", policy_json_type(obj));
	r = policy_check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	method = cJSON_GetObjectItemCaseSensitive(obj, "method");
	path = cJSON_GetObjectItemCaseSensitive(obj, "path");
	if (!method && !path)
		return policy_fail(ctx, key, "needs \"method\" or \"path\" (or both)");
	snprintf(subkey, sizeof(subkey), "%s.method", key);
	r = parse_method(ctx, method, subkey, &rule->method);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.path", key);
	return parse_path(ctx, path, subkey, &rule->path);
}

static int parse_rules(const struct parse_ctx *ctx, const cJSON *list, const char *key,
		       struct http_rule **ret_rules, size_t *ret_n)
{
	char ekey[KEY_LEN_2];
	const cJSON *item;
	int count, r;

	if (!cJSON_IsArray(list))
		return policy_fail(ctx, key, "must be an array, not %s", policy_json_type(list));
	count = cJSON_GetArraySize(list);
	if (count > HTTP_RULES_MAX)
		return policy_fail(ctx, key, "%d rules, at most %d (HTTP_RULES_MAX)", count,
				   HTTP_RULES_MAX);
	if (count == 0)
		return 0;
	*ret_rules = calloc((size_t)count, sizeof(**ret_rules));
	if (!*ret_rules)
		return -ENOMEM;
	cJSON_ArrayForEach (item, list) {
		size_t i = *ret_n;

		/* Counted first so that policy_http_free releases a half-parsed rule. */
		*ret_n = i + 1;
		snprintf(ekey, sizeof(ekey), "%s[%zu]", key, i);
		r = parse_rule(ctx, item, ekey, &(*ret_rules)[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_pass_headers(const struct parse_ctx *ctx, const cJSON *list, const char *key,
			      struct policy_http *http)
{
	char ekey[KEY_LEN_2], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	int count;

	if (!cJSON_IsArray(list))
		return policy_fail(ctx, key, "must be an array, not %s", policy_json_type(list));
	count = cJSON_GetArraySize(list);
	if (count > POLICY_PASS_HEADERS_MAX)
		return policy_fail(ctx, key, "%d headers, at most %d", count,
				   POLICY_PASS_HEADERS_MAX);
	if (count == 0)
		return 0;
	http->pass_headers = calloc((size_t)count, sizeof(*http->pass_headers));
	if (!http->pass_headers)
		return -ENOMEM;
	cJSON_ArrayForEach (item, list) {
		size_t i = http->npass_headers, j;

		snprintf(ekey, sizeof(ekey), "%s[%zu]", key, i);
		if (!cJSON_IsString(item))
			return policy_fail(ctx, ekey, "must be a string, not %s",
					   policy_json_type(item));
		policy_shown(item->valuestring, vbuf, sizeof(vbuf));
		if (!is_token(item->valuestring))
			return policy_fail(ctx, ekey, "\"%s\" is not a header name", vbuf);
		for (j = 0; j < i; j++)
			if (strcasecmp(http->pass_headers[j], item->valuestring) == 0)
				return policy_fail(ctx, ekey, "\"%s\" is listed twice", vbuf);
		http->pass_headers[i] = strdup_lower(item->valuestring);
		if (!http->pass_headers[i])
			return -ENOMEM;
		http->npass_headers = i + 1;
	}
	return 0;
}

static int parse_max_body(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			  uint64_t *ret)
{
	double v;

	if (!cJSON_IsNumber(item))
		return policy_fail(ctx, key, "must be a number of bytes, not %s",
				   policy_json_type(item));
	v = item->valuedouble;
	/* The range test first (NaN fails it), so that the cast is defined. */
	if (!(v >= 0 && v <= (double)MAX_BODY_BYTES_LIMIT) || v != (double)(uint64_t)v)
		return policy_fail(ctx, key, "%g is not a whole number of bytes from 0 to 2^53", v);
	*ret = (uint64_t)v;
	return 0;
}

static int parse_http_fields(const struct parse_ctx *ctx, const cJSON *obj, const char *key,
			     struct policy_http *http)
{
	char subkey[KEY_LEN_1];
	const cJSON *item;
	int r;

	item = cJSON_GetObjectItemCaseSensitive(obj, "allow");
	if (item) {
		http->allow_given = true;
		snprintf(subkey, sizeof(subkey), "%s.allow", key);
		r = parse_rules(ctx, item, subkey, &http->allow, &http->nallow);
		if (r < 0)
			return r;
	}
	item = cJSON_GetObjectItemCaseSensitive(obj, "deny");
	if (item) {
		snprintf(subkey, sizeof(subkey), "%s.deny", key);
		r = parse_rules(ctx, item, subkey, &http->deny, &http->ndeny);
		if (r < 0)
			return r;
	}
	item = cJSON_GetObjectItemCaseSensitive(obj, "pass_headers");
	if (item) {
		snprintf(subkey, sizeof(subkey), "%s.pass_headers", key);
		r = parse_pass_headers(ctx, item, subkey, http);
		if (r < 0)
			return r;
	}
	http->max_body_bytes = HTTP_MAX_BODY_BYTES_DEFAULT;
	item = cJSON_GetObjectItemCaseSensitive(obj, "max_body_bytes");
	if (item) {
		snprintf(subkey, sizeof(subkey), "%s.max_body_bytes", key);
		r = parse_max_body(ctx, item, subkey, &http->max_body_bytes);
		if (r < 0)
			return r;
	}
	return 0;
}

int policy_parse_http(const struct parse_ctx *ctx, const cJSON *obj, const char *key,
		      struct policy_entry *entry)
{
	static const char *const known[] = { "allow", "deny", "pass_headers", "max_body_bytes" };
	struct policy_http *http;
	int r;

	if (!obj)
		return 0;
	if (!entry->host)
		return policy_fail(ctx, key,
				   "only a \"host\" rule may have \"http\", not a \"cidr\"");
	/* The gateway presents a certificate for, and redirects the addresses of, one name. */
	if (entry->host[0] == '*')
		return policy_fail(ctx, key, "needs an exact host name, not the wildcard \"%s\"",
				   entry->host);
	/* UDP to the host would be QUIC (HTTP/3) around the gateway. */
	if (entry->protos != PROTO_TCP)
		return policy_fail(ctx, key, "needs \"protocol\": \"tcp\" (the default)");
	/*
	 * The gateway connects to one port of the provider: the rule's only port, or 443 when the
	 * rule gives none. A list or range would have it reach a port the rule does not name.
	 */
	if (entry->nports > 1 || (entry->nports == 1 && entry->ports[0].lo != entry->ports[0].hi &&
				  !(entry->ports[0].lo == 0 && entry->ports[0].hi == 65535)))
		return policy_fail(ctx, key,
				   "needs one port in \"ports\" (the provider's), or none: 443");
	if (!cJSON_IsObject(obj))
		return policy_fail(ctx, key, "must be an object, not %s", policy_json_type(obj));
	r = policy_check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	http = calloc(1, sizeof(*http));
	if (!http)
		return -ENOMEM;
	/* Owned by the entry from here, so policy_free releases a half-parsed section. */
	entry->http = http;
	return parse_http_fields(ctx, obj, key, http);
}

/*
 * A host with "http" takes one rule of the policy: a second one, with "http" or without,
 * would leave two sets of rules, or a way around the gateway, for the same name.
 */
int policy_check_http_hosts(const struct parse_ctx *ctx, const struct policy *policy)
{
	char key[KEY_PATH_LEN], vbuf[ERR_VALUE_SHOWN_LEN];
	size_t i, j;

	/* Only rules with "http" start a scan: a policy of 100,000 plain hosts costs nothing. */
	for (i = 0; i < policy->nentries; i++) {
		const struct policy_entry *entry = &policy->entries[i];

		if (!entry->http)
			continue;
		for (j = 0; j < policy->nentries; j++) {
			const struct policy_entry *other = &policy->entries[j];

			if (j == i || !other->host || strcmp(other->host, entry->host) != 0)
				continue;
			snprintf(key, sizeof(key), "allow[%zu]", i > j ? i : j);
			return policy_fail(ctx, key,
					   "\"%s\" is also allow[%zu]; a host with \"http\" takes "
					   "one rule",
					   policy_shown(entry->host, vbuf, sizeof(vbuf)),
					   i < j ? i : j);
		}
	}
	return 0;
}

static int parse_secret_name(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			     char **ret)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	const char *p;

	if (!item)
		return policy_fail(ctx, key, "missing (the launcher's environment variable)");
	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	p = item->valuestring;
	if (*p == '\0' || strlen(p) > SECRET_NAME_MAX_LEN || (*p >= '0' && *p <= '9'))
		goto bad;
	for (; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			goto bad;
	*ret = strdup(item->valuestring);
	return *ret ? 0 : -ENOMEM;
bad:
	return policy_fail(ctx, key,
			   "\"%s\" is not an environment variable name (letters, digits and "
			   "'_', not starting with a digit, at most %d)",
			   vbuf, SECRET_NAME_MAX_LEN);
}

static int parse_secret_header(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			       char **ret)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];

	if (!item)
		return policy_fail(ctx, key, "missing (\"Authorization\", \"x-api-key\")");
	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	if (!is_token(item->valuestring))
		return policy_fail(ctx, key, "\"%s\" is not a header name", vbuf);
	if (is_framing_header(item->valuestring))
		return policy_fail(ctx, key,
				   "\"%s\" frames or routes the request; it cannot carry a secret",
				   vbuf);
	*ret = strdup(item->valuestring);
	return *ret ? 0 : -ENOMEM;
}

/* A header value around the secret: printable ASCII, spaces and tabs; "{}" exactly once. */
static int parse_secret_format(const struct parse_ctx *ctx, const cJSON *item, const char *key,
			       char **ret)
{
	char vbuf[ERR_VALUE_SHOWN_LEN];
	const unsigned char *p;
	const char *first;

	if (!item)
		return policy_fail(ctx, key, "missing (\"Bearer {}\", \"{}\")");
	if (!cJSON_IsString(item))
		return policy_fail(ctx, key, "must be a string, not %s", policy_json_type(item));
	policy_shown(item->valuestring, vbuf, sizeof(vbuf));
	if (strlen(item->valuestring) > SECRET_FORMAT_MAX_LEN)
		return policy_fail(ctx, key, "\"%s\" is longer than %d bytes", vbuf,
				   SECRET_FORMAT_MAX_LEN);
	for (p = (const unsigned char *)item->valuestring; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p >= 0x7f)
			return policy_fail(ctx, key,
					   "\"%s\" holds a control or non-ASCII character", vbuf);
	first = strstr(item->valuestring, "{}");
	if (!first || strstr(first + 2, "{}"))
		return policy_fail(ctx, key, "\"%s\" must hold \"{}\" exactly once", vbuf);
	*ret = strdup(item->valuestring);
	return *ret ? 0 : -ENOMEM;
}

static const struct policy_entry *http_entry_of(const struct policy *policy, const char *host)
{
	size_t i;

	for (i = 0; i < policy->nentries; i++)
		if (policy->entries[i].http && strcmp(policy->entries[i].host, host) == 0)
			return &policy->entries[i];
	return NULL;
}

static int parse_secret_hosts(const struct parse_ctx *ctx, const cJSON *list, const char *key,
			      const struct policy *policy, struct policy_secret *secret)
{
	char ekey[KEY_LEN_2], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	int count;

	if (!list)
		return policy_fail(ctx, key, "missing (host rules with \"http\")");
	if (!cJSON_IsArray(list))
		return policy_fail(ctx, key, "must be an array, not %s", policy_json_type(list));
	count = cJSON_GetArraySize(list);
	if (count == 0)
		return policy_fail(ctx, key, "must not be empty");
	if (count > POLICY_SECRET_HOSTS_MAX)
		return policy_fail(ctx, key, "%d hosts, at most %d (POLICY_SECRET_HOSTS_MAX)",
				   count, POLICY_SECRET_HOSTS_MAX);
	secret->hosts = calloc((size_t)count, sizeof(*secret->hosts));
	if (!secret->hosts)
		return -ENOMEM;
	cJSON_ArrayForEach (item, list) {
		size_t i = secret->nhosts, j, len;
		char *host;

		snprintf(ekey, sizeof(ekey), "%s[%zu]", key, i);
		if (!cJSON_IsString(item))
			return policy_fail(ctx, ekey, "must be a string, not %s",
					   policy_json_type(item));
		policy_shown(item->valuestring, vbuf, sizeof(vbuf));
		host = strdup_lower(item->valuestring);
		if (!host)
			return -ENOMEM;
		secret->hosts[i] = host;
		secret->nhosts = i + 1;
		len = strlen(host);
		if (len > 1 && host[len - 1] == '.')
			host[len - 1] = '\0';
		if (!http_entry_of(policy, host))
			return policy_fail(ctx, ekey, "\"%s\" has no host rule with \"http\"",
					   vbuf);
		for (j = 0; j < i; j++)
			if (strcmp(secret->hosts[j], host) == 0)
				return policy_fail(ctx, ekey, "\"%s\" is listed twice", vbuf);
	}
	return 0;
}

static int parse_secret(const struct parse_ctx *ctx, const cJSON *obj, const char *key,
			const struct policy *policy, struct policy_secret *secret)
{
	static const char *const known[] = { "name", "hosts", "header", "format" };
	char subkey[KEY_LEN_1];
	int r;

	if (!cJSON_IsObject(obj))
		return policy_fail(ctx, key, "must be an object, not %s", policy_json_type(obj));
	r = policy_check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.name", key);
	r = parse_secret_name(ctx, cJSON_GetObjectItemCaseSensitive(obj, "name"), subkey,
			      &secret->name);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.hosts", key);
	r = parse_secret_hosts(ctx, cJSON_GetObjectItemCaseSensitive(obj, "hosts"), subkey, policy,
			       secret);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.header", key);
	r = parse_secret_header(ctx, cJSON_GetObjectItemCaseSensitive(obj, "header"), subkey,
				&secret->header);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.format", key);
	return parse_secret_format(ctx, cJSON_GetObjectItemCaseSensitive(obj, "format"), subkey,
				   &secret->format);
}

/* Two secrets of one name, or two for one host's same header, leave the gateway to guess. */
static int check_secret_against_earlier(const struct parse_ctx *ctx, const char *key,
					const struct policy *policy, size_t index)
{
	const struct policy_secret *secret = &policy->secrets[index];
	char vbuf[ERR_VALUE_SHOWN_LEN];
	size_t i, h, k;

	for (i = 0; i < index; i++) {
		const struct policy_secret *earlier = &policy->secrets[i];

		if (strcmp(earlier->name, secret->name) == 0)
			return policy_fail(ctx, key, "name \"%s\" is given twice (secrets[%zu])",
					   secret->name, i);
		if (strcasecmp(earlier->header, secret->header) != 0)
			continue;
		for (h = 0; h < secret->nhosts; h++)
			for (k = 0; k < earlier->nhosts; k++)
				if (strcmp(secret->hosts[h], earlier->hosts[k]) == 0)
					return policy_fail(
						ctx, key,
						"\"%s\" already gets header \"%s\" from "
						"secrets[%zu]",
						policy_shown(secret->hosts[h], vbuf, sizeof(vbuf)),
						secret->header, i);
	}
	return 0;
}

int policy_parse_secrets(const struct parse_ctx *ctx, const cJSON *list, struct policy *policy)
{
	char key[KEY_PATH_LEN];
	const cJSON *item;
	int count, r;

	if (!list)
		return 0;
	if (!cJSON_IsArray(list))
		return policy_fail(ctx, "secrets", "must be an array, not %s",
				   policy_json_type(list));
	count = cJSON_GetArraySize(list);
	if (count > POLICY_SECRETS_MAX)
		return policy_fail(ctx, "secrets", "%d secrets, at most %d (POLICY_SECRETS_MAX)",
				   count, POLICY_SECRETS_MAX);
	if (count == 0)
		return 0;
	policy->secrets = calloc((size_t)count, sizeof(*policy->secrets));
	if (!policy->secrets)
		return -ENOMEM;
	cJSON_ArrayForEach (item, list) {
		size_t i = policy->nsecrets;

		policy->nsecrets = i + 1;
		snprintf(key, sizeof(key), "secrets[%zu]", i);
		r = parse_secret(ctx, item, key, policy, &policy->secrets[i]);
		if (r < 0)
			return r;
		r = check_secret_against_earlier(ctx, key, policy, i);
		if (r < 0)
			return r;
	}
	return 0;
}
