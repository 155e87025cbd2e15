// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch mcp --http: MCP's Streamable HTTP transport on libmicrohttpd. Each POST is one
 * exchange, a struct mcp_server of its own whose sink is that POST's response: JSON for what
 * is answered at once, an SSE stream for a run_typescript call (its progress, then its
 * result). 2025-11-25 clients get a session at initialize (Mcp-Session-Id, DELETE ends it);
 * 2026-07-28 requests carry their revision and need none.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "mcp.h"
#include "mcp_http.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* The revision a session speaks at most: 2026-07-28 has no sessions (no initialize). */
#define MCP_HTTP_SESSION_PROTOCOL "2025-11-25"
/* 2026-07-28's error for headers that do not mirror the body. */
#define MCP_HEADER_MISMATCH -32020
/* No session for an initialize now (JSON-RPC's implementation-defined server error range). */
#define MCP_SERVER_BUSY -32000

/*
 * libmicrohttpd, opened by mcp_http_load only when --http is given: linked into launch, it
 * would bring GnuTLS into every sandbox's launcher, whose destructor reads the environment
 * that launch has replaced for the job (a crash at every exit), and cost each start its
 * relocations. Set once, before any thread, then only read.
 */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

int mcp_http_load(char *errbuf, size_t errlen)
{
	void *lib = dlopen(MCP_HTTP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	struct {
		void **slot;
		const char *name;
	} symbols[] = {
		{ (void **)&mhd.start_daemon, "MHD_start_daemon" },
		{ (void **)&mhd.stop_daemon, "MHD_stop_daemon" },
		{ (void **)&mhd.get_daemon_info, "MHD_get_daemon_info" },
		{ (void **)&mhd.get_connection_info, "MHD_get_connection_info" },
		{ (void **)&mhd.lookup_connection_value, "MHD_lookup_connection_value" },
		{ (void **)&mhd.create_response_from_buffer, "MHD_create_response_from_buffer" },
		{ (void **)&mhd.create_response_from_callback,
		  "MHD_create_response_from_callback" },
		{ (void **)&mhd.add_response_header, "MHD_add_response_header" },
		{ (void **)&mhd.queue_response, "MHD_queue_response" },
		{ (void **)&mhd.destroy_response, "MHD_destroy_response" },
	};

	if (!lib) {
		snprintf(errbuf, errlen,
			 "cannot load %s (Debian: apt-get install libmicrohttpd12): %s",
			 MCP_HTTP_LIBRARY, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < ARRAY_SIZE(symbols); i++) {
		*symbols[i].slot = dlsym(lib, symbols[i].name);
		if (!*symbols[i].slot) {
			snprintf(errbuf, errlen, "%s has no %s: %s", MCP_HTTP_LIBRARY,
				 symbols[i].name, dlerror());
			return -ENOENT;
		}
	}
	/* Kept open: the server uses it until the process ends. */
	return 0;
}

/* Written by SIGINT and SIGTERM's handler: the serving loop ends. */
static int mcp_http_stop_fd = -1;

struct mcp_http {
	struct mcp_server *base;
	const struct mcp_http_config *config;
	pthread_mutex_t lock; /* sessions, next_scope */
	struct mcp_http_sessions sessions;
	unsigned long long next_scope;
	/* One mcp_handle at a time: search_docs' prepared statement is shared. Each is short. */
	pthread_mutex_t handle_lock;
};

/* One message queued for an exchange's SSE stream, framed as an event. */
struct mcp_http_message {
	struct mcp_http_message *next;
	size_t len, sent;
	char text[];
};

/* One POST: its request, and its response until both the connection and its call are done. */
struct mcp_http_exchange {
	struct mcp_server server; /* first: the sink's callbacks get &server */
	struct mcp_http *http;
	struct mcp_http_session *session; /* the one it serves a request of (a reference) */
	pthread_mutex_t lock;		  /* refs, messages, last, gone */
	int refs;			  /* the connection's, and a background call's */
	struct mcp_http_message *head, **tail;
	bool last; /* the response is queued: the stream ends after it */
	bool gone; /* the connection is done: nothing more is queued */
	bool stateless;
	bool headers_checked;
	int wake[2];   /* written when a message is queued */
	int socket_fd; /* the connection's, watched for the client closing it */
	cJSON *id;     /* a submitted call's request id: cancelled when a stateless one closes */
	char *body;
	size_t body_len;
	bool body_too_big;
	unsigned char peer[MCP_HTTP_PEER_BYTES]; /* the client's address, as sessions count it */
};

static struct mcp_http_exchange *mcp_http_of(struct mcp_server *server)
{
	return (struct mcp_http_exchange *)(void *)server;
}

static void mcp_http_exchange_unref(struct mcp_http_exchange *ex)
{
	bool last;

	pthread_mutex_lock(&ex->lock);
	last = --ex->refs == 0;
	pthread_mutex_unlock(&ex->lock);
	if (!last)
		return;
	while (ex->head) {
		struct mcp_http_message *m = ex->head;

		ex->head = m->next;
		free(m);
	}
	closep(&ex->wake[0]);
	closep(&ex->wake[1]);
	/*
	 * Idle from now, not from the request: a long call's session is not the first to go.
	 * Not ex->http's lock: this may run after mcp_http_serve has returned.
	 */
	if (ex->session)
		mcp_http_session_touch(ex->session, monotonic_now_us());
	mcp_http_session_unref(ex->session);
	cJSON_Delete(ex->id);
	free(ex->body);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}

static int mcp_http_sink_write(struct mcp_server *server, const char *text, bool last)
{
	struct mcp_http_exchange *ex = mcp_http_of(server);
	size_t len = strlen(text);
	struct mcp_http_message *m = malloc(sizeof(*m) + len + 32);

	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->sent = 0;
	m->len = (size_t)sprintf(m->text, "event: message\ndata: %s\n\n", text);
	pthread_mutex_lock(&ex->lock);
	/* A client gone (a 2025-11-25 one may come back for its session): the answer is dropped. */
	if (ex->gone || ex->last) {
		pthread_mutex_unlock(&ex->lock);
		free(m);
		return 0;
	}
	*ex->tail = m;
	ex->tail = &m->next;
	ex->last = last;
	pthread_mutex_unlock(&ex->lock);
	if (write(ex->wake[1], "m", 1) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static void mcp_http_sink_hold(struct mcp_server *server)
{
	struct mcp_http_exchange *ex = mcp_http_of(server);

	pthread_mutex_lock(&ex->lock);
	ex->refs++;
	pthread_mutex_unlock(&ex->lock);
}

/*
 * The call ended: nothing more comes for its request. One cancelled sent no answer; its
 * stream ends now rather than holding its connection's thread until the client closes it.
 */
static void mcp_http_sink_release(struct mcp_server *server)
{
	struct mcp_http_exchange *ex = mcp_http_of(server);

	pthread_mutex_lock(&ex->lock);
	ex->last = true;
	pthread_mutex_unlock(&ex->lock);
	if (write(ex->wake[1], "e", 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "launch mcp: cannot wake an HTTP stream: %m\n");
	mcp_http_exchange_unref(ex);
}

static const struct mcp_sink MCP_HTTP_SINK = { .write = mcp_http_sink_write,
					       .hold = mcp_http_sink_hold,
					       .release = mcp_http_sink_release };

static struct mcp_http_exchange *mcp_http_exchange_new(struct mcp_http *http)
{
	struct mcp_http_exchange *ex = calloc(1, sizeof(*ex));

	if (!ex)
		return NULL;
	if (pipe2(ex->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(ex);
		return NULL;
	}
	ex->server = *http->base;
	ex->server.sink = &MCP_HTTP_SINK;
	ex->server.out_fd = -1;
	ex->server.initialize_seen = ex->server.initialized = false;
	ex->server.protocol[0] = '\0';
	/* Only sessions initialize, and 2026-07-28 has none: theirs is 2025-11-25 at most. */
	ex->server.initialize_latest = MCP_HTTP_SESSION_PROTOCOL;
	ex->http = http;
	ex->refs = 1;
	ex->tail = &ex->head;
	ex->socket_fd = -1;
	pthread_mutex_init(&ex->lock, NULL);
	pthread_mutex_lock(&http->lock);
	ex->server.scope = ++http->next_scope;
	pthread_mutex_unlock(&http->lock);
	return ex;
}

/* A response with a body of JSON (taken), or none; adds what every response says. */
static enum MHD_Result mcp_http_respond(struct MHD_Connection *conn, unsigned int status,
					char *json, const char *session_id)
{
	struct MHD_Response *response = mhd.create_response_from_buffer(
		json ? strlen(json) : 0, json ?: (char *)"",
		json ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result r;

	if (!response) {
		free(json);
		return MHD_NO;
	}
	if (json)
		mhd.add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (status == MHD_HTTP_UNAUTHORIZED)
		mhd.add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"launch mcp\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(response, MHD_HTTP_HEADER_ALLOW, "POST, DELETE");
	if (session_id)
		mhd.add_response_header(response, "Mcp-Session-Id", session_id);
	r = mhd.queue_response(conn, status, response);
	mhd.destroy_response(response);
	return r;
}

/* A JSON-RPC error as an HTTP response's body (id NULL: null, as for a refused request). */
static enum MHD_Result mcp_http_fail(struct MHD_Connection *conn, unsigned int status,
				     const cJSON *id, int code, const char *message)
{
	_cleanup_(cJSON_Deletep) cJSON *reply = cJSON_CreateObject();
	cJSON *error;

	if (!reply)
		return MHD_NO;
	cJSON_AddStringToObject(reply, "jsonrpc", "2.0");
	cJSON_AddItemToObject(reply, "id", id ? cJSON_Duplicate(id, true) : cJSON_CreateNull());
	error = cJSON_AddObjectToObject(reply, "error");
	cJSON_AddNumberToObject(error, "code", code);
	cJSON_AddStringToObject(error, "message", message);
	return mcp_http_respond(conn, status, cJSON_PrintUnformatted(reply), NULL);
}

static const char *mcp_http_header(struct MHD_Connection *conn, const char *name)
{
	return mhd.lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/*
 * What every request must pass before its body is read: the endpoint's path, a method served,
 * an Origin of this host's (DNS rebinding: a page elsewhere that resolves to us), the token.
 * Returns MHD_YES with nothing queued when it passes; *ret_refused when a response went out.
 */
static enum MHD_Result mcp_http_gate(struct mcp_http *http, struct MHD_Connection *conn,
				     const char *url, const char *method, bool *ret_refused)
{
	const char *origin = mcp_http_header(conn, MHD_HTTP_HEADER_ORIGIN);

	*ret_refused = true;
	if (origin && !mcp_http_origin_allowed(origin))
		return mcp_http_fail(conn, MHD_HTTP_FORBIDDEN, NULL, MCP_INVALID_REQUEST,
				     "Forbidden: Origin is not a page of this host");
	if (!mcp_http_bearer_ok(mcp_http_header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
				http->config->token))
		return mcp_http_fail(conn, MHD_HTTP_UNAUTHORIZED, NULL, MCP_INVALID_REQUEST,
				     "Unauthorized: send Authorization: Bearer <the token of "
				     "--token-file>");
	if (strcmp(url, MCP_HTTP_PATH) != 0)
		return mcp_http_fail(conn, MHD_HTTP_NOT_FOUND, NULL, MCP_INVALID_REQUEST,
				     "Not Found: the MCP endpoint is " MCP_HTTP_PATH);
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_DELETE) != 0)
		/* No GET stream: the server sends nothing that is not an answer to a request. */
		return mcp_http_fail(conn, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, MCP_INVALID_REQUEST,
				     "Method Not Allowed: POST a JSON-RPC message (DELETE ends a "
				     "session)");
	*ret_refused = false;
	return MHD_YES;
}

/* A new session for an initialized exchange from peer; see mcp_http_sessions_insert. */
static int mcp_http_session_add(struct mcp_http *http, const struct mcp_server *server,
				const unsigned char *peer, char *ret_id, size_t id_len)
{
	unsigned char bytes[MCP_HTTP_SESSION_ID_BYTES];
	struct mcp_http_session *session = calloc(1, sizeof(*session));
	int r;

	if (!session)
		return -ENOMEM;
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		free(session);
		return -EIO;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		sprintf(session->id + 2 * i, "%02x", bytes[i]);
	snprintf(session->protocol, sizeof(session->protocol), "%s", server->protocol);
	session->scope = server->scope;
	session->used_us = monotonic_now_us();
	memcpy(session->peer, peer, MCP_HTTP_PEER_BYTES);
	/* Copied before it is in the table: another initialize may evict it once unlocked. */
	snprintf(ret_id, id_len, "%s", session->id);
	pthread_mutex_lock(&http->lock);
	r = mcp_http_sessions_insert(&http->sessions, session);
	pthread_mutex_unlock(&http->lock);
	if (r < 0) {
		free(session);
		ret_id[0] = '\0';
	}
	return r;
}

/* DELETE with Mcp-Session-Id: the session ends (its running calls still answer on their streams).
 */
static enum MHD_Result mcp_http_delete(struct mcp_http *http, struct MHD_Connection *conn)
{
	const char *id = mcp_http_header(conn, "Mcp-Session-Id");
	struct mcp_http_session **link;
	bool found = false;

	if (!id)
		return mcp_http_fail(conn, MHD_HTTP_BAD_REQUEST, NULL, MCP_INVALID_REQUEST,
				     "Bad Request: DELETE needs Mcp-Session-Id");
	pthread_mutex_lock(&http->lock);
	link = mcp_http_sessions_find(&http->sessions, id);
	if (link) {
		mcp_http_sessions_unlink(&http->sessions, link);
		found = true;
	}
	pthread_mutex_unlock(&http->lock);
	if (!found)
		return mcp_http_fail(conn, MHD_HTTP_NOT_FOUND, NULL, MCP_INVALID_REQUEST,
				     "Not Found: no such session (ended, or never begun)");
	return mcp_http_respond(conn, MHD_HTTP_OK, NULL, NULL);
}

/*
 * A request in a 2025-11-25 session: the exchange takes its revision and scope (its calls'
 * ids, which notifications/cancelled names, are the session's). False when refused (queued).
 */
static bool mcp_http_join_session(struct mcp_http *http, struct MHD_Connection *conn,
				  struct mcp_http_exchange *ex, const char *session_id,
				  const cJSON *id, enum MHD_Result *ret)
{
	const char *version = mcp_http_header(conn, "MCP-Protocol-Version");
	struct mcp_http_session **link, *session = NULL;
	bool mismatch = false;

	pthread_mutex_lock(&http->lock);
	link = mcp_http_sessions_find(&http->sessions, session_id);
	if (link) {
		session = *link;
		/* Held until the exchange is done, its call included: eviction passes it by. */
		mcp_http_session_hold(session);
		ex->session = session;
		mcp_http_session_touch(session, monotonic_now_us());
		ex->server.scope = session->scope;
		snprintf(ex->server.protocol, sizeof(ex->server.protocol), "%s", session->protocol);
		mismatch = version && strcmp(version, session->protocol) != 0;
	}
	pthread_mutex_unlock(&http->lock);
	if (!session) {
		/* 404: the client starts a new session with initialize, as the revision says. */
		*ret = mcp_http_fail(conn, MHD_HTTP_NOT_FOUND, id, MCP_INVALID_REQUEST,
				     "Not Found: no such session (ended, or never begun): "
				     "initialize again");
		return false;
	}
	if (mismatch) {
		*ret = mcp_http_fail(conn, MHD_HTTP_BAD_REQUEST, id, MCP_INVALID_REQUEST,
				     "Bad Request: MCP-Protocol-Version is not the session's");
		return false;
	}
	ex->server.initialize_seen = ex->server.initialized = true;
	return true;
}

/*
 * 2026-07-28: the headers must mirror the body (MCP-Protocol-Version its _meta's revision,
 * Mcp-Method its method, Mcp-Name a tools/call's tool), or an intermediary that routes on
 * them and this server would disagree. NULL when they do; else what is wrong.
 */
static const char *mcp_http_mirror_error(struct MHD_Connection *conn, const cJSON *msg)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_PROTOCOL);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const char *header = mcp_http_header(conn, "MCP-Protocol-Version");
	char decoded[256];

	if (!header)
		return "Header mismatch: the MCP-Protocol-Version header is missing (a request "
		       "outside a session names its revision)";
	if (!cJSON_IsString(version) || strcmp(version->valuestring, header) != 0)
		return "Header mismatch: MCP-Protocol-Version does not match params._meta's "
		       "io.modelcontextprotocol/protocolVersion";
	/* Notifications have no header requirements in 2026-07-28. */
	if (!cJSON_GetObjectItemCaseSensitive(msg, "id"))
		return NULL;
	header = mcp_http_header(conn, "Mcp-Method");
	if (!header || !cJSON_IsString(method) || strcmp(header, method->valuestring) != 0)
		return "Header mismatch: Mcp-Method is missing or does not match the method";
	if (strcmp(method->valuestring, "tools/call") != 0)
		return NULL;
	header = mcp_http_header(conn, "Mcp-Name");
	if (!header || mcp_http_header_value(header, decoded, sizeof(decoded)) < 0 ||
	    !cJSON_IsString(name) || strcmp(decoded, name->valuestring) != 0)
		return "Header mismatch: Mcp-Name is missing or does not match params.name";
	return NULL;
}

/*
 * The HTTP status of an answer: a message that is no request is 400, as are 2026-07-28's
 * revision and header errors; there an unknown method is 404. Tool errors are answers (200).
 */
static unsigned int mcp_http_status(const char *reply, bool stateless)
{
	_cleanup_(cJSON_Deletep) cJSON *msg = cJSON_Parse(reply);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(msg, "error"), "code");

	if (!cJSON_IsNumber(code))
		return MHD_HTTP_OK;
	switch (code->valueint) {
	case MCP_PARSE_ERROR:
	case MCP_INVALID_REQUEST:
	case MCP_UNSUPPORTED_PROTOCOL:
	case MCP_HEADER_MISMATCH:
		return MHD_HTTP_BAD_REQUEST;
	case MCP_METHOD_NOT_FOUND:
		return stateless ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK;
	default:
		return MHD_HTTP_OK;
	}
}

/*
 * A submitted call's SSE stream: its messages as the sink queues them, a comment when there
 * has been none for a while, and its end after the response. The client closing its side ends
 * it at once (for a 2026-07-28 request, that is its cancellation).
 */
static ssize_t mcp_http_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct mcp_http_exchange *ex = cls;
	bool watch_socket = ex->socket_fd >= 0;

	(void)pos;
	for (;;) {
		struct pollfd fds[2] = { { .fd = ex->wake[0], .events = POLLIN },
					 { .fd = ex->socket_fd, .events = POLLRDHUP } };
		char drain[64];
		int n;

		pthread_mutex_lock(&ex->lock);
		if (ex->head) {
			struct mcp_http_message *m = ex->head;
			size_t len = m->len - m->sent < max ? m->len - m->sent : max;

			memcpy(buf, m->text + m->sent, len);
			m->sent += len;
			if (m->sent == m->len) {
				ex->head = m->next;
				if (!ex->head)
					ex->tail = &ex->head;
				free(m);
			}
			pthread_mutex_unlock(&ex->lock);
			return (ssize_t)len;
		}
		if (ex->last) {
			pthread_mutex_unlock(&ex->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		pthread_mutex_unlock(&ex->lock);
		n = poll(fds, watch_socket ? 2 : 1, MCP_HTTP_KEEPALIVE_MS);
		if (n < 0 && errno != EINTR)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (watch_socket && (fds[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		/* Data from the client (a request sent ahead on the connection): not an end. */
		if (watch_socket && fds[1].revents)
			watch_socket = false;
		if (fds[0].revents)
			while (read(ex->wake[0], drain, sizeof(drain)) > 0)
				;
		if (n == 0 && max >= 3) {
			memcpy(buf, ":\n\n", 3);
			return 3;
		}
	}
}

static enum MHD_Result mcp_http_stream(struct MHD_Connection *conn, struct mcp_http_exchange *ex)
{
	const union MHD_ConnectionInfo *info =
		mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct MHD_Response *response;
	enum MHD_Result r;

	ex->socket_fd = info ? info->connect_fd : -1;
	response = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, mcp_http_read, ex,
						     NULL);
	if (!response)
		return MHD_NO;
	mhd.add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	mhd.add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	/* Proxies pass each event on as it comes (the specification's advice). */
	mhd.add_response_header(response, "X-Accel-Buffering", "no");
	r = mhd.queue_response(conn, MHD_HTTP_OK, response);
	mhd.destroy_response(response);
	return r;
}

/* An initialize that got no session (mcp_http_session_add's r): the client may try later. */
static enum MHD_Result mcp_http_session_refused(struct MHD_Connection *conn, const cJSON *id, int r)
{
	char message[160];

	if (r == -EUSERS) {
		snprintf(message, sizeof(message),
			 "Too Many Requests: this address holds %d sessions (end one with DELETE)",
			 MCP_HTTP_SESSIONS_PER_PEER_MAX);
		return mcp_http_fail(conn, MHD_HTTP_TOO_MANY_REQUESTS, id, MCP_SERVER_BUSY,
				     message);
	}
	if (r == -EBUSY) {
		snprintf(message, sizeof(message),
			 "Service Unavailable: all %d sessions are serving a request or a call: "
			 "initialize again later",
			 MCP_HTTP_SESSIONS_MAX);
		return mcp_http_fail(conn, MHD_HTTP_SERVICE_UNAVAILABLE, id, MCP_SERVER_BUSY,
				     message);
	}
	return mcp_http_fail(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, id, MCP_INTERNAL_ERROR,
			     "Internal error: cannot make a session");
}

/* A POST's whole body: one JSON-RPC message, routed to its session or served stateless. */
static enum MHD_Result mcp_http_post(struct mcp_http *http, struct MHD_Connection *conn,
				     struct mcp_http_exchange *ex)
{
	const char *session = mcp_http_header(conn, "Mcp-Session-Id"), *mismatch;
	const char *revision = mcp_http_header(conn, "MCP-Protocol-Version");
	_cleanup_(cJSON_Deletep) cJSON *msg = NULL;
	_cleanup_free_ char *reply = NULL;
	char session_id[2 * MCP_HTTP_SESSION_ID_BYTES + 1] = "";
	const cJSON *id, *method;
	enum MHD_Result refused;
	bool initialize;
	int r;

	if (ex->body_too_big)
		return mcp_http_fail(conn, MHD_HTTP_CONTENT_TOO_LARGE, NULL, MCP_INVALID_REQUEST,
				     "Invalid Request: message longer than 4 MiB");
	msg = cJSON_ParseWithLength(ex->body ?: "", ex->body_len);
	if (!cJSON_IsObject(msg))
		return mcp_http_fail(conn, MHD_HTTP_BAD_REQUEST, NULL, MCP_PARSE_ERROR,
				     "Parse error: the body is not one JSON-RPC message");
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	initialize = cJSON_IsString(method) && strcmp(method->valuestring, "initialize") == 0;
	/* 2026-07-28 has no sessions: a session id beside it is ignored, as it says. */
	if (revision && strcmp(revision, MCP_PROTOCOL_LATEST) == 0)
		session = NULL;
	if (session) {
		if (!mcp_http_join_session(http, conn, ex, session, id, &refused))
			return refused;
	} else if (!initialize) {
		mismatch = mcp_http_mirror_error(conn, msg);
		if (mismatch)
			return mcp_http_fail(conn, MHD_HTTP_BAD_REQUEST, id, MCP_HEADER_MISMATCH,
					     mismatch);
		ex->stateless = true;
	}
	pthread_mutex_lock(&http->handle_lock);
	r = mcp_handle(&ex->server, ex->body, ex->body_len, &reply);
	pthread_mutex_unlock(&http->handle_lock);
	if (r < 0)
		return mcp_http_fail(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, id, MCP_INTERNAL_ERROR,
				     "Internal error: out of memory");
	if (initialize && !session && ex->server.initialize_seen) {
		r = mcp_http_session_add(http, &ex->server, ex->peer, session_id,
					 sizeof(session_id));
		if (r < 0)
			return mcp_http_session_refused(conn, id, r);
	}
	if (reply) {
		unsigned int status = mcp_http_status(reply, ex->stateless);

		return mcp_http_respond(conn, status, TAKE_PTR(reply),
					session_id[0] ? session_id : NULL);
	}
	if (!cJSON_IsString(id) && !cJSON_IsNumber(id))
		return mcp_http_respond(conn, MHD_HTTP_ACCEPTED, NULL, NULL);
	/* A call runs in the background: its progress and result come on this stream. */
	ex->id = cJSON_Duplicate(id, true);
	return mcp_http_stream(conn, ex);
}

/* A request's refusal went out: the rest of it is not read (nor served). */
static char mcp_http_refused;

static enum MHD_Result mcp_http_access(void *cls, struct MHD_Connection *conn, const char *url,
				       const char *method, const char *version,
				       const char *upload_data, size_t *upload_data_size,
				       void **con_cls)
{
	struct mcp_http *http = cls;
	struct mcp_http_exchange *ex = *con_cls;
	const union MHD_ConnectionInfo *info;
	enum MHD_Result r;
	bool refused;

	(void)version;
	if (*con_cls == &mcp_http_refused) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!ex) {
		r = mcp_http_gate(http, conn, url, method, &refused);
		if (refused || strcmp(method, MHD_HTTP_METHOD_DELETE) == 0) {
			*con_cls = &mcp_http_refused;
			return refused ? r : mcp_http_delete(http, conn);
		}
		ex = mcp_http_exchange_new(http);
		if (!ex)
			return MHD_NO;
		info = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		mcp_http_peer_key(info ? info->client_addr : NULL, ex->peer);
		*con_cls = ex;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;
		char *grown;

		*upload_data_size = 0;
		if (ex->body_too_big || ex->body_len + n > MCP_MESSAGE_MAX_BYTES) {
			ex->body_too_big = true;
			return MHD_YES;
		}
		grown = realloc(ex->body, ex->body_len + n + 1);
		if (!grown)
			return MHD_NO;
		ex->body = grown;
		memcpy(ex->body + ex->body_len, upload_data, n);
		ex->body_len += n;
		ex->body[ex->body_len] = '\0';
		return MHD_YES;
	}
	return mcp_http_post(http, conn, ex);
}

/*
 * The request is done, answered or not. The exchange is gone for the sink; a 2026-07-28 call
 * whose stream the client closed before its result is cancelled, as that revision says (a
 * 2025-11-25 one runs on: there a disconnection is not a cancellation).
 */
static void mcp_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			       enum MHD_RequestTerminationCode toe)
{
	struct mcp_http_exchange *ex = *con_cls;
	bool cancel;

	(void)cls;
	(void)conn;
	*con_cls = NULL;
	if (!ex || (void *)ex == (void *)&mcp_http_refused)
		return;
	pthread_mutex_lock(&ex->lock);
	ex->gone = true;
	cancel = ex->stateless && ex->id && !ex->last && toe != MHD_REQUEST_TERMINATED_COMPLETED_OK;
	pthread_mutex_unlock(&ex->lock);
	if (cancel && ex->server.ops->cancel)
		ex->server.ops->cancel(ex->server.ops->ctx, &ex->server, ex->id);
	mcp_http_exchange_unref(ex);
}

static void mcp_http_on_signal(int sig)
{
	(void)sig;
	if (write(mcp_http_stop_fd, "s", 1) < 0)
		return;
}

/* Where the server listens, as a URL's host and port for the start line. */
static void mcp_http_describe(const struct mcp_http_config *config, unsigned int port, char *buf,
			      size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (config->addr.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&config->addr)->sin6_addr, host,
			  sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&config->addr)->sin_addr, host,
			  sizeof(host));
		snprintf(buf, len, "%s:%u", host, port);
	}
}

static struct MHD_Daemon *mcp_http_start(struct mcp_http *http)
{
	unsigned int flags =
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	if (http->config->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* A thread per connection: a client's call that blocks its stream blocks no other. */
	return mhd.start_daemon(flags, 0, NULL, NULL, mcp_http_access, http, MHD_OPTION_SOCK_ADDR,
				(const struct sockaddr *)&http->config->addr,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MCP_HTTP_CONNECTIONS_MAX,
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)MCP_HTTP_IDLE_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
				mcp_http_completed, http, MHD_OPTION_END);
}

int mcp_http_serve(struct mcp_server *base, const struct mcp_http_config *config, char *errbuf,
		   size_t errlen)
{
	struct mcp_http http = { .base = base,
				 .config = config,
				 .lock = PTHREAD_MUTEX_INITIALIZER,
				 .handle_lock = PTHREAD_MUTEX_INITIALIZER };
	struct sigaction stop_action = { .sa_handler = mcp_http_on_signal }, old_int, old_term;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *daemon;
	int stop[2], r = 0;
	char where[INET6_ADDRSTRLEN + 16];

	if (pipe2(stop, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "cannot make a pipe: %s", strerror(-r));
		return r;
	}
	mcp_http_stop_fd = stop[1];
	sigemptyset(&stop_action.sa_mask);
	sigaction(SIGINT, &stop_action, &old_int);
	sigaction(SIGTERM, &stop_action, &old_term);
	errno = 0;
	daemon = mcp_http_start(&http);
	if (!daemon) {
		r = errno ? -errno : -EADDRNOTAVAIL;
		mcp_http_describe(config,
				  ntohs(((const struct sockaddr_in *)&config->addr)->sin_port),
				  where, sizeof(where));
		snprintf(errbuf, errlen, "--http: cannot listen on %s: %s", where, strerror(-r));
		goto out;
	}
	info = mhd.get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
	mcp_http_describe(config, info ? info->port : 0, where, sizeof(where));
	fprintf(stderr, "launch mcp: serving MCP over HTTP at http://%s" MCP_HTTP_PATH "\n", where);
	/* This thread does the runner's background work (the pool, reaping) until a signal. */
	for (;;) {
		struct pollfd stopped = { .fd = stop[0], .events = POLLIN };

		if (base->ops->wait)
			base->ops->wait(base->ops->ctx, stop[0]);
		else
			poll(&stopped, 1, -1);
		if (poll(&stopped, 1, 0) > 0)
			break;
	}
	fprintf(stderr, "launch mcp: stopping\n");
	mhd.stop_daemon(daemon);
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	mcp_http_stop_fd = -1;
	close(stop[0]);
	close(stop[1]);
	/* A call still running keeps its session until it ends. */
	mcp_http_sessions_clear(&http.sessions);
	return r;
}
