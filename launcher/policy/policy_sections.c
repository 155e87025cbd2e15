// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The sections of a policy file besides "name" and "allow": "unix" paths, "fs" (read_only and
 * write paths), "limits" and "listen", each checked as strictly as the rest.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "limit.h"
#include "policy.h"
#include "policy_internal.h"

int policy_parse_unix(const struct parse_ctx *ctx, const cJSON *unix_paths, struct policy *policy)
{
	char key[KEY_PATH_LEN], vbuf[ERR_VALUE_SHOWN_LEN];
	const cJSON *item;
	int count;

	if (!unix_paths)
		return 0;
	if (!cJSON_IsArray(unix_paths))
		return policy_fail(ctx, "unix", "must be an array, not %s",
				   policy_json_type(unix_paths));
	count = cJSON_GetArraySize(unix_paths);
	if (count > MAX_UNIX_PATHS)
		return policy_fail(ctx, "unix", "%d entries, at most %d (MAX_UNIX_PATHS)", count,
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
			return policy_fail(ctx, key, "must be a string, not %s",
					   policy_json_type(item));
		path = item->valuestring;
		len = strlen(path);
		policy_shown(path, vbuf, sizeof(vbuf));
		if (path[0] != '/' && path[0] != '@')
			return policy_fail(ctx, key,
					   "\"%s\" must be an absolute path or \"@name\" for an "
					   "abstract socket",
					   vbuf);
		if (path[0] == '@' && len == 1)
			return policy_fail(ctx, key, "\"@\" needs a name after it");
		/* "@name" becomes sun_path "\0name": the same number of bytes. */
		if (len > UNIX_PATH_LEN - 1)
			return policy_fail(ctx, key, "\"%s\" is %zu bytes, at most %d", vbuf, len,
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
		return policy_fail(ctx, "fs.write", "must be an array, not %s",
				   policy_json_type(write));
	count = cJSON_GetArraySize(write);
	if (count > POLICY_MAX_FS_WRITE)
		return policy_fail(ctx, "fs.write", "%d entries, at most %d", count,
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
			return policy_fail(ctx, key, "must be a string, not %s",
					   policy_json_type(item));
		problem = fs_path_problem(item->valuestring);
		if (problem)
			return policy_fail(ctx, key, "\"%s\" %s",
					   policy_shown(item->valuestring, vbuf, sizeof(vbuf)),
					   problem);
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
		return policy_fail(ctx, key, "must be a number or a string, not %s",
				   policy_json_type(item));
	if (item->valuedouble < 0 || item->valuedouble > 1e18 ||
	    (!fractions && item->valuedouble != (double)(long long)item->valuedouble))
		return policy_fail(ctx, key, "%g is not a %s", item->valuedouble,
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
		return policy_fail(ctx, key, "must be an object, not %s", policy_json_type(obj));
	r = policy_check_keys(ctx, obj, key, known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	port = cJSON_GetObjectItemCaseSensitive(obj, "port");
	unix_name = cJSON_GetObjectItemCaseSensitive(obj, "unix");
	protocol = cJSON_GetObjectItemCaseSensitive(obj, "protocol");
	if (!port == !unix_name)
		return policy_fail(ctx, key, "needs exactly one of \"port\" or \"unix\"");
	if (unix_name) {
		const char *name;
		size_t len;

		snprintf(subkey, sizeof(subkey), "%s.unix", key);
		if (protocol)
			return policy_fail(ctx, key,
					   "\"protocol\" goes with \"port\", not \"unix\"");
		if (!cJSON_IsString(unix_name))
			return policy_fail(ctx, subkey, "must be a string, not %s",
					   policy_json_type(unix_name));
		name = unix_name->valuestring;
		len = strlen(name);
		policy_shown(name, vbuf, sizeof(vbuf));
		/* A path socket is a file: where the job may make one is the file system's say. */
		if (name[0] != '@' || len == 1)
			return policy_fail(ctx, subkey,
					   "\"%s\" must be \"@name\", an abstract socket name",
					   vbuf);
		if (len > UNIX_PATH_LEN - 1)
			return policy_fail(ctx, subkey, "\"%s\" is %zu bytes, at most %d", vbuf,
					   len, UNIX_PATH_LEN - 1);
		if (policy->nlisten_unix >= MAX_UNIX_PATHS)
			return policy_fail(ctx, subkey, "more than %d names (MAX_UNIX_PATHS)",
					   MAX_UNIX_PATHS);
		policy->listen_unix[policy->nlisten_unix] = strdup(name);
		if (!policy->listen_unix[policy->nlisten_unix])
			return -ENOMEM;
		policy->nlisten_unix++;
		return 0;
	}

	snprintf(subkey, sizeof(subkey), "%s.protocol", key);
	r = policy_parse_protocol(ctx, protocol, subkey, &protos);
	if (r < 0)
		return r;
	snprintf(subkey, sizeof(subkey), "%s.port", key);
	if (cJSON_IsNumber(port)) {
		double v = port->valuedouble;

		/* As in "ports": the range test first, so that the cast is defined. */
		if (!(v >= 1 && v <= 65535) || v != (double)(unsigned int)v)
			return policy_fail(ctx, subkey, "%g is not a port (1-65535)", v);
		range.lo = range.hi = (__u16)v;
	} else if (cJSON_IsString(port)) {
		if (policy_parse_port_range(port->valuestring, &range) < 0)
			return policy_fail(ctx, subkey,
					   "\"%s\" is not a port or a range \"lo-hi\" (1-65535, "
					   "lo <= hi)",
					   policy_shown(port->valuestring, vbuf, sizeof(vbuf)));
	} else {
		return policy_fail(ctx, subkey,
				   "must be a port number or a \"lo-hi\" string, not %s",
				   policy_json_type(port));
	}
	if (policy->nlisten_ports >= MAX_LISTEN_PORTS)
		return policy_fail(ctx, subkey, "more than %d ports (MAX_LISTEN_PORTS)",
				   MAX_LISTEN_PORTS);
	range.protos = protos;
	policy->listen_ports[policy->nlisten_ports++] = range;
	return 0;
}

int policy_parse_listen(const struct parse_ctx *ctx, const cJSON *listen, struct policy *policy)
{
	const cJSON *item;
	size_t i = 0;
	int count, r;

	if (!listen)
		return 0;
	if (!cJSON_IsArray(listen))
		return policy_fail(ctx, "listen", "must be an array, not %s",
				   policy_json_type(listen));
	count = cJSON_GetArraySize(listen);
	if (count > MAX_LISTEN_PORTS + MAX_UNIX_PATHS)
		return policy_fail(ctx, "listen", "%d entries, at most %d", count,
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
int policy_parse_fs(const struct parse_ctx *ctx, const cJSON *fs, struct policy *policy)
{
	static const char *const known[] = { "write", "read_only" };
	const cJSON *read_only, *write;
	int r;

	policy->fs_read_only = true;
	if (!fs)
		return 0;
	if (!cJSON_IsObject(fs))
		return policy_fail(ctx, "fs", "must be an object, not %s", policy_json_type(fs));
	r = policy_check_keys(ctx, fs, "fs", known, ARRAY_SIZE(known));
	if (r < 0)
		return r;
	policy->fs_set = true;
	read_only = cJSON_GetObjectItemCaseSensitive(fs, "read_only");
	if (read_only) {
		if (!cJSON_IsBool(read_only))
			return policy_fail(ctx, "fs.read_only", "must be true or false, not %s",
					   policy_json_type(read_only));
		policy->fs_read_only = cJSON_IsTrue(read_only);
	}
	write = cJSON_GetObjectItemCaseSensitive(fs, "write");
	if (!write)
		return 0;
	if (!policy->fs_read_only)
		return policy_fail(ctx, "fs.write",
				   "has no effect with \"read_only\": false, which lets the job "
				   "write every file its user may");
	return parse_fs_write(ctx, write, policy);
}

/*
 * "limits": the job's resources, as the --pids-max, --memory-max, --cpu-max, --tmp-size and
 * --nofile options (which take precedence); each key also with a '-' for the '_'.
 */
int policy_parse_limits(const struct parse_ctx *ctx, const cJSON *limits, struct policy *policy)
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
		return policy_fail(ctx, "limits", "must be an object, not %s",
				   policy_json_type(limits));
	r = policy_check_keys(ctx, limits, "limits", known, ARRAY_SIZE(known));
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
				return policy_fail(ctx, "limits", "duplicate key \"%s\"", known[i]);
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
		policy_shown(text, vbuf, sizeof(vbuf));
		if (strcmp(name, "pids_max") == 0)
			return policy_fail(ctx, key,
					   "\"%s\" is not a number of tasks (1-%u) or \"max\"",
					   vbuf, LIMIT_PIDS_CEILING);
		if (strcmp(name, "memory_max") == 0)
			return policy_fail(ctx, key,
					   "\"%s\" is not a size of at least 4M (bytes, or with K, "
					   "M, G, T) or \"max\"",
					   vbuf);
		if (cpu)
			return policy_fail(
				ctx, key,
				"\"%s\" is not a number of CPUs (\"1.5\"), a percentage "
				"of one (\"150%%\"), \"QUOTA PERIOD\" in microseconds or "
				"\"max\"",
				vbuf);
		if (strcmp(name, "tmp_size") == 0)
			return policy_fail(ctx, key,
					   "\"%s\" is not a size (bytes, or with K, M, G, T) or a "
					   "percentage of the RAM (1-100%%)",
					   vbuf);
		return policy_fail(ctx, key, "\"%s\" is not a number of descriptors (3-%u)", vbuf,
				   LIMIT_NOFILE_CEILING);
	}
	return 0;
}
