// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The common options as a table: each row names an option, its value and its help, and sets a
 * field of arg or parses its value into one. getopt's tables and --help are made from it, and
 * tests/selftest/manual-options checks the manual's option list against --help, so the three
 * cannot drift.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "lib/util.h"
#include "release.h"
#include "sandbox/loader.h"

struct launch_args arg = { .audit_path = AUDIT_DEFAULT_PATH,
			   .audit_sync_fd = -1,
			   .audit_stall_s = AUDIT_STALL_TIMEOUT_MS_DEFAULT / 1000.0 };

/* Set by options_parse for the rows that print it: --help. */
static const struct command_help *help_of_command;

/*
 * One line to stderr, which may be a pipe nobody drains (with --audit-log -, the very sink
 * that stalled): it waits at most STDERR_WAIT_MS for room, and after one such wait, not at
 * all, so launch always exits in bounded time.
 */
#define STDERR_WAIT_MS 1000
/* What each fail() line starts with. */
static const char *fail_prefix = "launch: ";

void fail_set_prefix(const char *prefix)
{
	fail_prefix = prefix;
}

void fail(const char *fmt, ...)
{
	static bool stderr_stalled;
	struct pollfd pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
	char line[4096];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s", fail_prefix);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (stderr_stalled || poll(&pfd, 1, STDERR_WAIT_MS) != 1 || !(pfd.revents & POLLOUT)) {
		stderr_stalled = true;
		return;
	}
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to say it. */
	}
}

int parse_uint(const char *text, unsigned int max, unsigned int *ret_value)
{
	unsigned long value;
	char *end;

	if (!*text || *text == '-' || *text == '+')
		return -EINVAL;
	errno = 0;
	value = strtoul(text, &end, 10);
	if (errno || *end || value > max)
		return -EINVAL;
	*ret_value = (unsigned int)value;
	return 0;
}

/* A number of seconds in (min, max]; min itself too when inclusive. */
static int parse_seconds(const char *text, double min, bool inclusive, double max, double *ret)
{
	char *end;
	double value;

	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || *end || !(inclusive ? value >= min : value > min) ||
	    value > max)
		return -EINVAL;
	*ret = value;
	return 0;
}

static bool valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SANDBOX_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
	       len;
}

static int set_policy(const char *value)
{
	if (arg.npolicies == MAX_POLICIES) {
		fail("--policy: at most %d policies", MAX_POLICIES);
		return -1;
	}
	arg.policies[arg.npolicies++] = (char *)value;
	return 0;
}

/* The forms of --audit-log that are not a path, checked before anything starts. */
static int set_audit_log(const char *spec)
{
	enum audit_syslog_transport transport;
	char target[256], *end;
	long n;

	arg.audit_path = spec;
	if (strncmp(spec, "fd:", 3) == 0) {
		errno = 0;
		n = strtol(spec + 3, &end, 10);
		if (errno || end == spec + 3 || *end || n < 3 || n > INT_MAX) {
			fail("--audit-log: \"%s\" is not fd:N with a descriptor N >= 3 (0-2 are "
			     "the "
			     "job's too; \"-\" is standard error)",
			     spec);
			return -1;
		}
	} else if (strcmp(spec, "syslog") == 0 || strncmp(spec, "syslog:", 7) == 0) {
		if (audit_syslog_parse(spec, &transport, target, sizeof(target)) < 0) {
			fail("--audit-log: \"%s\" is not syslog, syslog:/PATH, "
			     "syslog:udp:HOST:PORT "
			     "or syslog:tcp:HOST:PORT",
			     spec);
			return -1;
		}
	}
	return 0;
}

static int set_audit_failure(const char *value)
{
	if (strcmp(value, "stop") == 0)
		arg.audit_continue = false;
	else if (strcmp(value, "continue") == 0)
		arg.audit_continue = true;
	else {
		fail("--audit-failure: \"%s\" is neither \"stop\" nor \"continue\"", value);
		return -1;
	}
	return 0;
}

static int set_audit_format(const char *value)
{
	if (audit_schema_parse(value, &arg.audit_format) < 0) {
		fail("--audit-format: \"%s\" is not json, ocsf or ecs", value);
		return -1;
	}
	return 0;
}

static int set_audit_sync_fd(const char *value)
{
	unsigned int fd;

	if (parse_uint(value, INT_MAX, &fd) < 0 || fd < 3) {
		fail("--audit-sync-fd: \"%s\" is not a descriptor N >= 3 (0-2 are the job's)",
		     value);
		return -1;
	}
	arg.audit_sync_fd = (int)fd;
	return 0;
}

static int set_audit_stall_timeout(const char *value)
{
	if (parse_seconds(value, 0.01, true, 86400, &arg.audit_stall_s) < 0) {
		fail("--audit-stall-timeout: \"%s\" is not 0.01-86400 seconds", value);
		return -1;
	}
	return 0;
}

static int set_timeout(const char *value)
{
	if (parse_seconds(value, 0, false, 1e9, &arg.timeout_s) < 0) {
		fail("--timeout: \"%s\" is not a positive number of seconds", value);
		return -1;
	}
	return 0;
}

static int set_name(const char *value)
{
	if (!valid_name(value)) {
		fail("--name: \"%s\" must be 1-%d of [A-Za-z0-9_.-], not starting with '.'", value,
		     SANDBOX_NAME_MAX);
		return -1;
	}
	arg.name = value;
	return 0;
}

static int set_env(const char *value, bool set)
{
	int r = set ? jobenv_add_set(&arg.env, value) : jobenv_add_pass(&arg.env, value);

	if (r == -E2BIG) {
		fail("%s: at most %d variables", set ? "--setenv" : "--pass-env", JOBENV_MAX);
		return -1;
	}
	if (r < 0) {
		fail(set ? "--setenv: \"%s\" is not NAME=VALUE (a NAME without '=')"
			 : "--pass-env: \"%s\" is not a variable name",
		     value);
		return -1;
	}
	return 0;
}

static int set_setenv(const char *value)
{
	return set_env(value, true);
}

static int set_pass_env(const char *value)
{
	return set_env(value, false);
}

/* NAME of --secret NAME[=@FILE]: a variable name, [A-Za-z_][A-Za-z0-9_]*. */
static bool secret_name_valid(const char *name, size_t len)
{
	if (!len || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(name[i] == '_' || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

static int set_secret(const char *value)
{
	const char *eq = strchr(value, '=');
	size_t len = eq ? (size_t)(eq - value) : strlen(value);

	if (!secret_name_valid(value, len) || (eq && (eq[1] != '@' || !eq[2]))) {
		fail("--secret: \"%s\" is not NAME (launch's variable NAME) or NAME=@FILE", value);
		return -1;
	}
	for (size_t i = 0; i < arg.nsecrets; i++)
		if (strncmp(arg.secrets[i], value, len) == 0 &&
		    (arg.secrets[i][len] == '\0' || arg.secrets[i][len] == '=')) {
			fail("--secret: %.*s given twice", (int)len, value);
			return -1;
		}
	if (arg.nsecrets == POLICY_SECRETS_MAX) {
		fail("--secret: at most %d secrets", POLICY_SECRETS_MAX);
		return -1;
	}
	arg.secrets[arg.nsecrets++] = value;
	return 0;
}

/* Checked here, where the option is named: the gateway reads it once the sandbox starts. */
static int set_upstream_ca(const char *value)
{
	_cleanup_close_ int fd = open(value, O_RDONLY | O_CLOEXEC);
	const char *why = NULL;
	struct stat st;
	char byte;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((n = read(fd, &byte, 1)) < 0)
		why = strerror(errno);
	else if (n == 0)
		why = "empty";
	if (why) {
		fail("--upstream-ca %s: cannot read it: %s", value, why);
		return -1;
	}
	if (arg.nupstream_cas == MAX_UPSTREAM_CAS) {
		fail("--upstream-ca: at most %d files", MAX_UPSTREAM_CAS);
		return -1;
	}
	arg.upstream_cas[arg.nupstream_cas++] = value;
	return 0;
}

/*
 * --gateway-client PORT4,PORT6: launch mcp's own gateway (shared by its calls) listens for
 * this sandbox there; PORT6 is 0 when the host has no ::1.
 */
static int set_gateway_client(const char *value)
{
	unsigned int port4, port6;
	char tail;

	if (sscanf(value, "%u,%u%c", &port4, &port6, &tail) != 2 || !port4 || port4 > 65535 ||
	    port6 > 65535) {
		fail("--gateway-client: \"%s\" is not PORT4,PORT6 (1-65535, 0-65535)", value);
		return -1;
	}
	arg.gateway_port4 = (uint16_t)port4;
	arg.gateway_port6 = (uint16_t)port6;
	return 0;
}

static int set_pids_max(const char *value)
{
	if (limit_parse_pids(value, &arg.limits.pids_max) < 0) {
		fail("--pids-max: \"%s\" is not a number of tasks (1-%u) or \"max\"", value,
		     LIMIT_PIDS_CEILING);
		return -1;
	}
	return 0;
}

static int set_memory_max(const char *value)
{
	if (limit_parse_memory(value, &arg.limits.memory_max) < 0) {
		fail("--memory-max: \"%s\" is not a size of at least 4M (bytes, or with K, M, G, "
		     "T) or \"max\"",
		     value);
		return -1;
	}
	return 0;
}

static int set_cpu_max(const char *value)
{
	if (limit_parse_cpu(value, &arg.limits.cpu_quota_us, &arg.limits.cpu_period_us) < 0) {
		fail("--cpu-max: \"%s\" is not a number of CPUs (1.5), a percentage of one "
		     "(150%%), \"QUOTA PERIOD\" in microseconds or \"max\"",
		     value);
		return -1;
	}
	return 0;
}

static int set_tmp_size(const char *value)
{
	if (limit_parse_tmp(value, &arg.limits.tmp_bytes, &arg.limits.tmp_percent) < 0) {
		fail("--tmp-size: \"%s\" is not a size (bytes, or with K, M, G, T) or a "
		     "percentage of the RAM (1-100%%)",
		     value);
		return -1;
	}
	return 0;
}

static int set_nofile(const char *value)
{
	if (limit_parse_nofile(value, &arg.limits.nofile) < 0) {
		fail("--nofile: \"%s\" is not a number of descriptors (3-%u)", value,
		     LIMIT_NOFILE_CEILING);
		return -1;
	}
	return 0;
}

static int set_dns_min_ttl(const char *value)
{
	if (parse_uint(value, 86400, &arg.dns.min_ttl_s) < 0) {
		fail("--dns-min-ttl: \"%s\" is not 0-86400 seconds", value);
		return -1;
	}
	return 0;
}

static int set_dns_grace(const char *value)
{
	if (parse_uint(value, 86400, &arg.dns.grace_s) < 0) {
		fail("--dns-grace: \"%s\" is not 0-86400 seconds", value);
		return -1;
	}
	return 0;
}

static int set_dns_max_ips(const char *value)
{
	if (parse_uint(value, DNSPROXY_MAX_IPS_LIMIT, &arg.dns.max_ips) < 0 || !arg.dns.max_ips) {
		fail("--dns-max-ips: \"%s\" is not 1-%d", value, DNSPROXY_MAX_IPS_LIMIT);
		return -1;
	}
	return 0;
}

static int set_dns_deny(const char *value)
{
	if (strcmp(value, "refused") == 0)
		arg.dns.deny_rcode = DNS_RCODE_REFUSED;
	else if (strcmp(value, "nxdomain") == 0)
		arg.dns.deny_rcode = DNS_RCODE_NXDOMAIN;
	else {
		fail("--dns-deny: \"%s\" is neither \"refused\" nor \"nxdomain\"", value);
		return -1;
	}
	return 0;
}

int options_show_help(const char *value __attribute__((unused)))
{
	options_print_help(stdout, help_of_command);
	exit(EXIT_SUCCESS);
}

static int show_version(const char *value __attribute__((unused)))
{
	/* The BPF object's hash names the .bpf-<version> holder cgroup. */
	printf("launch %s (bpf %s)\n", LAUNCH_RELEASE, loader_version());
	exit(EXIT_SUCCESS);
}

#define ALL	(CMD_RUN | CMD_CHECK | CMD_GC | CMD_UPDATE | CMD_MCP)
#define RUNNING (CMD_RUN | CMD_MCP)

const struct opt options_common[] = {
	{ "policy", 'p', "FILE",
	  "policy file (repeatable: the allowlists are unioned)\n"
	  "or NAME (no '/', no \".json\"): /etc/launch/policies/NAME.json,\n"
	  "else <prefix>/share/launch/policies/NAME.json",
	  .parse = set_policy, .commands = CMD_RUN | CMD_CHECK | CMD_UPDATE | CMD_MCP,
	  .heading = "Options:" },
	{ "audit-log", 'a', "PATH",
	  "audit log, appended to (default " AUDIT_DEFAULT_PATH ");\n"
	  "reopened when rotated. \"-\": standard error (shared with\n"
	  "the job); \"fd:N\": descriptor N (N >= 3, never the job's);\n"
	  "\"syslog\" (/dev/log), \"syslog:PATH\", \"syslog:udp:HOST:PORT\"\n"
	  "or \"syslog:tcp:HOST:PORT\": RFC 5424 messages",
	  .parse = set_audit_log, .commands = RUNNING,
	  .help_mcp = "the audit log of every call's sandbox\n(default " AUDIT_DEFAULT_PATH ")" },
	{ "audit-failure", 0, "=stop|continue",
	  "when the audit log cannot be written: stop the job and\n"
	  "exit 125 (default), or keep it running and count the\n"
	  "lines it could not write (sandbox_exit, and a last line\n"
	  "on stderr)",
	  .parse = set_audit_failure, .commands = RUNNING },
	{ "audit-format", 0, "=json|ocsf|ecs",
	  "the audit log's lines: launch's JSON (default), OCSF 1.3.0\n"
	  "events or Elastic Common Schema 8.11 documents",
	  .parse = set_audit_format, .commands = CMD_RUN },
	{ "audit-sync-fd", 0, "N",
	  "descriptor N (>= 3) is a socket: for each byte read from\n"
	  "it, launch writes every refusal made until then to the\n"
	  "audit log, then writes the byte back (for a supervisor)",
	  .parse = set_audit_sync_fd, .commands = CMD_RUN },
	{ "audit-stall-timeout", 0, "SECONDS",
	  "an audit log that accepts nothing for this long (a FIFO\n"
	  "nobody reads, a full pipe) has failed (default 5)",
	  .parse = set_audit_stall_timeout, .commands = RUNNING },
	{ "allow-unix-unfiltered", 0, NULL,
	  "on kernels before 6.7, which cannot filter AF_UNIX\n"
	  "connects, run anyway (the job can then reach any local\n"
	  "socket it has permission for)",
	  .flag = &arg.allow_unix_unfiltered, .commands = RUNNING },
	{ "allow-degraded", 0, NULL,
	  "run a policy that needs what this kernel lacks, without\n"
	  "it (before 6.7, a policy's \"unix\" paths: the job then\n"
	  "makes no AF_UNIX socket at all)",
	  .flag = &arg.allow_degraded, .commands = RUNNING },
	{ "allow-no-landlock", 0, NULL,
	  "on a kernel without Landlock, run anyway when a policy has\n"
	  "\"fs\" (the job can then write every file its user may)",
	  .flag = &arg.allow_no_landlock, .commands = RUNNING },
	{ "resolver", 'r', "ADDR[:PORT]",
	  "resolve policy hosts, and forward the job's allowed\n"
	  "look-ups, with this DNS server, not the first nameserver\n"
	  "of /etc/resolv.conf",
	  .string = &arg.resolver, .commands = CMD_RUN | CMD_CHECK | CMD_MCP },
	{ "cgroup-parent", 0, "PATH",
	  "cgroup v2 folder for the sandbox's cgroup\n"
	  "(default: <cgroup2 mount>/launch)",
	  .string = &arg.cgroup_parent, .commands = CMD_RUN | CMD_GC | CMD_MCP },
	{ "timeout", 't', "SECONDS", "kill the job after SECONDS; launch then exits 124",
	  .parse = set_timeout, .commands = RUNNING,
	  .help_mcp = "end a call's code after SECONDS (default 30)" },
	{ "user", 'u', "USER",
	  "run the job as USER (name or uid; default: the user who\n"
	  "ran sudo, else nobody; \"root\" runs it as uid 0)",
	  .string = &arg.user, .commands = RUNNING,
	  .help_mcp = "run each call's code as USER (default nobody)" },
	{ "name", 'n', "NAME",
	  "sandbox id in the audit log and cgroup name\n"
	  "(default: 12 random hex digits)",
	  .parse = set_name, .commands = CMD_RUN },
	{ "verbose", 'v', NULL, "show libbpf's messages, the verifier's included",
	  .flag = &arg.verbose, .commands = ALL },
	{ "clearenv", 0, NULL, "start the job with an empty environment", .flag = &arg.env.clear,
	  .commands = CMD_RUN },
	{ "setenv", 0, "NAME=VALUE", "set NAME in the job's environment (repeatable)",
	  .parse = set_setenv, .commands = RUNNING },
	{ "pass-env", 0, "NAME",
	  "pass launch's NAME on to the job, and no other variable\n"
	  "that --setenv does not set (repeatable)",
	  .parse = set_pass_env, .commands = RUNNING,
	  .help_mcp = "pass launch's NAME on to each call's code (repeatable;\n"
		      "by default the code gets no variable of the server's)" },
	{ "notify-denials", 0, NULL,
	  "print one line on standard error per refusal:\n"
	  "\"launch: refused connect 1.1.1.1:443 (policy stripe)\"\n"
	  "(\"would refuse\" with --audit-only)",
	  .flag = &arg.notify_denials, .commands = CMD_RUN },
	{ "audit-only", 0, NULL,
	  "enforce no policy: log what it would refuse as\n"
	  "\"would_deny\" and what it allows as \"allow\" (socket\n"
	  "kinds and other refusals no policy can lift stay)",
	  .flag = &arg.dns.audit_only, .commands = CMD_RUN },
	{ "secret", 0, "NAME[=@FILE]",
	  "the value of a policy's secret NAME (\"secrets\"): launch's\n"
	  "variable NAME, or FILE's content; the job gets a placeholder,\n"
	  "the gateway puts the value into the requests (repeatable)",
	  .parse = set_secret, .commands = CMD_RUN | CMD_MCP,
	  .heading = "\nHTTPS gateway (docs/gateway.md): a host rule with \"http\" is reached "
		     "through launch's\n"
		     "gateway, which judges each request and injects the policy's secrets." },
	{ "upstream-ca", 0, "FILE",
	  "also trust the CAs in FILE (PEM) for the gateway's own\n"
	  "connections to the providers (repeatable; default: the system store)",
	  .parse = set_upstream_ca, .commands = CMD_RUN | CMD_MCP },
	{ "audit-http-query", 0, NULL, "keep the query in the path of \"http\" lines",
	  .flag = &arg.audit_http_query, .commands = CMD_RUN | CMD_MCP },
	{ "gateway-client", 0, "PORT4,PORT6",
	  "for launch mcp's calls: its gateway, shared by the calls,\n"
	  "serves this job on these ports of 127.0.0.1 and ::1",
	  .parse = set_gateway_client, .commands = CMD_RUN },
	{ "pids-max", 0, "N|max", "processes and threads (default 64 per CPU, at most 2048)",
	  .parse = set_pids_max, .commands = RUNNING,
	  .heading = "\nResource limits (also a policy's \"limits\"; options win, else the "
		     "strictest policy):" },
	{ "memory-max", 0, "SIZE|max", "memory, swap included: 256M, 2G (default half the RAM)",
	  .parse = set_memory_max, .commands = RUNNING },
	{ "cpu-max", 0, "CPUS|max",
	  "CPU time: 1.5, 150%, or \"QUOTA PERIOD\" in microseconds\n"
	  "(default max; the job always competes as one group)",
	  .parse = set_cpu_max, .commands = RUNNING },
	{ "tmp-size", 0, "SIZE", "the private /tmp: 512M, or 10% of the RAM (default 25%)",
	  .parse = set_tmp_size, .commands = RUNNING },
	{ "nofile", 0, "N",
	  "descriptors per process (default 4096)\n"
	  "Reaching the pids or memory limit stops the job (exit 137,\n"
	  "a \"limit\" audit event); a limit that cannot be enforced\n"
	  "is an error (125)",
	  .parse = set_nofile, .commands = RUNNING },
	{ "no-dns-proxy", 0, NULL,
	  "judge port 53 like any other port; no wildcards then, and a\n"
	  "host that does not resolve at launch is an error",
	  .flag = &arg.no_dns_proxy, .commands = CMD_RUN | CMD_CHECK | CMD_MCP,
	  .heading = "\nDNS (docs/dns.md): the job's DNS, to any address on port 53, is answered "
		     "by launch.\n"
		     "A name that a policy \"host\" allows (exact, or below a \"*.example.com\" "
		     "wildcard) is\n"
		     "forwarded, and the addresses in the answer are allowed with that rule's "
		     "ports for\n"
		     "their TTL plus a grace period; any other name is refused without leaving "
		     "the host." },
	{ "dns-min-ttl", 0, "SECONDS",
	  "keep answered addresses open at least this long (default 5)", .parse = set_dns_min_ttl,
	  .commands = RUNNING },
	{ "dns-grace", 0, "SECONDS", "and this much longer than the TTL (default 60)",
	  .parse = set_dns_grace, .commands = RUNNING },
	{ "dns-max-ips", 0, "N", "addresses open per name, oldest closed first (default 256)",
	  .parse = set_dns_max_ips, .commands = RUNNING },
	{ "dns-deny", 0, "=refused|nxdomain",
	  "the answer to a name no policy allows (default refused)", .parse = set_dns_deny,
	  .commands = RUNNING },
	{ "audit-dns-allowed", 0, NULL,
	  "log every allowed look-up (dns_allow) with the addresses\n"
	  "it opened; refused look-ups are always logged",
	  .flag = &arg.dns.audit_allowed, .commands = RUNNING },
	{ "help", 'h', NULL, "show this help", .parse = options_show_help, .commands = ALL,
	  .heading = "" },
	{ "version", 0, NULL, "show the release and the BPF programs' version",
	  .parse = show_version, .commands = ALL },
};
const size_t options_ncommon = ARRAY_SIZE(options_common);

void options_init(void)
{
	dnsproxy_config_default(&arg.dns);
}

const struct opt *options_find(const struct opt *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

/* Applies one row to its value; 0, or -1 after one line on stderr. */
static int options_apply(const struct opt *row, const char *value)
{
	if (row->flag)
		*row->flag = true;
	else if (row->string)
		*row->string = value;
	else if (row->parse)
		return row->parse(value);
	return 0;
}

/* Rows are numbered from OPT_ROW: common ones first, then the command's own. */
#define OPT_ROW	 0x100
#define OPTS_MAX 64

static const struct opt *row_of(const struct command_help *help, int index)
{
	if (help->own_only)
		return &help->own[index];
	if ((size_t)index < options_ncommon)
		return &options_common[index];
	return &help->own[(size_t)index - options_ncommon];
}

int options_parse(int argc, char **argv, const struct command_help *help, bool need_policy)
{
	struct option longopts[OPTS_MAX + 1] = { 0 };
	char shortopts[2 * OPTS_MAX + 3] = "+:";
	size_t n = (help->own_only ? 0 : options_ncommon) + help->nown, s = 2;
	int c;

	if (n > OPTS_MAX) {
		fail("too many options in the table (%zu, at most %d)", n, OPTS_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct opt *row = row_of(help, (int)i);

		longopts[i] =
			(struct option){ row->name, row->value ? required_argument : no_argument,
					 NULL, OPT_ROW + (int)i };
		if (row->short_name) {
			shortopts[s++] = row->short_name;
			if (row->value)
				shortopts[s++] = ':';
		}
	}
	shortopts[s] = '\0';
	help_of_command = help;
	/* Without the job's options to keep apart, operands and options may mix. */
	if (help->own_only)
		memmove(shortopts, shortopts + 1, s);
	/*
	 * '+': stop at the first operand, so the job's own options stay its own; ':': a missing
	 * value is told from an unknown option.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct opt *row = NULL;

		if (c >= OPT_ROW && (size_t)(c - OPT_ROW) < n)
			row = row_of(help, c - OPT_ROW);
		for (size_t i = 0; !row && c > 0 && c < OPT_ROW && i < n; i++)
			if (row_of(help, (int)i)->short_name == c)
				row = row_of(help, (int)i);
		if (!row) {
			if (c == ':')
				fail("%s: needs a value (see --help)", argv[optind - 1]);
			else
				fail("%s: unknown option (see --help)", argv[optind - 1]);
			return -1;
		}
		if (options_apply(row, optarg) < 0)
			return -1;
	}
	if (need_policy && arg.npolicies == 0) {
		fail("--policy: at least one policy file is required (see --help)");
		return -1;
	}
	return optind;
}

/* Help columns: options from the third, their text from the 28th. */
#define HELP_TEXT_COLUMN 27

static void print_row(FILE *out, const struct opt *row, const char *help)
{
	char left[128];
	int n;

	n = snprintf(left, sizeof(left), "  %c%c%c --%s%s%s", row->short_name ? '-' : ' ',
		     row->short_name ?: ' ', row->short_name ? ',' : ' ', row->name,
		     row->value && row->value[0] != '=' ? " " : "", row->value ?: "");
	if (n < HELP_TEXT_COLUMN)
		fprintf(out, "%-*s", HELP_TEXT_COLUMN, left);
	else
		fprintf(out, "%s\n%*s", left, HELP_TEXT_COLUMN, "");
	for (const char *line = help; *line;) {
		size_t len = strcspn(line, "\n");

		fprintf(out, "%.*s\n", (int)len, line);
		line += len;
		if (*line == '\n' && *++line)
			fprintf(out, "%*s", HELP_TEXT_COLUMN, "");
	}
}

void options_print_rows(FILE *out, const struct opt *rows, size_t n, unsigned int command)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt *row = &rows[i];

		if (command && !(row->commands & command))
			continue;
		if (row->heading && command == CMD_RUN)
			fprintf(out, "%s%s", row->heading, row->heading[0] ? "\n" : "");
		print_row(out, row,
			  command == CMD_MCP && row->help_mcp ? row->help_mcp : row->help);
	}
}

void options_print_help(FILE *out, const struct command_help *help)
{
	fputs(help->synopsis, out);
	if (help->nown) {
		fputs("\nOptions:\n", out);
		options_print_rows(out, help->own, help->nown, 0);
	}
	if (!help->own_only) {
		if (help->command != CMD_RUN)
			fputs(help->nown ? "\nCommon options:\n" : "\nOptions:\n", out);
		else
			fputc('\n', out);
		options_print_rows(out, options_common, options_ncommon, help->command);
	}
	if (help->epilogue)
		fprintf(out, "\n%s", help->epilogue);
}
