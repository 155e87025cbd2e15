/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Model Context Protocol over stdio (JSON-RPC 2.0): lifecycle, tools/list, tools/call. */
#ifndef LAUNCH_MCP_H
#define LAUNCH_MCP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "audit/refusal.h"
#include "lib/hashtable.h"

#define MCP_TOOL_NAME	     "run_typescript"
#define MCP_SEARCH_TOOL_NAME "search_docs"
/* search_docs' "limit": when not given, and the most it may be (larger ones are this). */
#define MCP_SEARCH_LIMIT_DEFAULT 5
#define MCP_SEARCH_LIMIT_MAX	 20
/* The newest revision spoken: an initialize asking for one not spoken gets this one. */
#define MCP_PROTOCOL_LATEST "2026-07-28"
/* Largest message read; a longer line is answered with -32600 and skipped. */
#define MCP_MESSAGE_MAX_BYTES (4 * 1024 * 1024)

/* JSON-RPC 2.0 error codes. */
#define MCP_PARSE_ERROR	     -32700
#define MCP_INVALID_REQUEST  -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS   -32602
#define MCP_INTERNAL_ERROR   -32603
/* MCP's own (2026-07-28): a request's _meta names a revision the server does not speak. */
#define MCP_UNSUPPORTED_PROTOCOL -32022
/* Where a 2026-07-28 request names its revision, in params._meta. */
#define MCP_META_PROTOCOL "io.modelcontextprotocol/protocolVersion"
/* A session's handle: 128 bits from getrandom, in hex. */
#define MCP_SESSION_HANDLE_BYTES 16
#define MCP_SESSION_HANDLE_LEN	 (2 * MCP_SESSION_HANDLE_BYTES)

/* What one run_typescript call did. */
struct mcp_result {
	char *out; /* the job's standard output, at most the cap (NUL-terminated) */
	size_t out_len;
	bool out_truncated;
	char *err;
	size_t err_len;
	bool err_truncated;
	int exit_status; /* as launch exits: the job's code, 128+N, 124, 125 (launch failed) */
	int signal;	 /* the signal that killed the job, or 0 */
	bool timed_out;	 /* stopped after the call's timeout */
	long long duration_ms;
	/*
	 * From the call's audit log, in the order of their first lines: one per (op,
	 * destination), its count the refusals of all its lines (mcp_result_add_refusal).
	 */
	struct refusal *refused;
	size_t nrefused;
	struct hashtable refused_index; /* (op, destination): its entry in refused */
	bool refused_incomplete; /* launch did not confirm its log: refusals may be missing */
	/* A session's call (--sessions): its handle, and the seconds it is kept (0: ended). */
	char session[MCP_SESSION_HANDLE_LEN + 1];
	long long session_expires_s;
	/* Type errors the prepared runner found (the code did not run), or NULL. */
	struct cJSON *type_errors;
	/* The call was refused before it ran (a session unknown or busy): the tool's error. */
	char *tool_error;
};

void mcp_result_free(struct mcp_result *result);

/*
 * Adds a refusal to the result's list, or its count to the entry of the same op and
 * destination (the A and AAAA look-ups of one name, a connect made again): the model reads
 * each refused thing once. The entry keeps the first host name known for it. 0 or -ENOMEM.
 */
int mcp_result_add_refusal(struct mcp_result *result, const struct refusal *refusal);

struct cJSON;

/* A run_typescript call's arguments, as tools/call gives them. */
struct mcp_call {
	const char *code;
	/* params._meta.progressToken (a string or a number), or NULL: no progress is sent. */
	const struct cJSON *progress_token;
	long long timeout_ms;	   /* the call's own "timeout_ms", or 0: the server's --timeout */
	struct mcp_server *origin; /* whose request it is: its reply and progress go there */
	const char *session;	   /* "new", a session's handle, or NULL: a sandbox of its own */
	bool session_end;	   /* the session ends after this call */
	bool no_typecheck;	   /* "typecheck": false: run without checking the types first */
};

struct mcp_server;

/*
 * Where a server's answers go when not to out_fd's lines (mcp_http.c: one HTTP exchange's
 * response). A background call holds its origin until it ends: the exchange outlives it.
 */
struct mcp_sink {
	/* One message: a response (last: nothing more comes for its request) or a notification. */
	int (*write)(struct mcp_server *server, const char *text, bool last);
	void (*hold)(struct mcp_server *server);
	void (*release)(struct mcp_server *server);
};

/* How a tools/call is run: mcp_run.c in launch, a stand-in in the unit tests. */
struct mcp_ops {
	/* Runs code; returns 0 and fills ret_result, or a negative errno (an internal error). */
	int (*run)(void *ctx, const char *code, struct mcp_result *ret_result);
	/*
	 * Starts a run_typescript call in the background instead of run (may be NULL): its
	 * reply goes out later through mcp_server_send, built by mcp_call_reply. Returns 0, or
	 * a negative errno (answered as an internal error now).
	 */
	int (*submit)(void *ctx, const struct cJSON *id, const struct mcp_call *call);
	/*
	 * notifications/cancelled for request id (may be NULL): a submitted call of the same
	 * scope (mcp_server.scope: one client's) is dropped.
	 */
	void (*cancel)(void *ctx, const struct mcp_server *server, const struct cJSON *id);
	/*
	 * search_docs (NULL: the tool is not offered): the best limit entries for query, a JSON
	 * array of {name, signature, description, source}, empty when none matches. Returns 0 and
	 * *ret_results, or a negative errno.
	 */
	int (*search)(void *ctx, const char *query, int limit, struct cJSON **ret_results);
	/* Called after each reply is written (may be NULL): work the answer need not wait for. */
	void (*idle)(void *ctx);
	/*
	 * Called before each read of input (may be NULL): background work until in_fd is
	 * readable, or until there is none left.
	 */
	void (*wait)(void *ctx, int in_fd);
	void *ctx;
};

struct mcp_server {
	const struct mcp_ops *ops;
	const char *policy;	     /* the policies' names, for the tool's description */
	double timeout_s;	     /* each call's, for the description */
	bool initialize_seen;	     /* an initialize request was answered */
	bool initialized;	     /* notifications/initialized came */
	char protocol[16];	     /* the version agreed on */
	int out_fd;		     /* where replies go, set by mcp_serve */
	const struct mcp_sink *sink; /* NULL: replies are lines on out_fd */
	/* Whose requests these are (0: stdio's one client): request ids are unique per scope. */
	unsigned long long scope;
	/* The newest revision initialize agrees to (NULL: MCP_PROTOCOL_LATEST). */
	const char *initialize_latest;
	bool sessions; /* --sessions: a call may ask for a session */
	/* One reply at a time on out_fd: background calls answer from their own threads. */
	pthread_mutex_t out_lock;
};

/*
 * Handles one message (a line, without its newline). *ret_reply is the JSON text to send back
 * (malloc'ed), or NULL when there is nothing to send (a notification, a response). Returns 0,
 * or -ENOMEM.
 */
int mcp_handle(struct mcp_server *server, const char *message, size_t len, char **ret_reply);

/*
 * The reply to a run_typescript call: its result (taken and freed), or an internal error when
 * run_r is a negative errno. Returns 0, or -ENOMEM.
 */
int mcp_call_reply(const struct cJSON *id, int run_r, struct mcp_result *result, char **ret_reply);

/*
 * Writes one reply line to the server's output, whole among other threads' replies (or hands
 * it to the sink), then runs ops->idle. Returns 0, or a negative errno.
 */
int mcp_server_send(struct mcp_server *server, const char *reply);

/*
 * The notifications/progress for a call's progressToken: progress is its count (it only
 * grows), message says what the call does. Returns 0 and the JSON text, or -ENOMEM.
 */
int mcp_progress_notification(const struct cJSON *token, long long progress, const char *message,
			      char **ret_text);

/*
 * Writes one notification line, under the same lock as the replies, or to the sink (not
 * followed by ops->idle: no call ended). Returns 0, or a negative errno.
 */
int mcp_server_notify(struct mcp_server *server, const char *text);

/*
 * Serves newline-delimited messages from in_fd until end of file, one reply line each on
 * out_fd. Returns 0 at end of input, a negative errno when reading or writing failed.
 */
int mcp_serve(struct mcp_server *server, int in_fd, int out_fd);

/* launch mcp --sessions, the protocol's side (mcp_session_tool.c). */

/* Adds the session fields to run_typescript's description, inputSchema and outputSchema. */
void mcp_session_describe_tool(struct cJSON *tool);

/*
 * Reads run_typescript's "session" and "session_end" into call. Returns 0, or 1 when the call
 * is refused, with the tool error for the model in refusal (sessions off, a wrong type).
 */
int mcp_session_args(const struct mcp_server *server, const struct cJSON *arguments,
		     struct mcp_call *call, char *refusal, size_t len);

/* Adds a session's call's "session" and "session_expires_s" to its structuredContent. */
void mcp_session_result_json(const struct mcp_result *result, struct cJSON *json);

/* Whether two handles are the same, in a time that does not tell how much of them matched. */
bool mcp_session_handle_equal(const char *a, const char *b);

#endif /* LAUNCH_MCP_H */
