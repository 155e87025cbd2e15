// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch: run a command with its network egress confined to a policy's allowlist. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "sandbox/cgroup.h"
#include "sandbox/cglimit.h"
#include "dns/dnsproxy.h"
#include "sandbox/gc.h"
#include "sandbox/jobenv.h"
#include "sandbox/landlock.h"
#include "policy/limit.h"
#include "sandbox/loader.h"
#include "agent/mcp_run.h"
#include "audit/refusal.h"
#include "auditcmd.h"
#include "release.h"
#include "policy/rules.h"
#include "sandbox/sandbox.h"
#include "sandbox/update.h"

#define MAX_POLICIES	 64
#define SANDBOX_NAME_MAX 64
#ifndef LAUNCH_POLICY_ETC_DIR
#define LAUNCH_POLICY_ETC_DIR "/etc/launch/policies"
#endif

static struct {
	char *policies[MAX_POLICIES];
	size_t npolicies;
	const char *audit_path;
	int audit_sync_fd; /* --audit-sync-fd; -1: none */
	const char *resolver;
	const char *cgroup_parent;
	const char *user;
	const char *name;
	double timeout_s;
	double audit_stall_s;
	bool audit_continue;
	enum audit_schema audit_format; /* --audit-format */
	bool allow_unix_unfiltered;
	bool allow_no_landlock;
	bool verbose;
	bool no_dns_proxy;
	struct dnsproxy_config dns; /* defaults set in main */
	struct jobenv env;	    /* --clearenv, --setenv, --pass-env */
	bool notify_denials;
	struct job_limits limits; /* --pids-max and the others; LIMIT_UNSET when not given */
} arg = { .audit_path = AUDIT_DEFAULT_PATH,
	  .audit_sync_fd = -1,
	  .audit_stall_s = AUDIT_STALL_TIMEOUT_MS_DEFAULT / 1000.0 };

static const char USAGE[] =
	"Usage: launch [OPTIONS] -- COMMAND [ARG...]\n"
	"       launch check --policy FILE [--policy FILE...] [--resolver ADDR[:PORT]]\n"
	"       launch gc [--unload]\n"
	"       launch update ID --policy FILE [--policy FILE...] [--resolver ADDR[:PORT]]\n"
	"       launch learn AUDIT.jsonl [--sandbox ID] [--name NAME] [--wildcards]\n"
	"       launch report AUDIT.jsonl\n"
	"       launch mcp --policy FILE [--runtime node] [--modules DIR] [--pass-env NAME...]\n"
	"                  [--pool N] [--max-output BYTES]\n"
	"\n"
	"Runs COMMAND in its own cgroup, where BPF programs let its sockets reach only the\n"
	"addresses, ports and protocols its policies allow, and write every refusal to a\n"
	"JSON-lines audit log.\n"
	"\n"
	"Options:\n"
	"  -p, --policy FILE        policy file (repeatable: the allowlists are unioned)\n"
	"                           or NAME (no '/', no \".json\"): "
	"/etc/launch/policies/NAME.json,\n"
	"                           else <prefix>/share/launch/policies/NAME.json\n"
	"  -a, --audit-log PATH     audit log, appended to (default " AUDIT_DEFAULT_PATH ");\n"
	"                           reopened when rotated. \"-\": standard error (shared with\n"
	"                           the job); \"fd:N\": descriptor N (N >= 3, never the job's);\n"
	"                           \"syslog\" (/dev/log), \"syslog:PATH\", "
	"\"syslog:udp:HOST:PORT\"\n"
	"                           or \"syslog:tcp:HOST:PORT\": RFC 5424 messages\n"
	"      --audit-failure=stop|continue\n"
	"                           when the audit log cannot be written: stop the job and\n"
	"                           exit 125 (default), or keep it running and count the\n"
	"                           lines it could not write (sandbox_exit, and a last line\n"
	"                           on stderr)\n"
	"      --audit-format=json|ocsf|ecs\n"
	"                           the audit log's lines: launch's JSON (default), OCSF 1.3.0\n"
	"                           events or Elastic Common Schema 8.11 documents\n"
	"      --audit-sync-fd N    descriptor N (>= 3) is a socket: for each byte read from\n"
	"                           it, launch writes every refusal made until then to the\n"
	"                           audit log, then writes the byte back (for a supervisor)\n"
	"      --audit-stall-timeout SECONDS\n"
	"                           an audit log that accepts nothing for this long (a FIFO\n"
	"                           nobody reads, a full pipe) has failed (default 5)\n"
	"      --allow-unix-unfiltered\n"
	"                           on kernels before 6.7, which cannot filter AF_UNIX\n"
	"                           connects, run anyway (the job can then reach any local\n"
	"                           socket it has permission for)\n"
	"      --allow-no-landlock  on a kernel without Landlock, run anyway when a policy has\n"
	"                           \"fs\" (the job can then write every file its user may)\n"
	"  -r, --resolver ADDR[:PORT]\n"
	"                           resolve policy hosts, and forward the job's allowed\n"
	"                           look-ups, with this DNS server, not the first nameserver\n"
	"                           of /etc/resolv.conf\n"
	"      --cgroup-parent PATH cgroup v2 folder for the sandbox's cgroup\n"
	"                           (default: <cgroup2 mount>/launch)\n"
	"  -t, --timeout SECONDS    kill the job after SECONDS; launch then exits 124\n"
	"  -u, --user USER          run the job as USER (name or uid; default: the user who\n"
	"                           ran sudo, else nobody; \"root\" runs it as uid 0)\n"
	"  -n, --name NAME          sandbox id in the audit log and cgroup name\n"
	"                           (default: 12 random hex digits)\n"
	"  -v, --verbose            show libbpf's messages, the verifier's included\n"
	"      --clearenv           start the job with an empty environment\n"
	"      --setenv NAME=VALUE  set NAME in the job's environment (repeatable)\n"
	"      --pass-env NAME      pass launch's NAME on to the job, and no other variable\n"
	"                           that --setenv does not set (repeatable)\n"
	"      --notify-denials     print one line on standard error per refusal:\n"
	"                           \"launch: refused connect 1.1.1.1:443 (policy stripe)\"\n"
	"                           (\"would refuse\" with --audit-only)\n"
	"      --audit-only         enforce no policy: log what it would refuse as\n"
	"                           \"would_deny\" and what it allows as \"allow\" (socket\n"
	"                           kinds and other refusals no policy can lift stay)\n"
	"\n"
	"Resource limits (also a policy's \"limits\"; options win, else the strictest policy):\n"
	"      --pids-max N|max     processes and threads (default 64 per CPU, at most 2048)\n"
	"      --memory-max SIZE|max\n"
	"                           memory, swap included: 256M, 2G (default half the RAM)\n"
	"      --cpu-max CPUS|max   CPU time: 1.5, 150%, or \"QUOTA PERIOD\" in microseconds\n"
	"                           (default max; the job always competes as one group)\n"
	"      --tmp-size SIZE      the private /tmp: 512M, or 10% of the RAM (default 25%)\n"
	"      --nofile N           descriptors per process (default 4096)\n"
	"                           Reaching the pids or memory limit stops the job (exit 137,\n"
	"                           a \"limit\" audit event); a limit that cannot be enforced\n"
	"                           is an error (125)\n"
	"  -h, --help               show this help\n"
	"      --version            show the release and the BPF programs' version\n"
	"\n"
	"DNS (docs/dns.md): the job's DNS, to any address on port 53, is answered by launch.\n"
	"A name that a policy \"host\" allows (exact, or below a \"*.example.com\" wildcard) is\n"
	"forwarded, and the addresses in the answer are allowed with that rule's ports for\n"
	"their TTL plus a grace period; any other name is refused without leaving the host.\n"
	"      --no-dns-proxy       judge port 53 like any other port; no wildcards then, and a\n"
	"                           host that does not resolve at launch is an error\n"
	"      --dns-min-ttl SECONDS\n"
	"                           keep answered addresses open at least this long (default 5)\n"
	"      --dns-grace SECONDS  and this much longer than the TTL (default 60)\n"
	"      --dns-max-ips N      addresses open per name, oldest closed first (default 256)\n"
	"      --dns-deny=refused|nxdomain\n"
	"                           the answer to a name no policy allows (default refused)\n"
	"      --audit-dns-allowed  log every allowed look-up (dns_allow) with the addresses\n"
	"                           it opened; refused look-ups are always logged\n"
	"\n"
	"The job runs as the user who ran sudo, or nobody (--user root for uid 0). It may write\n"
	"only its working directory, a private /tmp and /dev/shm and a policy's \"fs\" paths\n"
	"(Landlock), and sees /proc/sys and /sys read-only.\n"
	"The job gets launch's standard streams and environment (unless --clearenv or\n"
	"--pass-env), no capabilities, no_new_privs,\n"
	"and no descriptor above 2. INT, TERM, HUP, QUIT, USR1 and USR2 sent to launch are passed\n"
	"on to it. When it exits, every process left in its cgroup is killed.\n"
	"\n"
	"Exit status: the job's own; 128+N if it was killed by signal N; 124 after --timeout;\n"
	"137 when it reached its pids or memory limit;\n"
	"125 if launch failed (bad option, bad policy, no privilege, audit log failure);\n"
	"126 if COMMAND cannot be executed; 127 if it is not found.\n"
	"\n"
	"launch mcp serves a Model Context Protocol tool, run_typescript, on standard input and\n"
	"output: each call runs its code in a fresh sandbox under these policies (docs/mcp.md).\n"
	"\n"
	"launch check validates the policies and prints the effective allowlist, with the\n"
	"addresses each host resolves to, without running anything.\n"
	"The BPF programs are verified once per host and build, and shared: the first launch\n"
	"attaches them to the cgroup <cgroup parent>/.bpf-<version>, which keeps them loaded\n"
	"for the next ones (docs/design.md).\n"
	"launch gc removes the cgroups of sandboxes whose launcher was killed (every launch\n"
	"run does this too), frees the maps that idle BPF slots keep for the next sandbox,\n"
	"and unloads the programs of other builds; with --unload, this build's too.\n"
	"launch update replaces the policies of the running sandbox ID (--name) at once: each\n"
	"call is judged by the old policies or the new, and by the new ones once it returns.\n";

/*
 * One line to stderr, which may be a pipe nobody drains (with --audit-log -, the very sink
 * that stalled): it waits at most STDERR_WAIT_MS for room, and after one such wait, not at
 * all, so launch always exits in bounded time.
 */
#define STDERR_WAIT_MS 1000
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	static bool stderr_stalled;
	struct pollfd pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
	char line[4096];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "launch: ");
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

static int libbpf_print(enum libbpf_print_level level __attribute__((unused)), const char *fmt,
			va_list ap)
{
	/* Without -v the caller's one-line error, with its hint, says it all. */
	if (!arg.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SANDBOX_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
	       len;
}

/* A decimal number 0..max. */
static int parse_uint(const char *text, unsigned int max, unsigned int *ret_value)
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

/* The forms of --audit-log that are not a path, checked before anything starts. */
static int check_audit_log(const char *spec)
{
	enum audit_syslog_transport transport;
	char target[256], *end;
	long n;

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

/* Returns the index of the first operand, or -1 after printing why the options are bad. */
static int parse_options(int argc, char **argv, bool need_policy)
{
	enum {
		OPT_CGROUP_PARENT = 0x100,
		OPT_AUDIT_FAILURE,
		OPT_ALLOW_UNIX_UNFILTERED,
		OPT_NO_DNS_PROXY,
		OPT_DNS_MIN_TTL,
		OPT_DNS_GRACE,
		OPT_DNS_MAX_IPS,
		OPT_DNS_DENY,
		OPT_AUDIT_DNS_ALLOWED,
		OPT_CLEARENV,
		OPT_SETENV,
		OPT_PASS_ENV,
		OPT_NOTIFY_DENIALS,
		OPT_ALLOW_NO_LANDLOCK,
		OPT_PIDS_MAX,
		OPT_MEMORY_MAX,
		OPT_CPU_MAX,
		OPT_TMP_SIZE,
		OPT_NOFILE,
		OPT_AUDIT_STALL_TIMEOUT,
		OPT_AUDIT_FORMAT,
		OPT_AUDIT_SYNC_FD,
		OPT_VERSION,
		OPT_AUDIT_ONLY,
	};
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "audit-log", required_argument, NULL, 'a' },
		{ "audit-failure", required_argument, NULL, OPT_AUDIT_FAILURE },
		{ "allow-unix-unfiltered", no_argument, NULL, OPT_ALLOW_UNIX_UNFILTERED },
		{ "resolver", required_argument, NULL, 'r' },
		{ "cgroup-parent", required_argument, NULL, OPT_CGROUP_PARENT },
		{ "timeout", required_argument, NULL, 't' },
		{ "user", required_argument, NULL, 'u' },
		{ "name", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "no-dns-proxy", no_argument, NULL, OPT_NO_DNS_PROXY },
		{ "dns-min-ttl", required_argument, NULL, OPT_DNS_MIN_TTL },
		{ "dns-grace", required_argument, NULL, OPT_DNS_GRACE },
		{ "dns-max-ips", required_argument, NULL, OPT_DNS_MAX_IPS },
		{ "dns-deny", required_argument, NULL, OPT_DNS_DENY },
		{ "audit-dns-allowed", no_argument, NULL, OPT_AUDIT_DNS_ALLOWED },
		{ "clearenv", no_argument, NULL, OPT_CLEARENV },
		{ "setenv", required_argument, NULL, OPT_SETENV },
		{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
		{ "notify-denials", no_argument, NULL, OPT_NOTIFY_DENIALS },
		{ "allow-no-landlock", no_argument, NULL, OPT_ALLOW_NO_LANDLOCK },
		{ "pids-max", required_argument, NULL, OPT_PIDS_MAX },
		{ "memory-max", required_argument, NULL, OPT_MEMORY_MAX },
		{ "cpu-max", required_argument, NULL, OPT_CPU_MAX },
		{ "tmp-size", required_argument, NULL, OPT_TMP_SIZE },
		{ "nofile", required_argument, NULL, OPT_NOFILE },
		{ "audit-stall-timeout", required_argument, NULL, OPT_AUDIT_STALL_TIMEOUT },
		{ "audit-format", required_argument, NULL, OPT_AUDIT_FORMAT },
		{ "audit-only", no_argument, NULL, OPT_AUDIT_ONLY },
		{ "audit-sync-fd", required_argument, NULL, OPT_AUDIT_SYNC_FD },
		{},
	};
	char *end;
	int c;

	/* '+': stop at the first operand, so the job's own options stay its own. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:a:r:t:u:n:vh", options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (arg.npolicies == MAX_POLICIES) {
				fail("--policy: at most %d policies", MAX_POLICIES);
				return -1;
			}
			arg.policies[arg.npolicies++] = optarg;
			break;
		case 'a':
			arg.audit_path = optarg;
			if (check_audit_log(optarg) < 0)
				return -1;
			break;
		case OPT_ALLOW_UNIX_UNFILTERED:
			arg.allow_unix_unfiltered = true;
			break;
		case OPT_AUDIT_FAILURE:
			if (strcmp(optarg, "stop") == 0)
				arg.audit_continue = false;
			else if (strcmp(optarg, "continue") == 0)
				arg.audit_continue = true;
			else {
				fail("--audit-failure: \"%s\" is neither \"stop\" nor \"continue\"",
				     optarg);
				return -1;
			}
			break;
		case OPT_AUDIT_FORMAT:
			if (audit_schema_parse(optarg, &arg.audit_format) < 0) {
				fail("--audit-format: \"%s\" is not json, ocsf or ecs", optarg);
				return -1;
			}
			break;
		case 'r':
			arg.resolver = optarg;
			break;
		case OPT_CGROUP_PARENT:
			arg.cgroup_parent = optarg;
			break;
		case 't':
			errno = 0;
			arg.timeout_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(arg.timeout_s > 0) ||
			    arg.timeout_s > 1e9) {
				fail("--timeout: \"%s\" is not a positive number of seconds",
				     optarg);
				return -1;
			}
			break;
		case 'u':
			arg.user = optarg;
			break;
		case 'n':
			if (!valid_name(optarg)) {
				fail("--name: \"%s\" must be 1-%d of [A-Za-z0-9_.-], not starting "
				     "with '.'",
				     optarg, SANDBOX_NAME_MAX);
				return -1;
			}
			arg.name = optarg;
			break;
		case 'v':
			arg.verbose = true;
			break;
		case OPT_NO_DNS_PROXY:
			arg.no_dns_proxy = true;
			break;
		case OPT_DNS_MIN_TTL:
			if (parse_uint(optarg, 86400, &arg.dns.min_ttl_s) < 0) {
				fail("--dns-min-ttl: \"%s\" is not 0-86400 seconds", optarg);
				return -1;
			}
			break;
		case OPT_DNS_GRACE:
			if (parse_uint(optarg, 86400, &arg.dns.grace_s) < 0) {
				fail("--dns-grace: \"%s\" is not 0-86400 seconds", optarg);
				return -1;
			}
			break;
		case OPT_DNS_MAX_IPS:
			if (parse_uint(optarg, DNSPROXY_MAX_IPS_LIMIT, &arg.dns.max_ips) < 0 ||
			    !arg.dns.max_ips) {
				fail("--dns-max-ips: \"%s\" is not 1-%d", optarg,
				     DNSPROXY_MAX_IPS_LIMIT);
				return -1;
			}
			break;
		case OPT_DNS_DENY:
			if (strcmp(optarg, "refused") == 0)
				arg.dns.deny_rcode = DNS_RCODE_REFUSED;
			else if (strcmp(optarg, "nxdomain") == 0)
				arg.dns.deny_rcode = DNS_RCODE_NXDOMAIN;
			else {
				fail("--dns-deny: \"%s\" is neither \"refused\" nor \"nxdomain\"",
				     optarg);
				return -1;
			}
			break;
		case OPT_AUDIT_DNS_ALLOWED:
			arg.dns.audit_allowed = true;
			break;
		case OPT_AUDIT_ONLY:
			arg.dns.audit_only = true;
			break;
		case OPT_ALLOW_NO_LANDLOCK:
			arg.allow_no_landlock = true;
			break;
		case OPT_PIDS_MAX:
			if (limit_parse_pids(optarg, &arg.limits.pids_max) < 0) {
				fail("--pids-max: \"%s\" is not a number of tasks (1-%u) or "
				     "\"max\"",
				     optarg, LIMIT_PIDS_CEILING);
				return -1;
			}
			break;
		case OPT_MEMORY_MAX:
			if (limit_parse_memory(optarg, &arg.limits.memory_max) < 0) {
				fail("--memory-max: \"%s\" is not a size of at least 4M (bytes, or "
				     "with K, M, G, T) or \"max\"",
				     optarg);
				return -1;
			}
			break;
		case OPT_CPU_MAX:
			if (limit_parse_cpu(optarg, &arg.limits.cpu_quota_us,
					    &arg.limits.cpu_period_us) < 0) {
				fail("--cpu-max: \"%s\" is not a number of CPUs (1.5), a "
				     "percentage "
				     "of one (150%%), \"QUOTA PERIOD\" in microseconds or \"max\"",
				     optarg);
				return -1;
			}
			break;
		case OPT_TMP_SIZE:
			if (limit_parse_tmp(optarg, &arg.limits.tmp_bytes,
					    &arg.limits.tmp_percent) < 0) {
				fail("--tmp-size: \"%s\" is not a size (bytes, or with K, M, G, T) "
				     "or "
				     "a percentage of the RAM (1-100%%)",
				     optarg);
				return -1;
			}
			break;
		case OPT_AUDIT_STALL_TIMEOUT:
			errno = 0;
			arg.audit_stall_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(arg.audit_stall_s >= 0.01) ||
			    arg.audit_stall_s > 86400) {
				fail("--audit-stall-timeout: \"%s\" is not 0.01-86400 seconds",
				     optarg);
				return -1;
			}
			break;
		case OPT_AUDIT_SYNC_FD: {
			unsigned int fd;

			if (parse_uint(optarg, INT_MAX, &fd) < 0 || fd < 3) {
				fail("--audit-sync-fd: \"%s\" is not a descriptor N >= 3 (0-2 are "
				     "the job's)",
				     optarg);
				return -1;
			}
			arg.audit_sync_fd = (int)fd;
			break;
		}
		case OPT_NOFILE:
			if (limit_parse_nofile(optarg, &arg.limits.nofile) < 0) {
				fail("--nofile: \"%s\" is not a number of descriptors (3-%u)",
				     optarg, LIMIT_NOFILE_CEILING);
				return -1;
			}
			break;
		/* The job's environment, and what a person sees of its refusals. */
		case OPT_CLEARENV:
			arg.env.clear = true;
			break;
		case OPT_SETENV:
		case OPT_PASS_ENV: {
			bool set = c == OPT_SETENV;
			int r = set ? jobenv_add_set(&arg.env, optarg)
				    : jobenv_add_pass(&arg.env, optarg);

			if (r == -E2BIG) {
				fail("%s: at most %d variables", set ? "--setenv" : "--pass-env",
				     JOBENV_MAX);
				return -1;
			}
			if (r < 0) {
				fail(set ? "--setenv: \"%s\" is not NAME=VALUE (a NAME without '=')"
					 : "--pass-env: \"%s\" is not a variable name",
				     optarg);
				return -1;
			}
			break;
		}
		case OPT_NOTIFY_DENIALS:
			arg.notify_denials = true;
			break;
		case 'h':
			fputs(USAGE, stdout);
			exit(EXIT_SUCCESS);
		case OPT_VERSION:
			/* The BPF object's hash names the .bpf-<version> holder cgroup. */
			printf("launch %s (bpf %s)\n", LAUNCH_RELEASE, loader_version());
			exit(EXIT_SUCCESS);
		case ':':
			fail("%s: needs a value (see --help)", argv[optind - 1]);
			return -1;
		default:
			fail("%s: unknown option (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (need_policy && arg.npolicies == 0) {
		fail("--policy: at least one policy file is required (see --help)");
		return -1;
	}
	return optind;
}

/* Checks the privileges and kernel features launch needs, with a hint for each. */
static int check_system(void)
{
	cap_flag_value_t bpf = CAP_CLEAR, net_admin = CAP_CLEAR, sys_admin = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (caps) {
		cap_get_flag(caps, CAP_BPF, CAP_EFFECTIVE, &bpf);
		cap_get_flag(caps, CAP_NET_ADMIN, CAP_EFFECTIVE, &net_admin);
		cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &sys_admin);
		cap_free(caps);
	}
	if (!sys_admin || !bpf || !net_admin) {
		fail("needs root (CAP_SYS_ADMIN, CAP_BPF and CAP_NET_ADMIN) to load and attach BPF "
		     "programs: run it with sudo");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		fail("this kernel has no BTF (/sys/kernel/btf/vmlinux): launch needs a kernel "
		     "built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	return 0;
}

static int random_id(char *buf, size_t len)
{
	unsigned char bytes[6];

	if (getrandom(bytes, sizeof(bytes), 0) != sizeof(bytes))
		return -errno;
	snprintf(buf, len, "%02x%02x%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3],
		 bytes[4], bytes[5]);
	return 0;
}

/*
 * --policy NAME (no '/', no ".json"): /etc/launch/policies/NAME.json, then the installed
 * <prefix>/share/launch/policies/NAME.json next to this binary, then, for a binary run from
 * its build folder, the checkout's policies/NAME.json; else the file NAME itself.
 */
static int resolve_policy_names(void)
{
	static char paths[MAX_POLICIES][PATH_MAX];
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0'; /* the binary's folder */
	for (size_t i = 0; i < arg.npolicies; i++) {
		const char *name = arg.policies[i];
		size_t len = strlen(name);
		const char *dirs[] = { LAUNCH_POLICY_ETC_DIR, "../share/launch/policies",
				       "../policies" };
		bool found = false;

		if (strchr(name, '/') || (len >= 5 && strcmp(name + len - 5, ".json") == 0) ||
		    len == 0)
			continue;
		for (size_t d = 0; d < ARRAY_SIZE(dirs) && !found; d++) {
			int n;

			if (dirs[d][0] == '/')
				n = snprintf(paths[i], sizeof(paths[i]), "%s/%s.json", dirs[d],
					     name);
			else if (slash)
				n = snprintf(paths[i], sizeof(paths[i]), "%.2048s/%s/%.1024s.json",
					     exe, dirs[d], name);
			else
				continue;
			found = n > 0 && (size_t)n < sizeof(paths[i]) &&
				access(paths[i], F_OK) == 0;
		}
		if (found) {
			arg.policies[i] = paths[i];
		} else if (access(name, F_OK) < 0) {
			fail("--policy: no policy named \"%s\" in " LAUNCH_POLICY_ETC_DIR " or "
			     "%s/../share/launch/policies (give a path to use a file)",
			     name, slash ? exe : "<prefix>/bin");
			return -ENOENT;
		}
	}
	return 0;
}

static bool path_under_tmp(const char *path)
{
	return strcmp(path, "/tmp") == 0 || strncmp(path, "/tmp/", 5) == 0;
}

/* Where COMMAND would be found (as execvp does), or NULL. */
static char *find_command(const char *command, char *buf, size_t len)
{
	const char *path = getenv("PATH") ?: "/bin:/usr/bin";

	if (strchr(command, '/'))
		return realpath(command, buf);
	for (const char *dir = path; *dir;) {
		size_t dirlen = strcspn(dir, ":");
		char candidate[PATH_MAX];

		snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)dirlen, dirlen ? dir : ".",
			 command);
		if (access(candidate, X_OK) == 0 && realpath(candidate, buf) && strlen(buf) < len)
			return buf;
		dir += dirlen + (dir[dirlen] == ':');
	}
	return NULL;
}

/* The job has a private, empty /tmp: a command, file or working directory there is not its. */
static void warn_tmp_paths(char *const *argv)
{
	char path[PATH_MAX];

	if (getcwd(path, sizeof(path)) && path_under_tmp(path))
		fprintf(stderr,
			"launch: warning: the working directory %s is under /tmp, which the job "
			"does not see: it gets a private, empty /tmp\n",
			path);
	if (find_command(argv[0], path, sizeof(path)) && path_under_tmp(path))
		fprintf(stderr,
			"launch: warning: the command %s (%s) is under /tmp, which the job does "
			"not see: it gets a private, empty /tmp, so it will not be found\n",
			argv[0], path);
	for (size_t i = 1; argv[i]; i++)
		if (argv[i][0] == '/' && realpath(argv[i], path) && path_under_tmp(path))
			fprintf(stderr,
				"launch: warning: %s is under /tmp, which the job does not see: it "
				"gets a private, empty /tmp\n",
				argv[i]);
}

/* --notify-denials: one line per refusal, as it is logged. */
static void notify_denial(const char *line, size_t len, void *ctx __attribute__((unused)))
{
	struct refusal refusal;
	char text[2 * REFUSAL_FIELD_MAX + 128];

	if (refusal_parse(line, len, &refusal) == 1 &&
	    refusal_format(&refusal, text, sizeof(text)) > 0)
		fprintf(stderr, "launch: %s\n", text);
}

static int compile_rules(struct rules **ret_rules)
{
	struct resolver resolver, *server = NULL;
	char errbuf[POLICY_ERR_LEN + 256] = "";

	if (arg.resolver) {
		if (resolve_parse_server(arg.resolver, &resolver) < 0) {
			fail("--resolver: \"%s\" is not ADDR, ADDR:PORT or [IPV6]:PORT",
			     arg.resolver);
			return -EINVAL;
		}
		server = &resolver;
		arg.dns.upstream = resolver;
	} else if (!arg.no_dns_proxy) {
		/* As glibc: the first nameserver, else 127.0.0.1 (already the default). */
		dnsproxy_read_resolv_conf(DNSPROXY_RESOLV_CONF, &arg.dns.upstream);
	}
	if (rules_compile(arg.policies, arg.npolicies, server, !arg.no_dns_proxy, ret_rules, errbuf,
			  sizeof(errbuf)) < 0) {
		fail("%s", errbuf);
		return -EINVAL;
	}
	/* Each warning is one line already. */
	for (const char *line = (*ret_rules)->warnings; *line;) {
		size_t len = strcspn(line, "\n");

		fprintf(stderr, "launch: warning: %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
	return 0;
}

/*
 * What the job may write: its working directory, its private /tmp and /dev/shm, and the
 * policies' "fs.write" paths; Landlock refuses the rest. On a kernel without Landlock the
 * job's mounts are read-only but for those, which leaves device nodes writable: a policy that
 * asks for Landlock, or a uid-0 job, stops the launch unless --allow-no-landlock; otherwise a
 * warning says so.
 */
static int plan_fs(const struct rules *rules, struct child_config *child, const char ***ret_write)
{
	static char cwd[PATH_MAX];
	const char **write;
	size_t n = 0;
	int abi;

	if (!rules->fs_read_only)
		return 0;
	abi = landlock_abi_probe();
	if (abi < 0) {
		/* uid 0 owns the host's files and disks: it gets no weaker sandbox unasked. */
		if ((rules->fs_required || child->uid == 0) && !arg.allow_no_landlock) {
			fail("this kernel has no Landlock (%s), so the job could write every "
			     "device "
			     "node its user may: refusing to start, as %s (--allow-no-landlock "
			     "accepts that)",
			     strerror(-abi),
			     rules->fs_required ? "a policy has \"fs\"" : "it would run as root");
			return abi;
		}
		fprintf(stderr,
			"launch: warning: this kernel has no Landlock (%s): the job may write "
			"every "
			"device node its user may\n",
			strerror(-abi));
	}
	write = calloc(rules->nfs_write + 4, sizeof(*write));
	if (!write) {
		fail("out of memory");
		return -ENOMEM;
	}
	/* "/" would be every file: the working directory counts only when it is not. */
	if (getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") != 0) {
		write[n++] = cwd;
		child->fs_write_cwd = true;
	}
	write[n++] = "/tmp";
	if (access("/dev/shm", F_OK) == 0)
		write[n++] = "/dev/shm";
	for (size_t i = 0; i < rules->nfs_write; i++)
		write[n++] = rules->fs_write[i];
	child->landlock_abi = abi > 0 ? abi : 0;
	child->fs_write = write;
	*ret_write = write;
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	int first = parse_options(argc, argv, true);

	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc) {
		fail("check: runs nothing; \"%s\" is not an option", argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (resolve_policy_names() < 0 || compile_rules(&rules) < 0)
		return EXIT_LAUNCH_FAILED;
	rules_print(rules, stdout);
	return EXIT_SUCCESS;
}

/* The job has limits a cgroup controller enforces, and their hierarchies could not be mounted. */
static int fail_v1_mount(int v1_error, bool limits)
{
	if (v1_error >= 0 || !limits)
		return 0;
	fail("cannot mount the cgroup v1 hierarchies of the limits below %s: %s "
	     "(--pids-max max --memory-max max and no --cpu-max: no limits)",
	     CGROUP_PRIVATE_ROOT, strerror(-v1_error));
	return v1_error;
}

/* The default cgroup parent, <cgroup2 mount>/launch. */
static int cgroup_parent_default(char *parent, size_t len)
{
	int r = cgroup_find_mount(parent, len);

	if (r < 0)
		return r;
	strncat(parent, "/launch", len - strlen(parent) - 1);
	return 0;
}

/*
 * Writes the folder under which sandbox cgroups are made. When the cgroup v1 hierarchies of
 * the limits had to be mounted again and could not be, *ret_v1_error says why: the job may
 * not start if it has limits a cgroup controller enforces (limit_wants_cgroup), which the
 * policies, read later, decide. known: the mounts as the caller read them, or NULL to look now;
 * *ret_mounted (unless NULL) says whether launch mounted cgroup file systems of its own.
 */
static int cgroup_parent_dir_known(char *parent, size_t len, const struct cgroup_mounts *known,
				   int *ret_v1_error, bool *ret_mounted)
{
	int r;

	if (arg.cgroup_parent) {
		snprintf(parent, len, "%s", arg.cgroup_parent);
		return 0;
	}
	if (ret_mounted)
		*ret_mounted = false;
	if (known && known->v2[0] && strlen(known->v2) < len) {
		strcpy(parent, known->v2);
	} else if (known || cgroup_find_mount(parent, len) < 0) {
		bool hybrid = cglimit_host_is_hybrid();

		/* Hidden (under `ip netns exec`, say): mounted again, for launch alone. */
		r = cgroup_mount_private(hybrid, parent, len);
		if (r < 0) {
			fail("no cgroup v2 hierarchy is visible (none in /proc/self/mountinfo), "
			     "and mounting one on %s for launch alone failed: %s; mount one with "
			     "'mkdir -p /run/cgroup2 && mount -t cgroup2 none /run/cgroup2', "
			     "or give --cgroup-parent",
			     hybrid ? CGROUP_PRIVATE_HYBRID_MOUNT : CGROUP_PRIVATE_ROOT,
			     strerror(-r));
			return r;
		}
		/*
		 * The v1 hierarchies of the limits were hidden with it. Without them, a default
		 * limit would read as one this host has no controller for, and be left out with
		 * a warning: the job would run unlimited on a host that can limit it.
		 */
		*ret_v1_error = hybrid ? cglimit_mount_private(CGROUP_PRIVATE_ROOT) : 0;
		if (ret_mounted)
			*ret_mounted = true;
	}
	strncat(parent, "/launch", len - strlen(parent) - 1);
	return 0;
}

static int cgroup_parent_dir(char *parent, size_t len, int *ret_v1_error)
{
	return cgroup_parent_dir_known(parent, len, NULL, ret_v1_error, NULL);
}

static int cmd_gc(int argc, char **argv)
{
	struct loader_shared shared;
	char parent[PATH_MAX], holder[PATH_MAX], default_parent[PATH_MAX];
	bool unload = false;
	int first, r, slots = 0, holders, found, v1_error = 0;

	/* gc's own option, taken out before the common ones are parsed. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--unload") == 0) {
			unload = true;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
			argc--;
			break;
		}
	first = parse_options(argc, argv, false);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc) {
		fail("gc: \"%s\" is not an option", argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (check_system() < 0 || cgroup_parent_dir(parent, sizeof(parent), &v1_error) < 0)
		return EXIT_LAUNCH_FAILED;
	r = gc_sweep();
	if (r < 0) {
		fail("gc: %s: %s", GC_LOCK_DIR, strerror(-r));
		return EXIT_LAUNCH_FAILED;
	}
	/* Sandboxes whose lock file is gone too: found in the cgroup parents themselves. */
	found = gc_sweep_parent(parent, !arg.cgroup_parent);
	r += found > 0 ? found : 0;
	if (arg.cgroup_parent &&
	    cgroup_parent_default(default_parent, sizeof(default_parent)) == 0) {
		found = gc_sweep_parent(default_parent, true);
		r += found > 0 ? found : 0;
	}
	found = gc_sweep_registered();
	r += found > 0 ? found : 0;
	/* The slots of killed launchers, if this build's programs are loaded at all. */
	if ((size_t)snprintf(holder, sizeof(holder), "%s/%s%s", parent, LOADER_HOLDER_PREFIX,
			     loader_version()) < sizeof(holder) &&
	    access(holder, F_OK) == 0 && loader_shared_get(parent, &shared, NULL, 0) == 0) {
		/* Idle slots keep their maps for the next sandbox: their kernel memory goes. */
		slots = loader_trim_idle_slots(&shared);
		loader_shared_close(&shared);
	}
	holders = loader_remove_holders(parent, unload ? NULL : loader_version());
	printf("removed %d sandbox%s left behind, freed the maps of %d idle slot%s, unloaded %d "
	       "program set%s\n",
	       r, r == 1 ? "" : "es", slots > 0 ? slots : 0, slots == 1 ? "" : "s",
	       holders > 0 ? holders : 0, holders == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

/* A number from a /proc/sys file; 0 when it cannot be read. */
static uint64_t read_sysctl(const char *path)
{
	unsigned long long value = 0;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%llu", &value) != 1)
			value = 0;
		fclose(f);
	}
	return value;
}

/*
 * The job's limits: the options, else the strictest of the policies', else the defaults
 * (limit.h), which depend on this host's RAM and task limit.
 */
static void job_limits_of(const struct rules *rules, struct job_limits *ret, uint64_t *ret_ram)
{
	uint64_t pid_max = read_sysctl("/proc/sys/kernel/pid_max"),
		 threads = read_sysctl("/proc/sys/kernel/threads-max");
	struct rlimit nofile = { .rlim_max = LIMIT_DEFAULT_NOFILE };
	struct sysinfo info;
	uint64_t ram = 0;
	long cpus;

	*ret = (struct job_limits){ 0 };
	for (size_t i = 0; i < rules->npolicies; i++)
		limit_merge_strictest(ret, &rules->policies[i]->limits);
	limit_override(ret, &arg.limits);
	if (sysinfo(&info) == 0)
		ram = (uint64_t)info.totalram * info.mem_unit;
	getrlimit(RLIMIT_NOFILE, &nofile);
	if (!pid_max || (threads && threads < pid_max))
		pid_max = threads ? threads : 32768;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	limit_apply_defaults(ret, ram, pid_max, cpus > 0 ? (unsigned int)cpus : 1, nofile.rlim_max);
	*ret_ram = ram;
}

/*
 * The part of cmd_run after the sandbox's start: the user, the policies, the limits and the
 * job's environment, read while init sets up the job's namespaces. Returns 0, or
 * EXIT_LAUNCH_FAILED after one line on stderr.
 */
static int plan_job(char **argv, int first, struct sandbox_options *options,
		    struct rules **ret_rules, const char ***ret_fs_write, char ***ret_environ,
		    long long *ret_policy_us, int v1_mount_error)
{
	uint64_t ram = 0;
	long long policy_us;

	if (arg.user && child_lookup_user(arg.user, &options->child) < 0) {
		fail("--user: no such user \"%s\"", arg.user);
		return EXIT_LAUNCH_FAILED;
	}
	/* Never root unless asked for: a uid-0 job owns every root-owned file it can see. */
	if (!arg.user && child_default_user(&options->child) < 0) {
		fail("SUDO_UID: the invoking user has too many groups (at most %d)",
		     CHILD_MAX_GROUPS);
		return EXIT_LAUNCH_FAILED;
	}
	if (resolve_policy_names() < 0)
		return EXIT_LAUNCH_FAILED;
	warn_tmp_paths(argv + first);
	policy_us = monotonic_now_us();
	if (compile_rules(ret_rules) < 0)
		return EXIT_LAUNCH_FAILED;
	*ret_policy_us = monotonic_now_us() - policy_us;
	if (plan_fs(*ret_rules, &options->child, ret_fs_write) < 0)
		return EXIT_LAUNCH_FAILED;
	job_limits_of(*ret_rules, &options->limits, &ram);
	if (fail_v1_mount(v1_mount_error, limit_wants_cgroup(&options->limits)) < 0)
		return EXIT_LAUNCH_FAILED;
	options->audit_path = arg.audit_path;
	options->audit_continue = arg.audit_continue;
	options->audit_format = arg.audit_format;
	options->audit_stall_ms = (long long)(arg.audit_stall_s * 1000.0 + 0.5);
	options->allow_unix_unfiltered = arg.allow_unix_unfiltered;
	options->dns_proxy = !arg.no_dns_proxy;
	options->dns = arg.dns;
	options->resolver = arg.resolver ? &options->dns.upstream : NULL;
	options->audit_only = arg.dns.audit_only;
	if (options->audit_only)
		fprintf(stderr,
			"launch: warning: --audit-only: the policy is not enforced; what it "
			"would refuse is logged as would_deny\n");
	options->child.argv = argv + first;
	options->child.audit_path = audit_path_is_file(arg.audit_path) ? arg.audit_path : NULL;
	options->child.tmp_size_bytes = limit_tmp_bytes(&options->limits, ram);
	if (arg.notify_denials)
		options->audit_observer = notify_denial;
	/* Last: launch itself has no more use for its environment. */
	if (jobenv_build(&arg.env, environ, ret_environ) < 0) {
		fail("cannot build the job's environment: %s", strerror(ENOMEM));
		return EXIT_LAUNCH_FAILED;
	}
	options->child.envp = *ret_environ;
	return 0;
}

/*
 * --audit-log fd:N, taken before launch opens anything of its own: N must be the caller's,
 * never a descriptor launch made itself (a socket to init, a pipe) that took a free number.
 * Closed on exec from here on, so init has no copy either.
 */
static int hold_audit_fd(void)
{
	long n;

	if (!arg.audit_path || strncmp(arg.audit_path, "fd:", 3) != 0)
		return 0;
	/* check_audit_log took the number apart already. */
	n = strtol(arg.audit_path + 3, NULL, 10);
	if (fcntl((int)n, F_SETFD, FD_CLOEXEC) < 0) {
		fail("audit log %s: %s", arg.audit_path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* The one read of mountinfo a start makes: the mounts init hides, and the cgroup mounts. */
static void read_mounts(struct sandbox_options *options)
{
	cglimit_mounts_init(&options->cgroup_mounts);
	options->cgroup_mounts_known = child_watch_mounts(&options->child, cglimit_mounts_add,
							  &options->cgroup_mounts) == 0;
}

static int cmd_run(int argc, char **argv)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	_cleanup_free_ const char **fs_write = NULL;
	/*
	 * Static, as the launcher runs one job: zeroed for free, and only what is written takes
	 * pages (on this machine kind a page's first touch costs 15-25 us).
	 */
	static struct sandbox_options options;
	static char id[SANDBOX_NAME_MAX + 1], parent[PATH_MAX], errbuf[PATH_MAX + 512];
	struct sandbox_timing timing = { 0 };
	struct sandbox_audit_result audit = { 0 };
	_cleanup_free_ char **job_environ = NULL;
	long long policy_us = 0;
	int first, status, v1_mount_error = 0, sig, r;
	bool mounted = false;

	first = parse_options(argc, argv, true);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first >= argc) {
		fail("no command given: launch [OPTIONS] -- COMMAND [ARG...]");
		return EXIT_LAUNCH_FAILED;
	}
	if (check_system() < 0 || hold_audit_fd() < 0)
		return EXIT_LAUNCH_FAILED;
	/*
	 * One read of mountinfo for the whole start (at 60-80 us each, it was three): the mounts
	 * init hides, the cgroup2 mount, and the v1 hierarchies of the limits (cglimit_setup).
	 */
	read_mounts(&options);
	if (cgroup_parent_dir_known(parent, sizeof(parent),
				    options.cgroup_mounts_known ? &options.cgroup_mounts : NULL,
				    &v1_mount_error, &mounted) < 0)
		return EXIT_LAUNCH_FAILED;
	/* After a private cgroup2 mount: init's mounts are copied from these, the limits too. */
	if (mounted)
		read_mounts(&options);
	/* What a killed launcher left behind goes first; a failure here harms no one. */
	gc_sweep();
	/* A parent of its own: `launch gc` looks there too for what has no lock file. */
	if (arg.cgroup_parent && (mkdir(parent, 0755) == 0 || errno == EEXIST) &&
	    (r = gc_register_parent(parent)) < 0) {
		fail("cannot register --cgroup-parent %s for launch gc in %s: %s", parent,
		     GC_LOCK_DIR, strerror(-r));
		return EXIT_LAUNCH_FAILED;
	}
	if (arg.name)
		snprintf(id, sizeof(id), "%s", arg.name);
	else if (random_id(id, sizeof(id)) < 0) {
		fail("cannot draw a sandbox id: %s", strerror(errno));
		return EXIT_LAUNCH_FAILED;
	}

	options.id = id;
	options.cgroup_parent = parent;
	options.audit_sync_fd = arg.audit_sync_fd;
	options.timeout_s = arg.timeout_s;
	options.audit_out = &audit;
	options.timing_out = &timing;
	/* Init first: it sets up the job's namespaces while the rest is read. */
	if (sandbox_begin(&options, errbuf, sizeof(errbuf)) < 0) {
		fail("%s", errbuf);
		return EXIT_LAUNCH_FAILED;
	}
	r = plan_job(argv, first, &options, &rules, &fs_write, &job_environ, &policy_us,
		     v1_mount_error);
	/*
	 * Asked to stop while the policies were read (a resolver can take seconds): no job, and
	 * launch ends by that signal, as it would have before blocking it.
	 */
	sig = r == 0 ? sandbox_take_stop_signal() : 0;
	if (r != 0 || sig) {
		sandbox_abort();
		if (sig) {
			signal(sig, SIG_DFL);
			raise(sig);
		}
		return r ? r : EXIT_SIGNAL_BASE + sig;
	}
	environ = job_environ;
	r = sandbox_run(rules, &status);
	if (arg.verbose)
		fprintf(stderr,
			"launch: timing: policy %.2f ms, spawn %.2f ms, limits %.2f ms, "
			"bpf %s %.2f ms, attach %.2f ms, exec %.2f ms, job %.2f ms, "
			"teardown %.2f ms\n",
			policy_us / 1000.0, timing.spawn_us / 1000.0, timing.limits_us / 1000.0,
			timing.bpf_loaded ? "load" : "reuse", timing.bpf_load_us / 1000.0,
			timing.attach_us / 1000.0, timing.exec_us / 1000.0, timing.job_us / 1000.0,
			timing.teardown_us / 1000.0);
	if (r < 0)
		fail("%s", errbuf);
	/* Last: every refusal accounted for once, even when the log could not say it. */
	if (audit.incomplete)
		fail("audit: sandbox %s: denied %llu, written %llu, lost %llu, unwritten %llu "
		     "(audit log %s: %s; %llu line%s in all not written)",
		     id, audit.denied, audit.written, audit.lost, audit.unwritten, arg.audit_path,
		     audit.error	 ? audit_strerror(audit.error)
		     : audit.ring_unread ? "the event ring buffer could not be read"
					 : "lines not written",
		     audit.lines_failed, audit.lines_failed == 1 ? "" : "s");
	return status;
}

/* Takes "--NAME VALUE" or "--NAME=VALUE" out of argv; NULL when absent, "" without a value. */
static const char *take_option(int *argc, char **argv, const char *name)
{
	size_t len = strlen(name);
	const char *value = NULL;

	for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0;) {
		int taken = 0;

		if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') {
			value = argv[i] + len + 1;
			taken = 1;
		} else if (strcmp(argv[i], name) == 0) {
			value = i + 1 < *argc ? argv[i + 1] : "";
			taken = i + 1 < *argc ? 2 : 1;
		}
		if (!taken) {
			i++;
			continue;
		}
		memmove(&argv[i], &argv[i + taken],
			(size_t)(*argc - i - taken + 1) * sizeof(*argv));
		*argc -= taken;
	}
	return value;
}

/*
 * Each call's launch runs in the call's own folder, so a policy the server found by a relative
 * path is passed on by the absolute path it names here: the k-th --policy (any spelling getopt
 * takes: --policy V, --policy=V, a prefix such as --pol, -p V, -pV) becomes arg.policies[k].
 */
static int mcp_absolute_policies(char **args, int nargs)
{
	static char buf[MAX_POLICIES][PATH_MAX + 16];
	char abs[PATH_MAX];
	size_t k = 0;

	for (int i = 0; i < nargs; i++) {
		const char *a = args[i], *eq = strchr(a, '=');
		size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
		bool is_long = a[0] == '-' && a[1] == '-' && name_len >= 5 &&
			       strncmp(a, "--policy", name_len) == 0;
		bool is_short = a[0] == '-' && a[1] == 'p';
		int slot;

		if (strcmp(a, "--") == 0)
			break;
		if (!is_long && !is_short)
			continue;
		if (k == arg.npolicies || !realpath(arg.policies[k], abs)) {
			fail("--policy: cannot find %s: %s",
			     k < arg.npolicies ? arg.policies[k] : a, strerror(errno));
			return -ENOENT;
		}
		slot = (is_long && !eq) || (is_short && !a[2]) ? i + 1 : i;
		if (slot >= nargs)
			return -EINVAL;
		snprintf(buf[k], sizeof(buf[k]), "%s%s",
			 slot == i ? (is_long ? "--policy=" : "-p") : "", abs);
		args[slot] = buf[k];
		i = slot;
		k++;
	}
	return 0;
}

static int cmd_mcp(int argc, char **argv)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	const char *runtime = take_option(&argc, argv, "--runtime");
	const char *modules = take_option(&argc, argv, "--modules");
	const char *max_output = take_option(&argc, argv, "--max-output");
	const char *pool = take_option(&argc, argv, "--pool");
	struct mcp_run_config config = { .runtime = runtime ?: "node" };
	char modules_path[PATH_MAX], tsx[PATH_MAX + 32], self[PATH_MAX], errbuf[PATH_MAX + 256];
	char parent[PATH_MAX];
	int v1_error = 0;
	struct job_limits limits;
	uint64_t ram;
	unsigned int max_output_bytes = MCP_RUN_DEFAULT_MAX_OUTPUT_BYTES;
	unsigned int pool_size = MCP_RUN_DEFAULT_POOL;
	int first, nforward;

	first = parse_options(argc, argv, true);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc) {
		fail("mcp: \"%s\" is not an option (the code comes in run_typescript calls)",
		     argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (arg.audit_sync_fd >= 0) {
		fail("--audit-sync-fd: not for launch mcp, which sets it for each call's launch");
		return EXIT_LAUNCH_FAILED;
	}
	if (arg.audit_format != AUDIT_SCHEMA_JSON) {
		fail("--audit-format: launch mcp reads each call's refusals from launch's own "
		     "lines: "
		     "json only here");
		return EXIT_LAUNCH_FAILED;
	}
	if (runtime && !*runtime) {
		fail("--runtime: needs a value: node, or the path of a node binary");
		return EXIT_LAUNCH_FAILED;
	}
	if (max_output && parse_uint(max_output, 64 << 20, &max_output_bytes) < 0) {
		fail("--max-output: \"%s\" is not 0-%d bytes", max_output, 64 << 20);
		return EXIT_LAUNCH_FAILED;
	}
	if (pool && parse_uint(pool, MCP_RUN_POOL_MAX, &pool_size) < 0) {
		fail("--pool: \"%s\" is not 0-%d prepared sandboxes", pool, MCP_RUN_POOL_MAX);
		return EXIT_LAUNCH_FAILED;
	}
	/* The code imports tsx's loader and the SDK from here: it must be complete now. */
	if (!realpath(modules ?: "node_modules", modules_path)) {
		fail("--modules: %s: %s (a node_modules folder with tsx and the provider's SDK: "
		     "npm install tsx stripe)",
		     modules ?: "node_modules in the current folder", strerror(errno));
		return EXIT_LAUNCH_FAILED;
	}
	snprintf(tsx, sizeof(tsx), "%s/tsx/package.json", modules_path);
	if (access(tsx, R_OK) < 0) {
		fail("--modules: %s has no tsx, which runs the TypeScript: npm install tsx there",
		     modules_path);
		return EXIT_LAUNCH_FAILED;
	}
	if (check_system() < 0 || resolve_policy_names() < 0 || compile_rules(&rules) < 0)
		return EXIT_LAUNCH_FAILED;
	/* Each call's launch takes the mounts made here, and the same policies and options. */
	job_limits_of(rules, &limits, &ram);
	if (cgroup_parent_dir(parent, sizeof(parent), &v1_error) < 0 ||
	    fail_v1_mount(v1_error, limit_wants_cgroup(&limits)) < 0)
		return EXIT_LAUNCH_FAILED;
	if (!realpath("/proc/self/exe", self)) {
		fail("cannot find launch's own binary: %s", strerror(errno));
		return EXIT_LAUNCH_FAILED;
	}
	/* Every option but a final "--" goes on to each call's launch, which reads them again. */
	nforward = first - 1;
	if (nforward > 0 && strcmp(argv[first - 1], "--") == 0)
		nforward--;
	if (mcp_absolute_policies(argv + 1, nforward) < 0)
		return EXIT_LAUNCH_FAILED;
	config.launch_path = self;
	config.launch_args = argv + 1;
	config.nlaunch_args = (size_t)nforward;
	config.modules = modules_path;
	config.audit_path = arg.audit_path;
	config.user = arg.user ?: MCP_RUN_DEFAULT_USER;
	config.policy = rules->names;
	config.timeout_s = arg.timeout_s > 0 ? arg.timeout_s : MCP_RUN_DEFAULT_TIMEOUT_S;
	config.max_output_bytes = max_output_bytes;
	config.pool = pool_size;
	config.cgroup_parent = parent;
	if (mcp_run_serve(&config, STDIN_FILENO, STDOUT_FILENO, errbuf, sizeof(errbuf)) < 0) {
		fail("mcp: %s", errbuf);
		return EXIT_LAUNCH_FAILED;
	}
	return EXIT_SUCCESS;
}

/* launch update ID --policy FILE...: the running sandbox ID takes these policies instead. */
static int cmd_update(int argc, char **argv)
{
	char errbuf[POLICY_ERR_LEN + 512] = "";
	const char *id;
	int first, r;

	if (argc < 2 || argv[1][0] == '-') {
		fail("update: no sandbox id given: launch update ID --policy FILE...");
		return EXIT_LAUNCH_FAILED;
	}
	id = argv[1];
	/* The options after the id, as if the id were the program's name. */
	first = parse_options(argc - 1, argv + 1, true);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc - 1) {
		fail("update: \"%s\" is not an option", argv[1 + first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (resolve_policy_names() < 0)
		return EXIT_LAUNCH_FAILED;
	r = update_request(id, arg.policies, arg.npolicies, errbuf, sizeof(errbuf));
	if (r < 0) {
		fail("update: %s", errbuf[0] ? errbuf : strerror(-r));
		return EXIT_LAUNCH_FAILED;
	}
	return EXIT_SUCCESS;
}

/*
 * Descriptors 0-2 closed by the caller: the first ones launch opens (a socket to init, say)
 * would take their numbers, and the job would get them as its standard streams.
 */
static void hold_stdio(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);

			if (null >= 0 && null != fd)
				close(null);
		}
}

int main(int argc, char **argv)
{
	hold_stdio();
	/*
	 * A fixed threshold: glibc otherwise raises it to the size of each large block freed,
	 * and the DNS proxy's buffers (half a MiB, mostly never touched) then come from the
	 * heap, zeroed by calloc page by page at every start; mapped, they are zero for free.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	libbpf_set_print(libbpf_print);
	dnsproxy_config_default(&arg.dns);
	/* A closed stderr must fail a write, not kill the launcher and leave the job unwatched. */
	signal(SIGPIPE, SIG_IGN);

	if (argc > 1 && strcmp(argv[1], "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "gc") == 0)
		return cmd_gc(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "mcp") == 0)
		return cmd_mcp(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "update") == 0)
		return cmd_update(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "learn") == 0)
		return auditcmd_learn(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return auditcmd_report(argc - 1, argv + 1);
	return cmd_run(argc, argv);
}
