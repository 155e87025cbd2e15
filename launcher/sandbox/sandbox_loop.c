/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The supervisor's event loop while the job runs: signals, seccomp, DNS, the ring, the limits. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "cglimit.h"
#include "cgroup.h"
#include "loader.h"
#include "sandbox_internal.h"
#include "seccomp.h"
#include "update.h"

/*
 * A refusal flood comes from one process: reading /proc for each of its events would slow
 * the ring's reader enough for the kernel to drop events. One read per process and 100 ms.
 */
#define EXE_CACHE_MS 100

/* The name the job knew a refused address by: a DNS answer's or a policy host's. */
static const char *sandbox_dst_name(const struct sandbox *sandbox, const struct deny_event *event)
{
	struct in6_addr addr;

	if (event->op != AUDIT_OP_CONNECT && event->op != AUDIT_OP_SENDMSG &&
	    event->op != AUDIT_OP_TLS)
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

int sandbox_on_event(void *ctx, void *data, size_t size)
{
	struct sandbox *sandbox = ctx;

	if (!audit_event_whole(data, size))
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
void sandbox_report_lost(struct sandbox *sandbox)
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

int sandbox_watch(struct sandbox *sandbox, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(sandbox->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/*
 * Logs the limits the job reached since the last look. Reaching the pids or memory limit
 * stops the job (a fork bomb would spin at its limit for ever, and v1's OOM killer takes one
 * process, not the sandbox): returns 1 when it must be killed.
 */
int sandbox_check_limits(struct sandbox *sandbox)
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

/* Takes the sync requests waiting on --audit-sync-fd; its peer gone, it is watched no more. */
void sandbox_sync_read(struct sandbox *sandbox)
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
int sandbox_sync_answer(struct sandbox *sandbox)
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
		.gateway = sandbox->gateway != NULL,
	};

	return update_serve(sandbox->update, &target);
}

/* Init said the job ended and no process of the sandbox is left: init is exiting. */
bool sandbox_job_alone(const struct sandbox *sandbox)
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
			} else if (fd == sbgateway_fd(sandbox->gateway)) {
				sbgateway_process(sandbox->gateway);
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

int sandbox_run_job(struct sandbox *sandbox)
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
