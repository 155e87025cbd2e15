// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of audit.c: every line is valid JSON with the documented fields. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "lib/sha256.h"
#include "test.h"

static struct audit_log test_log;
/* A job as sandbox_start describes it, for the tests that look at other fields. */
static const struct audit_job test_job = { .uid = 0 };

static long long count_newlines(const char *s)
{
	long long n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void log_init(void)
{
	memset(&test_log, 0, sizeof(test_log));
	test_log.fd = -1;
	strcpy(test_log.sandbox, "sb1");
	strcpy(test_log.policy, "stripe,openai");
	test_log.boot_to_real_ns = 1796000000LL * 1000000000LL; /* 2026-11-30 */
}

static struct deny_event connect_event(void)
{
	struct deny_event e = { 0 };

	e.boot_ns = 123456789000ULL;
	e.pid = 42;
	e.tid = 43;
	e.uid = 1000;
	e.op = AUDIT_OP_CONNECT;
	e.family = AF_INET;
	e.sock_type = SOCK_STREAM;
	e.protocol = IPPROTO_TCP;
	e.port = 8080;
	e.addr[10] = 0xff;
	e.addr[11] = 0xff;
	e.addr[12] = 127;
	e.addr[15] = 3;
	strcpy(e.comm, "curl");
	return e;
}

/* Formats with fn's result, checks one line ending in '\n', parses it. */
static cJSON *parse_line(const char *buf, int n)
{
	CHECK(n > 0);
	if (n <= 0)
		return NULL;
	CHECK_EQ_INT(buf[n - 1], '\n');
	CHECK(memchr(buf, '\n', (size_t)n - 1) == NULL);
	return cJSON_Parse(buf);
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static double num(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(item) ? item->valuedouble : -1;
}

static void test_deny_connect_ipv4(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK(obj != NULL);
	CHECK_EQ_STR(str(obj, "event"), "deny");
	CHECK_EQ_STR(str(obj, "op"), "connect");
	CHECK_EQ_STR(str(obj, "sandbox"), "sb1");
	CHECK_EQ_STR(str(obj, "policy"), "stripe,openai");
	CHECK_EQ_STR(str(obj, "family"), "ipv4");
	CHECK_EQ_STR(str(obj, "protocol"), "tcp");
	CHECK_EQ_STR(str(obj, "dst_ip"), "127.0.0.3");
	CHECK_EQ_STR(str(obj, "comm"), "curl");
	CHECK_EQ_INT(num(obj, "dst_port"), 8080);
	CHECK_EQ_INT(num(obj, "pid"), 42);
	CHECK_EQ_INT(num(obj, "tid"), 43);
	CHECK_EQ_INT(num(obj, "uid"), 1000);
	CHECK_EQ_INT(num(obj, "v"), AUDIT_SCHEMA_VERSION);
	/* boot 123.456789 s after the offset: microseconds kept, nanoseconds cut. */
	CHECK_CONTAINS(str(obj, "ts"), ".456789Z");
	CHECK_EQ_INT(strlen(str(obj, "ts") ? str(obj, "ts") : ""), 27);
	cJSON_Delete(obj);
}

static void test_deny_ipv6_mapped_shown_as_given(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.family = AF_INET6;
	e.op = AUDIT_OP_SENDMSG;
	e.protocol = IPPROTO_UDP;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "family"), "ipv6");
	CHECK_EQ_STR(str(obj, "op"), "sendmsg");
	CHECK_EQ_STR(str(obj, "protocol"), "udp");
	CHECK_EQ_STR(str(obj, "dst_ip"), "::ffff:127.0.0.3");
	cJSON_Delete(obj);
}

static void test_deny_socket_kinds(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_SOCKET;
	e.family = AF_VSOCK;
	e.sock_type = SOCK_STREAM;
	e.protocol = 0;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "socket");
	CHECK_EQ_STR(str(obj, "family"), "vsock");
	CHECK_EQ_STR(str(obj, "type"), "stream");
	CHECK(cJSON_GetObjectItem(obj, "dst_ip") == NULL);
	cJSON_Delete(obj);

	/* A family without a name is still on record, as its number. */
	e.family = 30;
	e.sock_type = SOCK_RAW;
	e.protocol = 1;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_INT(num(obj, "family"), 30);
	CHECK_EQ_STR(str(obj, "type"), "raw");
	CHECK_EQ_STR(str(obj, "protocol"), "icmp");
	cJSON_Delete(obj);
}

static void test_deny_unix_path_and_abstract(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_CONNECT_UNIX;
	e.family = AF_UNIX;
	strcpy(e.unix_path, "/run/docker.sock");
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "connect_unix");
	CHECK_EQ_STR(str(obj, "dst_path"), "/run/docker.sock");
	cJSON_Delete(obj);

	memset(e.unix_path, 0, sizeof(e.unix_path));
	memcpy(e.unix_path, "\0dbus-abc", 9);
	e.op = AUDIT_OP_SENDMSG_UNIX;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "sendmsg_unix");
	CHECK_EQ_STR(str(obj, "dst_path"), "@dbus-abc");
	cJSON_Delete(obj);
}

/* An abstract name is every byte the job gave: NULs and control bytes escaped, never cut. */
static void test_deny_abstract_name_whole(void)
{
	static const char name[] = "\0ab\0c\n\x01\xff\0";
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_CONNECT_UNIX;
	e.family = AF_UNIX;
	memset(e.unix_path, 0, sizeof(e.unix_path));
	memcpy(e.unix_path, name, sizeof(name) - 1);
	e.unix_path_len = sizeof(name) - 1;
	CHECK(audit_format_deny(&test_log, &e, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"dst_path\":\"@ab\\u0000c\\u000a\\u0001\\u00ff\\u0000\"") != NULL);
	obj = parse_line(buf, (int)strlen(buf));
	CHECK(cJSON_GetObjectItem(obj, "dst_path") != NULL);
	cJSON_Delete(obj);

	/* The longest name: 107 bytes after its NUL, all of them. */
	memset(e.unix_path, 'x', sizeof(e.unix_path));
	e.unix_path[0] = '\0';
	e.unix_path[50] = '\0';
	e.unix_path_len = sizeof(e.unix_path);
	e.op = AUDIT_OP_BIND;
	e.reason = AUDIT_REASON_ABSTRACT;
	e.sock_type = SOCK_STREAM;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "bind");
	CHECK_EQ_STR(str(obj, "reason"), "abstract");
	CHECK_EQ_INT((int)strlen(str(obj, "path")), 1 + 49);
	CHECK(strstr(buf, "\\u0000") != NULL);
	CHECK(strstr(buf, "\\u0000"
			  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"") != NULL);
	cJSON_Delete(obj);

	/* A path still ends at its first NUL. */
	memset(e.unix_path, 0, sizeof(e.unix_path));
	memcpy(e.unix_path, "/tmp/s\0junk", 11);
	e.unix_path_len = 11;
	e.op = AUDIT_OP_CONNECT_UNIX;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "dst_path"), "/tmp/s");
	cJSON_Delete(obj);
}

/* bind and listen: the local address, the reason, and the peer of a refused connection. */
static void test_deny_bind_listen(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_BIND;
	e.reason = AUDIT_REASON_ADDRESS;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "bind");
	CHECK_EQ_STR(str(obj, "reason"), "address");
	CHECK_EQ_STR(str(obj, "local_ip"), "127.0.0.3");
	CHECK_EQ_INT(num(obj, "local_port"), 8080);
	CHECK(cJSON_GetObjectItem(obj, "dst_ip") == NULL);
	CHECK(cJSON_GetObjectItem(obj, "peer_ip") == NULL);
	cJSON_Delete(obj);

	e.op = AUDIT_OP_LISTEN;
	e.reason = AUDIT_REASON_PEER;
	memcpy(e.peer_addr, e.addr, sizeof(e.peer_addr));
	e.peer_addr[15] = 9;
	e.peer_port = 40000;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "listen");
	CHECK_EQ_STR(str(obj, "reason"), "peer");
	CHECK_EQ_STR(str(obj, "peer_ip"), "127.0.0.9");
	CHECK_EQ_INT(num(obj, "peer_port"), 40000);
	cJSON_Delete(obj);
}

/* Refusals of the seccomp filter name the call; another ABI's call names its ABI too. */
static void test_deny_syscall_names(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_SYSCALL;
	e.syscall_arch = AUDIT_ARCH_X86_64;
	e.syscall_nr = 0x40000000u | 41;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "syscall");
	CHECK_EQ_STR(str(obj, "syscall"), "socket");
	CHECK_EQ_STR(str(obj, "abi"), "x32");
	CHECK(cJSON_GetObjectItem(obj, "family") == NULL);
	cJSON_Delete(obj);

	e.syscall_arch = AUDIT_ARCH_I386;
	e.syscall_nr = 359;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "syscall"), "socket");
	CHECK_EQ_STR(str(obj, "abi"), "i386");
	cJSON_Delete(obj);

	/* An x32-only number, and one no table has: the number. */
	e.syscall_arch = AUDIT_ARCH_X86_64;
	e.syscall_nr = 0x40000000u | 512;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "syscall"), "rt_sigaction");
	cJSON_Delete(obj);
	e.syscall_nr = 0x40000000u | 99999;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_INT(num(obj, "syscall"), 0x40000000 | 99999);
	cJSON_Delete(obj);

	/* A native refusal: its op, with the call's name. */
	e.op = AUDIT_OP_SOCKET;
	e.family = AF_NETLINK;
	e.sock_type = SOCK_RAW;
	e.protocol = 2;
	e.syscall_nr = 41;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "socket");
	CHECK_EQ_STR(str(obj, "syscall"), "socket");
	CHECK_EQ_STR(str(obj, "family"), "netlink");
	CHECK_EQ_STR(str(obj, "protocol"), "usersock");
	CHECK(cJSON_GetObjectItem(obj, "abi") == NULL);
	cJSON_Delete(obj);
}

static void test_deny_userns_has_no_socket_fields(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_USERNS;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "userns");
	CHECK(cJSON_GetObjectItem(obj, "family") == NULL);
	cJSON_Delete(obj);
	e.op = AUDIT_OP_IO_URING;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "io_uring");
	cJSON_Delete(obj);
}

/* The job names its own threads: quotes, backslashes, newlines and bytes >= 0x80. */
static void test_hostile_comm_is_escaped(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	memcpy(e.comm, "a\"b\\c\nd\x01\xff", 10);
	e.comm[10] = '\0';
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK(obj != NULL);
	CHECK_EQ_STR(str(obj, "comm"), "a\"b\\c\nd\x01\xc3\xbf");
	cJSON_Delete(obj);

	/* comm fills all 16 bytes without a NUL: formatting stops at the array's end. */
	memset(e.comm, 'x', sizeof(e.comm));
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_INT(strlen(str(obj, "comm") ? str(obj, "comm") : ""), 16);
	cJSON_Delete(obj);
}

static void test_small_buffer_refused(void)
{
	struct deny_event e = connect_event();
	char buf[64];

	log_init();
	CHECK_EQ_INT(audit_format_deny(&test_log, &e, buf, sizeof(buf)), -ENOBUFS);
}

static void test_start_exit_lost(void)
{
	char *const argv[] = { "node", "agent.js", "--flag=\"x\"", NULL };
	char *const writable[] = { "/work", "/tmp", NULL };
	struct audit_job job = { .uid = 65534, .gid = 65533 };
	struct audit_exit exit = {
		.exit_code = -SIGKILL, .duration_ms = 1500, .denied = 10, .lost = 4
	};
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	obj = parse_line(
		buf, audit_format_start(&test_log, argv, 77, &job, 3, "host1", buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "event"), "sandbox_start");
	CHECK_EQ_INT(num(obj, "uid"), 65534);
	CHECK_EQ_INT(num(obj, "gid"), 65533);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(obj, "landlock")));
	CHECK(cJSON_GetObjectItem(obj, "landlock_abi") == NULL);
	CHECK(cJSON_GetObjectItem(obj, "fs_write") == NULL);
	cJSON_Delete(obj);

	job.landlock_abi = 7;
	job.fs_write = writable;
	obj = parse_line(
		buf, audit_format_start(&test_log, argv, 77, &job, 3, "host1", buf, sizeof(buf)));
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(obj, "landlock")));
	CHECK_EQ_INT(num(obj, "landlock_abi"), 7);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "fs_write")), 2);
	CHECK_EQ_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "fs_write"), 1)->valuestring,
		     "/tmp");
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "argv")), 3);
	CHECK_EQ_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "argv"), 2)->valuestring,
		     "--flag=\"x\"");
	CHECK_EQ_INT(num(obj, "argc"), 3);
	CHECK(cJSON_GetObjectItem(obj, "argv_truncated") == NULL);
	CHECK(cJSON_GetObjectItem(obj, "truncated") == NULL);
	CHECK_EQ_INT(num(obj, "rules"), 3);
	CHECK_EQ_STR(str(obj, "hostname"), "host1");
	cJSON_Delete(obj);

	obj = parse_line(buf, audit_format_exit(&test_log, &exit, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "event"), "sandbox_exit");
	CHECK_EQ_INT(num(obj, "signal"), SIGKILL);
	CHECK(cJSON_GetObjectItem(obj, "exit_code") == NULL);
	CHECK_EQ_INT(num(obj, "denied"), 10);
	CHECK_EQ_INT(num(obj, "lost"), 4);
	CHECK_EQ_INT(num(obj, "unwritten"), 0);
	CHECK(cJSON_GetObjectItem(obj, "log_failed") == NULL);
	cJSON_Delete(obj);

	/* lost (the kernel's ring) and unwritten (launch's writes) are counted apart. */
	exit = (struct audit_exit){ .exit_code = 3,
				    .duration_ms = 10,
				    .denied = 9,
				    .lost = 2,
				    .unwritten = 5,
				    .log_failed = 6 };
	obj = parse_line(buf, audit_format_exit(&test_log, &exit, buf, sizeof(buf)));
	CHECK_EQ_INT(num(obj, "exit_code"), 3);
	CHECK_EQ_INT(num(obj, "lost"), 2);
	CHECK_EQ_INT(num(obj, "unwritten"), 5);
	CHECK_EQ_INT(num(obj, "log_failed"), 6);
	cJSON_Delete(obj);

	obj = parse_line(buf, audit_format_lost(&test_log, 7151, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "event"), "events_lost");
	CHECK_EQ_INT(num(obj, "count"), 7151);
	cJSON_Delete(obj);
}

static void test_deny_setsockopt_and_packet(void)
{
	struct deny_event e = connect_event();
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	log_init();
	e.op = AUDIT_OP_SETSOCKOPT;
	e.family = AF_INET6;
	e.level = IPPROTO_IPV6;
	e.optname = IPV6_RTHDR;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "setsockopt");
	CHECK_EQ_STR(str(obj, "family"), "ipv6");
	CHECK_EQ_STR(str(obj, "type"), "stream");
	CHECK_EQ_STR(str(obj, "level"), "ipv6");
	CHECK_EQ_INT(num(obj, "optname"), IPV6_RTHDR);
	CHECK_EQ_STR(str(obj, "option"), "IPV6_RTHDR");
	CHECK(cJSON_GetObjectItem(obj, "dst_ip") == NULL);
	cJSON_Delete(obj);

	/* An option the hook does not know by name: the numbers only. */
	e.level = 1234;
	e.optname = 99;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_INT(num(obj, "level"), 1234);
	CHECK(cJSON_GetObjectItem(obj, "option") == NULL);
	cJSON_Delete(obj);

	e = connect_event();
	e.op = AUDIT_OP_PACKET;
	e.protocol = IPPROTO_UDP;
	e.reason = PACKET_DROP_IP_OPTIONS;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "packet");
	CHECK_EQ_STR(str(obj, "dst_ip"), "127.0.0.3");
	CHECK_EQ_INT(num(obj, "dst_port"), 8080);
	CHECK_EQ_STR(str(obj, "reason"), "ip_options");
	CHECK_EQ_INT(num(obj, "pid"), 42);
	cJSON_Delete(obj);

	/* Sent from softirq: no process to name. */
	e.pid = 0;
	e.reason = PACKET_DROP_ROUTING_HEADER;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK(cJSON_GetObjectItem(obj, "pid") == NULL);
	CHECK(cJSON_GetObjectItem(obj, "comm") == NULL);
	CHECK_EQ_STR(str(obj, "reason"), "routing_header");
	cJSON_Delete(obj);

	/* A peer refused at a listener no address hook saw bound: no process either. */
	e.op = AUDIT_OP_LISTEN;
	e.reason = AUDIT_REASON_PEER;
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK(cJSON_GetObjectItem(obj, "pid") == NULL);
	CHECK(cJSON_GetObjectItem(obj, "uid") == NULL);
	CHECK_EQ_STR(str(obj, "reason"), "peer");
	cJSON_Delete(obj);

	{
		struct audit_exit exit = { .duration_ms = 10,
					   .denied = 1,
					   .packet_dropped = 12345 };

		obj = parse_line(buf, audit_format_exit(&test_log, &exit, buf, sizeof(buf)));
		CHECK_EQ_INT(num(obj, "packet_dropped"), 12345);
	}
	cJSON_Delete(obj);
}

/* Formats sandbox_start for argv into a line of the largest size; checks and parses it. */
static cJSON *start_line(char *const *argv, char *buf)
{
	struct audit_job job = { .uid = 0 };
	int n = audit_format_start(&test_log, argv, 77, &job, 3, "host1", buf, AUDIT_LINE_MAX);

	CHECK(n > 0 && n < AUDIT_LINE_MAX);
	return parse_line(buf, n);
}

/* One argument of 5,000 bytes: cut, marked, and the line is still written. */
static void test_start_long_argument_truncated(void)
{
	static char big[5001], buf[AUDIT_LINE_MAX];
	char *argv[] = { "/bin/true", big, "after", NULL };
	const cJSON *args, *item;
	cJSON *obj;

	log_init();
	memset(big, 'a', sizeof(big) - 1);
	obj = start_line(argv, buf);
	CHECK(obj != NULL);
	args = cJSON_GetObjectItem(obj, "argv");
	CHECK_EQ_INT(num(obj, "argc"), 3);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(obj, "argv_truncated")));
	CHECK_EQ_INT(cJSON_GetArraySize(args), 3);
	item = cJSON_GetArrayItem(args, 1);
	CHECK(cJSON_IsString(item) && strlen(item->valuestring) == AUDIT_ARG_MAX);
	CHECK_EQ_STR(cJSON_GetArrayItem(args, 2)->valuestring, "after");
	cJSON_Delete(obj);

	/* An escape is never split: 0x01 takes 6 bytes, and the string still parses. */
	memset(big, 1, sizeof(big) - 1);
	obj = start_line(argv, buf);
	CHECK(obj != NULL);
	item = cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "argv"), 1);
	CHECK(cJSON_IsString(item) && strlen(item->valuestring) == AUDIT_ARG_MAX / 6);
	cJSON_Delete(obj);
}

/* 100,000 arguments: those that fit are listed, argc has them all. */
static void test_start_many_arguments_truncated(void)
{
	static char *argv[100002], buf[AUDIT_LINE_MAX];
	const cJSON *args;
	cJSON *obj;

	log_init();
	argv[0] = "/bin/true";
	for (size_t i = 1; i <= 100000; i++)
		argv[i] = "xy";
	argv[100001] = NULL;
	obj = start_line(argv, buf);
	CHECK(obj != NULL);
	args = cJSON_GetObjectItem(obj, "argv");
	CHECK_EQ_INT(num(obj, "argc"), 100001);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(obj, "argv_truncated")));
	CHECK(cJSON_GetArraySize(args) > 100 && cJSON_GetArraySize(args) < 1000);
	CHECK_EQ_STR(cJSON_GetArrayItem(args, 0)->valuestring, "/bin/true");
	CHECK_EQ_STR(cJSON_GetArrayItem(args, cJSON_GetArraySize(args) - 1)->valuestring, "xy");
	CHECK_EQ_STR(str(obj, "hostname"), "host1");
	cJSON_Delete(obj);

	/* Both at once: every argument at the cap. */
	static char big[5001];
	memset(big, '"', sizeof(big) - 1);
	for (size_t i = 1; i <= 100000; i++)
		argv[i] = big;
	obj = start_line(argv, buf);
	CHECK(obj != NULL);
	CHECK_EQ_INT(num(obj, "argc"), 100001);
	cJSON_Delete(obj);
}

/*
 * Every other field a job or a policy controls, at its worst: each line stays within
 * AUDIT_LINE_MAX, parses, and names what was cut in "truncated".
 */
static void test_long_fields_truncated(void)
{
	static char long_name[4096], buf[AUDIT_LINE_MAX];
	struct deny_event e = connect_event();
	struct in6_addr addrs[AUDIT_DNS_ADDRS_MAX];
	struct audit_dns dns = { .protocol = "tcp",
				 .qtype = "TYPE65280",
				 .rcode = "NOERROR",
				 .reason = "name",
				 .addrs = addrs,
				 .naddrs = 1000 };
	const cJSON *cut;
	cJSON *obj;
	int n;

	log_init();
	memset(long_name, '\x81', sizeof(long_name) - 1);
	memset(test_log.policy, '\x82', sizeof(test_log.policy) - 1);
	memset(addrs, 0xfe, sizeof(addrs));
	memset(e.comm, '\x83', sizeof(e.comm));
	memset(e.unix_path, '\x84', sizeof(e.unix_path));
	e.op = AUDIT_OP_CONNECT_UNIX;
	e.family = AF_UNIX;
	n = audit_format_deny_name(&test_log, &e, long_name, buf, sizeof(buf));
	obj = parse_line(buf, n);
	CHECK(obj != NULL);
	cut = cJSON_GetObjectItem(obj, "truncated");
	CHECK(cJSON_IsArray(cut));
	CHECK_EQ_STR(cJSON_GetArrayItem(cut, 0)->valuestring, "policy");
	CHECK_EQ_STR(cJSON_GetArrayItem(cut, 1)->valuestring, "dst_path");
	cJSON_Delete(obj);

	e = connect_event();
	n = audit_format_deny_name(&test_log, &e, long_name, buf, sizeof(buf));
	obj = parse_line(buf, n);
	CHECK(obj != NULL);
	{
		char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(obj, "truncated"));

		CHECK_CONTAINS(text, "dst_name");
		free(text);
	}
	cJSON_Delete(obj);

	dns.qname = long_name;
	obj = parse_line(buf, audit_format_dns_allow(&test_log, &dns, buf, sizeof(buf)));
	CHECK(obj != NULL);
	CHECK_EQ_INT(num(obj, "naddrs"), 1000);
	cJSON_Delete(obj);
	obj = parse_line(buf, audit_format_dns_deny(&test_log, &dns, buf, sizeof(buf)));
	CHECK(obj != NULL);
	cJSON_Delete(obj);

	/* argv, fs_write, policy and hostname all at their longest, in one line. */
	char *argv[] = { long_name, long_name, NULL };
	char *writable[] = { long_name, long_name, long_name, NULL };
	struct audit_job job = { .uid = 1, .landlock_abi = 6, .fs_write = writable };

	obj = parse_line(
		buf, audit_format_start(&test_log, argv, 1, &job, 0, long_name, buf, sizeof(buf)));
	CHECK(obj != NULL);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(obj, "argv_truncated")));
	CHECK_EQ_INT(num(obj, "argc"), 2);
	{
		char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(obj, "truncated"));

		CHECK_CONTAINS(text, "fs_write");
		CHECK_CONTAINS(text, "hostname");
		free(text);
	}
	cJSON_Delete(obj);
}

/* The limit event: what the job reached, and what launch did about it. */
static void test_limit_line(void)
{
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	obj = parse_line(buf, audit_format_limit(&test_log, "memory", 268435456, "stopped", buf,
						 sizeof(buf)));
	CHECK_EQ_STR(str(obj, "event"), "limit");
	CHECK_EQ_STR(str(obj, "kind"), "memory");
	CHECK_EQ_INT(num(obj, "limit"), 268435456);
	CHECK_EQ_STR(str(obj, "action"), "stopped");
	CHECK_EQ_STR(str(obj, "sandbox"), test_log.sandbox);
	cJSON_Delete(obj);
	CHECK_EQ_INT(audit_format_limit(&test_log, "pids", 1, "stopped", buf, 40), -ENOBUFS);
}

static void test_time_format(void)
{
	char buf[40];

	CHECK_EQ_INT(audit_format_time(0, buf, sizeof(buf)), 27);
	CHECK_EQ_STR(buf, "1970-01-01T00:00:00.000000Z");
	audit_format_time(1796000000LL * 1000000000LL + 999999999LL, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "2026-11-30T00:53:20.999999Z");
	CHECK_EQ_INT(audit_format_time(0, buf, 10), -ENOBUFS);
	/*
	 * Leap days, century rules and month ends to the last second a time in nanoseconds holds
	 * (2262), against the C library's own conversion.
	 */
	for (long long secs = -4; secs < INT64_MAX / 1000000000LL;
	     secs = secs < 0 ? secs + 1 : secs + 86400LL * 97 + 3601) {
		/* Every step, and around 2000-02-29, 2100-02-28/03-01 (no leap day) each time. */
		static const long long edges[] = { 951782399, 951868800, 4107456000, 4107542399 };
		long long t = secs < 0 ? edges[secs + 4] : secs;
		time_t tt = (time_t)t;
		char want[96]; /* room for any int in each field: -Wformat-truncation at -O2 */
		struct tm tm;

		gmtime_r(&tt, &tm);
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.000123Z",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec);
		audit_format_time(t * 1000000000LL + 123456, buf, sizeof(buf));
		if (strcmp(buf, want) != 0) {
			CHECK_EQ_STR(buf, want);
			return;
		}
	}
}

/* The whole file behind fd, NUL-terminated in buf (at most size - 1 bytes): its length. */
static ssize_t read_back(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Gives test_log a descriptor and starts its writer, as audit_open and sandbox.c do. */
static void log_start(int fd, bool pipe_like, long long stall_ms)
{
	log_init();
	test_log.fd = fd;
	test_log.event_fd = -1;
	test_log.pipe_like = pipe_like;
	test_log.stall_timeout_ms = stall_ms;
	CHECK_EQ_INT(audit_start_writer(&test_log), 0);
}

static long long lines_and_check(char *content)
{
	long long lines = 0;

	for (char *line = content; line && *line; lines++) {
		char *end = strchr(line, '\n');
		cJSON *obj;

		CHECK(end != NULL);
		if (!end)
			break;
		*end = '\0';
		obj = cJSON_Parse(line);
		CHECK(obj != NULL);
		cJSON_Delete(obj);
		line = end + 1;
	}
	return lines;
}

/* Lines reach the file whole and in order, written by the writer thread. */
static void test_append_flush_whole_lines(void)
{
	struct deny_event e = connect_event();
	char path[] = "/tmp/launch-audit-test.XXXXXX";
	static char content[AUDIT_QUEUE_BYTES * 2];
	int fd = mkstemp(path);
	struct audit_counts counts;
	ssize_t n;

	CHECK(fd >= 0);
	log_start(dup(fd), false, 5000);
	/* More than the queue holds at once: the appender waits for room, as at teardown. */
	test_log.wait_room = true;
	for (int i = 0; i < 6000; i++)
		CHECK_EQ_INT(audit_deny(&test_log, &e), 0);
	CHECK_EQ_INT(audit_flush(&test_log), 0);
	CHECK_EQ_INT(audit_drain(&test_log), 0);
	audit_close(&test_log);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.written_lines, 6000);
	CHECK_EQ_INT(counts.written_denied, 6000);
	CHECK_EQ_INT(counts.unwritten_lines, 0);
	n = read_back(fd, content, sizeof(content));
	CHECK(n > 0);
	CHECK_EQ_INT(lines_and_check(content), 6000);
	close(fd);
	unlink(path);
}

/*
 * What the teardown does: lines queued, then audit_close with no flush or drain before it.
 * The writer, woken once with stop set, writes every one of them and ends; nothing is
 * counted unwritten and the thread is gone.
 */
static void test_close_writes_what_is_queued(void)
{
	struct deny_event e = connect_event();
	char path[] = "/tmp/launch-audit-close.XXXXXX";
	static char content[AUDIT_QUEUE_BYTES];
	int fd = mkstemp(path);
	struct audit_counts counts;
	ssize_t n;

	CHECK(fd >= 0);
	log_start(dup(fd), false, 5000);
	for (int i = 0; i < 2000; i++)
		CHECK_EQ_INT(audit_deny(&test_log, &e), 0);
	CHECK_EQ_INT(audit_append(&test_log, "{\"event\":\"sandbox_exit\"}\n", 25), 0);
	audit_close(&test_log);
	CHECK(!test_log.writer_running);
	CHECK_EQ_INT(test_log.error, 0);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.written_lines, 2001);
	CHECK_EQ_INT(counts.written_denied, 2000);
	CHECK_EQ_INT(counts.unwritten_lines, 0);
	CHECK_EQ_INT(counts.queued_lines, 0);
	n = read_back(fd, content, sizeof(content));
	CHECK(n > 0);
	/* The last line queued is the last written. */
	CHECK(n > 25 && strcmp(content + n - 25, "{\"event\":\"sandbox_exit\"}\n") == 0);
	CHECK_EQ_INT(lines_and_check(content), 2001);
	close(fd);
	unlink(path);
}

/* A failed write counts its lines unwritten, refusals apart, and keeps the first error. */
static void test_flush_failure_counted(void)
{
	struct deny_event e = connect_event();
	struct audit_counts counts;
	int pipe_fds[2];

	CHECK_EQ_INT(pipe(pipe_fds), 0);
	close(pipe_fds[0]);
	signal(SIGPIPE, SIG_IGN);
	log_start(pipe_fds[1], true, 5000);
	audit_deny(&test_log, &e);
	audit_deny(&test_log, &e);
	CHECK_EQ_INT(audit_append(&test_log, "{}\n", 3), 0);
	/* A dropped packet is not in "denied": counted as a line, not as a refusal. */
	e.op = AUDIT_OP_PACKET;
	audit_deny(&test_log, &e);
	audit_drain(&test_log);
	CHECK_EQ_INT(audit_flush(&test_log), -EPIPE);
	audit_close(&test_log);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.unwritten_lines, 4);
	CHECK_EQ_INT(counts.unwritten_denied, 2);
	CHECK_EQ_INT(counts.written_lines, 0);
	CHECK_EQ_INT(test_log.error, -EPIPE);
}

/*
 * A file size limit makes write() stop mid-line, as a full disk does: the fragment is cut
 * off, so the file holds whole lines only, and each line is counted written or unwritten.
 */
static void test_short_write_leaves_whole_lines(void)
{
	struct deny_event e = connect_event();
	char path[] = "/tmp/launch-audit-torn.XXXXXX";
	struct rlimit old, small = { .rlim_cur = 1000, .rlim_max = RLIM_INFINITY };
	struct audit_counts counts;
	char content[2048];
	int fd = mkstemp(path);
	ssize_t n;

	CHECK(fd >= 0);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small.rlim_max = old.rlim_max;
	CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
	log_start(open(path, O_WRONLY | O_APPEND), false, 5000);
	for (int i = 0; i < 10; i++)
		audit_deny(&test_log, &e);
	audit_flush(&test_log);
	audit_drain(&test_log);
	CHECK_EQ_INT(test_log.error, -EFBIG);
	audit_close(&test_log);
	setrlimit(RLIMIT_FSIZE, &old);
	audit_get_counts(&test_log, &counts);
	CHECK(counts.written_lines > 0);
	CHECK_EQ_INT(counts.written_lines + counts.unwritten_lines, 10);
	n = read_back(fd, content, sizeof(content));
	CHECK(n > 0 && n <= 1000);
	CHECK(n > 0 && content[n - 1] == '\n');
	CHECK_EQ_INT(count_newlines(content), counts.written_lines);
	close(fd);
	unlink(path);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * A pipe whose reader never reads: appends never block, the stall is reported after the
 * timeout, closing takes bounded time, and the lines in the pipe are exactly those counted
 * written (whole ones: PIPE_BUF writes are atomic).
 */
static void test_stalled_pipe(void)
{
	struct deny_event e = connect_event();
	static char content[1 << 20];
	struct audit_counts counts;
	int pipe_fds[2], appended = 0;
	long long t0;
	ssize_t n;

	CHECK_EQ_INT(pipe(pipe_fds), 0);
	log_start(pipe_fds[1], true, 300);
	t0 = now_ms();
	/* 64 KiB of pipe, then the queue: until it is full. */
	while (audit_deny(&test_log, &e) == 0)
		appended++;
	CHECK(now_ms() - t0 < 1000);
	CHECK(appended > 1000);
	CHECK_EQ_INT(audit_flush(&test_log), -ENOBUFS);
	test_log.error = 0;
	CHECK(audit_timeout_ms(&test_log) <= 300);
	usleep(400 * 1000);
	CHECK_EQ_INT(audit_flush(&test_log), -ETIMEDOUT);
	t0 = now_ms();
	audit_close(&test_log);
	CHECK(now_ms() - t0 < 1000);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.written_lines + counts.unwritten_lines, appended + 1);
	CHECK_EQ_INT(counts.queued_lines, 0);
	fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
	n = read(pipe_fds[0], content, sizeof(content) - 1);
	CHECK(n > 0);
	content[n > 0 ? n : 0] = '\0';
	CHECK_EQ_INT(lines_and_check(content), counts.written_lines);
	close(pipe_fds[0]);
}

/* Without a writer (no sink at all), lines queue, then are counted unwritten. */
static void test_no_sink_counts_everything(void)
{
	struct deny_event e = connect_event();
	struct audit_counts counts;
	int appended = 0;

	log_init();
	test_log.event_fd = -1;
	while (audit_deny(&test_log, &e) == 0)
		appended++;
	CHECK_EQ_INT(test_log.error, -ENOBUFS);
	audit_close(&test_log);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.unwritten_denied, appended + 1);
	CHECK_EQ_INT(counts.written_lines, 0);
}

/*
 * A line the queue refuses as no line (empty, too long, without its newline) is dropped:
 * counted unwritten, a refusal's as a refusal, its seq a gap, and the log failed.
 */
static void test_invalid_line_counted_unwritten(void)
{
	static char big[AUDIT_LINE_MAX + 2];
	struct audit_counts counts;

	log_init();
	test_log.event_fd = -1;
	CHECK_EQ_INT(audit_append_kind(&test_log, AUDIT_KIND_DENY, "{}", 2), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 2] = '\n';
	CHECK_EQ_INT(audit_append(&test_log, big, sizeof(big) - 1), -EINVAL);
	CHECK_EQ_INT(audit_append(&test_log, "{}\n", 3), 0);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.unwritten_lines, 2);
	CHECK_EQ_INT(counts.unwritten_denied, 1);
	CHECK_EQ_INT(counts.queued_lines, 1);
	CHECK_EQ_INT(test_log.seq, 3);
	CHECK_EQ_INT(test_log.error, -EINVAL);
	audit_discard(&test_log);
}

/*
 * A line that could not be formatted (a limit or exit line, a refusal's) is counted too:
 * denied = deny lines + lost + unwritten holds whatever failed.
 */
static void test_unformatted_line_counted_unwritten(void)
{
	struct audit_exit exit = { .exit_code = 0 };
	struct deny_event e = connect_event();
	struct audit_counts counts;
	char small[16], line[AUDIT_LINE_MAX];
	int n;

	log_init();
	test_log.event_fd = -1;
	n = audit_format_limit(&test_log, "pids", 64, "stopped", small, sizeof(small));
	CHECK(n < 0);
	CHECK_EQ_INT(audit_append_formatted(&test_log, AUDIT_KIND_OTHER, small, n), n);
	n = audit_format_exit(&test_log, &exit, small, sizeof(small));
	CHECK(n < 0);
	CHECK_EQ_INT(audit_append_formatted(&test_log, AUDIT_KIND_OTHER, small, n), n);
	n = audit_format_deny(&test_log, &e, small, sizeof(small));
	CHECK(n < 0);
	CHECK_EQ_INT(audit_append_formatted(&test_log, AUDIT_KIND_DENY, small, n), n);
	CHECK_EQ_INT(audit_append_formatted(&test_log, AUDIT_KIND_DENY, small, 0), -EINVAL);
	/* A formatted line still goes in, after the gaps. */
	n = audit_format_deny(&test_log, &e, line, sizeof(line));
	CHECK_EQ_INT(audit_append_formatted(&test_log, AUDIT_KIND_DENY, line, n), 0);
	audit_get_counts(&test_log, &counts);
	CHECK_EQ_INT(counts.unwritten_lines, 4);
	CHECK_EQ_INT(counts.unwritten_denied, 2);
	CHECK_EQ_INT(counts.queued_denied, 1);
	CHECK_EQ_INT(test_log.seq, 5);
	CHECK_EQ_INT(test_log.error, -ENOBUFS);
	audit_queued_text(&test_log, line, sizeof(line));
	CHECK_CONTAINS(line, "\"seq\":5,");
	audit_discard(&test_log);
}

/* FIPS 180-4 / NIST CSHA examples, one of them fed in odd pieces. */
static void test_sha256_vectors(void)
{
	static const struct {
		const char *text;
		const char *hex;
	} vectors[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		  "klmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	static char million[1000000];
	char hex[SHA256_HEX_BYTES];
	uint8_t digest[SHA256_DIGEST_BYTES];
	struct sha256_ctx ctx;

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		sha256_hex(vectors[i].text, strlen(vectors[i].text), hex);
		CHECK_EQ_STR(hex, vectors[i].hex);
	}
	memset(million, 'a', sizeof(million));
	sha256_init(&ctx);
	for (size_t off = 0, step = 1; off < sizeof(million);
	     off += step, step = step * 3 % 997 + 1)
		sha256_update(&ctx, million + off,
			      off + step > sizeof(million) ? sizeof(million) - off : step);
	sha256_final(&ctx, digest);
	for (int i = 0; i < SHA256_DIGEST_BYTES; i++)
		sprintf(hex + 2 * i, "%02x", digest[i]);
	CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/*
 * UTF-8 is written as UTF-8; control characters (C0, DEL, C1) and each byte of an invalid
 * sequence (a stray continuation, a cut sequence, an overlong form, a surrogate, beyond
 * U+10FFFF) are escaped as \u00XX.
 */
static void test_utf8_passes_through(void)
{
	char *const argv[] = { "caf\xc3\xa9",
			       "\xe2\x82\xac\xf0\x9f\x98\x80",
			       "a\xff"
			       "b",
			       "\xe2\x82",
			       "\xc0\xaf",
			       "\xed\xa0\x80",
			       "\xf4\x90\x80\x80",
			       "\x1b[1m\x7f\xc2\x85",
			       NULL };
	static const char *const raw[] = {
		"\"caf\xc3\xa9\"",
		"\"\xe2\x82\xac\xf0\x9f\x98\x80\"",
		"\"a\\u00ffb\"",
		"\"\\u00e2\\u0082\"",
		"\"\\u00c0\\u00af\"",
		"\"\\u00ed\\u00a0\\u0080\"",
		"\"\\u00f4\\u0090\\u0080\\u0080\"",
		"\"\\u001b[1m\\u007f\\u0085\"",
	};
	char buf[AUDIT_LINE_MAX];
	const cJSON *args;
	cJSON *obj;

	log_init();
	obj = parse_line(
		buf, audit_format_start(&test_log, argv, 1, &test_job, 0, "h", buf, sizeof(buf)));
	CHECK(obj != NULL);
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
		CHECK_CONTAINS(buf, raw[i]);
	args = cJSON_GetObjectItem(obj, "argv");
	CHECK_EQ_STR(cJSON_GetArrayItem(args, 0)->valuestring, "caf\xc3\xa9");
	CHECK_EQ_STR(cJSON_GetArrayItem(args, 1)->valuestring, "\xe2\x82\xac\xf0\x9f\x98\x80");
	cJSON_Delete(obj);

	/* A cap never splits a sequence: 510 bytes of room, 2-byte characters, and the cut. */
	{
		static char long_arg[2000];
		char *const args2[] = { long_arg, NULL };

		for (size_t i = 0; i + 2 < sizeof(long_arg); i += 2)
			memcpy(long_arg + i, "\xc3\xa9", 2);
		obj = parse_line(buf, audit_format_start(&test_log, args2, 1, &test_job, 0, "h",
							 buf, sizeof(buf)));
		CHECK(obj != NULL);
		CHECK_EQ_INT(strlen(cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "argv"), 0)
					    ->valuestring) %
				     2,
			     0);
		CHECK(cJSON_IsTrue(cJSON_GetObjectItem(obj, "argv_truncated")));
		cJSON_Delete(obj);
	}
}

/* Every line has host and seq; seq counts the sandbox's lines from 1, a full queue leaves gaps. */
/*
 * An http line names the request's host "host", as the gateway's users do, and the machine's
 * "hostname"; syslog's HOSTNAME stays the machine's. Every other line keeps "host".
 */
static void test_http_line_hosts(void)
{
	const struct audit_http http = { .method = "GET",
					 .host = "api.stripe.com",
					 .path = "/v1/customers",
					 .status = 200,
					 .allowed = true,
					 .reason = "",
					 .secret = "STRIPE_API_KEY" };
	struct deny_event e = connect_event();
	char line[AUDIT_LINE_MAX], msg[AUDIT_LINE_MAX + 1024];
	cJSON *obj;
	int n, m;

	log_init();
	strcpy(test_log.host, "build-7");
	n = audit_format_http(&test_log, &http, line, sizeof(line));
	obj = parse_line(line, n);
	CHECK_EQ_STR(str(obj, "event"), "http");
	CHECK_EQ_STR(str(obj, "host"), "api.stripe.com");
	CHECK_EQ_STR(str(obj, "hostname"), "build-7");
	CHECK(cJSON_GetObjectItem(obj, "http_host") == NULL);
	CHECK_EQ_STR(str(obj, "secret"), "STRIPE_API_KEY");
	cJSON_Delete(obj);
	/* The machine's name where other lines have "host"; the request's after the method. */
	CHECK_CONTAINS(line, ",\"seq\":1,\"hostname\":\"build-7\",\"sandbox\":\"sb1\",");
	CHECK_CONTAINS(line, ",\"method\":\"GET\",\"host\":\"api.stripe.com\",\"path\":");
	m = audit_syslog_format(line, (size_t)n, test_log.host, 7, msg, sizeof(msg));
	CHECK(m > 0);
	CHECK_CONTAINS(msg, "Z build-7 launch 7 http [launch@32473 event=\"http\"");
	CHECK(strstr(msg, " api.stripe.com launch ") == NULL);

	n = audit_format_deny_exe(&test_log, &e, "api.stripe.com", NULL, line, sizeof(line));
	obj = parse_line(line, n);
	CHECK_EQ_STR(str(obj, "host"), "build-7");
	CHECK(cJSON_GetObjectItem(obj, "hostname") == NULL);
	cJSON_Delete(obj);
}

static void test_seq_and_host(void)
{
	struct deny_event e = connect_event();
	static char text[AUDIT_QUEUE_BYTES];
	char *const argv[] = { "true", NULL };
	char buf[AUDIT_LINE_MAX];
	unsigned long long expect = 1;
	const char *line;
	int n;

	log_init();
	strcpy(test_log.host, "build-7");
	n = audit_format_start(&test_log, argv, 1, &test_job, 0, "h", buf, sizeof(buf));
	CHECK_EQ_INT(audit_append(&test_log, buf, (size_t)n), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(audit_deny(&test_log, &e), 0);
	audit_queued_text(&test_log, text, sizeof(text));
	for (line = text; *line; line = strchr(line, '\n') + 1) {
		cJSON *obj = cJSON_Parse(line);

		CHECK_EQ_INT(num(obj, "seq"), expect);
		CHECK_EQ_STR(str(obj, "host"), "build-7");
		cJSON_Delete(obj);
		expect++;
	}
	CHECK_EQ_INT(expect, 5);

	/* Lines that find no room are unwritten, and their numbers are missing. */
	while (audit_deny(&test_log, &e) == 0)
		;
	CHECK_EQ_INT(test_log.counts.unwritten_lines, 1);
	audit_discard(&test_log);
	CHECK_EQ_INT(audit_deny(&test_log, &e), 0);
	audit_queued_text(&test_log, text, sizeof(text));
	{
		cJSON *obj = cJSON_Parse(text);

		CHECK_EQ_INT(num(obj, "seq"), test_log.seq);
		CHECK_EQ_INT(test_log.seq, test_log.counts.queued_lines +
						   test_log.counts.unwritten_lines + expect - 1 +
						   (test_log.seq - expect - 1));
		cJSON_Delete(obj);
	}
	audit_discard(&test_log);
}

/* 64 policies with long names and paths: the line is still written, the rest marked. */
static void test_start_many_policies_truncated(void)
{
	static char name[AUDIT_FIELD_MAX + 1], path[AUDIT_FIELD_MAX + 1];
	static struct policy one;
	struct policy *list[64];
	char *const argv[] = { "true", NULL };
	char buf[AUDIT_LINE_MAX];
	const cJSON *truncated;
	cJSON *obj;
	int n;

	log_init();
	memset(name, 'n', AUDIT_FIELD_MAX);
	memset(path, 'p', AUDIT_FIELD_MAX);
	one.name = name;
	one.path = path;
	sha256_hex("{}", 2, one.sha256);
	for (size_t i = 0; i < ARRAY_SIZE(list); i++)
		list[i] = &one;
	test_log.policies = list;
	test_log.npolicies = ARRAY_SIZE(list);
	n = audit_format_start(&test_log, argv, 1, &test_job, 0, "h", buf, sizeof(buf));
	CHECK(n > 0 && n < AUDIT_LINE_MAX);
	obj = parse_line(buf, n);
	CHECK(obj != NULL);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "policies")) >= 1);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "policies")) < 64);
	truncated = cJSON_GetObjectItem(obj, "truncated");
	CHECK(cJSON_IsArray(truncated) &&
	      strcmp(cJSON_GetArrayItem(truncated, 0)->valuestring, "policies") == 0);
	cJSON_Delete(obj);
	test_log.policies = NULL;
	test_log.npolicies = 0;
}

/* sandbox_start names the release and each policy file with its SHA-256. */
static void test_start_version_policies(void)
{
	struct policy a = { .name = "stripe", .path = "/etc/launch/stripe.json" };
	struct policy b = { .name = "n\"x", .path = "/p/\xc3\xa9.json" };
	struct policy *const list[] = { &a, &b };
	char *const argv[] = { "true", NULL };
	char buf[AUDIT_LINE_MAX];
	const cJSON *policies, *item;
	cJSON *obj;

	log_init();
	sha256_hex("{}", 2, a.sha256);
	sha256_hex("[]", 2, b.sha256);
	test_log.policies = list;
	test_log.npolicies = 2;
	obj = parse_line(
		buf, audit_format_start(&test_log, argv, 1, &test_job, 0, "h", buf, sizeof(buf)));
	CHECK(obj != NULL);
	CHECK_EQ_STR(str(obj, "version"), audit_launch_version());
	CHECK(strlen(audit_launch_version()) > 0);
	policies = cJSON_GetObjectItem(obj, "policies");
	CHECK_EQ_INT(cJSON_GetArraySize(policies), 2);
	item = cJSON_GetArrayItem(policies, 0);
	CHECK_EQ_STR(str(item, "name"), "stripe");
	CHECK_EQ_STR(str(item, "path"), "/etc/launch/stripe.json");
	CHECK_EQ_STR(str(item, "sha256"),
		     "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
	item = cJSON_GetArrayItem(policies, 1);
	CHECK_EQ_STR(str(item, "name"), "n\"x");
	CHECK_EQ_STR(str(item, "path"), "/p/\xc3\xa9.json");
	cJSON_Delete(obj);
	test_log.policies = NULL;
	test_log.npolicies = 0;
}

/* policy_update: the old policies and the new (the log's), each with its sha256. */
static void test_policy_update_line(void)
{
	struct policy a = { .name = "old", .path = "/p/old.json" };
	struct policy b = { .name = "new", .path = "/p/new.json" };
	struct policy *const old[] = { &a }, *const now[] = { &b };
	struct audit_update update = { .old_names = "old",
				       .old_policies = old,
				       .nold = 1,
				       .rules = 3,
				       .requester_pid = 4242,
				       .requester_uid = 0 };
	char buf[AUDIT_LINE_MAX];
	const cJSON *list;
	cJSON *obj;

	log_init();
	sha256_hex("{}", 2, a.sha256);
	sha256_hex("[]", 2, b.sha256);
	snprintf(test_log.policy, sizeof(test_log.policy), "new");
	test_log.policies = now;
	test_log.npolicies = 1;
	obj = parse_line(buf, audit_format_policy_update(&test_log, &update, buf, sizeof(buf)));
	CHECK(obj != NULL);
	CHECK_EQ_STR(str(obj, "event"), "policy_update");
	CHECK_EQ_STR(str(obj, "policy"), "new");
	CHECK_EQ_STR(str(obj, "old_policy"), "old");
	CHECK_EQ_INT(num(obj, "rules"), 3);
	CHECK_EQ_INT(num(obj, "requester_pid"), 4242);
	CHECK_EQ_INT(num(obj, "requester_uid"), 0);
	list = cJSON_GetObjectItem(obj, "old_policies");
	CHECK_EQ_INT(cJSON_GetArraySize(list), 1);
	CHECK_EQ_STR(str(cJSON_GetArrayItem(list, 0), "path"), "/p/old.json");
	CHECK_EQ_STR(str(cJSON_GetArrayItem(list, 0), "sha256"), a.sha256);
	list = cJSON_GetObjectItem(obj, "policies");
	CHECK_EQ_INT(cJSON_GetArraySize(list), 1);
	CHECK_EQ_STR(str(cJSON_GetArrayItem(list, 0), "name"), "new");
	CHECK_EQ_STR(str(cJSON_GetArrayItem(list, 0), "sha256"), b.sha256);
	cJSON_Delete(obj);
	CHECK_EQ_INT(audit_format_policy_update(&test_log, &update, buf, 60), -ENOBUFS);
	test_log.policies = NULL;
	test_log.npolicies = 0;
}

/* exe on process lines; denied_by_op in sandbox_exit counts every refusal by op, DNS too. */
static void test_exe_and_denied_by_op(void)
{
	struct deny_event e = connect_event();
	struct audit_dns dns = { .protocol = "udp",
				 .qname = "ExFiL.Example.COM",
				 .qtype = "A",
				 .rcode = "REFUSED",
				 .reason = "name" };
	struct audit_exit exit = { .exit_code = 0 };
	char buf[AUDIT_LINE_MAX];
	const cJSON *by_op;
	cJSON *obj;

	log_init();
	obj = parse_line(
		buf, audit_format_deny_exe(&test_log, &e, NULL, "/usr/bin/curl", buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "exe"), "/usr/bin/curl");
	cJSON_Delete(obj);
	obj = parse_line(buf, audit_format_deny(&test_log, &e, buf, sizeof(buf)));
	CHECK(cJSON_GetObjectItem(obj, "exe") == NULL);
	cJSON_Delete(obj);

	audit_deny_exe(&test_log, &e, NULL, "/usr/bin/curl");
	audit_deny(&test_log, &e);
	e.op = AUDIT_OP_SOCKET;
	audit_deny(&test_log, &e);
	audit_dns_deny(&test_log, &dns);
	audit_dns_deny(&test_log, &dns);
	CHECK_EQ_INT(audit_denied_total(&test_log), 5);
	CHECK_EQ_INT(test_log.counts.queued_denied, 5);
	exit.denied = 5;
	obj = parse_line(buf, audit_format_exit(&test_log, &exit, buf, sizeof(buf)));
	by_op = cJSON_GetObjectItem(obj, "denied_by_op");
	CHECK(cJSON_IsObject(by_op));
	CHECK_EQ_INT(cJSON_GetArraySize(by_op), 3);
	CHECK_EQ_INT(num(by_op, "connect"), 2);
	CHECK_EQ_INT(num(by_op, "socket"), 1);
	CHECK_EQ_INT(num(by_op, "dns"), 2);
	cJSON_Delete(obj);
	/* The look-up's name as the job wrote it. */
	audit_queued_text(&test_log, buf, sizeof(buf));
	CHECK_CONTAINS(buf, "\"qname\":\"ExFiL.Example.COM\"");
	audit_discard(&test_log);
}

/*
 * --audit-only: the kernel's verdict names the event; would_deny and allow lines carry the
 * same fields as deny, are no refusal (not in denied or the DENY kind), and are counted apart
 * in sandbox_exit.
 */
static void test_audit_only_verdicts(void)
{
	struct deny_event e = connect_event();
	struct audit_dns dns = { .protocol = "udp",
				 .qname = "new.example",
				 .qtype = "A",
				 .rcode = "REFUSED",
				 .reason = "name",
				 .would_deny = true };
	struct audit_exit exit = { .exit_code = 0,
				   .would_deny = 3,
				   .would_deny_lost = 1,
				   .allowed = 1,
				   .allowed_lost = 0 };
	char buf[AUDIT_LINE_MAX], deny[AUDIT_LINE_MAX];
	const cJSON *by_op;
	cJSON *obj;

	log_init();
	CHECK(audit_format_deny_name(&test_log, &e, "x.example", deny, sizeof(deny)) > 0);
	e.verdict = AUDIT_VERDICT_WOULD_DENY;
	obj = parse_line(buf, audit_format_deny_name(&test_log, &e, "x.example", buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "event"), "would_deny");
	cJSON_Delete(obj);
	/* The same line as a deny line but for the event's name. */
	CHECK_EQ_STR(strstr(buf, "\"v\":"), strstr(deny, "\"v\":"));
	e.verdict = AUDIT_VERDICT_ALLOW;
	obj = parse_line(buf,
			 audit_format_deny_name(&test_log, &e, "api.example", buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "event"), "allow");
	CHECK_EQ_STR(str(obj, "dst_name"), "api.example");
	CHECK_EQ_INT(num(obj, "dst_port"), 8080);
	cJSON_Delete(obj);

	test_log.audit_only = true;
	audit_deny(&test_log, &e);
	e.verdict = AUDIT_VERDICT_WOULD_DENY;
	audit_deny(&test_log, &e);
	e.op = AUDIT_OP_CONNECT_UNIX;
	audit_deny(&test_log, &e);
	audit_dns_deny(&test_log, &dns);
	CHECK_EQ_INT(audit_denied_total(&test_log), 0);
	CHECK_EQ_INT(audit_would_deny_total(&test_log), 3);
	CHECK_EQ_INT(test_log.allowed, 1);
	CHECK_EQ_INT(test_log.counts.queued_denied, 0);
	audit_queued_text(&test_log, buf, sizeof(buf));
	CHECK_CONTAINS(buf, "\"event\":\"would_deny\",\"v\":1,\"seq\":4,\"host\":\"\",\"sandbox\":"
			    "\"sb1\",\"policy\":\"stripe,openai\",\"op\":\"dns\"");
	audit_discard(&test_log);

	obj = parse_line(buf, audit_format_exit(&test_log, &exit, buf, sizeof(buf)));
	CHECK_EQ_INT(num(obj, "denied"), 0);
	CHECK_EQ_INT(num(obj, "would_deny"), 3);
	CHECK_EQ_INT(num(obj, "would_deny_lost"), 1);
	CHECK_EQ_INT(num(obj, "allowed"), 1);
	CHECK_EQ_INT(num(obj, "allowed_lost"), 0);
	by_op = cJSON_GetObjectItem(obj, "would_deny_by_op");
	CHECK_EQ_INT(cJSON_GetArraySize(by_op), 3);
	CHECK_EQ_INT(num(by_op, "connect"), 1);
	CHECK_EQ_INT(num(by_op, "connect_unix"), 1);
	CHECK_EQ_INT(num(by_op, "dns"), 1);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "denied_by_op")), 0);
	cJSON_Delete(obj);

	obj = parse_line(buf, audit_format_start(&test_log, (char *[]){ "job", NULL }, 1, &test_job,
						 0, "vm", buf, sizeof(buf)));
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(obj, "audit_only")));
	cJSON_Delete(obj);
	obj = parse_line(buf, audit_format_lost_verdicts(&test_log, 2, 5, 0, buf, sizeof(buf)));
	CHECK_EQ_INT(num(obj, "count"), 2);
	CHECK_EQ_INT(num(obj, "would_deny"), 5);
	CHECK(cJSON_GetObjectItem(obj, "allow") == NULL);
	cJSON_Delete(obj);
	/* Enforcing, sandbox_start says nothing of it and sandbox_exit has no would_deny. */
	test_log.audit_only = false;
	obj = parse_line(buf, audit_format_exit(&test_log, &exit, buf, sizeof(buf)));
	CHECK(cJSON_GetObjectItem(obj, "would_deny") == NULL);
	cJSON_Delete(obj);
	obj = parse_line(buf, audit_format_start(&test_log, (char *[]){ "job", NULL }, 1, &test_job,
						 0, "vm", buf, sizeof(buf)));
	CHECK(cJSON_GetObjectItem(obj, "audit_only") == NULL);
	cJSON_Delete(obj);
}

/* RFC 5424: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] MSG, the JSON as MSG. */
static void test_syslog_format(void)
{
	struct deny_event e = connect_event();
	char line[AUDIT_LINE_MAX], msg[AUDIT_LINE_MAX + 1024], expect[AUDIT_LINE_MAX + 1024];
	char *const argv[] = { "true", NULL };
	const char *json;
	int n, m;

	log_init();
	strcpy(test_log.host, "h1");
	strcpy(test_log.sandbox, "sb]1");
	strcpy(e.comm, "c\"u]rl");
	n = audit_format_deny_exe(&test_log, &e, "api.example.com", "/bin/x", line, sizeof(line));
	m = audit_syslog_format(line, (size_t)n, "h1", 321, msg, sizeof(msg));
	CHECK(m > 0);
	CHECK_EQ_INT(strlen(msg), m);
	/* authpriv.warning for a refusal; the timestamp is the line's. */
	snprintf(
		expect, sizeof(expect),
		"<84>1 2026-11-30T00:55:23.456789Z h1 launch 321 deny [launch@32473 event=\"deny\" "
		"seq=\"1\" sandbox=\"sb\\]1\" policy=\"stripe,openai\" op=\"connect\" pid=\"42\" "
		"exe=\"/bin/x\" dst_ip=\"127.0.0.3\" dst_port=\"8080\" "
		"dst_name=\"api.example.com\"] ");
	CHECK_EQ_INT(strncmp(msg, expect, strlen(expect)), 0);
	if (strncmp(msg, expect, strlen(expect)) != 0)
		printf("  got:      %s\n  expected: %s\n", msg, expect);
	json = strstr(msg, "] {");
	CHECK(json != NULL);
	if (json) {
		CHECK_EQ_INT(strlen(json + 2), n - 1);
		CHECK_EQ_INT(strncmp(json + 2, line, (size_t)n - 1), 0);
	}

	/* Other events are informational; an empty host is "-". */
	n = audit_format_start(&test_log, argv, 1, &test_job, 0, "h", line, sizeof(line));
	m = audit_syslog_format(line, (size_t)n, "", 5, msg, sizeof(msg));
	CHECK(m > 0);
	CHECK_CONTAINS(msg,
		       " - launch 5 sandbox_start [launch@32473 event=\"sandbox_start\" seq=\"1\"");
	CHECK_EQ_INT(strncmp(msg, "<86>1 ", 6), 0);
	CHECK_EQ_INT(audit_syslog_format(line, (size_t)n, "h", 5, msg, 100), -ENOBUFS);

	/*
	 * A long value is cut to 128 bytes in the structured data, between escapes (a cut
	 * escape's backslash would escape the closing quote) and UTF-8 sequences; the MSG has
	 * it whole.
	 */
	{
		char exe[200];

		memset(exe, 0, sizeof(exe));
		exe[0] = 'x';
		memset(exe + 1, '\x01', 30); /* each "\u0001": 6 bytes of JSON */
		n = audit_format_deny_exe(&test_log, &e, NULL, exe, line, sizeof(line));
		m = audit_syslog_format(line, (size_t)n, "h1", 321, msg, sizeof(msg));
		CHECK(m > 0);
		/* "x" and 21 escapes: 127 bytes, the 22nd would pass 128. */
		snprintf(expect, sizeof(expect), " exe=\"x%s\" ",
			 "\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001"
			 "\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001"
			 "\\u0001");
		CHECK_CONTAINS(msg, expect);
		memset(exe + 1, 0, sizeof(exe) - 1);
		for (size_t i = 1; i + 2 < 1 + 3 * 60; i += 2)
			exe[i] = '\xc3', exe[i + 1] = '\xa9'; /* é, 2 bytes each */
		n = audit_format_deny_exe(&test_log, &e, NULL, exe, line, sizeof(line));
		m = audit_syslog_format(line, (size_t)n, "h1", 321, msg, sizeof(msg));
		CHECK(m > 0);
		/* "x" and 63 é: 127 bytes. */
		CHECK(strstr(msg, " exe=\"x\xc3\xa9") && strstr(msg, "\xc3\xa9\" dst_ip="));
		CHECK_CONTAINS(json = strstr(msg, "] {"), "\"exe\":\"x\xc3\xa9");
	}
}

static void test_syslog_parse(void)
{
	enum audit_syslog_transport t;
	char target[256];

	CHECK_EQ_INT(audit_syslog_parse("syslog", &t, target, sizeof(target)), 0);
	CHECK_EQ_INT(t, AUDIT_SYSLOG_UNIX);
	CHECK_EQ_STR(target, "/dev/log");
	CHECK_EQ_INT(audit_syslog_parse("syslog:/run/x.sock", &t, target, sizeof(target)), 0);
	CHECK_EQ_STR(target, "/run/x.sock");
	CHECK_EQ_INT(audit_syslog_parse("syslog:udp:127.0.0.1:514", &t, target, sizeof(target)), 0);
	CHECK_EQ_INT(t, AUDIT_SYSLOG_UDP);
	CHECK_EQ_STR(target, "127.0.0.1:514");
	CHECK_EQ_INT(audit_syslog_parse("syslog:tcp:[::1]:6514", &t, target, sizeof(target)), 0);
	CHECK_EQ_INT(t, AUDIT_SYSLOG_TCP);
	CHECK_EQ_INT(audit_syslog_parse("syslog:tcp:host", &t, target, sizeof(target)), -EINVAL);
	CHECK_EQ_INT(audit_syslog_parse("syslog:udp:h:5x", &t, target, sizeof(target)), -EINVAL);
	CHECK_EQ_INT(audit_syslog_parse("syslog:relative", &t, target, sizeof(target)), -EINVAL);
	CHECK_EQ_INT(audit_syslog_parse("syslogx", &t, target, sizeof(target)), -EINVAL);
}

/* A log renamed (logrotate) or removed is reopened before the next write: no line lost. */
static void test_rotation_reopens(void)
{
	static struct audit_log log;
	char dir[] = "/tmp/launch-audit-XXXXXX", path[64], old[64], text[8192];
	struct deny_event e = connect_event();
	FILE *f;
	int lines;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/a.jsonl", dir);
	snprintf(old, sizeof(old), "%s/a.jsonl.1", dir);
	CHECK_EQ_INT(audit_open(&log, path, "sb", "p", 5000), 0);
	CHECK_EQ_INT(audit_start_writer(&log), 0);
	CHECK_EQ_INT(audit_deny(&log, &e), 0);
	CHECK_EQ_INT(audit_drain(&log), 0);
	CHECK_EQ_INT(rename(path, old), 0);
	CHECK_EQ_INT(audit_deny(&log, &e), 0);
	CHECK_EQ_INT(audit_deny(&log, &e), 0);
	CHECK_EQ_INT(audit_drain(&log), 0);
	CHECK_EQ_INT(unlink(path), 0);
	CHECK_EQ_INT(audit_deny(&log, &e), 0);
	audit_close(&log);
	CHECK_EQ_INT(log.counts.written_lines, 4);
	{
		const char *files[] = { old, path };
		const int want[] = { 1, 1 };

		for (int i = 0; i < 2; i++) {
			size_t n;

			f = fopen(files[i], "r");
			CHECK(f != NULL);
			if (!f)
				continue;
			n = fread(text, 1, sizeof(text) - 1, f);
			text[n] = '\0';
			fclose(f);
			lines = (int)count_newlines(text);
			CHECK_EQ_INT(lines, want[i]);
		}
	}
	unlink(path);
	unlink(old);
	rmdir(dir);
}

/* op tls: the peer, the name asked for (escaped: the job's bytes), the reason by name. */
static void test_deny_tls(void)
{
	struct tls_deny_event t = { .event = connect_event() };
	struct deny_event *e = &t.event;
	char buf[AUDIT_LINE_MAX];
	cJSON *obj;

	e->op = AUDIT_OP_TLS;
	e->port = 443;
	e->reason = TLS_REASON_NAME;
	strcpy(t.sni, "evil.example");
	obj = parse_line(buf, audit_format_deny(&test_log, e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "op"), "tls");
	CHECK_EQ_STR(str(obj, "dst_ip"), "127.0.0.3");
	CHECK_EQ_INT(num(obj, "dst_port"), 443);
	CHECK_EQ_STR(str(obj, "sni"), "evil.example");
	CHECK_EQ_STR(str(obj, "reason"), "name");
	CHECK_EQ_INT(num(obj, "pid"), 42);
	cJSON_Delete(obj);
	/* No name (or none that parsed): "" and the reason; a quote is escaped, never raw. */
	t.sni[0] = '\0';
	e->reason = TLS_REASON_NOT_TLS;
	obj = parse_line(buf, audit_format_deny(&test_log, e, buf, sizeof(buf)));
	CHECK_EQ_STR(str(obj, "sni"), "");
	CHECK_EQ_STR(str(obj, "reason"), "not_tls");
	cJSON_Delete(obj);
	memset(t.sni, 'a', sizeof(t.sni));
	t.sni[3] = '"';
	e->reason = 99;
	obj = parse_line(buf, audit_format_deny(&test_log, e, buf, sizeof(buf)));
	CHECK(str(obj, "sni") && strlen(str(obj, "sni")) == sizeof(t.sni));
	CHECK_EQ_INT(num(obj, "reason"), 99);
	cJSON_Delete(obj);
}

int main(void)
{
	RUN(test_deny_tls);
	RUN(test_deny_connect_ipv4);
	RUN(test_deny_ipv6_mapped_shown_as_given);
	RUN(test_deny_socket_kinds);
	RUN(test_deny_unix_path_and_abstract);
	RUN(test_deny_abstract_name_whole);
	RUN(test_deny_bind_listen);
	RUN(test_deny_syscall_names);
	RUN(test_deny_userns_has_no_socket_fields);
	RUN(test_hostile_comm_is_escaped);
	RUN(test_small_buffer_refused);
	RUN(test_start_exit_lost);
	RUN(test_deny_setsockopt_and_packet);
	RUN(test_limit_line);
	RUN(test_time_format);
	RUN(test_append_flush_whole_lines);
	RUN(test_close_writes_what_is_queued);
	RUN(test_flush_failure_counted);
	RUN(test_short_write_leaves_whole_lines);
	RUN(test_stalled_pipe);
	RUN(test_no_sink_counts_everything);
	RUN(test_invalid_line_counted_unwritten);
	RUN(test_unformatted_line_counted_unwritten);
	RUN(test_start_long_argument_truncated);
	RUN(test_start_many_policies_truncated);
	RUN(test_start_many_arguments_truncated);
	RUN(test_long_fields_truncated);
	RUN(test_sha256_vectors);
	RUN(test_utf8_passes_through);
	RUN(test_seq_and_host);
	RUN(test_http_line_hosts);
	RUN(test_start_version_policies);
	RUN(test_policy_update_line);
	RUN(test_exe_and_denied_by_op);
	RUN(test_audit_only_verdicts);
	RUN(test_syslog_format);
	RUN(test_syslog_parse);
	RUN(test_rotation_reopens);
	return test_failures != 0;
}
