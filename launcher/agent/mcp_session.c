// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp --sessions: prepared sandboxes kept between a session's calls, and their ends. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "mcp_run_internal.h"
#include "mcp_session.h"
#include "mcp_typecheck.h"
#include "lib/util.h"

/* Why a session ended, as a later call with its handle is told. */
static const char MCP_SESSION_WHY_ASKED[] = "was ended by a call with \"session_end\": true";
static const char MCP_SESSION_WHY_IDLE[] = "has expired: no call came within its session_expires_s";
static const char MCP_SESSION_WHY_KILLED[] =
	"ended with a call of it that timed out or was cancelled (its sandbox was killed)";
static const char MCP_SESSION_WHY_EXITED[] =
	"ended: its process exited (process.exit, or an error no handler caught in a callback "
	"the runtime could not survive)";
static const char MCP_SESSION_WHY_STOPPED[] = "ended: the server's sandbox for it failed";

/* 128 bits of the kernel's randomness: a handle no other client can guess. */
static int mcp_session_new_handle(char *handle)
{
	unsigned char bytes[MCP_SESSION_HANDLE_BYTES];
	size_t got = 0;

	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(handle + 2 * i, 3, "%02x", bytes[i]);
	return 0;
}

static int mcp_session_refuse(struct mcp_result *result, const char *fmt, const char *handle,
			      const char *why)
{
	char text[512];

	snprintf(text, sizeof(text), fmt, handle, why);
	result->tool_error = strdup(text);
	return result->tool_error ? 1 : -ENOMEM;
}

/* Unlinks an open session and keeps its handle with why it ended. */
static void mcp_session_forget(struct mcp_runner *runner, struct mcp_session *session,
			       const char *why)
{
	struct mcp_sessions *sessions = &runner->sessions;
	struct mcp_session_ended *slot = &sessions->ended[sessions->ended_next];

	for (struct mcp_session **s = &sessions->open; *s; s = &(*s)->next)
		if (*s == session) {
			*s = session->next;
			sessions->nopen--;
			break;
		}
	memcpy(slot->handle, session->handle, sizeof(slot->handle));
	slot->why = why;
	sessions->ended_next = (sessions->ended_next + 1) % MCP_SESSIONS_ENDED_KEPT;
}

/* Ends a session between its calls: its sandbox is killed and removed, the session freed. */
static void mcp_session_end(struct mcp_runner *runner, struct mcp_session *session, const char *why)
{
	mcp_session_forget(runner, session, why);
	if (session->sandbox.pid > 0)
		mcp_dying_add(runner, &session->sandbox);
	else
		mcp_sandbox_free(runner, &session->sandbox);
	free(session);
}

/*
 * A session's runner says nothing between calls: anything on its socket (its "exit", its
 * end) means it is gone.
 */
static bool mcp_session_alive(const struct mcp_session *session)
{
	struct pollfd pfd = { .fd = session->sandbox.in_fd, .events = POLLIN };

	if (session->sandbox.in_fd < 0 || session->sandbox.report_len)
		return false;
	return poll(&pfd, 1, 0) == 0;
}

/* "new": a prepared sandbox, its runner told it is a session's at its go. */
static int mcp_session_open(struct mcp_runner *runner, struct mcp_result *result,
			    struct mcp_session **ret_session)
{
	_cleanup_free_ struct mcp_session *session = NULL;
	int r;

	if (runner->sessions.nopen >= MCP_SESSIONS_MAX)
		return mcp_session_refuse(result,
					  "too many sessions open (%s): end one (\"session_end\": "
					  "true) or call without \"session\"%s",
					  STRINGIFY(MCP_SESSIONS_MAX), "");
	session = calloc(1, sizeof(*session));
	if (!session)
		return -ENOMEM;
	r = mcp_session_new_handle(session->handle);
	if (r < 0)
		return r;
	r = mcp_sandbox_take(runner, NULL, false, &session->sandbox);
	if (r < 0)
		return r;
	session->sandbox.session = true;
	session->next = runner->sessions.open;
	runner->sessions.open = session;
	runner->sessions.nopen++;
	*ret_session = TAKE_PTR(session);
	return 0;
}

/* An open session by its handle, or why there is none. */
static int mcp_session_find(struct mcp_runner *runner, const char *handle,
			    struct mcp_result *result, struct mcp_session **ret_session)
{
	for (struct mcp_session *s = runner->sessions.open; s; s = s->next) {
		if (!mcp_session_handle_equal(s->handle, handle))
			continue;
		if (s->busy)
			return mcp_session_refuse(result,
						  "session %s is busy: a call of it is still "
						  "running, and a session's calls run one at a "
						  "time; call again once it has answered%s",
						  s->handle, "");
		if (!mcp_session_alive(s)) {
			mcp_session_end(runner, s, MCP_SESSION_WHY_EXITED);
			return mcp_session_refuse(result,
						  "session %s %s; start another with "
						  "\"session\": \"new\"",
						  handle, MCP_SESSION_WHY_EXITED);
		}
		*ret_session = s;
		return 0;
	}
	for (size_t i = 0; i < MCP_SESSIONS_ENDED_KEPT; i++)
		if (runner->sessions.ended[i].why &&
		    mcp_session_handle_equal(runner->sessions.ended[i].handle, handle))
			return mcp_session_refuse(result,
						  "session %s %s; start another with "
						  "\"session\": \"new\"",
						  runner->sessions.ended[i].handle,
						  runner->sessions.ended[i].why);
	return mcp_session_refuse(result,
				  "unknown session \"%.40s\"%s: no session of this server has that "
				  "handle (it may have expired long ago, or the server restarted); "
				  "start one with \"session\": \"new\"",
				  handle, strlen(handle) > 40 ? "..." : "");
}

int mcp_session_acquire(struct mcp_runner *runner, const struct mcp_job *job,
			struct mcp_sandbox *ret_sandbox, struct mcp_session **ret_session,
			struct mcp_result *result)
{
	struct mcp_session *session = NULL;
	char file[sizeof(ret_sandbox->dir) + sizeof(MCP_TYPECHECK_FILE) + 16];
	int r;

	if (strcmp(job->session, "new") == 0)
		r = mcp_session_open(runner, result, &session);
	else
		r = mcp_session_find(runner, job->session, result, &session);
	if (r != 0)
		return r;
	/*
	 * The last call's type errors go (the runner writes this call's, if any, afresh), and
	 * the code is main.mts again: whatever the last call left under that name goes.
	 */
	snprintf(file, sizeof(file), "%s" MCP_TYPECHECK_FILE, session->sandbox.dir);
	unlink(file);
	snprintf(file, sizeof(file), "%s/main.mts", session->sandbox.dir);
	unlink(file);
	r = mcp_write_file(file, job->code, 0644);
	if (r < 0) {
		mcp_session_end(runner, session, MCP_SESSION_WHY_STOPPED);
		return r;
	}
	session->busy = true;
	session->calls++;
	*ret_sandbox = session->sandbox;
	mcp_sandbox_reset(&session->sandbox);
	/* This call's output and end, not the last one's. */
	free(ret_sandbox->out.text);
	free(ret_sandbox->err.text);
	ret_sandbox->out.text = ret_sandbox->err.text = NULL;
	ret_sandbox->out.len = ret_sandbox->err.len = 0;
	ret_sandbox->out.truncated = ret_sandbox->err.truncated = false;
	ret_sandbox->done = ret_sandbox->type_errors = false;
	ret_sandbox->done_status = 0;
	*ret_session = session;
	return 0;
}

void mcp_session_go(struct mcp_session *session, struct mcp_sandbox *sandbox,
		    const struct mcp_job *job, long long deadline)
{
	/* The runner checks the code unless told "runnocheck" (a call's "typecheck": false). */
	char command[64];
	size_t len = (size_t)snprintf(command, sizeof(command), "%srun%s main.mts\n",
				      session->calls == 1 ? "session\n" : "",
				      job->no_typecheck ? "nocheck" : "");

	/* The first call's start was marked when its runner was ready (mcp_sandbox_settle). */
	if (session->calls > 1)
		mcp_sandbox_mark_start(sandbox, mcp_sandbox_sync(sandbox, deadline) == 0);
	/* A few bytes on an empty socket; a runner that is gone ends the call with its output. */
	if (sandbox->in_fd >= 0 && write(sandbox->in_fd, command, len) != (ssize_t)len)
		mcp_fd_close(&sandbox->in_fd);
}

void mcp_session_release(struct mcp_runner *runner, struct mcp_session *session,
			 struct mcp_sandbox *sandbox, const struct mcp_job *job,
			 struct mcp_result *result)
{
	bool alive = sandbox->pid > 0 && sandbox->done && !sandbox->ended && sandbox->in_fd >= 0;
	const char *why =
		!alive ? (sandbox->ended ? MCP_SESSION_WHY_EXITED : MCP_SESSION_WHY_KILLED)
		: job->session_end ? MCP_SESSION_WHY_ASKED
				   : NULL;

	memcpy(result->session, session->handle, sizeof(result->session));
	session->busy = false;
	session->used_at = monotonic_now_ms();
	if (why) {
		/* The caller removes the sandbox, as any call's. */
		result->session_expires_s = 0;
		mcp_session_forget(runner, session, why);
		free(session);
		return;
	}
	result->session_expires_s = runner->config->session_idle_s;
	session->sandbox = *sandbox;
	mcp_sandbox_reset(sandbox);
}

long long mcp_sessions_expire(struct mcp_runner *runner)
{
	long long idle_ms = (long long)runner->config->session_idle_s * 1000, next = -1;
	long long now = monotonic_now_ms();

	for (struct mcp_session *s = runner->sessions.open, *after; s; s = after) {
		long long left = s->used_at + idle_ms - now;

		after = s->next;
		if (s->busy)
			continue;
		if (left <= 0) {
			mcp_session_end(runner, s, MCP_SESSION_WHY_IDLE);
			continue;
		}
		if (next < 0 || left < next)
			next = left;
	}
	return next;
}

void mcp_sessions_end_all(struct mcp_runner *runner)
{
	while (runner->sessions.open)
		mcp_session_end(runner, runner->sessions.open, MCP_SESSION_WHY_STOPPED);
}
