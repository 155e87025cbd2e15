// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp: each run_typescript call in a fresh sandbox, a child `launch` of its own. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "docindex.h"
#include "mcp_typecheck.h"
#include "mcp.h"
#include "mcp_http.h"
#include "mcp_gateway.h"
#include "mcp_run_internal.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/*
 * The next call's sandbox is prepared this long after a reply: its start (launch's set-up,
 * node's) would otherwise take the CPU from the client while it reads the reply.
 */
#define MCP_RUN_REFILL_DELAY_MS 100
/*
 * A call with a progressToken hears of it this often while it runs: clients reset their
 * request timeout on progress (the official SDK's resetTimeoutOnProgress), so a long call is
 * not given up on.
 */
#define MCP_RUN_PROGRESS_INTERVAL_S 1
/* A prepared sandbox's program, MCP_RUN_WARM_RUNNER: launcher/mcp_runner.mjs. */
#include "mcp_runner.h"
/* Transformed by tsx ahead of the call, so that esbuild is started already. */
static const char MCP_RUN_WARMUP[] = "const warm: number = 1;\nexport default warm;\n";
/* Imported by a prepared sandbox before its call when they are in --modules. */
static const char *const MCP_RUN_SDKS[] = { "stripe", "openai", "@anthropic-ai/sdk" };

/*
 * One step of a call and its wall-clock time, for tests/bench/mcp_bench (MCP_BENCH_TRACE=1),
 * which puts it beside the client's and the runner's times.
 */
static void mcp_run_trace(const struct mcp_runner *runner, const char *step)
{
	struct timespec ts;

	if (!runner->trace)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "launch-trace-server %s %.3f\n", step,
		(double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6);
}

/*
 * Reads the call's audit log: its refusals from byte from on (those before are the prepared
 * runner's own) and the job's own exit into result (when given); copies all of it to the
 * server's (when copy).
 */
static int mcp_run_audit(const struct mcp_runner *runner, const char *path, off_t from,
			 const char *since, struct mcp_result *result, bool copy)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t len = 0;
	bool ok;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* launch failed before it opened one */
	if (fstat(fd, &st) < 0)
		return -errno;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	for (char *line = text + ((size_t)from < len ? (size_t)from : len), *nl;
	     result && line < text + len; line = nl + 1) {
		struct refusal refusal;

		nl = strchr(line, '\n');
		if (!nl)
			nl = text + len;
		/* Only what was refused: an audit-only call's would_deny lines went through. */
		if (refusal_parse(line, (size_t)(nl - line), &refusal) == 1 && !refusal.would &&
		    refusal_since(&refusal, since)) {
			if (mcp_result_add_refusal(result, &refusal) < 0)
				return -ENOMEM;
		} else if (strstr(line, "\"event\":\"sandbox_exit\"")) {
			_cleanup_(cJSON_Deletep) cJSON *exit =
				cJSON_ParseWithLength(line, (size_t)(nl - line));
			const cJSON *sig = cJSON_GetObjectItemCaseSensitive(exit, "signal");

			/* The job's own end, not its exit status as launch passes it on (128+N). */
			if (cJSON_IsNumber(sig) && sig->valueint > 0)
				result->signal = sig->valueint;
		}
	}
	if (!copy || runner->audit_fd < 0 || len == 0)
		return 0;
	/* One write: the call's lines stay together and whole beside other writers'. */
	pthread_mutex_lock((pthread_mutex_t *)&runner->audit_lock);
	ok = write(runner->audit_fd, text, len) == (ssize_t)len;
	pthread_mutex_unlock((pthread_mutex_t *)&runner->audit_lock);
	return ok ? 0 : -EIO;
}

/* The server's audit log, opened (and its folder made) once, before the first call. */
static int mcp_run_open_audit(const char *path)
{
	char dir[PATH_MAX], *slash;
	int fd;

	if (strcmp(path, "-") == 0) {
		fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0750) < 0 && errno != EEXIST)
			return -errno;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	return fd < 0 ? -errno : fd;
}

/* The frozen sandboxes of answered calls are killed now: their launches then exit. */
static void mcp_dying_kill(struct mcp_runner *runner)
{
	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
		if (runner->dying[i].pid > 0 && runner->dying[i].frozen) {
			mcp_sandbox_kill(runner, &runner->dying[i]);
			runner->dying[i].frozen = false;
		}
}

/*
 * Reaps the launches of sandboxes killed after their call; block: waits for all of them.
 * Returns how many are still running.
 */
static size_t mcp_dying_reap(struct mcp_runner *runner, bool block)
{
	size_t left = 0;

	/* A frozen one would never exit. */
	if (block)
		mcp_dying_kill(runner);

	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++) {
		struct mcp_sandbox *sandbox = &runner->dying[i];
		pid_t pid;

		if (sandbox->pid <= 0)
			continue;
		while ((pid = waitpid(sandbox->pid, NULL, block ? 0 : WNOHANG)) < 0 &&
		       errno == EINTR)
			;
		if (pid == 0) {
			left++;
			continue;
		}
		sandbox->pid = 0;
		/* Its requests' last lines (connections the teardown closed) first. */
		mcp_gwcall_stop(sandbox->gwcall);
		/* The whole log, the lines of the teardown too, goes to the server's. */
		if (mcp_run_audit(runner, sandbox->audit, 0, NULL, NULL, true) < 0)
			fprintf(stderr, "launch mcp: audit log %s: cannot copy call %u's lines\n",
				runner->config->audit_path, sandbox->n);
		mcp_sandbox_free(runner, sandbox);
	}
	return left;
}

/*
 * A call answered on its runner's report: its sandbox is killed now, or once the answer is
 * out when it is frozen (mcp_dying_kill), and its launch reaped later, so that the answer
 * does not wait for the teardown.
 */
void mcp_dying_add(struct mcp_runner *runner, struct mcp_sandbox *sandbox)
{
	if (!sandbox->frozen)
		mcp_sandbox_kill(runner, sandbox);
	mcp_fd_close(&sandbox->in_fd);
	mcp_fd_close(&sandbox->sync_fd);
	mcp_fd_close(&sandbox->out.fd);
	mcp_fd_close(&sandbox->err.fd);
	for (;;) {
		for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
			if (runner->dying[i].pid <= 0) {
				runner->dying[i] = *sandbox;
				mcp_sandbox_reset(sandbox);
				return;
			}
		mcp_dying_reap(runner, true);
	}
}

/* Prepares sandboxes until the pool is full; a failure leaves a slot for the next call. */
static void mcp_pool_fill(struct mcp_runner *runner)
{
	for (size_t i = 0; i < runner->config->pool; i++)
		if (runner->pool[i].pid <= 0)
			mcp_sandbox_start(runner, NULL, &runner->pool[i]);
}

/*
 * A call's sandbox: a prepared one (or a cold one with its code), or its session's. Returns 0,
 * 1 when the call is refused (ret_result->tool_error), or a negative errno.
 */
static int mcp_run_take(struct mcp_runner *runner, const struct mcp_job *job,
			struct mcp_sandbox *ret_sandbox, struct mcp_session **ret_session,
			struct mcp_result *ret_result)
{
	int r;

	*ret_session = NULL;
	pthread_mutex_lock(&runner->lock);
	mcp_dying_kill(runner);
	mcp_dying_reap(runner, false);
	/* A call within the refill's delay: the pool is filled now, this call takes from it. */
	if (runner->refill_at) {
		runner->refill_at = 0;
		mcp_pool_fill(runner);
	}
	if (job->session)
		r = mcp_session_acquire(runner, job, ret_sandbox, ret_session, ret_result);
	else
		r = mcp_sandbox_take(runner, job->code, runner->typecheck && !job->no_typecheck,
				     ret_sandbox);
	pthread_mutex_unlock(&runner->lock);
	return r;
}

/*
 * The end of its input is a prepared runner's signal to import main.mts; "nocheck" before it
 * ("typecheck": false) has it skip the type-check.
 */
static void mcp_run_go(struct mcp_sandbox *sandbox, const struct mcp_job *job)
{
	if (sandbox->in_fd < 0)
		return;
	if ((job->no_typecheck && write(sandbox->in_fd, "nocheck\n", 8) != 8) ||
	    shutdown(sandbox->in_fd, SHUT_WR) < 0)
		mcp_fd_close(&sandbox->in_fd);
}

/* One call, on its thread: cancel_fd, readable once it is cancelled, kills its sandbox. */
static int mcp_run_call(struct mcp_runner *runner, const struct mcp_job *job,
			struct mcp_result *ret_result)
{
	const struct mcp_run_config *config = runner->config;
	long long timeout_ms = (long long)(config->timeout_s * 1000);
	struct mcp_session *session;
	struct mcp_sandbox sandbox;
	long long started, deadline;
	bool killed = false;
	int r, wait_status = 0;

	memset(ret_result, 0, sizeof(*ret_result));
	mcp_run_trace(runner, "call");
	r = mcp_run_take(runner, job, &sandbox, &session, ret_result);
	if (r != 0)
		return r < 0 ? r : 0;
	sandbox.cancel_fd = job->cancel_pipe[0];
	/* The call's own timeout, when it asks for a shorter one than the server's. */
	if (job->timeout_ms > 0 && job->timeout_ms < timeout_ms)
		timeout_ms = job->timeout_ms;
	mcp_run_trace(runner, "taken");
	/* The timeout is the call's: waiting for a prepared sandbox to be ready counts in it. */
	started = monotonic_now_ms();
	deadline = started + timeout_ms;
	if (sandbox.warm && !sandbox.synced) {
		mcp_sandbox_wait_ready(&sandbox, deadline);
		mcp_run_trace(runner, "waited");
	}
	/* The end of its input is the prepared runner's signal to import main.mts. */
	if (session)
		mcp_session_go(session, &sandbox, job, deadline);
	else
		mcp_run_go(&sandbox, job);
	mcp_run_trace(runner, "go");
	r = mcp_sandbox_collect(runner, &sandbox, deadline, &killed, &wait_status);
	mcp_run_trace(runner, "reported");
	if (r < 0)
		goto out;
	ret_result->duration_ms = monotonic_now_ms() - started;
	if (sandbox.done) {
		/*
		 * launch writes a refusal a moment after the kernel made it: a connect refused
		 * just before the code's end may still be in its ring buffer. The sync makes it
		 * write them all; then the sandbox goes. A refusal that comes later (a process
		 * the code left behind) is in the server's log, not in the result.
		 */
		if (mcp_sandbox_sync(&sandbox, monotonic_now_ms() + MCP_RUN_SYNC_TIMEOUT_MS) < 0) {
			/* The model is told, as the server's own stderr is. */
			ret_result->refused_incomplete = true;
			fprintf(stderr,
				"launch mcp: call %u: launch did not confirm its audit log "
				"in %d ms: its refusals may be incomplete\n",
				sandbox.n, MCP_RUN_SYNC_TIMEOUT_MS);
		}
		mcp_run_trace(runner, "synced");
		/* A session's goes on: frozen, it could not run its next call. */
		sandbox.frozen = !session && mcp_sandbox_freeze(runner, &sandbox);
		ret_result->exit_status = sandbox.done_status;
	} else if (WIFEXITED(wait_status))
		ret_result->exit_status = WEXITSTATUS(wait_status);
	else
		ret_result->exit_status = 128 + WTERMSIG(wait_status);
	/* launch's own timeout status (a cold call), or the server's kill (a prepared one). */
	ret_result->timed_out =
		killed || (ret_result->exit_status == 124 && ret_result->duration_ms >= timeout_ms);
	if (ret_result->timed_out)
		ret_result->exit_status = 124;
	/* Its launch is gone: the gateway ends its connections, every request then recorded. */
	if (!sandbox.done)
		mcp_gwcall_stop(sandbox.gwcall);
	r = mcp_run_audit(runner, sandbox.audit, sandbox.audit_from, sandbox.audit_since,
			  ret_result, !sandbox.done);
	if (r < 0) {
		fprintf(stderr, "launch mcp: audit log %s: %s\n", config->audit_path, strerror(-r));
		goto out;
	}
	mcp_run_trace(runner, "audited");
	r = mcp_gwcall_take(sandbox.gwcall, &ret_result->http, &ret_result->nhttp,
			    &ret_result->http_lost);
	if (r < 0)
		goto out;
	if (sandbox.type_errors && mcp_typecheck_read(sandbox.dir, &ret_result->type_errors) < 0)
		fprintf(stderr, "launch mcp: call %u: its type errors are unreadable\n", sandbox.n);
	/* Killed on purpose: the signal is the timeout's, not a crash. */
	if (ret_result->timed_out)
		ret_result->signal = 0;
	ret_result->out = TAKE_PTR(sandbox.out.text);
	ret_result->out_len = sandbox.out.len;
	ret_result->out_truncated = sandbox.out.truncated;
	ret_result->err = TAKE_PTR(sandbox.err.text);
	ret_result->err_len = sandbox.err.len;
	ret_result->err_truncated = sandbox.err.truncated;
out:
	if (r < 0)
		mcp_result_free(ret_result);
	if (session) {
		pthread_mutex_lock(&runner->lock);
		mcp_session_release(runner, session, &sandbox, job, ret_result);
		pthread_mutex_unlock(&runner->lock);
	}
	if (sandbox.done && sandbox.pid > 0) {
		pthread_mutex_lock(&runner->lock);
		mcp_dying_add(runner, &sandbox);
		pthread_mutex_unlock(&runner->lock);
	}
	mcp_sandbox_free(runner, &sandbox);
	return r;
}

/* The folders of answered calls go: later calls see no other's. Under runner->lock. */
static void mcp_dying_remove_dirs(struct mcp_runner *runner)
{
	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
		if (runner->dying[i].pid > 0 && runner->dying[i].dir[0]) {
			mcp_remove_tree(runner->dying[i].dir);
			runner->dying[i].dir[0] = '\0';
		}
}

static void mcp_job_free(struct mcp_job *job)
{
	if (!job)
		return;
	if (job->origin && job->origin->sink)
		job->origin->sink->release(job->origin);
	cJSON_Delete(job->id);
	cJSON_Delete(job->progress_token);
	free(job->code);
	free(job->session);
	closep(&job->cancel_pipe[0]);
	closep(&job->cancel_pipe[1]);
	free(job);
}

static void mcp_job_unlink(struct mcp_job **list, const struct mcp_job *job)
{
	for (; *list; list = &(*list)->next)
		if (*list == job) {
			*list = job->next;
			return;
		}
}

/* A running call's notifications/progress: one as it starts, then every interval. */
struct mcp_progress {
	struct mcp_server *server;
	const cJSON *token;
	pthread_mutex_t lock;
	pthread_cond_t stopped; /* stop was set */
	bool stop;
	bool started; /* thread runs */
	pthread_t thread;
};

static void *mcp_progress_run(void *ctx)
{
	struct mcp_progress *progress = ctx;
	struct timespec at;
	long long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &at);
	pthread_mutex_lock(&progress->lock);
	while (!progress->stop) {
		_cleanup_free_ char *text = NULL;

		pthread_mutex_unlock(&progress->lock);
		if (mcp_progress_notification(progress->token, ++n, "running", &text) < 0 ||
		    mcp_server_notify(progress->server, text) < 0)
			fprintf(stderr, "launch mcp: cannot send a call's progress\n");
		pthread_mutex_lock(&progress->lock);
		at.tv_sec += MCP_RUN_PROGRESS_INTERVAL_S;
		while (!progress->stop && pthread_cond_timedwait(&progress->stopped,
								 &progress->lock, &at) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&progress->lock);
	return NULL;
}

/* Starts a call's progress when it has a token; without one (or a thread) none is sent. */
static void mcp_progress_start(struct mcp_progress *progress, struct mcp_server *server,
			       const cJSON *token)
{
	pthread_condattr_t attr;

	*progress = (struct mcp_progress){ .server = server, .token = token };
	if (!token)
		return;
	pthread_mutex_init(&progress->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&progress->stopped, &attr);
	pthread_condattr_destroy(&attr);
	progress->started =
		pthread_create(&progress->thread, NULL, mcp_progress_run, progress) == 0;
	if (!progress->started)
		fprintf(stderr, "launch mcp: cannot start a call's progress\n");
}

/* Ends a call's progress: once this returns, none of it is sent (its result may go now). */
static void mcp_progress_stop(struct mcp_progress *progress)
{
	if (!progress->token)
		return;
	if (progress->started) {
		pthread_mutex_lock(&progress->lock);
		progress->stop = true;
		pthread_cond_signal(&progress->stopped);
		pthread_mutex_unlock(&progress->lock);
		pthread_join(progress->thread, NULL);
	}
	pthread_cond_destroy(&progress->stopped);
	pthread_mutex_destroy(&progress->lock);
}

/* Runs a job and sends its reply, unless it was cancelled. */
static void mcp_run_job(struct mcp_runner *runner, struct mcp_job *job)
{
	_cleanup_free_ char *reply = NULL;
	struct mcp_progress progress;
	struct mcp_result result;
	bool cancelled;
	int r;

	mcp_progress_start(&progress, job->origin, job->progress_token);
	r = mcp_run_call(runner, job, &result);
	mcp_progress_stop(&progress);
	pthread_mutex_lock(&runner->lock);
	cancelled = job->cancelled;
	if (cancelled)
		mcp_dying_remove_dirs(runner);
	pthread_mutex_unlock(&runner->lock);
	if (cancelled) {
		if (r == 0)
			mcp_result_free(&result);
		return;
	}
	if (mcp_call_reply(job->id, r, &result, &reply) < 0 ||
	    mcp_server_send(job->origin, reply) < 0)
		fprintf(stderr, "launch mcp: call %s: cannot send its reply\n",
			cJSON_IsString(job->id) ? job->id->valuestring : "?");
}

/* A call thread: takes the oldest queued job until the input ends and the queue is empty. */
static void *mcp_run_worker(void *ctx)
{
	struct mcp_runner *runner = ctx;

	pthread_mutex_lock(&runner->lock);
	for (;;) {
		struct mcp_job *job;

		while (!runner->queue && !runner->stopping)
			pthread_cond_wait(&runner->queued, &runner->lock);
		job = runner->queue;
		if (!job)
			break;
		runner->queue = job->next;
		job->next = runner->running;
		runner->running = job;
		pthread_mutex_unlock(&runner->lock);
		mcp_run_job(runner, job);
		pthread_mutex_lock(&runner->lock);
		mcp_job_unlink(&runner->running, job);
		mcp_job_free(job);
	}
	pthread_mutex_unlock(&runner->lock);
	return NULL;
}

/* Queues a call: the first free call thread runs it. */
static int mcp_run_submit(void *ctx, const cJSON *id, const struct mcp_call *call)
{
	struct mcp_runner *runner = ctx;
	struct mcp_job *job = calloc(1, sizeof(*job)), **tail;

	if (!job)
		return -ENOMEM;
	job->cancel_pipe[0] = job->cancel_pipe[1] = -1;
	job->id = cJSON_Duplicate(id, true);
	job->code = strdup(call->code);
	job->timeout_ms = call->timeout_ms;
	job->origin = call->origin ?: runner->server;
	if (job->origin->sink)
		job->origin->sink->hold(job->origin);
	job->session_end = call->session_end;
	job->no_typecheck = call->no_typecheck;
	if (call->session && !(job->session = strdup(call->session))) {
		mcp_job_free(job);
		return -ENOMEM;
	}
	if (call->progress_token &&
	    !(job->progress_token = cJSON_Duplicate(call->progress_token, true))) {
		mcp_job_free(job);
		return -ENOMEM;
	}
	if (!job->id || !job->code || pipe2(job->cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		mcp_job_free(job);
		return -ENOMEM;
	}
	pthread_mutex_lock(&runner->lock);
	for (tail = &runner->queue; *tail; tail = &(*tail)->next)
		;
	*tail = job;
	pthread_cond_signal(&runner->queued);
	pthread_mutex_unlock(&runner->lock);
	return 0;
}

/*
 * notifications/cancelled: a queued call is dropped; a running one is marked (no reply) and
 * its thread, polling the cancel pipe, kills its sandbox and removes its folder.
 */
static void mcp_run_cancel(void *ctx, const struct mcp_server *server, const cJSON *id)
{
	struct mcp_runner *runner = ctx;

	pthread_mutex_lock(&runner->lock);
	for (struct mcp_job **job = &runner->queue; *job; job = &(*job)->next)
		if ((*job)->origin->scope == server->scope && cJSON_Compare((*job)->id, id, true)) {
			struct mcp_job *dropped = *job;

			*job = dropped->next;
			mcp_job_free(dropped);
			goto out;
		}
	for (struct mcp_job *job = runner->running; job; job = job->next)
		if (job->origin->scope == server->scope && cJSON_Compare(job->id, id, true) &&
		    !job->cancelled) {
			job->cancelled = true;
			if (write(job->cancel_pipe[1], "c", 1) < 0)
				fprintf(stderr, "launch mcp: cannot cancel a call: %m\n");
		}
out:
	pthread_mutex_unlock(&runner->lock);
}

/*
 * After each reply, work the answer need not wait for: the finished call's folder goes (before
 * the next call starts: calls see no other's), and the next call's sandbox is prepared while
 * the model reads this one's result (by mcp_run_wait, once the client has read it).
 */
static void mcp_run_idle(void *ctx)
{
	struct mcp_runner *runner = ctx;

	mcp_run_trace(runner, "replied");
	pthread_mutex_lock(&runner->lock);
	mcp_dying_remove_dirs(runner);
	runner->refill_at = monotonic_now_ms() + MCP_RUN_REFILL_DELAY_MS;
	pthread_mutex_unlock(&runner->lock);
	/* The main poll's timeout is recomputed: the refill is due in its delay. */
	if (write(runner->wake[1], "w", 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "launch mcp: cannot wake the server's loop: %m\n");
}

/*
 * One round of the main loop's background work, under runner->lock: the pool filled when due,
 * ready runners settled, the launches of finished calls reaped. Fills fds (after in_fd and
 * the wake pipe) with the pool's report sockets; returns poll's timeout.
 */
static int mcp_run_wait_prepare(struct mcp_runner *runner, struct pollfd *fds,
				struct mcp_sandbox **of, size_t *n)
{
	size_t dying = mcp_dying_reap(runner, false);
	long long expiry = mcp_sessions_expire(runner);
	int timeout = dying ? 100 : -1;

	/* Looked at again when the next session would expire (to the second: it is idle). */
	if (expiry >= 0 && (timeout < 0 || expiry < timeout))
		timeout = expiry > INT_MAX ? INT_MAX : (int)expiry;

	if (runner->refill_at && monotonic_now_ms() >= runner->refill_at) {
		runner->refill_at = 0;
		/* The client has had the answer for a while: the last call's sandbox goes. */
		mcp_dying_kill(runner);
		mcp_pool_fill(runner);
	}
	if (runner->refill_at) {
		long long left = runner->refill_at - monotonic_now_ms();

		/* Past refill_at already: a negative poll would block. */
		if (left < 0)
			left = 0;
		if (timeout < 0 || left < timeout)
			timeout = (int)left;
	}
	for (size_t i = 0; i < runner->config->pool; i++) {
		struct mcp_sandbox *sandbox = &runner->pool[i];

		if (sandbox->pid <= 0 || sandbox->synced || sandbox->in_fd < 0)
			continue;
		if (sandbox->ready) {
			mcp_sandbox_settle(sandbox, monotonic_now_ms() + MCP_RUN_SYNC_TIMEOUT_MS);
			continue;
		}
		fds[*n] = (struct pollfd){ .fd = sandbox->in_fd, .events = POLLIN };
		of[(*n)++] = sandbox;
	}
	return timeout;
}

/*
 * Before each read of a request: the pool is filled when due, a prepared runner that reports
 * ready has its log synced now rather than in its call, and the launches of finished calls
 * are reaped as they exit (their logs copied). Returns once in_fd is readable. Calls run on
 * their threads meanwhile; one answered writes the wake pipe, for its refill's delay.
 */
static void mcp_run_wait(void *ctx, int in_fd)
{
	struct mcp_runner *runner = ctx;

	for (;;) {
		struct pollfd fds[2 + MCP_RUN_POOL_MAX] = { { .fd = in_fd, .events = POLLIN },
							    { .fd = runner->wake[0],
							      .events = POLLIN } };
		struct mcp_sandbox *of[2 + MCP_RUN_POOL_MAX] = { NULL };
		size_t n = 2;
		int timeout;

		pthread_mutex_lock(&runner->lock);
		timeout = mcp_run_wait_prepare(runner, fds, of, &n);
		pthread_mutex_unlock(&runner->lock);
		/* A launch's exit is not an event here: looked for ten times a second. */
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			return;
		if (fds[1].revents) {
			char drain[64];

			while (read(runner->wake[0], drain, sizeof(drain)) > 0)
				;
		}
		pthread_mutex_lock(&runner->lock);
		if (fds[0].revents) {
			/* Any request, not only a call: the last call's sandbox goes now. */
			mcp_dying_kill(runner);
			pthread_mutex_unlock(&runner->lock);
			return;
		}
		/* A slot whose sandbox a call took meanwhile has another descriptor, or none. */
		for (size_t i = 2; i < n; i++)
			if (fds[i].revents && of[i]->in_fd == fds[i].fd)
				mcp_sandbox_read_report(of[i]);
		pthread_mutex_unlock(&runner->lock);
	}
}

/* The server's folder: node_modules (a link to --modules) and the prepared runner. */
static int mcp_run_state_dir(struct mcp_runner *runner)
{
	char path[128];
	int r;

	snprintf(runner->state_dir, sizeof(runner->state_dir), "/run/launch-mcp.XXXXXX");
	if (!mkdtemp(runner->state_dir))
		return -errno;
	if (chmod(runner->state_dir, 0711) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/node_modules", runner->state_dir);
	if (symlink(runner->config->modules, path) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/runner.mjs", runner->state_dir);
	r = mcp_write_file(path, MCP_RUN_WARM_RUNNER, 0644);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/warmup.mts", runner->state_dir);
	r = mcp_write_file(path, MCP_RUN_WARMUP, 0644);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(MCP_RUN_SDKS); i++) {
		snprintf(path, sizeof(path), "%s/%s/package.json", runner->config->modules,
			 MCP_RUN_SDKS[i]);
		if (access(path, R_OK) == 0)
			snprintf(runner->preload + strlen(runner->preload),
				 sizeof(runner->preload) - strlen(runner->preload), "%s%s",
				 runner->preload[0] ? "," : "", MCP_RUN_SDKS[i]);
	}
	return 0;
}

static int mcp_run_search(void *ctx, const char *query, int limit, cJSON **ret_results)
{
	struct mcp_runner *runner = ctx;

	return docindex_search(runner->docs, query, limit, ret_results);
}

/*
 * search_docs' index, read from --modules in this process (files are parsed, none runs). On
 * failure the server goes on without the tool: run_typescript does not need it.
 */
static void mcp_run_index_docs(struct mcp_runner *runner)
{
	long long started = monotonic_now_ms();
	size_t entries, packages;
	int r;

	r = docindex_build(runner->config->modules, &runner->docs, &entries, &packages);
	if (r < 0) {
		fprintf(stderr, "launch mcp: search_docs: cannot index %s: %s\n",
			runner->config->modules, strerror(-r));
		return;
	}
	fprintf(stderr, "launch mcp: search_docs: %zu entries from %zu packages in %lld ms\n",
		entries, packages, monotonic_now_ms() - started);
}

/* Whether the prepared runners type-check the calls, as the server says at its start. */
static void mcp_run_typecheck_mode(struct mcp_runner *runner)
{
	const struct mcp_run_config *config = runner->config;

	if (config->no_typecheck) {
		fprintf(stderr, "launch mcp: calls are not type-checked (--no-typecheck)\n");
		return;
	}
	if (!mcp_typecheck_available(config->modules)) {
		fprintf(stderr, "launch mcp: typescript is not in --modules: calls are not "
				"type-checked (npm install typescript there to check them)\n");
		return;
	}
	if (config->memory_max && config->memory_max < MCP_TYPECHECK_MEMORY_MIN_BYTES) {
		fprintf(stderr,
			"launch mcp: calls are not type-checked: --memory-max %llu MiB is less "
			"than the %llu MiB the checker needs beside a call\n",
			(unsigned long long)(config->memory_max >> 20),
			MCP_TYPECHECK_MEMORY_MIN_BYTES >> 20);
		return;
	}
	runner->typecheck = true;
	fprintf(stderr, "launch mcp: calls are type-checked before they run, with typescript "
			"from --modules\n");
}

/* The call threads: --max-calls of them, each running one call at a time. */
static int mcp_run_start_workers(struct mcp_runner *runner, pthread_t *workers, size_t *ret_started)
{
	*ret_started = 0;
	for (size_t i = 0; i < runner->config->max_calls; i++) {
		int r = pthread_create(&workers[i], NULL, mcp_run_worker, runner);

		if (r)
			return -r;
		(*ret_started)++;
	}
	return 0;
}

/* End of input: the queued calls run and answer, then the threads end. */
static void mcp_run_stop_workers(struct mcp_runner *runner, pthread_t *workers, size_t started)
{
	pthread_mutex_lock(&runner->lock);
	runner->stopping = true;
	pthread_cond_broadcast(&runner->queued);
	pthread_mutex_unlock(&runner->lock);
	for (size_t i = 0; i < started; i++)
		pthread_join(workers[i], NULL);
}

int mcp_run_serve(const struct mcp_run_config *config, int in_fd, int out_fd, char *errbuf,
		  size_t errlen)
{
	struct mcp_runner runner = { .config = config,
				     .lock = PTHREAD_MUTEX_INITIALIZER,
				     .queued = PTHREAD_COND_INITIALIZER,
				     .audit_lock = PTHREAD_MUTEX_INITIALIZER,
				     .wake = { -1, -1 },
				     .audit_fd = -1,
				     .trace = getenv("LAUNCH_MCP_TRACE") != NULL };
	struct mcp_ops ops = { .submit = mcp_run_submit,
			       .cancel = mcp_run_cancel,
			       .idle = mcp_run_idle,
			       .wait = mcp_run_wait,
			       .ctx = &runner };
	struct mcp_server server = { .ops = &ops,
				     .policy = config->policy,
				     .timeout_s = config->timeout_s,
				     .sessions = config->sessions,
				     .out_fd = out_fd,
				     .out_lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t workers[MCP_RUN_CALLS_MAX];
	size_t started = 0;
	int r;

	runner.server = &server;
	for (size_t i = 0; i < MCP_RUN_POOL_MAX; i++)
		mcp_sandbox_reset(&runner.pool[i]);
	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
		mcp_sandbox_reset(&runner.dying[i]);
	if (pipe2(runner.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "cannot make a pipe: %s", strerror(-r));
		return r;
	}
	if (config->audit_path) {
		runner.audit_fd = mcp_run_open_audit(config->audit_path);
		if (runner.audit_fd < 0) {
			r = runner.audit_fd;
			snprintf(errbuf, errlen, "audit log %s: %s", config->audit_path,
				 strerror(-r));
			goto out;
		}
	}
	r = mcp_run_state_dir(&runner);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot make a folder for the calls (%s): %s",
			 runner.state_dir, strerror(-r));
		goto out;
	}
	mcp_run_typecheck_mode(&runner);
	/* The prepared sandboxes start while the index is read. */
	mcp_pool_fill(&runner);
	mcp_run_index_docs(&runner);
	if (runner.docs)
		ops.search = mcp_run_search;
	r = mcp_run_start_workers(&runner, workers, &started);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the call threads: %s", strerror(-r));
		goto out;
	}
	if (config->http) {
		r = mcp_http_serve(&server, config->http, errbuf, errlen);
	} else {
		r = mcp_serve(&server, in_fd, out_fd);
		if (r < 0)
			snprintf(errbuf, errlen, "MCP on standard input and output: %s",
				 strerror(-r));
	}
out:
	mcp_run_stop_workers(&runner, workers, started);
	pthread_mutex_lock(&runner.lock);
	mcp_sessions_end_all(&runner);
	pthread_mutex_unlock(&runner.lock);
	for (size_t i = 0; i < MCP_RUN_POOL_MAX; i++)
		mcp_sandbox_free(&runner, &runner.pool[i]);
	mcp_dying_reap(&runner, true);
	if (runner.state_dir[0] == '/')
		mcp_remove_tree(runner.state_dir);
	closep(&runner.audit_fd);
	closep(&runner.wake[0]);
	closep(&runner.wake[1]);
	docindex_free(runner.docs);
	return r;
}
