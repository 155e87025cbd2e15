/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch mcp's sandboxes, shared by the server's side (mcp_run.c) and one sandbox's own
 * (mcp_sandbox.c); nothing else includes it.
 */
#ifndef LAUNCH_MCP_RUN_INTERNAL_H
#define LAUNCH_MCP_RUN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mcp.h"
#include "mcp_run.h"

/*
 * After a prepared runner reports its code's end, launch is asked (--audit-sync-fd) to write
 * every refusal made until then; a launch that has not answered in this time (its log
 * stalled) leaves the result with what the log holds.
 */
#define MCP_RUN_SYNC_TIMEOUT_MS 2000
/* Sandboxes killed after their call whose launch has not been reaped yet. */
#define MCP_RUN_DYING_MAX (2 * MCP_RUN_POOL_MAX + MCP_RUN_CALLS_MAX)

/* One output stream of the job, kept up to the cap. */
struct mcp_stream {
	int fd;
	char *text;
	size_t len;
	bool truncated;
};

/* One sandbox: a child launch, prepared (warm) or started with its code (cold). */
struct mcp_sandbox {
	pid_t pid; /* the child launch; 0: none */
	unsigned int n;
	bool warm;
	bool ready;	  /* the runner reported that it waits for its code */
	bool synced;	  /* ready, and launch's log synced: the call's lines start at audit_from */
	bool done;	  /* the runner reported its code's end: launch is not reaped yet */
	bool frozen;	  /* answered: its cgroup frozen, its kill left for after the answer */
	bool session;	  /* a session's: its socket outlives each "done", its runner each call */
	bool ended;	  /* a session's runner reported its process's exit */
	bool type_errors; /* the runner found type errors ("types"): the code did not run */
	int done_status;
	int in_fd;   /* warm: the runner's standard input, a socket: shut for "go", then its end */
	int sync_fd; /* warm: launch's --audit-sync-fd */
	/* Readable once the call is cancelled: the sandbox is killed (not owned: not closed). */
	int cancel_fd;
	unsigned char sync_seq; /* the byte of the last sync asked: launch echoes each one */
	/*
	 * CLOCK_REALTIME less CLOCK_BOOTTIME when its launch was started, as launch fixes it when
	 * it opens its log: a kernel refusal's ts is its boot time plus that offset.
	 */
	int64_t clock_offset_ns;
	off_t audit_from; /* where the call's own lines start in its audit log */
	/*
	 * When launch did not confirm its log at ready: the call's own refusals are those from
	 * this time on (audit_format_time); "" when audit_from is exact.
	 */
	char audit_since[32];
	char report[32]; /* what the runner wrote back, up to its next newline */
	size_t report_len;
	struct mcp_stream out, err;
	char dir[96], audit[96], name[64];
	struct mcp_gwcall *gwcall; /* its client of the server's gateway; NULL: none */
};

struct cJSON;
struct mcp_server;
struct mcp_gwcall;

/* A session (--sessions): a prepared sandbox kept between its calls. */
struct mcp_session {
	struct mcp_session *next;
	char handle[MCP_SESSION_HANDLE_LEN + 1];
	/* Its sandbox between calls; during a call it is the call thread's, this one empty. */
	struct mcp_sandbox sandbox;
	long long used_at; /* monotonic ms: its last call's end */
	unsigned int calls;
	bool busy; /* a call of it runs */
};

/* A session that ended, kept so that a call with its handle is told why rather than "unknown". */
struct mcp_session_ended {
	char handle[MCP_SESSION_HANDLE_LEN + 1];
	const char *why;
};

#define MCP_SESSIONS_ENDED_KEPT 64

struct mcp_sessions {
	struct mcp_session *open;
	size_t nopen;
	struct mcp_session_ended ended[MCP_SESSIONS_ENDED_KEPT];
	size_t ended_next; /* the slot the next ended session takes, in turn */
};

/* A run_typescript call, queued or running. */
struct mcp_job {
	struct mcp_job *next;
	struct cJSON *id; /* the request's, for its reply and notifications/cancelled */
	char *code;
	struct cJSON *progress_token; /* params._meta.progressToken; NULL: no progress is sent */
	long long timeout_ms;	      /* the call's own timeout; 0: the server's */
	char *session;		      /* "new", a session's handle, or NULL */
	bool session_end;	      /* the session ends after this call */
	bool no_typecheck;	      /* "typecheck": false */
	int cancel_pipe[2]; /* a byte written on cancel: its call's sandbox polls the other end */
	bool cancelled;	    /* no reply is sent */
	struct mcp_server *origin; /* where its reply and progress go (held while it lives) */
};

/*
 * The server's side. lock guards pool, dying, calls, refill_at, queue, running and stopping:
 * the main thread (requests, the pool's preparation) and the call threads share them; a
 * call's own sandbox, once taken from the pool, is its thread's alone.
 */
struct mcp_runner {
	const struct mcp_run_config *config;
	pthread_mutex_t lock;
	pthread_cond_t queued;	    /* a job was queued, or stopping was set */
	pthread_mutex_t audit_lock; /* one call's lines at a time into audit_fd */
	struct mcp_job *queue;	    /* waiting, in arrival order */
	struct mcp_job *running;
	bool stopping; /* end of input: the threads end once the queue is empty */
	int wake[2];   /* written when refill_at changes: the main poll wakes */
	struct mcp_server *server;
	char state_dir[64]; /* 0711: the job may pass through to its folder, not list */
	unsigned int calls;
	int audit_fd;	   /* the server's audit log, where each call's lines go; -1: none */
	char preload[256]; /* the SDKs a prepared sandbox imports ahead */
	struct mcp_sandbox pool[MCP_RUN_POOL_MAX];
	struct mcp_sandbox dying[MCP_RUN_DYING_MAX];
	long long refill_at;   /* monotonic ms: when the pool is filled again; 0: it is */
	bool trace;	       /* LAUNCH_MCP_TRACE: the times of each call's steps on stderr */
	struct docindex *docs; /* search_docs' index of --modules; NULL: not offered */
	struct mcp_sessions sessions;
	bool typecheck; /* typescript is in --modules: prepared runners check each call first */
};

/*
 * A sandbox whose call has ended goes: killed now (or after the answer when frozen), its launch
 * reaped later. Under runner->lock.
 */
void mcp_dying_add(struct mcp_runner *runner, struct mcp_sandbox *sandbox);

/*
 * The sandbox of a call with a "session" (mcp_session.c), under runner->lock: the session's
 * own, or a prepared one for "new", its code written. Returns 0 and *ret_session, 1 when the
 * call is refused (result->tool_error says why: unknown, expired, busy), or a negative errno.
 */
int mcp_session_acquire(struct mcp_runner *runner, const struct mcp_job *job,
			struct mcp_sandbox *ret_sandbox, struct mcp_session **ret_session,
			struct mcp_result *result);

/*
 * A session's call's go, instead of the end of its input: its log synced and its start
 * marked (from its second call on), then "run" written to its runner ("runnocheck" for a call
 * with "typecheck": false).
 */
void mcp_session_go(struct mcp_session *session, struct mcp_sandbox *sandbox,
		    const struct mcp_job *job, long long deadline);

/*
 * After a session's call, under runner->lock: the sandbox goes back to the session, or the
 * session ends (asked to, its runner gone, its call killed) and the sandbox is left to the
 * caller to remove. Fills the result's session fields.
 */
void mcp_session_release(struct mcp_runner *runner, struct mcp_session *session,
			 struct mcp_sandbox *sandbox, const struct mcp_job *job,
			 struct mcp_result *result);

/*
 * Ends the sessions idle for --session-idle, under runner->lock. Returns the ms until the next
 * one would expire, or -1 when none is open.
 */
long long mcp_sessions_expire(struct mcp_runner *runner);

/* Ends every session: the server stops. Under runner->lock. */
void mcp_sessions_end_all(struct mcp_runner *runner);

/* Closes and forgets: the sandbox's descriptors are closed from several places. */
void mcp_fd_close(int *fd);

/* An empty sandbox slot: no launch, no descriptors. */
void mcp_sandbox_reset(struct mcp_sandbox *sandbox);

/* Removes a call's folder, whatever a job running as root may have left in it. */
void mcp_remove_tree(const char *path);

int mcp_write_file(const char *path, const char *text, mode_t mode);

/* Writes "1" to the sandbox's cgroup.kill: everything of the job dies, launch tears down. */
void mcp_sandbox_kill(const struct mcp_runner *runner, const struct mcp_sandbox *sandbox);

/*
 * Stops a finished call's processes at once and cheaply (cgroup.freeze), so that its kill
 * can wait until the answer is out: the exit of a killed Node (its memory freed) and
 * launch's teardown take CPU that, on a small machine, the client reading the answer would
 * wait for. True when frozen; else the sandbox was killed now.
 */
bool mcp_sandbox_freeze(const struct mcp_runner *runner, const struct mcp_sandbox *sandbox);

/*
 * Reads what a prepared runner writes back on its standard input: "ready\n" once it waits for
 * its code, "done CODE\n" once its code has ended. Anything else (the code may write there
 * too) ends the reading.
 */
void mcp_sandbox_read_report(struct mcp_sandbox *sandbox);

/*
 * Reads the job's output until it ends, a prepared runner reports its code's end, or the
 * deadline passes (then the job is killed); reaps launch unless the runner reported.
 */
int mcp_sandbox_collect(const struct mcp_runner *runner, struct mcp_sandbox *sandbox,
			long long deadline, bool *ret_killed, int *ret_wait_status);

/*
 * Asks the sandbox's launch to write every refusal made until now to the call's audit log,
 * and waits until it has (or has exited, its log whole), at most MCP_RUN_SYNC_TIMEOUT_MS and
 * at most until deadline. Returns 0, or -ETIMEDOUT.
 */
int mcp_sandbox_sync(struct mcp_sandbox *sandbox, long long deadline);

/* Removes what a sandbox left: its launch (killed if it still runs), folder, log, streams. */
void mcp_sandbox_free(const struct mcp_runner *runner, struct mcp_sandbox *sandbox);

/*
 * Starts a sandbox: warm, a prepared runner waiting for its code; cold, with the code in its
 * folder already.
 */
int mcp_sandbox_start(struct mcp_runner *runner, const char *code, struct mcp_sandbox *sandbox);

/*
 * The prepared sandbox for the next call: a ready one, else the oldest (the nearest to ready);
 * when none is left, one started now with the code written (check: the call is to be
 * type-checked), or a cold one with the code.
 */
int mcp_sandbox_take(struct mcp_runner *runner, const char *code, bool check,
		     struct mcp_sandbox *ret_sandbox);

/*
 * A ready runner's log synced (waiting at most until deadline) and its call's start marked.
 * Until its go the runner only waits, so this is done as soon as it is ready, between calls.
 */
void mcp_sandbox_settle(struct mcp_sandbox *sandbox, long long deadline);

/*
 * Where the call's own refusals start in the sandbox's log; synced: launch confirmed its log,
 * else they are told apart by their time.
 */
void mcp_sandbox_mark_start(struct mcp_sandbox *sandbox, bool synced);

/* Waits until a prepared runner is ready (one taken before it was), at most until deadline. */
void mcp_sandbox_wait_ready(struct mcp_sandbox *sandbox, long long deadline);

#endif /* LAUNCH_MCP_RUN_INTERNAL_H */
