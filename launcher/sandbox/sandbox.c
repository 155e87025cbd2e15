// SPDX-License-Identifier: LGPL-2.1-or-later
/* One sandbox's life, step by step: cgroup, BPF programs, the audit log, the job's start. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "cglimit.h"
#include "cgroup.h"
#include "dnsbpf.h"
#include "gc.h"
#include "gwsecret.h"
#include "loader.h"
#include "policy/inbound.h"
#include "peerpid.h"
#include "sandbox_internal.h"
#include "seccomp.h"
#include "update.h"

/* Signals the launcher passes on to the job rather than acting on. */
static const int FORWARDED_SIGNALS[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/*
 * How often the limits' counters are read while the job runs: cgroup v1's raise no
 * notification. A fork bomb stopped at its pids limit is killed within this.
 */
#define LIMIT_POLL_MS 100
/* One line on why a step failed, a path in it. */
#define SANDBOX_WHY_MAX (PATH_MAX + 256)

/* The process of this sandbox that sent the DNS proxy a message it refuses. */
static int sandbox_dns_pid(void *ctx, const struct sockaddr *peer, socklen_t peerlen, bool tcp)
{
	const struct sandbox *sandbox = ctx;

	return peerpid_find(sandbox->cgroup.dir_fd, 0, peer, peerlen, tcp);
}

static int sandbox_arm_timeout(struct sandbox *sandbox, double timeout_s)
{
	struct itimerspec spec = { 0 };

	sandbox->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sandbox->timer_fd < 0)
		return -errno;
	spec.it_value.tv_sec = (time_t)timeout_s;
	spec.it_value.tv_nsec = (long)((timeout_s - (double)spec.it_value.tv_sec) * 1e9);
	if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0)
		spec.it_value.tv_nsec = 1;
	if (timerfd_settime(sandbox->timer_fd, 0, &spec, NULL) < 0)
		return -errno;
	return sandbox_watch(sandbox, sandbox->timer_fd);
}

static int sandbox_arm_limits(struct sandbox *sandbox)
{
	struct itimerspec spec = {
		.it_value.tv_nsec = LIMIT_POLL_MS * 1000000L,
		.it_interval.tv_nsec = LIMIT_POLL_MS * 1000000L,
	};

	sandbox->limits_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sandbox->limits_timer_fd < 0)
		return -errno;
	if (timerfd_settime(sandbox->limits_timer_fd, 0, &spec, NULL) < 0)
		return -errno;
	return sandbox_watch(sandbox, sandbox->limits_timer_fd);
}

/* Watches --audit-sync-fd, which must be a socket: the answer goes back on it. */
static int sandbox_sync_open(struct sandbox *sandbox, int fd)
{
	struct stat st;
	int flags;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	sandbox->sync_fd = fd;
	return sandbox_watch(sandbox, fd);
}

/* The signals launch passes on to the job, as a set. */
static void sandbox_forwarded_set(sigset_t *ret_set)
{
	sigemptyset(ret_set);
	for (size_t i = 0; i < ARRAY_SIZE(FORWARDED_SIGNALS); i++)
		sigaddset(ret_set, FORWARDED_SIGNALS[i]);
}

static int sandbox_setup_signals(struct sandbox *sandbox, sigset_t *ret_old)
{
	sigset_t mask;

	sandbox_forwarded_set(&mask);
	/* Blocked before clone: a signal that arrives while the job starts is queued. */
	if (sigprocmask(SIG_BLOCK, &mask, ret_old) < 0)
		return -errno;
	sandbox->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sandbox->signal_fd < 0)
		return -errno;
	return sandbox_watch(sandbox, sandbox->signal_fd);
}

/*
 * Records why the sandbox failed, once: the first failure is the one main prints, and what
 * teardown meets after it only adds to the damage. Returns r, for `return sandbox_fail(...)`.
 */
int __attribute__((format(printf, 3, 4)))
sandbox_fail(struct sandbox *sandbox, int r, const char *fmt, ...)
{
	va_list ap;

	if (sandbox->error < 0)
		return r;
	sandbox->error = r;
	va_start(ap, fmt);
	vsnprintf(sandbox->errbuf, sandbox->errlen, fmt, ap);
	va_end(ap);
	return r;
}

/* Taken before anything of the sandbox exists: `launch gc` leaves it alone. */
static int sandbox_lock(struct sandbox *sandbox)
{
	const char *id = sandbox->options->id;

	sandbox->lock_fd = gc_lock(id);
	if (sandbox->lock_fd < 0)
		return sandbox_fail(
			sandbox, sandbox->lock_fd, "cannot lock %s/%s.lock: %s%s", GC_LOCK_DIR, id,
			strerror(-sandbox->lock_fd),
			sandbox->lock_fd == -EEXIST ? " (a sandbox of that name is running)" : "");
	return 0;
}

static int sandbox_open_audit(struct sandbox *sandbox, const struct rules *rules)
{
	const struct sandbox_options *options = sandbox->options;
	struct audit_log *log = sandbox->log;
	int r;

	r = audit_open(log, options->audit_path, options->id, rules->names,
		       options->audit_stall_ms);
	if (r == -ENXIO && options->audit_continue) {
		/* A sink that accepts nothing, like any other failure: every line is counted. */
		log->error = r;
	} else if (r < 0) {
		return sandbox_fail(sandbox, r, "audit log %s: %s", options->audit_path,
				    audit_strerror(r));
	}
	audit_set_schema(log, options->audit_format);
	log->observer = options->audit_observer;
	log->observer_ctx = options->audit_observer_ctx;
	log->policies = rules->policies;
	log->npolicies = rules->npolicies;
	log->audit_only = options->audit_only;
	return 0;
}

/* The programs every sandbox shares: found attached to their holder, or loaded now. */
static int sandbox_find_programs(struct sandbox *sandbox)
{
	char why[512] = "";
	int r = loader_shared_get(sandbox->options->cgroup_parent, &sandbox->shared, why,
				  sizeof(why));

	/* The loader's own reason, when it has one, is the whole line. */
	if (r < 0 && why[0])
		return sandbox_fail(sandbox, r, "%s", why);
	if (r < 0)
		return sandbox_fail(sandbox, r,
				    "cannot load the BPF programs: %s (run with -v for the "
				    "verifier's log)",
				    strerror(-r));
	/* Before 6.7 nothing can see AF_UNIX connects: a way out unless accepted. */
	if (!sandbox->shared.unix_hooks && !sandbox->options->allow_unix_unfiltered &&
	    !(sandbox->options->child.seccomp_flags & SECCOMP_REFUSE_UNIX))
		return sandbox_fail(sandbox, -EOPNOTSUPP,
				    "this kernel has no AF_UNIX cgroup hooks (6.7+), so the job "
				    "could reach any local socket: refusing to start "
				    "(--allow-unix-unfiltered accepts that)");
	return 0;
}

/*
 * The sandbox's cgroup. Its path is recorded in the lock file before it exists, so that a
 * sweep after our death, at any moment, removes exactly this cgroup (and its v1 mirrors,
 * found from its path).
 */
static int sandbox_make_cgroup(struct sandbox *sandbox)
{
	const struct sandbox_options *options = sandbox->options;
	char *path = sandbox->cgroup_path;
	int r;

	r = mkdir(options->cgroup_parent, 0755) < 0 && errno != EEXIST ? -errno : 0;
	if (r == 0 && !realpath(options->cgroup_parent, path))
		r = -errno;
	if (r == 0 && strlen(path) + strlen(options->id) + 2 > sizeof(sandbox->cgroup_path))
		r = -ENAMETOOLONG;
	if (r == 0) {
		strcat(path, "/");
		strcat(path, options->id);
		r = gc_record(sandbox->lock_fd, path);
	}
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot record the cgroup in %s/%s.lock: %s",
				    GC_LOCK_DIR, options->id, strerror(-r));
	r = cgroup_create(options->cgroup_parent, options->id, &sandbox->cgroup);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot create cgroup %s/%s: %s%s",
				    options->cgroup_parent, options->id, strerror(-r),
				    r == -EEXIST ? " (a sandbox of that name is running)" : "");
	return 0;
}

/*
 * The supervisor's event loop, with the signals it forwards blocked before the clone (one that
 * arrives while the job starts is queued), and its timers.
 */
static int sandbox_setup_events(struct sandbox *sandbox)
{
	int r;

	sandbox->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	r = sandbox->epoll_fd < 0 ? -errno : sandbox_setup_signals(sandbox, &sandbox->old_mask);
	if (r >= 0)
		r = sandbox_arm_limits(sandbox);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot set up the event loop: %s", strerror(-r));
	if (sandbox->options->audit_sync_fd >= 0) {
		r = sandbox_sync_open(sandbox, sandbox->options->audit_sync_fd);
		if (r < 0)
			return sandbox_fail(
				sandbox, r,
				"--audit-sync-fd: descriptor %d is not an open socket: %s",
				sandbox->options->audit_sync_fd, strerror(-r));
	}
	return 0;
}

/*
 * Init is cloned into the cgroup as soon as it exists, and sets up the job's namespaces while
 * the launcher puts on the limits and confines the cgroup; the job execs only when
 * child_start tells it to.
 */
static int sandbox_spawn_init(struct sandbox *sandbox)
{
	struct child_config config = sandbox->options->child;
	char path[PATH_MAX] = CHILD_INIT_NAME;
	_cleanup_close_ int init_fd = child_init_open();
	int exec_error = 0, r;

	r = init_fd;
	if (r >= 0) {
		config.cgroup_fd = sandbox->cgroup.dir_fd;
		r = child_spawn(&config, init_fd, &sandbox->child, &exec_error);
	}
	if (r < 0 && exec_error < 0)
		return sandbox_fail(sandbox, r, "cannot make the sandbox's mounts private: %s",
				    strerror(-r));
	if (r < 0 && (init_fd < 0 || exec_error)) {
		(void)child_init_path(path, sizeof(path));
		return sandbox_fail(sandbox, r,
				    "cannot start the sandbox's init %s: %s (%s is built and "
				    "installed beside launch: executable, owned by root, writable "
				    "by no one else)",
				    path, strerror(-r), CHILD_INIT_NAME);
	}
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot start the sandbox's init: %s",
				    strerror(-r));
	r = sandbox_watch(sandbox, sandbox->child.pidfd);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot watch the job: %s", strerror(-r));
	return 0;
}

/* The job's configuration, now whole, to init: it makes the rest of the job's view. */
static int sandbox_configure_init(struct sandbox *sandbox)
{
	int r = child_configure(&sandbox->child, &sandbox->options->child);

	if (r < 0)
		return sandbox_fail(sandbox, r,
				    "cannot hand the job's configuration to its init: %s",
				    strerror(-r));
	return 0;
}

/*
 * The launcher's half of the job's Landlock ruleset, made while init mounts rather than by
 * init: the rules init's mounts do not change; init adds its own /tmp, /dev/shm and the
 * policies' paths to it in the job's view. -1 in *ret_fd without Landlock.
 */
static int sandbox_make_ruleset(struct sandbox *sandbox, int *ret_fd)
{
	const struct child_config *config = &sandbox->options->child;
	const char *failed;
	int fd;

	*ret_fd = -1;
	if (config->landlock_abi <= 0)
		return 0;
	fd = child_ruleset_new(config, &failed);
	if (fd < 0)
		return sandbox_fail(sandbox, fd,
				    "cannot confine the job's file writes with Landlock: %s%s%s",
				    failed ? failed : "", failed ? ": " : "", strerror(-fd));
	*ret_fd = fd;
	return 0;
}

/*
 * The limits, on before the job exists: the job never runs with less than asked. Init, the
 * launcher's own code, starts it only once they are set and it has moved itself into the v1
 * cgroups (the job inherits them); meanwhile the v1 cgroups' making overlaps init's mounts.
 */
_Static_assert(CGLIMIT_NCTRLS <= CHILD_JOIN_DIRS_MAX, "a JOINED message carries every v1 cgroup");
static int sandbox_limit_init(struct sandbox *sandbox)
{
	const struct sandbox_options *options = sandbox->options;
	char why[SANDBOX_WHY_MAX];
	int dir_fds[CGLIMIT_NCTRLS], ndirs = 0, r;
	_cleanup_close_ int ruleset_fd = -1;

	r = cglimit_setup(
		&sandbox->limits, &options->limits, sandbox->cgroup.dir_fd, sandbox->cgroup_path,
		options->cgroup_mounts_known ? &options->cgroup_mounts : NULL, why, sizeof(why));
	if (r < 0)
		return sandbox_fail(sandbox, r, "%s", why);
	if (sandbox->limits.warning[0])
		fprintf(stderr,
			"launch: warning: no cgroup controller for the default %s here: the job "
			"runs without it\n",
			sandbox->limits.warning);
	r = cglimit_join(&sandbox->limits, &options->limits, sandbox->child.pid, dir_fds, &ndirs,
			 why, sizeof(why));
	if (r < 0)
		return sandbox_fail(sandbox, r, "%s", why);
	r = sandbox_make_ruleset(sandbox, &ruleset_fd);
	if (r == 0) {
		r = child_joined(&sandbox->child, dir_fds, ndirs, ruleset_fd);
		if (r < 0)
			sandbox_fail(sandbox, r, "cannot start the job: %s", strerror(-r));
	}
	return r;
}

/*
 * Before `go`: what the audit writer needs that can fail (its event descriptor, watched, its
 * signal's handler), so that a launcher that cannot have one refuses to start the job.
 */
static int sandbox_prepare_audit_writer(struct sandbox *sandbox)
{
	int r = audit_prepare_writer(sandbox->log);

	if (r == 0 && audit_event_fd(sandbox->log) >= 0)
		r = sandbox_watch(sandbox, audit_event_fd(sandbox->log));
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot start the audit log's writer: %s",
				    strerror(-r));
	return 0;
}

/*
 * After `go`: the thread's start (its stack, its first faults) is then not on the way to the
 * job's exec but beside it. A thread that cannot start after all stops the job, which runs
 * confined meanwhile: the teardown kills it, counts every queued line unwritten and exits 125.
 */
static int sandbox_start_audit_writer(struct sandbox *sandbox)
{
	int r = audit_start_writer(sandbox->log);

	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot start the audit log's writer: %s",
				    strerror(-r));
	return 0;
}

/* The sandbox's slot: its maps filled from the rules, and the ring its refusals come by. */
static int sandbox_make_maps(struct sandbox *sandbox, const struct rules *rules)
{
	int r;

	r = loader_sandbox_new(&sandbox->shared, rules, sandbox->options->dns_proxy, &sandbox->bpf);
	if (r < 0)
		return sandbox_fail(
			sandbox, r, "cannot make the sandbox's maps: %s%s", strerror(-r),
			r == -EUSERS ? " (every slot is taken: too many sandboxes at once)" : "");
	/* Written to the kernel with the rest of the settings, at attach. */
	if (sandbox->options->audit_only)
		sandbox->bpf.cfg.flags |= CFG_AUDIT_ONLY;
	return 0;
}

/*
 * The ring's reader, after `go`, while the job execs: libbpf maps the whole ring (512 KiB,
 * twice over for its data) and the kernel fills every page table entry of it at once, 0.1 ms
 * here (docs/design.md, "Start-up cost"). The ring itself is the slot's, there since
 * sandbox_make_maps: what the job refuses meanwhile waits in it, and epoll reports it as
 * soon as it is watched. A ring that cannot be mapped stops the job, confined all along, as
 * a writer that cannot start does; what it holds is counted unwritten (sandbox_log_exit).
 */
static int sandbox_open_events(struct sandbox *sandbox)
{
	int r;

	sandbox->ringbuf = ring_buffer__new(loader_sandbox_events_fd(&sandbox->bpf),
					    sandbox_on_event, sandbox, NULL);
	r = sandbox->ringbuf ? sandbox_watch(sandbox, ring_buffer__epoll_fd(sandbox->ringbuf))
			     : -errno;
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot open the event ring buffer: %s",
				    strerror(-r));
	return 0;
}

/* Before attach: the job's first look-up must already find the proxy. */
static int sandbox_start_dns(struct sandbox *sandbox, const struct rules *rules)
{
	const struct sandbox_options *options = sandbox->options;
	int r;

	r = dnsproxy_new(&options->dns, rules, &dnsbpf_ops, &sandbox->bpf, sandbox->log,
			 &sandbox->dns);
	if (r == 0)
		dnsproxy_set_pid_finder(sandbox->dns, sandbox_dns_pid, sandbox);
	if (r == 0 && options->dns_proxy) {
		struct dnsproxy_ports ports;

		r = dnsproxy_listen(sandbox->dns, &ports);
		if (r == 0)
			dnsbpf_configure(&sandbox->bpf, &ports);
	}
	if (r == 0 && dnsproxy_fd(sandbox->dns) >= 0)
		r = sandbox_watch(sandbox, dnsproxy_fd(sandbox->dns));
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot start the DNS proxy: %s", strerror(-r));
	return 0;
}

/*
 * Before attach, as the DNS proxy: the job's first connection to a gateway host must already
 * go to the gateway, and its CA files be there for the job's runtimes.
 */
static int sandbox_start_gateway(struct sandbox *sandbox, const struct rules *rules)
{
	const struct sandbox_options *options = sandbox->options;
	struct sbgateway_config config = {
		.id = options->id,
		.policies = (const struct policy *const *)rules->policies,
		.npolicies = rules->npolicies,
		.secrets = options->secrets,
		.nsecrets = options->nsecrets,
		.upstream_cas = options->upstream_cas,
		.nupstream_cas = options->nupstream_cas,
		.log_query = options->audit_http_query,
		.resolver = options->resolver,
		.cgroup_fd = sandbox->cgroup.dir_fd,
		.log = sandbox->log,
	};
	char why[SANDBOX_WHY_MAX] = "";
	uint16_t port4 = 0, port6 = 0;
	int r;

	if (options->gateway_port4 && !options->gateway) {
		port4 = options->gateway_port4;
		port6 = options->gateway_port6;
		goto ports;
	}
	/* Whoever runs a sandbox with "http" rules starts its gateway, or nothing runs. */
	if (!options->gateway && gwsecret_gateway_wanted(rules->policies, rules->npolicies))
		return sandbox_fail(sandbox, -EOPNOTSUPP,
				    "a policy has \"http\" rules, and this command starts no HTTPS "
				    "gateway for them");
	if (!options->gateway)
		return 0;
	r = sbgateway_start(&config, &sandbox->gateway, why, sizeof(why));
	if (r == 0)
		r = sandbox_watch(sandbox, sbgateway_fd(sandbox->gateway));
	if (r < 0)
		return sandbox_fail(sandbox, r, "%s", why[0] ? why : strerror(-r));
	sbgateway_ports(sandbox->gateway, &port4, &port6);
	if (!port4)
		return sandbox_fail(sandbox, -EADDRNOTAVAIL,
				    "the HTTPS gateway has no listener on 127.0.0.1");
ports:
	/* Written to the kernel with the rest of the settings, at attach. */
	sandbox->bpf.cfg.gateway_port4 = port4;
	sandbox->bpf.cfg.gateway_port6 = port6;
	sandbox->bpf.cfg.flags |= CFG_GATEWAY;
	return 0;
}

static int sandbox_attach(struct sandbox *sandbox)
{
	const char *failed_prog = NULL;
	int r;

	r = loader_sandbox_attach(&sandbox->bpf, sandbox->cgroup.dir_fd, sandbox->cgroup.id,
				  &failed_prog);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot attach %s to %s: %s", failed_prog,
				    sandbox->cgroup.path, strerror(-r));
	return 0;
}

/* Confined: from now on its policy may be replaced (launch update). */
static int sandbox_listen_update(struct sandbox *sandbox)
{
	int r = update_listen(sandbox->options->id, &sandbox->update);

	if (r == 0)
		r = sandbox_watch(sandbox, update_fd(sandbox->update));
	if (r < 0)
		return sandbox_fail(sandbox, r,
				    "cannot make the control socket for launch update: %s",
				    strerror(-r));
	return 0;
}

/*
 * The cgroup is confined: the log says the job starts, then init may start it. `go` comes
 * last, with nothing left for the launcher to do before it waits: the job, woken on the
 * launcher's core, ran 0.1-0.25 ms later when the line was written after it.
 */
static int sandbox_start_job(struct sandbox *sandbox, const struct rules *rules)
{
	const struct child_config *config = &sandbox->options->child;
	struct audit_job job = {
		.uid = config->set_user ? config->uid : getuid(),
		.gid = config->set_user ? config->gid : getgid(),
		.landlock_abi = config->landlock_abi,
		.fs_write = (char *const *)config->fs_write,
		.unix_connect =
			sandbox->options->allow_unix_unfiltered && !sandbox->shared.unix_hooks
				? "unfiltered"
			: config->seccomp_flags & SECCOMP_REFUSE_UNIX ? "refused"
								      : "bpf",
	};
	struct utsname uts;
	char hostname[256] = "", line[AUDIT_LINE_MAX];
	int r, n;

	if (uname(&uts) == 0)
		job.kernel = uts.release;
	/* The start line pairs with the exit line the teardown writes from here on. */
	sandbox->started = true;
	gethostname(hostname, sizeof(hostname) - 1);
	n = audit_format_start(sandbox->log, config->argv, sandbox->child.pid, &job,
			       rules->list->nexact + rules->list->nprefixes, hostname, line,
			       sizeof(line));
	audit_append_formatted(sandbox->log, AUDIT_KIND_OTHER, line, n);
	if (audit_flush(sandbox->log) < 0 && !sandbox->audit_continue)
		return sandbox_fail(sandbox, sandbox->log->error, "audit log %s: %s; job stopped",
				    sandbox->options->audit_path,
				    audit_strerror(sandbox->log->error));
	r = child_start(&sandbox->child);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot start the job: %s", strerror(-r));
	return 0;
}

/*
 * The job hands over its seccomp listener, then execs. A job that never ran exits as env(1)
 * would: 127 for not found, 126 when it cannot run.
 */
static int sandbox_wait_exec(struct sandbox *sandbox)
{
	const char *argv0 = sandbox->options->child.argv[0];
	struct child_msg msg;
	int r;

	r = child_wait_exec(&sandbox->child, &msg);
	if (r == -EPROTO)
		return sandbox_fail(sandbox, r, "the job started without its seccomp filter");
	if (r < 0)
		return sandbox_fail(sandbox, r, "the sandbox's init died before the job started");
	if (msg.type != CHILD_MSG_EXEC_OK && msg.stage == CHILD_STAGE_LIMITS) {
		/* EPROTO: init got fewer directories than sent; status is then no failed one. */
		const char *path = msg.error == EPROTO
					   ? NULL
					   : cglimit_v1_joined(&sandbox->limits, msg.status);

		return sandbox_fail(sandbox, msg.error ? -msg.error : -EPROTO,
				    "cannot move the sandbox into %s: %s",
				    path ? path : "its cgroup v1 limits", strerror(msg.error));
	}
	if (msg.type != CHILD_MSG_EXEC_OK) {
		if (msg.stage == CHILD_STAGE_EXEC)
			sandbox->exit_status =
				msg.error == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
		return sandbox_fail(sandbox, msg.error ? -msg.error : -EPROTO, "%s: %s: %s", argv0,
				    child_stage_name(msg.stage), strerror(msg.error));
	}
	/*
	 * Init's mounts are made: its /tmp is the job's. Without it, only the record of a full
	 * /tmp is lost; tmpfs enforces the size.
	 */
	cglimit_watch_tmp(&sandbox->limits, sandbox->child.pid);
	r = sandbox_watch(sandbox, sandbox->child.seccomp_fd);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot watch the seccomp listener: %s",
				    strerror(-r));
	/* Init's next and last message: the job's end (sandbox_read_exited). */
	r = sandbox_watch(sandbox, sandbox->child.status_fd);
	if (r < 0)
		return sandbox_fail(sandbox, r, "cannot watch the sandbox's init: %s",
				    strerror(-r));
	return 0;
}

/* Microseconds since *since, which moves on to now. */
static long long sandbox_lap_us(long long *since)
{
	long long now = monotonic_now_us(), lap = now - *since;

	*since = now;
	return lap;
}

/*
 * One sandbox per launcher: static, so that only what is used of it (the paths, the limits'
 * folders) takes pages, rather than all of it zeroed on the stack.
 */
static struct sandbox sandbox_one;
/* When the current stage of the timing began. */
static long long sandbox_stage_us;

int sandbox_begin(const struct sandbox_options *options, char *errbuf, size_t errlen)
{
	static struct audit_log log; /* 1 MiB queue: kept off the stack */
	struct sandbox *sandbox = &sandbox_one;
	int r;

	sandbox_stage_us = monotonic_now_us();
	sandbox->cgroup.dir_fd = -1;
	sandbox->bpf = (struct loader_sandbox)LOADER_SANDBOX_INIT;
	sandbox->log = &log;
	sandbox->child = (struct child)CHILD_INIT;
	sandbox->epoll_fd = sandbox->signal_fd = sandbox->timer_fd = -1;
	/* As CGLIMIT_INIT, field by field: a literal would zero its folders' paths on the stack. */
	sandbox->limits.v2_fd = -1;
	sandbox->limits.tmp_fd = -1;
	for (int c = 0; c < CGLIMIT_NCTRLS; c++)
		sandbox->limits.v1_fd[c] = -1;
	sandbox->options = options;
	sandbox->limits_timer_fd = sandbox->sync_fd = sandbox->lock_fd = -1;
	sandbox->exit_status = EXIT_LAUNCH_FAILED;
	sandbox->errbuf = errbuf;
	sandbox->errlen = errlen;
	log.fd = -1;
	log.event_fd = -1;
	loader_shared_init(&sandbox->shared);

	/*
	 * Init is cloned before the policies are even read, as early as its cgroup allows: its
	 * namespace set-up (a mount detach waits for an RCU grace period) runs beside the
	 * launcher's own work, from the policies to the attach, and its configuration follows
	 * (sandbox_configure_init).
	 */
	r = sandbox_lock(sandbox);
	if (r == 0)
		r = sandbox_make_cgroup(sandbox);
	if (r == 0)
		r = sandbox_setup_events(sandbox);
	if (r == 0)
		r = sandbox_spawn_init(sandbox);
	options->timing_out->spawn_us = sandbox_lap_us(&sandbox_stage_us);
	if (r < 0)
		sandbox_abort();
	return r;
}

int sandbox_take_stop_signal(void)
{
	const struct timespec now = { 0 };
	sigset_t mask;
	int sig;

	sandbox_forwarded_set(&mask);
	sig = sigtimedwait(&mask, NULL, &now);
	return sig > 0 ? sig : 0;
}

void sandbox_abort(void)
{
	sandbox_teardown(&sandbox_one);
}

int sandbox_run(const struct rules *rules, int *ret_exit_status)
{
	struct sandbox *sandbox = &sandbox_one;
	struct sandbox_timing *timing = sandbox->options->timing_out;
	int r = 0;

	/* The options read after sandbox_begin: the caller filled them in since. */
	sandbox->audit_continue = sandbox->options->audit_continue;
	/* The job's time and --timeout count from here, not from before the policies were read. */
	sandbox->started_ms = monotonic_now_ms();
	if (sandbox->options->timeout_s > 0) {
		r = sandbox_arm_timeout(sandbox, sandbox->options->timeout_s);
		if (r < 0)
			r = sandbox_fail(sandbox, r, "cannot set up the event loop: %s",
					 strerror(-r));
	}
	sandbox->listen = (struct inbound_policy){ .ports = &rules->listen,
						   .unix_allows = rules->unix_allows,
						   .nunix = rules->nunix };
	sandbox_lap_us(&sandbox_stage_us);
	/* Before init's configuration: init hides the log from the job, so it must exist. */
	if (r == 0)
		r = sandbox_open_audit(sandbox, rules);
	if (r == 0)
		r = sandbox_configure_init(sandbox);
	if (r == 0)
		r = sandbox_limit_init(sandbox);
	timing->limits_us = sandbox_lap_us(&sandbox_stage_us);
	if (r == 0)
		r = sandbox_find_programs(sandbox);
	timing->bpf_load_us = sandbox_lap_us(&sandbox_stage_us);
	timing->bpf_loaded = sandbox->shared.loaded_now;
	if (r == 0)
		r = sandbox_prepare_audit_writer(sandbox);
	if (r == 0)
		r = sandbox_make_maps(sandbox, rules);
	if (r == 0)
		r = sandbox_start_dns(sandbox, rules);
	if (r == 0)
		r = sandbox_start_gateway(sandbox, rules);
	if (r == 0)
		r = sandbox_attach(sandbox);
	if (r == 0)
		r = sandbox_listen_update(sandbox);
	timing->attach_us = sandbox_lap_us(&sandbox_stage_us);
	if (r == 0)
		r = sandbox_start_job(sandbox, rules);
	/*
	 * The writer and the ring's reader start while the job execs, off the way to it: the
	 * writer's lines (the start line first) wait in the queue, and the job's refusals in the
	 * ring, as they would for a busy launcher. The writer first: a ring that cannot be mapped
	 * still leaves a log whose start and exit lines are written.
	 */
	if (r == 0)
		r = sandbox_start_audit_writer(sandbox);
	if (r == 0)
		r = sandbox_open_events(sandbox);
	if (r == 0)
		r = sandbox_wait_exec(sandbox);
	timing->exec_us = sandbox_lap_us(&sandbox_stage_us);
	if (r == 0)
		sandbox_run_job(sandbox);
	timing->job_us = sandbox_lap_us(&sandbox_stage_us);

	sandbox_teardown(sandbox);
	timing->teardown_us = sandbox_lap_us(&sandbox_stage_us);
	*ret_exit_status = sandbox->exit_status;
	return sandbox->error;
}
