// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch [OPTIONS] -- COMMAND [ARG...]: the job's plan (user, policies, file system, limits,
 * environment) read while init sets up its namespaces, then the sandbox's run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "commands.h"
#include "audit/refusal.h"
#include "lib/util.h"
#include "sandbox/gc.h"
#include "sandbox/gwsecret.h"
#include "sandbox/landlock.h"
#include "sandbox/loader.h"
#include "sandbox/reach.h"
#include "sandbox/seccomp.h"
#include "sandbox/sandbox.h"
#include "sandbox/sbgateway.h"

const struct command_help cmd_run_help = {
	.synopsis =
		"Usage: launch [OPTIONS] -- COMMAND [ARG...]\n"
		"       launch check --policy FILE [--policy FILE...] [--resolver ADDR[:PORT]]\n"
		"       launch gc [--unload]\n"
		"       launch update ID --policy FILE [--policy FILE...] [--resolver "
		"ADDR[:PORT]]\n"
		"       launch learn AUDIT.jsonl [--sandbox ID] [--name NAME] [--wildcards]\n"
		"       launch report AUDIT.jsonl\n"
		"       launch mcp --policy FILE [--runtime node] [--modules DIR] [--pass-env "
		"NAME...]\n"
		"                  [--pool N] [--max-output BYTES]   (launch mcp --help)\n"
		"\n"
		"Runs COMMAND in its own cgroup, where BPF programs let its sockets reach only "
		"the\n"
		"addresses, ports and protocols its policies allow, and write every refusal to a\n"
		"JSON-lines audit log.\n",
	.command = CMD_RUN,
	.epilogue =
		"The job runs as the user who ran sudo, or nobody (--user root for uid 0). It may "
		"write\n"
		"only its working directory, a private /tmp and /dev/shm and a policy's \"fs\" "
		"paths\n"
		"(Landlock), and sees /proc/sys and /sys read-only.\n"
		"The job gets launch's standard streams and environment (unless --clearenv or\n"
		"--pass-env), no capabilities, no_new_privs,\n"
		"and no descriptor above 2. INT, TERM, HUP, QUIT, USR1 and USR2 sent to launch are "
		"passed\n"
		"on to it. When it exits, every process left in its cgroup is killed.\n"
		"\n"
		"Exit status: the job's own; 128+N if it was killed by signal N; 124 after "
		"--timeout;\n"
		"137 when it reached its pids or memory limit;\n"
		"125 if launch failed (bad option, bad policy, no privilege, audit log failure);\n"
		"126 if COMMAND cannot be executed; 127 if it is not found.\n"
		"\n"
		"launch mcp serves a Model Context Protocol tool, run_typescript, on standard "
		"input and\n"
		"output: each call runs its code in a fresh sandbox under these policies "
		"(docs/mcp.md).\n"
		"\n"
		"launch check validates the policies and prints the effective allowlist, with the\n"
		"addresses each host resolves to, without running anything.\n"
		"The BPF programs are verified once per host and build, and shared: the first "
		"launch\n"
		"attaches them to the cgroup <cgroup parent>/.bpf-<version>, which keeps them "
		"loaded\n"
		"for the next ones (docs/design.md).\n"
		"launch gc removes the cgroups of sandboxes whose launcher was killed (every "
		"launch\n"
		"run does this too), frees the maps that idle BPF slots keep for the next "
		"sandbox,\n"
		"and unloads the programs of other builds; with --unload, this build's too.\n"
		"launch update replaces the policies of the running sandbox ID (--name) at once: "
		"each\n"
		"call is judged by the old policies or the new, and by the new ones once it "
		"returns.\n",
};

static int random_id(char *buf, size_t len)
{
	unsigned char bytes[6];

	if (getrandom(bytes, sizeof(bytes), 0) != sizeof(bytes))
		return -errno;
	snprintf(buf, len, "%02x%02x%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3],
		 bytes[4], bytes[5]);
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

/*
 * What this kernel lacks, found by probing, never by its version. Without the AF_UNIX cgroup
 * hooks (Linux 6.7) nothing can judge an AF_UNIX connect: the job then makes no AF_UNIX
 * socket (seccomp sends each socket() to the launcher, which refuses and logs it), unless
 * --allow-unix-unfiltered leaves them unfiltered. A policy that allows AF_UNIX paths needs
 * the hooks: it starts only with --allow-degraded, and gets none of them.
 */
static int plan_kernel(const struct rules *rules, struct sandbox_options *options)
{
	struct utsname uts = { 0 };

	/* TLS server names are checked: Fast Open's data would leave unjudged, in the SYN. */
	for (size_t p = 0; p < rules->npolicies; p++)
		for (size_t i = 0; i < rules->policies[p]->nentries; i++)
			if (rules->policies[p]->entries[i].sni)
				options->child.seccomp_flags |= SECCOMP_REFUSE_FASTOPEN;
	if (loader_kernel_has_unix_hooks() || arg.allow_unix_unfiltered)
		return 0;
	uname(&uts);
	if (rules->nunix && !arg.allow_degraded) {
		fail("a policy allows AF_UNIX paths, and this kernel (Linux %s) has no AF_UNIX "
		     "cgroup hooks to judge them (Linux 6.7 has them): refusing to start "
		     "(--allow-degraded runs the job with every AF_UNIX socket refused)",
		     uts.release);
		return -EOPNOTSUPP;
	}
	fprintf(stderr,
		"launch: warning: this kernel (Linux %s) has no AF_UNIX cgroup hooks (Linux 6.7): "
		"the job may make no AF_UNIX socket, each attempt refused and logged\n",
		uts.release);
	options->child.seccomp_flags |= SECCOMP_REFUSE_UNIX;
	return 0;
}

/*
 * No configuration lets the job write its own audit trail: a log file, or a folder where
 * launch would make one (at the start, or when it reopens the path after a rotation), that
 * the job may write is refused before anything runs.
 */
static int plan_audit_reach(const struct child_config *child)
{
	char why[2 * PATH_MAX + 256];
	int r = reach_job_may_write(child, child->audit_path, why, sizeof(why));

	if (r <= 0)
		return 0; /* a folder that does not resolve fails where the log is opened */
	fail("--audit-log %s: %s; refusing to start: put the log in a folder of its own, outside "
	     "what the job may write, or pass it as fd:N",
	     child->audit_path, why);
	return -EPERM;
}

/* One more variable for the job, set over launch's own of that name. */
static int plan_setenv(const char *name, const char *value)
{
	char *assignment = NULL;

	if (asprintf(&assignment, "%s=%s", name, value) < 0) {
		fail("cannot build the job's environment: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* Lives as long as the job's environment, to launch's exit. */
	if (jobenv_add_set(&arg.env, assignment) < 0) {
		fail("cannot build the job's environment: more than %d variables", JOBENV_MAX);
		free(assignment);
		return -E2BIG;
	}
	return 0;
}

/*
 * The HTTPS gateway, when a policy has a host rule with "http": each secret's value from its
 * --secret, the job's placeholder for it in the value's stead, and the job's runtimes pointed
 * at the gateway's CA (Node adds NODE_EXTRA_CA_CERTS to its own store; OpenSSL, Python's
 * requests and curl take a whole bundle, the system's store with the CA).
 */
static int plan_gateway(const struct rules *rules, struct sandbox_options *options)
{
	char why[PATH_MAX + 256] = "", ca[PATH_MAX], bundle[PATH_MAX];
	int r;

	options->gateway = gwsecret_gateway_wanted(rules->policies, rules->npolicies);
	r = gwsecret_plan(rules->policies, rules->npolicies, arg.secrets, arg.nsecrets, environ,
			  &options->secrets, &options->nsecrets, why, sizeof(why));
	if (r < 0) {
		fail("%s", why[0] ? why : strerror(-r));
		return r;
	}
	/*
	 * The values are in this process's memory from now on: no core file of launch's, and
	 * no ptrace by another process of its user, may show them.
	 */
	if (options->nsecrets && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		fail("cannot keep the secrets out of core files (PR_SET_DUMPABLE): %s",
		     strerror(errno));
		return -errno;
	}
	options->upstream_cas = arg.upstream_cas;
	options->nupstream_cas = arg.nupstream_cas;
	options->audit_http_query = arg.audit_http_query;
	if (!options->gateway)
		return 0;
	for (size_t i = 0; i < options->nsecrets; i++) {
		r = plan_setenv(options->secrets[i].policy->name, options->secrets[i].placeholder);
		if (r < 0)
			return r;
	}
	r = sbgateway_ca_paths(options->id, ca, bundle);
	if (r < 0) {
		fail("the gateway's CA files for sandbox %s: %s", options->id, strerror(-r));
		return r;
	}
	if (plan_setenv("NODE_EXTRA_CA_CERTS", ca) < 0 ||
	    plan_setenv("SSL_CERT_FILE", bundle) < 0 ||
	    plan_setenv("REQUESTS_CA_BUNDLE", bundle) < 0 ||
	    plan_setenv("CURL_CA_BUNDLE", bundle) < 0)
		return -ENOMEM;
	return 0;
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
	if (plan_fs(*ret_rules, &options->child, ret_fs_write) < 0 ||
	    plan_kernel(*ret_rules, options) < 0 || plan_gateway(*ret_rules, options) < 0)
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
	if (options->child.audit_path && plan_audit_reach(&options->child) < 0)
		return EXIT_LAUNCH_FAILED;
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

int cmd_run(int argc, char **argv)
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

	first = options_parse(argc, argv, &cmd_run_help, true);
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
		gwsecret_free(options.secrets, options.nsecrets);
		if (sig) {
			signal(sig, SIG_DFL);
			raise(sig);
		}
		return r ? r : EXIT_SIGNAL_BASE + sig;
	}
	environ = job_environ;
	r = sandbox_run(rules, &status);
	/* The values are in no one's hands now: the gateway is gone. */
	gwsecret_free(options.secrets, options.nsecrets);
	options.secrets = NULL;
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
