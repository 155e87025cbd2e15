// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of audit_schema.c (--audit-format): every kind of line launch writes, made by the
 * real formatters with a fixed time and host, is turned into an OCSF 1.3.0 event and an ECS
 * 8.11.0 document that must equal the golden files in tests/unit/golden/, and each document is
 * checked field by field against the schemas' published definitions (tests/unit/schema/,
 * extracted from the schemas' own repositories by tests/unit/schema/extract.py).
 *
 * UPDATE_GOLDEN=1 rewrites the golden files from what the code makes now (then review the diff).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/audit_schema.h"
#include "lib/util.h"
#include "test.h"

#define GOLDEN_DIR  "tests/unit/golden"
#define OCSF_SCHEMA "tests/unit/schema/ocsf-" AUDIT_SCHEMA_OCSF_VERSION ".txt"
#define ECS_SCHEMA  "tests/unit/schema/ecs-" AUDIT_SCHEMA_ECS_VERSION ".txt"
/* The time every line of a case carries. */
#define FIXED_TS "2026-11-30T16:52:30.322886Z"

static struct audit_log test_log;

/* One line of launch's, by the name of its golden files. */
struct schema_case {
	const char *name;
	char line[AUDIT_LINE_MAX];
};

#define CASES_MAX 32
static struct schema_case cases[CASES_MAX];
static size_t ncases;

static void log_init(void)
{
	memset(&test_log, 0, sizeof(test_log));
	test_log.fd = -1;
	strcpy(test_log.sandbox, "159138ce3fa5");
	strcpy(test_log.policy, "demo");
	strcpy(test_log.host, "vm");
	test_log.pid = 4242;
	/* 2026-11-30T16:52:30.322886Z minus the boot time of the events below. */
	test_log.boot_to_real_ns = 1796057550322886000LL - 123456789000LL;
}

/* The time of lines stamped when formatted (not from the kernel) is the case's too. */
static void fix_ts(char *line)
{
	char *ts = strstr(line, "\"ts\":\"");

	if (ts)
		memcpy(ts + 6, FIXED_TS, strlen(FIXED_TS));
}

static void add_case(const char *name, int n)
{
	CHECK(n > 0);
	if (n <= 0 || ncases == CASES_MAX)
		return;
	cases[ncases].name = name;
	memcpy(cases[ncases].line, test_log.out, (size_t)n + 1);
	fix_ts(cases[ncases].line);
	ncases++;
	/* The next line's seq, as audit_append would count it. */
	test_log.seq++;
}

/*
 * Lines of events whose formatters are not in this tree, written as docs/audit-log.md shows
 * them: a DNS refusal folding repeated queries ("repeats"), audit-only's would_deny and
 * allow, and policy_update.
 */
static void add_fixed_case(const char *name, const char *line)
{
	if (ncases == CASES_MAX)
		return;
	cases[ncases].name = name;
	snprintf(cases[ncases].line, sizeof(cases[ncases].line), "%s\n", line);
	ncases++;
}

static struct deny_event event(unsigned int op)
{
	struct deny_event e = { .boot_ns = 123456789000ULL,
				.pid = 23944,
				.tid = 23945,
				.uid = 65534,
				.op = (__u16)op,
				.family = AF_INET,
				.sock_type = SOCK_STREAM,
				.protocol = IPPROTO_TCP,
				.port = 8443 };

	e.addr[10] = e.addr[11] = 0xff;
	e.addr[12] = 127;
	e.addr[15] = 3;
	strcpy(e.comm, "probe");
	return e;
}

/* Every kind of line launch writes today, by the real formatters (audit.c). */
static void make_cases(void)
{
	char *const argv[] = { "/usr/bin/python3", "agent.py", "--name=é \"x\"", NULL };
	char *const writable[] = { "/home/ann/job", "/tmp", "/dev/shm", NULL };
	struct audit_job job = {
		.uid = 65534, .gid = 65534, .landlock_abi = 7, .fs_write = writable
	};
	static struct policy policy = { .name = "demo", .path = "/etc/launch/demo.json" };
	static struct policy *policies[] = { &policy };
	struct in6_addr addrs[2] = { 0 };
	struct audit_exit exit = { .exit_code = 0, .duration_ms = 207, .denied = 19 };
	char *buf = test_log.out;
	size_t cap = AUDIT_LINE_MAX;
	struct deny_event e;

	log_init();
	ncases = 0;
	strcpy(policy.sha256, "7f0d64df59020ca931d31455325366d26ff08869345eb5be8cb326515289a907");
	test_log.policies = policies;
	test_log.npolicies = 1;
	add_case("sandbox_start",
		 audit_format_start(&test_log, argv, 23940, &job, 1, "vm", buf, cap));

	e = event(AUDIT_OP_CONNECT);
	add_case("deny_connect", audit_format_deny_exe(&test_log, &e, "api.stripe.com",
						       "/usr/bin/python3.11", buf, cap));
	e = event(AUDIT_OP_SENDMSG);
	e.family = AF_INET6;
	e.sock_type = SOCK_DGRAM;
	e.protocol = IPPROTO_UDP;
	memset(e.addr, 0, sizeof(e.addr));
	e.addr[0] = 0x20, e.addr[1] = 0x01, e.addr[2] = 0x0d, e.addr[3] = 0xb8, e.addr[15] = 9;
	e.port = 443;
	add_case("deny_sendmsg",
		 audit_format_deny_exe(&test_log, &e, NULL, "/usr/bin/python3.11", buf, cap));
	e = event(AUDIT_OP_SOCKET);
	e.family = AF_PACKET;
	e.sock_type = SOCK_RAW;
	e.protocol = 0;
	e.syscall_arch = AUDIT_ARCH_X86_64;
	e.syscall_nr = 41;
	add_case("deny_socket",
		 audit_format_deny_exe(&test_log, &e, NULL, "/usr/bin/python3.11", buf, cap));
	e = event(AUDIT_OP_CONNECT_UNIX);
	e.family = AF_UNIX;
	strcpy(e.unix_path, "/run/docker.sock");
	add_case("deny_connect_unix",
		 audit_format_deny_exe(&test_log, &e, NULL, "/usr/bin/python3.11", buf, cap));
	e = event(AUDIT_OP_SENDMSG_UNIX);
	e.family = AF_UNIX;
	e.sock_type = SOCK_DGRAM;
	memcpy(e.unix_path, "\0evil\0secret", 12);
	e.unix_path_len = 12;
	add_case("deny_sendmsg_unix", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_SETSOCKOPT);
	e.family = AF_INET6;
	e.level = IPPROTO_IPV6;
	e.optname = IPV6_RTHDR;
	add_case("deny_setsockopt", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_PACKET);
	e.pid = e.tid = e.uid = 0;
	e.comm[0] = '\0';
	e.reason = PACKET_DROP_DESTINATION;
	add_case("deny_packet", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_USERNS);
	e.syscall_arch = AUDIT_ARCH_X86_64;
	e.syscall_nr = 272; /* unshare */
	add_case("deny_userns",
		 audit_format_deny_exe(&test_log, &e, NULL, "/usr/bin/unshare", buf, cap));
	e = event(AUDIT_OP_IO_URING);
	e.syscall_arch = AUDIT_ARCH_X86_64;
	e.syscall_nr = 425; /* io_uring_setup */
	add_case("deny_io_uring", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_SYSCALL);
	e.syscall_arch = AUDIT_ARCH_I386;
	e.syscall_nr = 359; /* socket */
	add_case("deny_syscall", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_BIND);
	e.addr[12] = 10, e.addr[15] = 1;
	e.port = 8080;
	e.reason = AUDIT_REASON_ADDRESS;
	add_case("deny_bind", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_LISTEN);
	e.port = 9000;
	e.reason = AUDIT_REASON_PEER;
	e.peer_addr[10] = e.peer_addr[11] = 0xff;
	e.peer_addr[12] = 192, e.peer_addr[13] = 0, e.peer_addr[14] = 2, e.peer_addr[15] = 7;
	e.peer_port = 51000;
	add_case("deny_listen_peer", audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));
	e = event(AUDIT_OP_LISTEN);
	e.family = AF_UNIX;
	memcpy(e.unix_path, "\0agent", 6);
	e.unix_path_len = 6;
	e.reason = AUDIT_REASON_ABSTRACT;
	add_case("deny_listen_abstract",
		 audit_format_deny_exe(&test_log, &e, NULL, NULL, buf, cap));

	struct audit_dns dns = { .protocol = "udp",
				 .qname = "ExFiL.Example.COM",
				 .qtype = "TXT",
				 .rcode = "REFUSED",
				 .reason = "name",
				 .pid = 23944 };
	add_case("deny_dns", audit_format_dns_deny(&test_log, &dns, buf, cap));
	dns = (struct audit_dns){ .protocol = "udp", .rcode = "FORMERR", .reason = "malformed" };
	add_case("deny_dns_malformed", audit_format_dns_deny(&test_log, &dns, buf, cap));
	addrs[0].s6_addr[10] = addrs[0].s6_addr[11] = 0xff;
	addrs[0].s6_addr[12] = 198, addrs[0].s6_addr[13] = 51, addrs[0].s6_addr[14] = 100;
	addrs[0].s6_addr[15] = 7;
	addrs[1].s6_addr[0] = 0x20, addrs[1].s6_addr[1] = 0x01, addrs[1].s6_addr[2] = 0x0d;
	addrs[1].s6_addr[3] = 0xb8, addrs[1].s6_addr[15] = 7;
	dns = (struct audit_dns){ .protocol = "udp",
				  .qname = "api.stripe.com",
				  .qtype = "A",
				  .rcode = "NOERROR",
				  .addrs = addrs,
				  .naddrs = 2,
				  .ttl_s = 60,
				  .open_s = 120 };
	add_case("dns_allow", audit_format_dns_allow(&test_log, &dns, buf, cap));
	add_case("events_lost", audit_format_lost(&test_log, 17, buf, cap));
	add_case("limit", audit_format_limit(&test_log, "memory", 268435456, "stopped", buf, cap));
	test_log.denied_by_op[AUDIT_OP_CONNECT] = 1;
	test_log.denied_dns = 1;
	add_case("sandbox_exit", audit_format_exit(&test_log, &exit, buf, cap));
	exit.exit_code = -SIGKILL;
	add_case("sandbox_exit_signal", audit_format_exit(&test_log, &exit, buf, cap));
	add_fixed_case("deny_dns_repeats",
		       "{\"ts\":\"" FIXED_TS "\",\"event\":\"deny\",\"v\":1,\"seq\":22,"
		       "\"host\":\"vm\",\"sandbox\":\"159138ce3fa5\",\"policy\":\"demo\","
		       "\"op\":\"dns\",\"pid\":23944,\"protocol\":\"udp\",\"qname\":"
		       "\"evil.example\",\"qtype\":\"A\",\"rcode\":\"REFUSED\",\"reason\":"
		       "\"name\",\"repeats\":2}");
	add_fixed_case("would_deny",
		       "{\"ts\":\"" FIXED_TS "\",\"event\":\"would_deny\",\"v\":1,\"seq\":24,"
		       "\"host\":\"vm\",\"sandbox\":\"159138ce3fa5\",\"policy\":\"demo\","
		       "\"op\":\"connect\",\"pid\":2971,\"tid\":2971,\"comm\":\"python3\","
		       "\"uid\":65534,\"exe\":\"/usr/bin/python3.11\",\"family\":\"ipv4\","
		       "\"protocol\":\"tcp\",\"dst_ip\":\"127.0.9.2\",\"dst_port\":8443,"
		       "\"dst_name\":\"cdn.learn.test\"}");
	add_fixed_case("allow", "{\"ts\":\"" FIXED_TS "\",\"event\":\"allow\",\"v\":1,\"seq\":25,"
				"\"host\":\"vm\",\"sandbox\":\"159138ce3fa5\",\"policy\":\"demo\","
				"\"op\":\"connect\",\"pid\":2971,\"tid\":2971,\"comm\":\"python3\","
				"\"uid\":65534,\"exe\":\"/usr/bin/python3.11\",\"family\":\"ipv4\","
				"\"protocol\":\"tcp\",\"dst_ip\":\"127.0.9.1\",\"dst_port\":8443,"
				"\"dst_name\":\"api.learn.test\"}");
	add_fixed_case("would_deny_dns",
		       "{\"ts\":\"" FIXED_TS "\",\"event\":\"would_deny\",\"v\":1,\"seq\":26,"
		       "\"host\":\"vm\",\"sandbox\":\"159138ce3fa5\",\"policy\":\"demo\","
		       "\"op\":\"dns\",\"pid\":2971,\"protocol\":\"udp\",\"qname\":"
		       "\"cdn.learn.test\",\"qtype\":\"A\",\"rcode\":\"REFUSED\",\"reason\":"
		       "\"name\"}");
	add_fixed_case(
		"policy_update",
		"{\"ts\":\"" FIXED_TS "\",\"event\":\"policy_update\",\"v\":1,"
		"\"seq\":23,\"host\":\"vm\",\"sandbox\":\"159138ce3fa5\",\"policy\":"
		"\"new\",\"old_policy\":\"demo\",\"old_policies\":[{\"name\":\"demo\","
		"\"path\":\"/etc/launch/demo.json\",\"sha256\":\"7f0d64df59020ca931d3145532"
		"5366d26ff08869345eb5be8cb326515289a907\"}],\"policies\":[{\"name\":\"new\","
		"\"path\":\"/srv/p/new.json\",\"sha256\":\"716c8a10bb56e183fc6a09a7ff6aa6a7fa"
		"7bda0c863851ba425386a5b6ba9c45\"}],\"rules\":1,\"requester_pid\":13879,"
		"\"requester_uid\":0}");
	/* The gateway's lines: a request let through with its secret, and one refused. */
	test_log.seq = 26;
	add_case("http_allow", audit_format_http(&test_log,
						 &(struct audit_http){ .method = "GET",
								       .host = "api.stripe.com",
								       .path = "/v1/customers",
								       .status = 200,
								       .bytes_in = 1342,
								       .duration_ms = 41.25,
								       .allowed = true,
								       .reason = "",
								       .secret = "STRIPE_API_KEY",
								       .pid = 23944,
								       .comm = "node",
								       .exe = "/usr/bin/node" },
						 buf, cap));
	add_case("http_deny", audit_format_http(&test_log,
						&(struct audit_http){ .method = "POST",
								      .host = "api.stripe.com",
								      .path = "/v1/customers",
								      .status = 403,
								      .duration_ms = 0.125,
								      .reason = "credential",
								      .pid = 23944,
								      .comm = "node",
								      .exe = "/usr/bin/node" },
						buf, cap));
	add_fixed_case("deny_tls",
		       "{\"ts\":\"" FIXED_TS "\",\"event\":\"deny\",\"v\":1,\"seq\":27,"
		       "\"host\":\"vm\",\"sandbox\":\"159138ce3fa5\",\"policy\":\"openai\","
		       "\"op\":\"tls\",\"pid\":2971,\"tid\":2971,\"comm\":\"python3\","
		       "\"uid\":65534,\"exe\":\"/usr/bin/python3.11\",\"family\":\"ipv4\","
		       "\"protocol\":\"tcp\",\"dst_ip\":\"127.0.0.10\",\"dst_port\":443,"
		       "\"dst_name\":\"api.openai.com\",\"sni\":\"evil.example\","
		       "\"reason\":\"name\"}");
}

static int translate(enum audit_schema schema, struct audit_schema_ctx *ctx, const char *line,
		     char *out, size_t cap)
{
	if (ctx->schema != schema)
		*ctx = (struct audit_schema_ctx){ .schema = schema,
						  .version = "0.1.0",
						  .launcher_pid = 4242 };
	return audit_schema_translate(ctx, line, strlen(line), out, cap);
}

/* --- the published schemas, as tests/unit/schema/ lists them ------------------------------ */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		text = calloc(1, (size_t)len + 1);
		if (text && fread(text, 1, (size_t)len, f) != (size_t)len) {
			free(text);
			text = NULL;
		}
	}
	fclose(f);
	return text;
}

/* The line of the list starting with these words (a space after the last), or NULL. */
static const char *schema_line(const char *list, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = list; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, n) == 0)
			return p;
	return NULL;
}

/* Word i (0: the first) of a list line, into buf. */
static const char *word(const char *line, int i, char *buf, size_t cap)
{
	size_t n;

	buf[0] = '\0';
	for (; line && i > 0; i--) {
		line = strpbrk(line, " \n");
		if (!line || *line == '\n')
			return buf;
		line++;
	}
	if (!line)
		return buf;
	n = strcspn(line, " \n");
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	return buf;
}

/* The member at a dotted path ("ecs.version"), or NULL. */
static const cJSON *path_get(const cJSON *obj, const char *path)
{
	char key[128];

	while (obj && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		obj = cJSON_GetObjectItemCaseSensitive(obj, key);
		path += n + (path[n] == '.');
	}
	return obj;
}

/* Whether a JSON value has the kind an OCSF or ECS type says. */
static bool type_matches(const cJSON *v, const char *type)
{
	if (!strcmp(type, "integer_t") || !strcmp(type, "long_t") || !strcmp(type, "long") ||
	    !strcmp(type, "integer") || !strcmp(type, "short") || !strcmp(type, "byte") ||
	    !strcmp(type, "unsigned_long"))
		return cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble;
	if (!strcmp(type, "float_t") || !strcmp(type, "float") || !strcmp(type, "double") ||
	    !strcmp(type, "scaled_float"))
		return cJSON_IsNumber(v);
	if (!strcmp(type, "boolean_t") || !strcmp(type, "boolean"))
		return cJSON_IsBool(v);
	if (!strncmp(type, "object:", 7) || !strcmp(type, "object") || !strcmp(type, "flattened"))
		return cJSON_IsObject(v);
	if (!strcmp(type, "json_t"))
		return true;
	/* string_t and its kinds; ECS keyword, ip, date, text... */
	return cJSON_IsString(v);
}

/* Whether an _id attribute's value is among its enum's (when the list has one). */
static void check_enum(const char *list, const char *scope, const cJSON *item, const char *where)
{
	char prefix[128], values[512], value[32];
	const char *line;

	snprintf(prefix, sizeof(prefix), "enum %s %s ", scope, item->string);
	line = schema_line(list, prefix);
	if (!line)
		return;
	word(line, 3, values, sizeof(values));
	snprintf(value, sizeof(value), "%d", item->valueint);
	for (char *v = strtok(values, ","); v; v = strtok(NULL, ","))
		if (!strcmp(v, value))
			return;
	printf("  %s.%s: %s is not in OCSF's enum (%s)\n", where, item->string, value,
	       word(line, 3, values, sizeof(values)));
	test_current_failed = 1;
}

static bool has_profile(const cJSON *doc, const char *profile)
{
	const cJSON *profiles =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(doc, "metadata"), "profiles");
	const cJSON *p;

	if (!strcmp(profile, "-"))
		return true;
	cJSON_ArrayForEach (p, profiles)
		if (cJSON_IsString(p) && !strcmp(p->valuestring, profile))
			return true;
	return false;
}

/*
 * Checks obj against the definition of a class ("attr UID") or object ("field NAME"): every
 * member defined with its type, every required one there (a profile's, when the document
 * declares the profile), enums, and at-least-one constraints; then each member object.
 */
static void check_ocsf_object(const char *list, const cJSON *doc, const cJSON *obj,
			      const char *kind, const char *scope, const char *where)
{
	char prefix[128], buf[128], type[64], array[16], req[32], profile[64];
	const cJSON *item;
	const char *line;

	cJSON_ArrayForEach (item, obj) {
		char path[256];
		const cJSON *elem;

		snprintf(path, sizeof(path), "%s.%s", where, item->string);
		snprintf(prefix, sizeof(prefix), "%s %s %s ", kind, scope, item->string);
		line = schema_line(list, prefix);
		if (!line) {
			printf("  %s: not an attribute of OCSF %s %s\n", path, kind, scope);
			test_current_failed = 1;
			continue;
		}
		word(line, 3, type, sizeof(type));
		word(line, 4, array, sizeof(array));
		word(line, 6, profile, sizeof(profile));
		if (!has_profile(doc, profile)) {
			printf("  %s: of profile %s, which metadata.profiles does not name\n", path,
			       profile);
			test_current_failed = 1;
		}
		if ((strcmp(array, "array") == 0) != (cJSON_IsArray(item) != 0)) {
			printf("  %s: %s an array in OCSF\n", path,
			       strcmp(array, "array") ? "not" : "is");
			test_current_failed = 1;
			continue;
		}
		cJSON_ArrayForEach (elem, (cJSON_IsArray(item) ? item : NULL))
			if (!type_matches(elem, type)) {
				printf("  %s[]: not of type %s\n", path, type);
				test_current_failed = 1;
			}
		if (!cJSON_IsArray(item) && !type_matches(item, type)) {
			printf("  %s: not of type %s\n", path, type);
			test_current_failed = 1;
			continue;
		}
		if (cJSON_IsNumber(item))
			check_enum(list, scope, item, where);
		/* unmapped (object:object) holds what OCSF has no attribute for: not checked. */
		if (!strncmp(type, "object:", 7) && strcmp(type, "object:object")) {
			if (cJSON_IsArray(item))
				cJSON_ArrayForEach (elem, item)
					check_ocsf_object(list, doc, elem, "field", type + 7, path);
			else
				check_ocsf_object(list, doc, item, "field", type + 7, path);
		}
	}
	/* Required members, and the at-least-one constraints. */
	snprintf(prefix, sizeof(prefix), "%s %s ", kind, scope);
	if (!schema_line(list, prefix)) {
		printf("  %s: OCSF %s %s is not in %s (add it to extract.py)\n", where, kind, scope,
		       OCSF_SCHEMA);
		test_current_failed = 1;
	}
	for (line = schema_line(list, prefix); line; line = schema_line(line + 1, prefix)) {
		word(line, 2, buf, sizeof(buf));
		word(line, 5, req, sizeof(req));
		word(line, 6, profile, sizeof(profile));
		if (!strcmp(req, "required") && has_profile(doc, profile) &&
		    !cJSON_GetObjectItemCaseSensitive(obj, buf)) {
			printf("  %s: lacks %s, required by OCSF %s %s\n", where, buf, kind, scope);
			test_current_failed = 1;
		}
	}
	snprintf(prefix, sizeof(prefix), "oneof %s ", scope);
	line = schema_line(list, prefix);
	if (line && !strcmp(kind, "field")) {
		char names[256];
		bool found = false;

		word(line, 2, names, sizeof(names));
		for (char *n = strtok(names, ","); n; n = strtok(NULL, ","))
			found |= cJSON_GetObjectItemCaseSensitive(obj, n) != NULL;
		if (!found) {
			printf("  %s: has none of %s (OCSF %s: at least one)\n", where,
			       word(line, 2, names, sizeof(names)), scope);
			test_current_failed = 1;
		}
	}
}

static void check_ocsf(const char *list, const char *text, const char *name)
{
	cJSON *doc = cJSON_Parse(text);
	char prefix[64], cat[16];
	const char *class_line;
	int class_uid, activity_id;

	CHECK(doc != NULL);
	if (!doc) {
		printf("  %s: not JSON: %s\n", name, text);
		return;
	}
	class_uid = (int)cJSON_GetNumberValue(path_get(doc, "class_uid"));
	activity_id = (int)cJSON_GetNumberValue(path_get(doc, "activity_id"));
	snprintf(prefix, sizeof(prefix), "class %d ", class_uid);
	class_line = schema_line(list, prefix);
	CHECK(class_line != NULL);
	if (class_line) {
		CHECK_EQ_INT((int)cJSON_GetNumberValue(path_get(doc, "category_uid")),
			     atoi(word(class_line, 3, cat, sizeof(cat))));
		CHECK_EQ_INT((long long)cJSON_GetNumberValue(path_get(doc, "type_uid")),
			     class_uid * 100LL + activity_id);
		snprintf(prefix, sizeof(prefix), "%d", class_uid);
		check_ocsf_object(list, doc, doc, "attr", prefix, name);
	}
	CHECK_EQ_STR(cJSON_GetStringValue(path_get(doc, "metadata.version")),
		     AUDIT_SCHEMA_OCSF_VERSION);
	cJSON_Delete(doc);
}

/* ECS: every field (dotted) outside our "launch" set, against ecs_flat.yml. */
static void check_ecs_fields(const char *list, const cJSON *obj, const char *prefix,
			     const char *name)
{
	const cJSON *item;

	cJSON_ArrayForEach (item, obj) {
		char path[256], key[300], type[32], array[16];
		const char *line;
		const cJSON *elem;

		snprintf(path, sizeof(path), "%s%s", prefix, item->string);
		if (!strcmp(path, "launch"))
			continue;
		snprintf(key, sizeof(key), "field %s ", path);
		line = schema_line(list, key);
		if (!line && cJSON_IsObject(item)) {
			snprintf(key, sizeof(key), "%s.", path);
			check_ecs_fields(list, item, key, name);
			continue;
		}
		if (!line) {
			printf("  %s: %s is not an ECS %s field\n", name, path,
			       AUDIT_SCHEMA_ECS_VERSION);
			test_current_failed = 1;
			continue;
		}
		word(line, 2, type, sizeof(type));
		word(line, 3, array, sizeof(array));
		if (cJSON_IsArray(item) && strcmp(array, "array")) {
			printf("  %s: %s is no array in ECS\n", name, path);
			test_current_failed = 1;
		}
		cJSON_ArrayForEach (elem, (cJSON_IsArray(item) ? item : NULL))
			if (!type_matches(elem, type)) {
				printf("  %s: %s[] is not of ECS type %s\n", name, path, type);
				test_current_failed = 1;
			}
		if (!cJSON_IsArray(item) && !type_matches(item, type)) {
			printf("  %s: %s is not of ECS type %s\n", name, path, type);
			test_current_failed = 1;
		}
		/* Fields with allowed values (event.kind, category, type, outcome). */
		snprintf(key, sizeof(key), "allowed %s ", path);
		if (schema_line(list, key)) {
			cJSON_ArrayForEach (elem, (cJSON_IsArray(item) ? item : NULL)) {
				char value_key[300];

				snprintf(value_key, sizeof(value_key), "allowed %s %s", path,
					 elem->valuestring);
				if (!schema_line(list, value_key)) {
					printf("  %s: %s \"%s\" is not allowed\n", name, path,
					       elem->valuestring);
					test_current_failed = 1;
				}
			}
			if (cJSON_IsString(item)) {
				char value_key[300];

				snprintf(value_key, sizeof(value_key), "allowed %s %s", path,
					 item->valuestring);
				if (!schema_line(list, value_key)) {
					printf("  %s: %s \"%s\" is not allowed\n", name, path,
					       item->valuestring);
					test_current_failed = 1;
				}
			}
		}
	}
}

static void check_ecs(const char *list, const char *text, const char *name)
{
	cJSON *doc = cJSON_Parse(text), *event, *category, *type, *c, *t;
	const char *line;

	CHECK(doc != NULL);
	if (!doc) {
		printf("  %s: not JSON: %s\n", name, text);
		return;
	}
	check_ecs_fields(list, doc, "", name);
	/* Required: @timestamp and ecs.version. */
	for (line = schema_line(list, "field "); line; line = schema_line(line + 1, "field ")) {
		char field[128], req[16];
		const cJSON *at = doc;

		word(line, 1, field, sizeof(field));
		word(line, 4, req, sizeof(req));
		if (strcmp(req, "required"))
			continue;
		at = path_get(doc, field);
		if (!at) {
			printf("  %s: lacks %s, required by ECS\n", name, field);
			test_current_failed = 1;
		}
	}
	CHECK_EQ_STR(cJSON_GetStringValue(path_get(doc, "ecs.version")), AUDIT_SCHEMA_ECS_VERSION);
	/* Each event.type must be one ECS expects with each event.category. */
	event = cJSON_GetObjectItem(doc, "event");
	category = cJSON_GetObjectItem(event, "category");
	type = cJSON_GetObjectItem(event, "type");
	CHECK(cJSON_GetArraySize(category) > 0 && cJSON_GetArraySize(type) > 0);
	cJSON_ArrayForEach (c, category) {
		char key[128], expected[256];

		snprintf(key, sizeof(key), "allowed event.category %s ", c->valuestring);
		line = schema_line(list, key);
		if (!line)
			continue;
		word(line, 3, expected, sizeof(expected));
		cJSON_ArrayForEach (t, type) {
			char needle[64];
			char padded[260];

			snprintf(padded, sizeof(padded), ",%s,", expected);
			snprintf(needle, sizeof(needle), ",%s,", t->valuestring);
			if (!strstr(padded, needle)) {
				printf("  %s: event.type %s is not expected with event.category "
				       "%s (%s)\n",
				       name, t->valuestring, c->valuestring, expected);
				test_current_failed = 1;
			}
		}
	}
	cJSON_Delete(doc);
}

/* --- the tests ----------------------------------------------------------------------------- */

static void golden(enum audit_schema schema, const char *dir)
{
	struct audit_schema_ctx ctx = { 0 };
	bool update = getenv("UPDATE_GOLDEN") != NULL;
	char out[AUDIT_LINE_MAX];

	make_cases();
	CHECK(ncases >= 20);
	for (size_t i = 0; i < ncases; i++) {
		char path[256];
		_cleanup_free_ char *want = NULL;
		int n = translate(schema, &ctx, cases[i].line, out, sizeof(out));

		CHECK(n > 0);
		if (n <= 0) {
			printf("  %s: %d for %s", cases[i].name, n, cases[i].line);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s/%s.json", GOLDEN_DIR, dir, cases[i].name);
		if (update) {
			FILE *f = fopen(path, "w");

			CHECK(f != NULL);
			if (f) {
				fputs(out, f);
				fclose(f);
			}
			continue;
		}
		want = read_file(path);
		if (!want || strcmp(want, out) != 0) {
			printf("  %s differs from %s:\n  made: %s  want: %s\n", cases[i].name, path,
			       out, want ? want : "(no file)\n");
			test_current_failed = 1;
		}
	}
}

static void test_ocsf_golden(void)
{
	golden(AUDIT_SCHEMA_OCSF, "ocsf");
}

static void test_ecs_golden(void)
{
	golden(AUDIT_SCHEMA_ECS, "ecs");
}

/* The examples in README.md and docs/audit-log.md are golden documents, as they are now. */
static void test_docs_show_goldens(void)
{
	static const char *const shown[][2] = {
		{ "README.md", GOLDEN_DIR "/ocsf/deny_connect.json" },
		{ "docs/audit-log.md", GOLDEN_DIR "/ocsf/deny_dns.json" },
		{ "docs/audit-log.md", GOLDEN_DIR "/ecs/deny_connect.json" },
	};

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		_cleanup_free_ char *doc = read_file(shown[i][0]), *golden = read_file(shown[i][1]);

		CHECK(doc && golden);
		if (!doc || !golden)
			continue;
		if (!strstr(doc, golden)) {
			printf("  %s does not show %s as it is now\n", shown[i][0], shown[i][1]);
			test_current_failed = 1;
		}
	}
}

static void check_schema(enum audit_schema schema)
{
	_cleanup_free_ char *list =
		read_file(schema == AUDIT_SCHEMA_OCSF ? OCSF_SCHEMA : ECS_SCHEMA);
	struct audit_schema_ctx ctx = { 0 };
	char out[AUDIT_LINE_MAX];

	CHECK(list != NULL);
	if (!list)
		return;
	make_cases();
	for (size_t i = 0; i < ncases; i++) {
		int n = translate(schema, &ctx, cases[i].line, out, sizeof(out));

		CHECK(n > 0);
		if (n <= 0)
			continue;
		if (schema == AUDIT_SCHEMA_OCSF)
			check_ocsf(list, out, cases[i].name);
		else
			check_ecs(list, out, cases[i].name);
	}
}

static void test_ocsf_schema(void)
{
	check_schema(AUDIT_SCHEMA_OCSF);
}

static void test_ecs_schema(void)
{
	check_schema(AUDIT_SCHEMA_ECS);
}

/* Whether a launch value turns up anywhere in the document (a number also as a string). */
static bool found_in(const cJSON *doc, const cJSON *value)
{
	const cJSON *item;

	if (cJSON_Compare(doc, value, true))
		return true;
	if (cJSON_IsString(doc) && cJSON_IsNumber(value)) {
		char text[32];

		snprintf(text, sizeof(text), "%lld", (long long)value->valuedouble);
		return !strcmp(doc->valuestring, text);
	}
	if (cJSON_IsString(doc) && cJSON_IsString(value) && value->valuestring[0])
		return strstr(doc->valuestring, value->valuestring) != NULL;
	cJSON_ArrayForEach (item, doc)
		if (found_in(item, value))
			return true;
	return false;
}

/* No field of a line is lost: each value is somewhere in each document. */
static void test_nothing_dropped(void)
{
	for (int s = AUDIT_SCHEMA_OCSF; s <= AUDIT_SCHEMA_ECS; s++) {
		struct audit_schema_ctx ctx = { 0 };
		char out[AUDIT_LINE_MAX];

		make_cases();
		for (size_t i = 0; i < ncases; i++) {
			cJSON *line = cJSON_Parse(cases[i].line), *doc, *field;

			CHECK(translate(s, &ctx, cases[i].line, out, sizeof(out)) > 0);
			doc = cJSON_Parse(out);
			CHECK(line && doc);
			cJSON_ArrayForEach (field, line) {
				const cJSON *elem;

				if (cJSON_IsArray(field)) {
					cJSON_ArrayForEach (elem, field)
						if (!found_in(doc, elem)) {
							printf("  %s %s: %s[] element lost\n",
							       s == AUDIT_SCHEMA_OCSF ? "ocsf"
										      : "ecs",
							       cases[i].name, field->string);
							test_current_failed = 1;
						}
				} else if (!found_in(doc, field)) {
					printf("  %s %s: %s lost\n",
					       s == AUDIT_SCHEMA_OCSF ? "ocsf" : "ecs",
					       cases[i].name, field->string);
					test_current_failed = 1;
				}
			}
			cJSON_Delete(line);
			cJSON_Delete(doc);
		}
	}
}

/* The longest sandbox_start still makes a document of one line within AUDIT_LINE_MAX. */
static void test_long_start_fits(void)
{
	static char big[4][AUDIT_ARG_MAX * 2];
	char *argv[] = { big[0], big[1], big[2], big[3], NULL };
	char *const writable[] = { big[0], big[1], NULL };
	struct audit_job job = { .uid = 1, .gid = 1, .landlock_abi = 7, .fs_write = writable };
	static struct policy policy = { .name = "p" };
	static struct policy *policies[] = { &policy };
	char line[AUDIT_LINE_MAX], out[AUDIT_LINE_MAX];
	int n;

	log_init();
	for (size_t i = 0; i < 4; i++) {
		memset(big[i], '"', sizeof(big[i]) - 1);
		big[i][sizeof(big[i]) - 1] = '\0';
	}
	memset(test_log.policy, 'x', 400);
	policy.path = big[2];
	test_log.policies = policies;
	test_log.npolicies = 1;
	n = audit_format_start(&test_log, argv, 1, &job, 1, "vm", line, sizeof(line));
	CHECK(n > 0);
	for (int s = AUDIT_SCHEMA_OCSF; s <= AUDIT_SCHEMA_ECS; s++) {
		struct audit_schema_ctx ctx = { 0 };
		cJSON *doc;

		n = translate(s, &ctx, line, out, sizeof(out));
		CHECK(n > 0 && n < AUDIT_LINE_MAX);
		CHECK(n > 0 && out[n - 1] == '\n' && !memchr(out, '\n', (size_t)n - 1));
		doc = cJSON_Parse(out);
		CHECK(doc != NULL);
		/* What was cut or left out is named. */
		CHECK_CONTAINS(out, "\"omitted\":[");
		cJSON_Delete(doc);
	}
}

/*
 * A refusal with every string at its cap (host, sandbox, policy, exe, name) fits too, as a
 * line and as a syslog message.
 */
static void test_long_deny_fits(void)
{
	static char exe[AUDIT_FIELD_MAX * 2], name[AUDIT_FIELD_MAX * 2];
	struct deny_event e = event(AUDIT_OP_CONNECT);
	char line[AUDIT_LINE_MAX], out[AUDIT_LINE_MAX];
	int n, m;

	log_init();
	/* ']' doubles in syslog's structured data (RFC 5424 6.3.3), a control byte in JSON. */
	memset(exe, ']', sizeof(exe) - 1);
	memset(name, ']', sizeof(name) - 1);
	memset(test_log.sandbox, ']', sizeof(test_log.sandbox) - 1);
	memset(test_log.policy, ']', sizeof(test_log.policy) - 1);
	memset(test_log.host, 'h', sizeof(test_log.host) - 1);
	memset(e.comm, '\x03', sizeof(e.comm));
	n = audit_format_deny_exe(&test_log, &e, name, exe, line, sizeof(line));
	CHECK(n > 0);
	/* Within rsyslog's default maxMessageSize, 8 KiB. */
	m = audit_syslog_format(line, strlen(line), test_log.host, 1, test_log.message,
				sizeof(test_log.message));
	CHECK(m > 0 && m <= 8192);
	for (int s = AUDIT_SCHEMA_OCSF; s <= AUDIT_SCHEMA_ECS; s++) {
		struct audit_schema_ctx ctx = { 0 };
		cJSON *doc;

		n = translate(s, &ctx, line, out, sizeof(out));
		CHECK(n > 0 && n < AUDIT_LINE_MAX);
		doc = cJSON_Parse(out);
		CHECK(doc != NULL);
		cJSON_Delete(doc);
		/* As a syslog message too: the structured data repeats the long fields. */
		m = n > 0 ? audit_syslog_format_msg(line, strlen(line), out, (size_t)n,
						    test_log.host, 1, test_log.message,
						    sizeof(test_log.message))
			  : -1;
		CHECK(m > 0 && m <= 8192);
	}
}

/* Through the log: lines are queued as documents; syslog keeps launch's structured data. */
static void test_log_queues_documents(void)
{
	struct deny_event e = event(AUDIT_OP_CONNECT);
	char line[AUDIT_LINE_MAX], text[8192], msg[AUDIT_LINE_MAX + 1024];
	struct audit_schema_ctx ctx = { 0 };
	char doc[AUDIT_LINE_MAX];
	int n;

	log_init();
	audit_set_schema(&test_log, AUDIT_SCHEMA_OCSF);
	CHECK_EQ_INT(audit_deny_exe(&test_log, &e, NULL, NULL), 0);
	audit_queued_text(&test_log, text, sizeof(text));
	CHECK(!strncmp(text, "{\"class_uid\":4001,", 18));
	CHECK_CONTAINS(text, "\"sequence\":1,");
	audit_discard(&test_log);

	audit_set_schema(&test_log, AUDIT_SCHEMA_ECS);
	CHECK_EQ_INT(audit_deny_exe(&test_log, &e, NULL, NULL), 0);
	audit_queued_text(&test_log, text, sizeof(text));
	CHECK(!strncmp(text, "{\"@timestamp\":", 14));
	CHECK_CONTAINS(text, "\"sequence\":2,");
	audit_discard(&test_log);

	n = audit_format_deny(&test_log, &e, line, sizeof(line));
	CHECK(n > 0);
	n = translate(AUDIT_SCHEMA_ECS, &ctx, line, doc, sizeof(doc));
	CHECK(n > 0);
	n = audit_syslog_format_msg(line, strlen(line), doc, (size_t)n, "vm", 7, msg, sizeof(msg));
	CHECK(n > 0);
	CHECK_CONTAINS(msg, "[launch@32473 event=\"deny\" seq=\"3\"");
	CHECK_CONTAINS(msg, "] {\"@timestamp\":");
	CHECK(msg[n - 1] == '}');
}

/* Whether a schema check finds fault with a document (the checks must be able to fail). */
static bool check_fails(enum audit_schema schema, const char *list, const char *text)
{
	int failed_before = test_current_failed;
	bool failed;

	test_current_failed = 0;
	printf("  (expected:)\n");
	if (schema == AUDIT_SCHEMA_OCSF)
		check_ocsf(list, text, "broken");
	else
		check_ecs(list, text, "broken");
	failed = test_current_failed;
	test_current_failed = failed_before;
	return failed;
}

static void test_schema_checks_find_faults(void)
{
	_cleanup_free_ char *ocsf = read_file(OCSF_SCHEMA), *ecs = read_file(ECS_SCHEMA);
	static const char *const broken_ocsf[] = {
		/* no dst_endpoint, which Network Activity requires */
		"{\"class_uid\":4001,\"category_uid\":4,\"activity_id\":5,\"type_uid\":400105,"
		"\"severity_id\":3,\"time\":1,\"metadata\":{\"version\":\"1.3.0\",\"product\":"
		"{\"name\":\"launch\",\"vendor_name\":\"launch\"}}}",
		/* a port as a string */
		"{\"class_uid\":4001,\"category_uid\":4,\"activity_id\":5,\"type_uid\":400105,"
		"\"severity_id\":3,\"time\":1,\"metadata\":{\"version\":\"1.3.0\",\"product\":"
		"{\"name\":\"launch\",\"vendor_name\":\"launch\"}},\"dst_endpoint\":{\"ip\":"
		"\"127.0.0.1\",\"port\":\"80\"}}",
		/* an activity DNS Activity does not have, and a type_uid that does not match */
		"{\"class_uid\":4003,\"category_uid\":4,\"activity_id\":5,\"type_uid\":400306,"
		"\"severity_id\":3,\"time\":1,\"metadata\":{\"version\":\"1.3.0\",\"product\":"
		"{\"name\":\"launch\",\"vendor_name\":\"launch\"}}}",
		/* action_id without the security_control profile declared; no vendor_name */
		"{\"class_uid\":4001,\"category_uid\":4,\"activity_id\":5,\"type_uid\":400105,"
		"\"severity_id\":3,\"time\":1,\"action_id\":2,\"metadata\":{\"version\":\"1.3.0\","
		"\"product\":{\"name\":\"launch\"}},\"dst_endpoint\":{\"ip\":\"127.0.0.1\"}}",
	};
	static const char *const broken_ecs[] = {
		/* no ecs.version */
		"{\"@timestamp\":\"x\",\"event\":{\"category\":[\"network\"],\"type\":[\"denied\"]}"
		"}",
		/* a type that ECS does not expect with the category */
		"{\"@timestamp\":\"x\",\"ecs\":{\"version\":\"8.11.0\"},\"event\":{\"category\":"
		"[\"process\"],\"type\":[\"denied\"]}}",
		/* a field ECS does not have, outside launch.* */
		"{\"@timestamp\":\"x\",\"ecs\":{\"version\":\"8.11.0\"},\"event\":{\"category\":"
		"[\"network\"],\"type\":[\"denied\"]},\"destination\":{\"hostname\":\"a\"}}",
		/* a port as a string */
		"{\"@timestamp\":\"x\",\"ecs\":{\"version\":\"8.11.0\"},\"event\":{\"category\":"
		"[\"network\"],\"type\":[\"denied\"]},\"destination\":{\"port\":\"80\"}}",
	};

	CHECK(ocsf && ecs);
	if (!ocsf || !ecs)
		return;
	for (size_t i = 0; i < sizeof(broken_ocsf) / sizeof(broken_ocsf[0]); i++)
		CHECK(check_fails(AUDIT_SCHEMA_OCSF, ocsf, broken_ocsf[i]));
	for (size_t i = 0; i < sizeof(broken_ecs) / sizeof(broken_ecs[0]); i++)
		CHECK(check_fails(AUDIT_SCHEMA_ECS, ecs, broken_ecs[i]));
}

static int translate_text(struct audit_schema_ctx *ctx, const char *text, char *out, size_t cap)
{
	return audit_schema_translate(ctx, text, strlen(text), out, cap);
}

/* OCSF's "time" is the line's ts in milliseconds, as timegm() reckons it; a bad ts is 0. */
static void test_ocsf_time(void)
{
	static const char *const stamps[] = {
		"1970-01-01T00:00:00.000000Z", "2000-02-29T12:34:56.789012Z",
		"2026-11-30T16:52:30.322886Z", "2026-12-31T23:59:59.999999Z",
		"2038-01-19T03:14:08.000001Z", "2100-03-01T00:00:00.500000Z",
	};
	struct audit_schema_ctx ctx = { .schema = AUDIT_SCHEMA_OCSF, .version = "0.1.0" };
	char line[256], out[1024];

	for (size_t i = 0; i < sizeof(stamps) / sizeof(stamps[0]); i++) {
		struct tm tm = { 0 };
		int usec = 0;
		cJSON *doc;

		sscanf(stamps[i], "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		       &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &usec);
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		snprintf(line, sizeof(line), "{\"ts\":\"%s\",\"event\":\"limit\"}\n", stamps[i]);
		CHECK(translate_text(&ctx, line, out, sizeof(out)) > 0);
		doc = cJSON_Parse(out);
		CHECK_EQ_INT(cJSON_GetNumberValue(path_get(doc, "time")),
			     (long long)timegm(&tm) * 1000 + usec / 1000);
		CHECK_EQ_STR(cJSON_GetStringValue(path_get(doc, "time_dt")), stamps[i]);
		cJSON_Delete(doc);
	}
	CHECK(translate_text(&ctx, "{\"ts\":\"2026-13-01T00:00:00.000000Z\",\"event\":\"limit\"}\n",
			     out, sizeof(out)) > 0);
	CHECK_CONTAINS(out, "\"time\":0,");
	CHECK_CONTAINS(out, "\"unmapped\":{\"ts\":\"2026-13-01T00:00:00.000000Z\"");
}

static void test_parse_and_errors(void)
{
	struct audit_schema_ctx ctx = { .schema = AUDIT_SCHEMA_OCSF, .version = "0.1.0" };
	enum audit_schema schema;
	char out[1024];

	CHECK_EQ_INT(audit_schema_parse("ocsf", &schema), 0);
	CHECK_EQ_INT(schema, AUDIT_SCHEMA_OCSF);
	CHECK_EQ_INT(audit_schema_parse("ecs", &schema), 0);
	CHECK_EQ_INT(schema, AUDIT_SCHEMA_ECS);
	CHECK_EQ_INT(audit_schema_parse("json", &schema), 0);
	CHECK_EQ_INT(schema, AUDIT_SCHEMA_JSON);
	CHECK_EQ_INT(audit_schema_parse("OCSF", &schema), -EINVAL);
	CHECK_EQ_INT(audit_schema_parse("", &schema), -EINVAL);
	CHECK_EQ_INT(translate_text(&ctx, "not json\n", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(translate_text(&ctx, "{\"a\":\n", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(translate_text(&ctx, "{\"ts\":\"x\",\"event\":\"deny\"}\n", out, 16),
		     -ENOBUFS);
	/* An event this mapping does not know is a Base Event with everything unmapped. */
	CHECK(translate_text(&ctx, "{\"ts\":\"x\",\"event\":\"new\",\"k\":[1]}\n", out,
			     sizeof(out)) > 0);
	CHECK(!strncmp(out, "{\"class_uid\":0,", 15));
	CHECK_CONTAINS(out, "\"unmapped\":{\"ts\":\"x\",\"event\":\"new\",\"k\":[1]}");
	ctx.schema = AUDIT_SCHEMA_JSON;
	CHECK_EQ_INT(translate_text(&ctx, "{}\n", out, sizeof(out)), 3);
	CHECK_EQ_STR(out, "{}\n");
}

int main(void)
{
	RUN(test_ocsf_golden);
	RUN(test_ecs_golden);
	RUN(test_docs_show_goldens);
	RUN(test_ocsf_schema);
	RUN(test_ecs_schema);
	RUN(test_nothing_dropped);
	RUN(test_long_start_fits);
	RUN(test_long_deny_fits);
	RUN(test_log_queues_documents);
	RUN(test_ocsf_time);
	RUN(test_parse_and_errors);
	RUN(test_schema_checks_find_faults);
	return test_failures != 0;
}
