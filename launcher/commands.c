// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the commands share: the system check, the policies read and compiled, the cgroup
 * parent, the job's limits. Each prints one line on stderr when it fails.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "commands.h"
#include "lib/util.h"
#include "policy/resolve.h"
#include "sandbox/cgroup.h"
#include "sandbox/cglimit.h"

#ifndef LAUNCH_POLICY_ETC_DIR
#define LAUNCH_POLICY_ETC_DIR "/etc/launch/policies"
#endif

/* Checks the privileges and kernel features launch needs, with a hint for each. */
int check_system(void)
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

/*
 * --policy NAME (no '/', no ".json"): /etc/launch/policies/NAME.json, then the installed
 * <prefix>/share/launch/policies/NAME.json next to this binary, then, for a binary run from
 * its build folder, the checkout's policies/NAME.json; else the file NAME itself.
 */
int resolve_policy_names(void)
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

int compile_rules(struct rules **ret_rules)
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

/* The job has limits a cgroup controller enforces, and their hierarchies could not be mounted. */
int fail_v1_mount(int v1_error, bool limits)
{
	if (v1_error >= 0 || !limits)
		return 0;
	fail("cannot mount the cgroup v1 hierarchies of the limits below %s: %s "
	     "(--pids-max max --memory-max max and no --cpu-max: no limits)",
	     CGROUP_PRIVATE_ROOT, strerror(-v1_error));
	return v1_error;
}

/* The default cgroup parent, <cgroup2 mount>/launch. */
int cgroup_parent_default(char *parent, size_t len)
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
int cgroup_parent_dir_known(char *parent, size_t len, const struct cgroup_mounts *known,
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

int cgroup_parent_dir(char *parent, size_t len, int *ret_v1_error)
{
	return cgroup_parent_dir_known(parent, len, NULL, ret_v1_error, NULL);
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
void job_limits_of(const struct rules *rules, struct job_limits *ret, uint64_t *ret_ram)
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

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)

/*
 * Feeds every line of path ("-": standard input) to take(ctx, line, len). Returns the lines
 * taken (take's 1s), or -errno; *ret_bad counts lines that are not audit lines.
 */
long read_audit_log(const char *path, int (*take)(void *ctx, const char *line, size_t len),
		    void *ctx, size_t *ret_bad)
{
	_cleanup_(fclosep) FILE *file = NULL;
	_cleanup_free_ char *line = NULL;
	FILE *in = stdin;
	size_t cap = 0;
	ssize_t n;
	long taken = 0;
	int r;

	*ret_bad = 0;
	if (strcmp(path, "-") != 0) {
		file = fopen(path, "re");
		if (!file)
			return -errno;
		in = file;
	}
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		r = take(ctx, line, (size_t)n);
		if (r == -EBADMSG)
			(*ret_bad)++;
		else if (r < 0)
			return r;
		else
			taken += r;
	}
	return ferror(in) ? -(errno ?: EIO) : taken;
}

void warn_bad_audit_lines(const char *path, size_t bad)
{
	if (bad)
		fprintf(stderr,
			"launch: warning: %s: %zu line%s not audit lines (not JSON objects "
			"with an \"event\"), skipped\n",
			path, bad, bad == 1 ? " is" : "s are");
}
