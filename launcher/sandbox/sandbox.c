// SPDX-License-Identifier: LGPL-2.1-or-later
/* One sandbox's life: cgroup, BPF programs, the job, the audit log, and the teardown. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "cglimit.h"
#include "cgroup.h"
#include "dnsbpf.h"
#include "gc.h"
#include "loader.h"
#include "sandbox.h"
#include "policy/inbound.h"
#include "peerpid.h"
#include "seccomp.h"
#include "update.h"

/* Signals the launcher passes on to the job rather than acting on. */
static const int FORWARDED_SIGNALS[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

#define CGROUP_KILL_TIMEOUT_MS 5000
/*
 * How often the limits' counters are read while the job runs: cgroup v1's raise no
 * notification. A fork bomb stopped at its pids limit is killed within this.
 */
#define LIMIT_POLL_MS 100
/* Sync requests read in one go; more wait in the socket for the next round. */
#define SANDBOX_SYNC_MAX 64
/* One line on why a step failed, a path in it. */
#define SANDBOX_WHY_MAX (PATH_MAX + 256)

struct sandbox {
	struct sandbox_cgroup cgroup;
	struct loader_shared shared; /* the programs every sandbox shares */
	struct loader_sandbox bpf;   /* this sandbox's slot, maps and configuration */
	struct ring_buffer *ringbuf;
	struct audit_log *log;
	struct child child;
	struct dnsproxy *dns;	      /* also knows the names of addresses, for deny lines */
	struct update_server *update; /* launch update's requests */
	int epoll_fd, signal_fd, timer_fd;
	unsigned long long lost_reported;
	unsigned long long would_deny_lost_reported, allowed_lost_reported; /* --audit-only */
	unsigned long long seccomp_denied; /* refusals the seccomp listener answered */
	struct inbound_policy listen;	   /* where the job may listen beyond loopback */
	bool audit_continue;
	bool audit_failed;
	bool timed_out;
	struct cglimit limits;
	const struct sandbox_options *options;
	int limits_timer_fd;
	bool limit_stopped;	    /* a pids or memory limit was reached: the job was stopped */
	unsigned int limits_logged; /* CGLIMIT_HIT_* on record already */
	bool throttled;		    /* the audit queue is nearly full: new events wait */
	bool ring_behind; /* the last drain left events in the ring (throttled, queue full) */
	int sync_fd;	  /* --audit-sync-fd; -1: none, or its peer hung up */
	char sync_asked[SANDBOX_SYNC_MAX]; /* the bytes read from it, to be written back */
	size_t nsync_asked;
	/* The last kernel event's process and its executable, read again after EXE_CACHE_MS. */
	unsigned int exe_pid;
	long long exe_read_ms;
	char exe[PATH_MAX];
	bool exe_known;
	/* The lifecycle's own state, each step's resources above. */
	int lock_fd;		    /* held from the first step to the last */
	char cgroup_path[PATH_MAX]; /* as recorded in the lock file */
	sigset_t old_mask;	    /* restored once the signal descriptor is closed */
	long long started_ms;	    /* for the exit line's duration */
	bool started;		    /* the start line is queued, go follows: an exit line is due */
	bool reaped;		    /* init's status is in init_info */
	bool exited_known;	    /* init's CHILD_MSG_EXITED is in exited */
	bool exit_logged;	    /* the exit line is queued: nothing may follow it */
	struct child_msg exited;
	siginfo_t init_info;
	int exit_status;	   /* launch's, until the job's replaces it */
	unsigned long long denied; /* every refusal, for the exit line and main */
	unsigned long long lost;   /* refusals the kernel's ring had no room for */
	unsigned long long unread; /* refusals left in a ring that could not be mapped */
	int error;		   /* the first failure, negative errno; 0: none */
	char *errbuf;		   /* its one line, for main */
	size_t errlen;
};

/*
 * A refusal flood comes from one process: reading /proc for each of its events would slow
 * the ring's reader enough for the kernel to drop events. One read per process and 100 ms.
 */
#define EXE_CACHE_MS 100

/* The name the job knew a refused address by: a DNS answer's or a policy host's. */
static const char *sandbox_dst_name(const struct sandbox *sandbox, const struct deny_event *event)
{
	struct in6_addr addr;

	if (event->op != AUDIT_OP_CONNECT && event->op != AUDIT_OP_SENDMSG)
		return NULL;
	memcpy(&addr, event->addr, sizeof(addr));
	return dnsproxy_addr_name(sandbox->dns, &addr);
}

/*
 * The refusing process's executable, from /proc at logging time: exact for seccomp events
 * (the process waits for our answer), best effort for the kernel's (it may have exited, or
 * exec'd since). Empty when unknown.
 */
static const char *sandbox_exe(unsigned int pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* sandbox_exe for the kernel's events, through the one-process cache. */
static const char *sandbox_event_exe(struct sandbox *sandbox, unsigned int pid)
{
	long long now = monotonic_now_ms();

	if (pid != sandbox->exe_pid || now - sandbox->exe_read_ms >= EXE_CACHE_MS) {
		sandbox->exe_pid = pid;
		sandbox->exe_read_ms = now;
		sandbox->exe_known = sandbox_exe(pid, sandbox->exe, sizeof(sandbox->exe)) != NULL;
	}
	return sandbox->exe_known ? sandbox->exe : NULL;
}

static int sandbox_on_event(void *ctx, void *data, size_t size)
{
	struct sandbox *sandbox = ctx;

	if (size < sizeof(struct deny_event))
		return 0;
	/* Left in the slot's ring by the cgroup that had the slot before: not ours to log. */
	if (((const struct deny_event *)data)->cgroup_id != sandbox->cgroup.id)
		return 0;
	/* A write error is kept in the log and acted on after the round. */
	audit_deny_exe(sandbox->log, data, sandbox_dst_name(sandbox, data),
		       sandbox_event_exe(sandbox, ((const struct deny_event *)data)->pid));
	/*
	 * The queue keeps room for what is in flight; the rest of the refusals wait in the
	 * kernel's ring, which counts what it cannot hold. At teardown appends wait instead.
	 */
	if (!sandbox->log->wait_room && !sandbox->log->error &&
	    audit_room(sandbox->log) < AUDIT_QUEUE_RESERVE)
		return -ENOBUFS;
	return 0;
}

/* Reports refusals the ring buffer had no room for since the last report. */
static void sandbox_report_lost(struct sandbox *sandbox)
{
	struct sandbox_counters counters;
	char line[AUDIT_LINE_MAX];
	int n;

	loader_sandbox_sum_counters(&sandbox->bpf, &counters);
	if (counters.lost == sandbox->lost_reported &&
	    counters.would_deny_lost == sandbox->would_deny_lost_reported &&
	    counters.allowed_lost == sandbox->allowed_lost_reported)
		return;
	n = audit_format_lost_verdicts(sandbox->log, counters.lost - sandbox->lost_reported,
				       counters.would_deny_lost - sandbox->would_deny_lost_reported,
				       counters.allowed_lost - sandbox->allowed_lost_reported, line,
				       sizeof(line));
	audit_append_formatted(sandbox->log, AUDIT_KIND_OTHER, line, n);
	sandbox->lost_reported = counters.lost;
	sandbox->would_deny_lost_reported = counters.would_deny_lost;
	sandbox->allowed_lost_reported = counters.allowed_lost;
}

static void sandbox_watch_events(struct sandbox *sandbox, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	/* ENOENT: the seccomp listener hung up and is watched no more. */
	if (fd >= 0)
		epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
}

/*
 * While the audit queue is nearly full, new events wait where they are: refusals in the
 * kernel's ring, seccomp notifications and DNS queries with the job. The supervisor still
 * runs its timer, signals and reaping. Once the log has failed (--audit-failure=continue)
 * nothing waits any more: a line without room is counted unwritten.
 */
static void sandbox_throttle(struct sandbox *sandbox)
{
	size_t room = audit_room(sandbox->log);
	bool throttle;
	uint32_t events;

	if (sandbox->log->error)
		throttle = false;
	else if (sandbox->throttled)
		throttle = room < 2 * AUDIT_QUEUE_RESERVE;
	else
		throttle = room < AUDIT_QUEUE_RESERVE;
	if (throttle == sandbox->throttled)
		return;
	sandbox->throttled = throttle;
	events = throttle ? 0 : EPOLLIN;
	sandbox_watch_events(sandbox, ring_buffer__epoll_fd(sandbox->ringbuf), events);
	sandbox_watch_events(sandbox, sandbox->child.seccomp_fd, events);
	sandbox_watch_events(sandbox, dnsproxy_fd(sandbox->dns), events);
}

/* Drains the ring buffer into the log. Returns -errno when the log failed and must stop. */
static int sandbox_drain(struct sandbox *sandbox)
{
	int r = sandbox->throttled ? 0 : ring_buffer__consume(sandbox->ringbuf);

	/* -ENOBUFS: sandbox_on_event stopped, the queue is nearly full. */
	if (r < 0 && r != -EINTR && r != -ENOBUFS)
		return r;
	sandbox->ring_behind = sandbox->throttled || r < 0;
	sandbox_report_lost(sandbox);
	audit_flush(sandbox->log);
	if (sandbox->log->error && !sandbox->audit_continue)
		return sandbox->log->error;
	sandbox_throttle(sandbox);
	return 0;
}

/* The process of this sandbox that sent the DNS proxy a message it refuses. */
static int sandbox_dns_pid(void *ctx, const struct sockaddr *peer, socklen_t peerlen, bool tcp)
{
	const struct sandbox *sandbox = ctx;

	return peerpid_find(sandbox->cgroup.dir_fd, peer, peerlen, tcp);
}

/*
 * Before the first inet listen() done on the job's behalf: the program that keeps peers
 * outside the sandbox from the job's listeners (loader_sandbox_attach_ingress).
 */
static int sandbox_guard_listen(void *ctx)
{
	struct sandbox *sandbox = ctx;
	int r = loader_sandbox_attach_ingress(&sandbox->bpf, sandbox->cgroup.dir_fd);

	if (r < 0)
		fprintf(stderr,
			"launch: cannot attach launch_ingress to %s: %s: the job's listen() is "
			"refused\n",
			sandbox->cgroup.path, strerror(-r));
	return r;
}

/* Refuses and logs what the job's seccomp filter handed over. */
static void sandbox_seccomp(struct sandbox *sandbox)
{
	const struct seccomp_listen_guard guard = { sandbox_guard_listen, sandbox };
	struct deny_event event;
	char exe[PATH_MAX];

	if (seccomp_answer(sandbox->child.seccomp_fd, &sandbox->listen, &guard, &event, exe,
			   sizeof(exe)) == 1) {
		sandbox->seccomp_denied++;
		audit_deny_exe(sandbox->log, &event, NULL, exe[0] ? exe : NULL);
	}
}

static int sandbox_forward(struct sandbox *sandbox)
{
	struct signalfd_siginfo info;

	while (read(sandbox->signal_fd, &info, sizeof(info)) == sizeof(info)) {
		/*
		 * A terminal's ^C reaches the whole foreground process group, which the job
		 * shares: passing it on again would deliver it twice.
		 */
		if (info.ssi_code == SI_KERNEL)
			continue;
		/* A frozen job would hold the signal for ever (launch mcp's server gone). */
		(void)cgroup_thaw(&sandbox->cgroup);
		if (syscall(SYS_pidfd_send_signal, sandbox->child.pidfd, info.ssi_signo, NULL, 0) <
			    0 &&
		    errno != ESRCH)
			return -errno;
	}
	return 0;
}

static int sandbox_watch(struct sandbox *sandbox, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
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

/*
 * Logs the limits the job reached since the last look. Reaching the pids or memory limit
 * stops the job (a fork bomb would spin at its limit for ever, and v1's OOM killer takes one
 * process, not the sandbox): returns 1 when it must be killed.
 */
static int sandbox_check_limits(struct sandbox *sandbox)
{
	const struct job_limits *limits = &sandbox->options->limits;
	unsigned int hits = cglimit_check(&sandbox->limits) & ~sandbox->limits_logged;
	char line[AUDIT_LINE_MAX];
	int n;

	/* Once each: a bomb being killed still fails forks, a hog's children still fault. */
	sandbox->limits_logged |= hits;

	if (hits & CGLIMIT_HIT_PIDS) {
		n = audit_format_limit(sandbox->log, "pids", limits->pids_max, "stopped", line,
				       sizeof(line));
		audit_append_formatted(sandbox->log, AUDIT_KIND_OTHER, line, n);
	}
	if (hits & CGLIMIT_HIT_MEMORY) {
		n = audit_format_limit(sandbox->log, "memory", limits->memory_max, "stopped", line,
				       sizeof(line));
		audit_append_formatted(sandbox->log, AUDIT_KIND_OTHER, line, n);
	}
	if (hits & CGLIMIT_HIT_TMP) {
		/* The job sees ENOSPC and may well go on: it is its to handle. */
		n = audit_format_limit(sandbox->log, "tmp", sandbox->options->child.tmp_size_bytes,
				       "none", line, sizeof(line));
		audit_append_formatted(sandbox->log, AUDIT_KIND_OTHER, line, n);
	}
	if (!(hits & (CGLIMIT_HIT_PIDS | CGLIMIT_HIT_MEMORY)))
		return 0;
	sandbox->limit_stopped = true;
	return 1;
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

/* Takes the sync requests waiting on --audit-sync-fd; its peer gone, it is watched no more. */
static void sandbox_sync_read(struct sandbox *sandbox)
{
	size_t room = sizeof(sandbox->sync_asked) - sandbox->nsync_asked;
	ssize_t n;

	if (sandbox->sync_fd < 0 || room == 0)
		return;
	n = read(sandbox->sync_fd, sandbox->sync_asked + sandbox->nsync_asked, room);
	if (n > 0) {
		sandbox->nsync_asked += (size_t)n;
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_DEL, sandbox->sync_fd, NULL);
	sandbox->sync_fd = -1;
}

/*
 * Answers the sync requests once the ring is drained: a refusal is in the ring before the
 * call that made it returns, so every refusal that happened before the request was read is
 * in the log once the queue is written out. A supervisor that saw the job's code end, then
 * asked, then got its byte back, reads a log that holds every refusal of that code.
 */
static int sandbox_sync_answer(struct sandbox *sandbox)
{
	int r;

	if (sandbox->nsync_asked == 0 || sandbox->ring_behind)
		return 0;
	/*
	 * A look-up the job sent and did not wait for is a refusal made, too; and refused
	 * look-ups still waiting for their repeats are written now, their window cut short.
	 * The proxy failing (an address it cannot close) stops the sandbox, as in the loop.
	 */
	if (sandbox->dns && !sandbox->exit_logged) {
		r = dnsproxy_process(sandbox->dns);
		if (r < 0)
			return r;
		dnsproxy_flush_refusals(sandbox->dns, DNSPROXY_FLUSH_ALL);
	}
	/*
	 * Bounded by --audit-stall-timeout. A log that failed or stalled is not whole: no
	 * answer then (the asker's wait runs out), and the log's failure takes its usual course.
	 */
	if (audit_drain(sandbox->log) < 0 || sandbox->log->error)
		return 0;
	if (sandbox->sync_fd >= 0 &&
	    write(sandbox->sync_fd, sandbox->sync_asked, sandbox->nsync_asked) < 0 &&
	    errno != EAGAIN) {
		epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_DEL, sandbox->sync_fd, NULL);
		sandbox->sync_fd = -1;
	}
	sandbox->nsync_asked = 0;
	return 0;
}

/* launch update: the new policy in force, or the old one still, or (< 0) neither trusted. */
static int sandbox_update(struct sandbox *sandbox)
{
	const struct update_target target = {
		.bpf = &sandbox->bpf,
		.dns = sandbox->dns,
		.log = sandbox->log,
		.listen = &sandbox->listen,
		.resolver = sandbox->options->resolver,
		.dns_proxy = sandbox->options->dns_proxy,
		.id = sandbox->options->id,
	};

	return update_serve(sandbox->update, &target);
}

/* Init said the job ended and no process of the sandbox is left: init is exiting. */
static bool sandbox_job_alone(const struct sandbox *sandbox)
{
	return sandbox->exited_known && (sandbox->exited.flags & CHILD_EXITED_ALONE);
}

/*
 * Init's last message, CHILD_MSG_EXITED, read as it comes; then the socket is not watched
 * again (nothing follows it). True when it says no process of the sandbox is left.
 */
static bool sandbox_read_exited(struct sandbox *sandbox)
{
	struct child_msg msg;

	epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_DEL, sandbox->child.status_fd, NULL);
	if (child_read_msg(&sandbox->child, &msg) < 0 || msg.type != CHILD_MSG_EXITED)
		return false; /* init died without it: its pidfd says so next */
	sandbox->exited = msg;
	sandbox->exited_known = true;
	return sandbox_job_alone(sandbox);
}

/*
 * Waits for the job to exit, forwarding signals and logging refusals (signals, seccomp
 * requests, DNS, the ring, the audit writer). Returns 0 once init is reaped (its status in
 * *ret_info), 1 once init said the job ended with no process left (CHILD_EXITED_ALONE: init
 * is exiting, not yet reaped), or -errno.
 */
static int sandbox_supervise(struct sandbox *sandbox, siginfo_t *ret_info)
{
	for (;;) {
		struct epoll_event evs[4];
		/* Lines waiting for a sink that accepts nothing become a failure in time. */
		int timeout_ms = sandbox->log->error ? -1 : audit_timeout_ms(sandbox->log);
		int n = epoll_wait(sandbox->epoll_fd, evs, 4, timeout_ms);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == sandbox->signal_fd) {
				r = sandbox_forward(sandbox);
				if (r < 0)
					return r;
			} else if (fd == sandbox->child.status_fd) {
				if (sandbox_read_exited(sandbox))
					return 1;
			} else if (fd == sandbox->child.seccomp_fd) {
				/*
				 * Hung up: no process is left under the filter. Watching it on
				 * would wake this loop without end until init exits.
				 */
				if (evs[i].events & EPOLLHUP)
					epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
				else
					sandbox_seccomp(sandbox);
			} else if (fd == update_fd(sandbox->update)) {
				r = sandbox_update(sandbox);
				if (r < 0)
					return r;
			} else if (fd == dnsproxy_fd(sandbox->dns)) {
				r = dnsproxy_process(sandbox->dns);
				if (r < 0)
					return r;
			} else if (fd == audit_event_fd(sandbox->log)) {
				uint64_t writes;

				/* The writer made room: the round's drain takes events again. */
				if (read(fd, &writes, sizeof(writes)) < 0 && errno != EAGAIN)
					return -errno;
			} else if (fd == sandbox->sync_fd) {
				sandbox_sync_read(sandbox);
			} else if (fd == sandbox->timer_fd) {
				sandbox->timed_out = true;
				r = cgroup_kill(&sandbox->cgroup, CGROUP_KILL_TIMEOUT_MS);
				if (r < 0)
					return r;
			} else if (fd == sandbox->limits_timer_fd) {
				uint64_t ticks;

				if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					return -errno;
				if (sandbox_check_limits(sandbox)) {
					r = cgroup_kill(&sandbox->cgroup, CGROUP_KILL_TIMEOUT_MS);
					if (r < 0)
						return r;
				}
			}
		}
		r = sandbox_drain(sandbox);
		if (r < 0) {
			sandbox->audit_failed = true;
			return r;
		}
		r = sandbox_sync_answer(sandbox);
		if (r < 0)
			return r;
		memset(ret_info, 0, sizeof(*ret_info));
		if (waitid(P_PIDFD, (id_t)sandbox->child.pidfd, ret_info, WEXITED | WNOHANG) < 0)
			return -errno;
		if (ret_info->si_pid)
			return 0;
	}
}

/*
 * The job's status, as init reported it; when init itself was killed (timeout, or cgroup.kill
 * after the launcher's own failure) its status stands for the job's.
 */
static int sandbox_exit_status(struct sandbox *sandbox, const siginfo_t *init_info,
			       int *ret_audit_code)
{
	struct child_msg msg = sandbox->exited;
	int code, sig;

	if (sandbox->exited_known ||
	    (child_read_msg(&sandbox->child, &msg) == 0 && msg.type == CHILD_MSG_EXITED)) {
		code = WIFEXITED(msg.status) ? WEXITSTATUS(msg.status) : -1;
		sig = WIFSIGNALED(msg.status) ? WTERMSIG(msg.status) : 0;
	} else {
		code = init_info->si_code == CLD_EXITED ? init_info->si_status : -1;
		sig = init_info->si_code == CLD_EXITED ? 0 : init_info->si_status;
	}
	*ret_audit_code = sig ? -sig : code;
	if (sandbox->timed_out)
		return EXIT_TIMEOUT;
	return sig ? EXIT_SIGNAL_BASE + sig : code;
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
static int __attribute__((format(printf, 3, 4)))
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
 * here (docs/design.md, cut 29). The ring itself is the slot's, there since
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

static int sandbox_run_job(struct sandbox *sandbox)
{
	int r = sandbox_supervise(sandbox, &sandbox->init_info);

	if (r == 0)
		sandbox->reaped = true;
	if (r >= 0)
		return 0;
	if (sandbox->audit_failed)
		sandbox_fail(sandbox, r, "audit log %s: %s; job stopped",
			     sandbox->options->audit_path, audit_strerror(r));
	else
		sandbox_fail(sandbox, r, "supervisor: %s; job stopped", strerror(-r));
	return r;
}

/* Nothing of the job may outlive the sandbox: every process killed, init reaped. */
static void sandbox_kill(struct sandbox *sandbox)
{
	if (cgroup_kill(&sandbox->cgroup, CGROUP_KILL_TIMEOUT_MS) < 0)
		sandbox_fail(sandbox, -EBUSY, "cannot kill every process of cgroup %s",
			     sandbox->cgroup.path);
	if (sandbox->child.pid > 0 && !sandbox->reaped)
		waitid(P_PIDFD, (id_t)sandbox->child.pidfd, &sandbox->init_info, WEXITED);
}

/*
 * After CHILD_EXITED_ALONE: init exits right after saying so, and is reaped first, then the
 * kill finds the cgroup empty at once. Killed first, it still held the cgroup, and the
 * kernel's notice that the cgroup emptied can come a tick late (cgroup.events is rate-limited
 * to one change a jiffy). A stuck init is killed with the rest after the wait.
 */
static void sandbox_reap_alone(struct sandbox *sandbox)
{
	struct pollfd pfd = { .fd = sandbox->child.pidfd, .events = POLLIN };

	if (poll(&pfd, 1, CGROUP_KILL_TIMEOUT_MS) == 1 &&
	    waitid(P_PIDFD, (id_t)sandbox->child.pidfd, &sandbox->init_info, WEXITED) == 0)
		sandbox->reaped = true;
	sandbox_kill(sandbox);
}

/* The exit line of a job that was started: its status, and every refusal accounted for. */
static void sandbox_log_exit(struct sandbox *sandbox)
{
	struct audit_log *log = sandbox->log;
	struct audit_exit exit = { .duration_ms = monotonic_now_ms() - sandbox->started_ms };
	struct sandbox_counters kernel;
	struct audit_counts counts;
	char line[AUDIT_LINE_MAX];
	int n;

	/* The last refusals, made by processes now dead, are still in the ring. */
	if (sandbox->ringbuf)
		ring_buffer__consume(sandbox->ringbuf);
	sandbox_report_lost(sandbox);
	loader_sandbox_sum_counters(&sandbox->bpf, &kernel);
	sandbox->denied = kernel.denied + sandbox->seccomp_denied;
	sandbox->lost = kernel.lost;
	/*
	 * A ring that could not be mapped after `go` (sandbox_open_events) was never read: what
	 * the job was refused in the moment before it was stopped is in the kernel's count, and
	 * in no line, so it is unwritten.
	 */
	if (!sandbox->ringbuf)
		sandbox->unread = kernel.denied - kernel.lost;
	exit.packet_dropped = kernel.packet_dropped;
	exit.would_deny = kernel.would_deny;
	exit.would_deny_lost = kernel.would_deny_lost;
	exit.allowed = kernel.allowed;
	exit.allowed_lost = kernel.allowed_lost;
	/* What killed the job's last processes, if a limit did, is on record too. */
	sandbox_check_limits(sandbox);
	if (sandbox->dns) {
		struct dnsproxy_stats dns_stats;

		/*
		 * Look-ups the proxy refused are refusals too: one per deny line, its repeats
		 * counted in it. Those the job sent and did not wait for are judged now, and
		 * lines still in their window are written now: after the exit line, nothing
		 * (sandbox_sync_answer). Past the job's end, a proxy failure reaches nothing.
		 */
		(void)dnsproxy_process(sandbox->dns);
		dnsproxy_flush_refusals(sandbox->dns, DNSPROXY_FLUSH_ALL);
		dnsproxy_get_stats(sandbox->dns, &dns_stats);
		sandbox->denied += dns_stats.deny_lines;
		exit.would_deny += dns_stats.would_deny;
	}
	if (sandbox->reaped || sandbox_job_alone(sandbox))
		sandbox->exit_status =
			sandbox_exit_status(sandbox, &sandbox->init_info, &exit.exit_code);
	else
		exit.exit_code = sandbox->exit_status;
	if ((sandbox->reaped || sandbox_job_alone(sandbox)) && sandbox->limit_stopped &&
	    !sandbox->timed_out)
		sandbox->exit_status = EXIT_LIMIT;
	/* What the queue still holds after a stall will not be written either. */
	audit_drain(log);
	audit_get_counts(log, &counts);
	exit.denied = sandbox->denied;
	exit.lost = sandbox->lost;
	exit.unwritten =
		counts.unwritten_denied + (log->error ? counts.queued_denied : 0) + sandbox->unread;
	exit.log_failed = counts.unwritten_lines + (log->error ? counts.queued_lines : 0);
	n = audit_format_exit(log, &exit, line, sizeof(line));
	audit_append_formatted(log, AUDIT_KIND_OTHER, line, n);
	sandbox->exit_logged = true;
}

/*
 * The sandbox's BPF slot, given up once its exit line has its counters: the cgroup's settings
 * are closed (it refuses all) before the slot's lock goes, so whatever is still in the cgroup
 * (init, exiting) is judged by no other sandbox's maps. It runs while init exits on the other
 * core (docs/design.md, cut 30). No memory is unmapped here: an unmapping would interrupt the
 * audit writer's core too, to flush its TLB (sandbox_teardown).
 */
static void sandbox_release_bpf(struct sandbox *sandbox)
{
	if (loader_sandbox_close(&sandbox->bpf) < 0)
		sandbox_fail(sandbox, -EBUSY, "cannot empty the sandbox's BPF slot");
	loader_shared_close(&sandbox->shared);
}

/* The cgroups, once no process is left in them. */
static void sandbox_release_kernel(struct sandbox *sandbox)
{
	if (cgroup_destroy(&sandbox->cgroup) < 0)
		sandbox_fail(sandbox, -EBUSY, "cannot remove cgroup %s", sandbox->cgroup.path);
	if (cglimit_destroy(&sandbox->limits) < 0)
		sandbox_fail(sandbox, -EBUSY, "cannot remove the job's cgroup v1 limits");
}

/* Everything else, in reverse order of making. */
static void sandbox_release(struct sandbox *sandbox)
{
	/*
	 * The ring's mappings and the DNS proxy's tables are left to the launcher's exit, which
	 * follows (one sandbox per launcher): each munmap here cost 35-90 us on a PVM guest,
	 * 0.25 ms in all, where the exit unmaps everything in one pass (docs/design.md, cut 28).
	 * Their descriptors go with it; nothing of theirs is read after the exit line.
	 */
	child_close(&sandbox->child);
	if (sandbox->signal_fd >= 0) {
		close(sandbox->signal_fd);
		sigprocmask(SIG_SETMASK, &sandbox->old_mask, NULL);
	}
	if (sandbox->timer_fd >= 0)
		close(sandbox->timer_fd);
	if (sandbox->limits_timer_fd >= 0)
		close(sandbox->limits_timer_fd);
	if (sandbox->epoll_fd >= 0)
		close(sandbox->epoll_fd);
}

/* What the log, closed, could not write goes to main, for one line on stderr. */
static void sandbox_audit_result(struct sandbox *sandbox)
{
	struct sandbox_audit_result *result = sandbox->options->audit_out;
	struct audit_log *log = sandbox->log;
	struct audit_counts counts;

	/* Last: the log and the DNS proxy pointed into the policies it took. */
	update_server_free(sandbox->update);
	audit_get_counts(log, &counts);
	if (!result || (!counts.unwritten_lines && !log->error && !sandbox->unread))
		return;
	result->incomplete = true;
	result->error = log->error;
	result->denied = sandbox->denied;
	result->lost = sandbox->lost;
	result->written = counts.written_denied;
	result->unwritten = counts.unwritten_denied + sandbox->unread;
	result->lines_failed = counts.unwritten_lines;
	result->ring_unread = !sandbox->ringbuf;
}

static void sandbox_teardown(struct sandbox *sandbox)
{
	struct audit_log *log = sandbox->log;

	/* No policy changes from here on, and no wait for a compile in the resolver. */
	update_server_stop(sandbox->update);
	/*
	 * Init said no process is left (CHILD_EXITED_ALONE): the exit line is written while it
	 * exits (its mounts and namespaces go, 0.2-0.4 ms here), and the kill and its reaping
	 * come after it, before the cgroups go.
	 */
	if (!sandbox_job_alone(sandbox))
		sandbox_kill(sandbox);
	/* Every process is dead: appends may wait for room now, as long as a stall allows. */
	log->wait_room = true;
	if (sandbox->started)
		sandbox_log_exit(sandbox);
	/* The last requests, and those asked while the job ended: the log is whole now. */
	sandbox->ring_behind = false;
	sandbox_sync_read(sandbox);
	/* Past the job's end: a proxy failure now changes nothing it could reach. */
	(void)sandbox_sync_answer(sandbox);
	/*
	 * Nothing more is queued: the writer writes the rest and ends, in one wake-up, on the
	 * core the job left, while init is reaped and the slot and cgroups released here; then
	 * waited for (as long as a stall allows), and the rest released (docs/design.md, cut 28).
	 */
	audit_close_begin(log);
	sandbox_release_bpf(sandbox);
	if (sandbox_job_alone(sandbox))
		sandbox_reap_alone(sandbox);
	sandbox_release_kernel(sandbox);
	audit_close(log);
	sandbox_release(sandbox);
	/* The first failure is the one reported: a release that failed comes first now. */
	if (log->error && !sandbox->audit_continue && sandbox->error == 0) {
		sandbox->exit_status = EXIT_LAUNCH_FAILED;
		sandbox_fail(sandbox, log->error, "audit log %s: %s", sandbox->options->audit_path,
			     audit_strerror(log->error));
	}
	sandbox_audit_result(sandbox);
	gc_unlock(sandbox->options->id, sandbox->lock_fd);
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
