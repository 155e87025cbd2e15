/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox's end: the job killed and reaped, its exit line, and everything released. */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "cglimit.h"
#include "cgroup.h"
#include "gc.h"
#include "loader.h"
#include "sandbox_internal.h"
#include "update.h"

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
	/* The gateway's refused requests, each an "http" line (or counted lost, without one). */
	sandbox->denied += sbgateway_denied(sandbox->gateway);
	sandbox->lost += sbgateway_lost(sandbox->gateway);
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
	exit.denied = sandbox->denied;
	exit.lost = sandbox->lost;
	audit_exit_unwritten(log, &exit);
	exit.unwritten += sandbox->unread;
	n = audit_format_exit(log, &exit, line, sizeof(line));
	audit_append_formatted(log, AUDIT_KIND_OTHER, line, n);
	sandbox->exit_logged = true;
}

/*
 * The sandbox's BPF slot, given up once its exit line has its counters: the cgroup's settings
 * are closed (it refuses all) before the slot's lock goes, so whatever is still in the cgroup
 * (init, exiting) is judged by no other sandbox's maps. It runs while init exits on the other
 * core (docs/design.md, "Start-up cost"). No memory is unmapped here: an unmapping would interrupt
 * the audit writer's core too, to flush its TLB (sandbox_teardown).
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
	 * 0.25 ms in all, where the exit unmaps everything in one pass (docs/design.md, "Start-up
	 * cost"). Their descriptors go with it; nothing of theirs is read after the exit line.
	 */
	child_close(&sandbox->child);
	/* Its thread stopped, its CA files removed; the secrets' values are main's to wipe. */
	sbgateway_free(sandbox->gateway);
	sandbox->gateway = NULL;
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

void sandbox_teardown(struct sandbox *sandbox)
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
	/* No request is judged after this: its lines come before the exit line. */
	sbgateway_stop(sandbox->gateway);
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
	 * waited for (as long as a stall allows), and the rest released (docs/design.md, "Start-up
	 * cost").
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
