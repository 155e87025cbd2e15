/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The gateway's shared state: the loop's objects, the CA, the upstream side and the relay. */
#ifndef LAUNCH_GATEWAY_INTERNAL_H
#define LAUNCH_GATEWAY_INTERNAL_H

#include <pthread.h>
#include <openssl/ssl.h>

#include "gateway.h"
#include "http.h"

/* Bytes buffered per direction and connection: a full head fits, a stream is never held. */
#define GW_IN_BYTES  (HTTP_MAX_HEAD_BYTES + 16384)
#define GW_OUT_BYTES 65536
#define GW_HOST_MAX  256
/* A resolved name is reused this long; a failure is retried after GW_RESOLVE_NEG_MS. */
#define GW_RESOLVE_TTL_MS 60000
#define GW_RESOLVE_NEG_MS 5000
/* A request in flight without a byte either way for this long is given up. */
#define GATEWAY_INFLIGHT_IDLE_MS (10 * GATEWAY_IDLE_MS)
/*
 * A connection closed by the gateway reads what the job still sends for at most this long
 * without a byte, and this much in all (relay_linger).
 */
#define GATEWAY_LINGER_MS    2000
#define GATEWAY_LINGER_BYTES (4u << 20)
/* Passes over one connection per turn of the loop: at most about 16 TLS records each way. */
#define GW_PUMP_ROUNDS 16
/* One client's share of GATEWAY_MAX_CONNECTIONS: a job that opens many cannot starve the
 * other sandboxes of a shared gateway (launch mcp). */
#define GW_CLIENT_MAX_CONNECTIONS (GATEWAY_MAX_CONNECTIONS / 4)

enum gw_kind { GW_LISTENER, GW_CONN, GW_UPSTREAM, GW_WAKE, GW_RESOLVED };

/* What epoll's data points at: every object starts with one. dead ones wait to be freed. */
struct gw_io {
	enum gw_kind kind;
	int fd;
	bool dead;
	struct gw_io *next_dead;
};

struct gw_buf {
	char *data;
	size_t len;
	size_t cap;
};

struct gw_ca {
	EVP_PKEY *ca_key;
	X509 *ca_cert;
	EVP_PKEY *leaf_key; /* one key for every leaf: minting is then a signature, not a keygen */
	struct gw_leaf *leaves;
	X509 *fallback; /* for a handshake without an allowed SNI: its requests are refused */
};

struct gw_resolved {
	char host[GW_HOST_MAX];
	struct in6_addr *addrs;
	size_t naddrs;
	int error;
	long long expires_ms;
	bool pending;
	struct gw_resolved *next;
};

struct gateway {
	struct gateway_config config;
	SSL_CTX *server_ctx;
	SSL_CTX *upstream_ctx;
	struct gw_ca ca;
	int epfd;
	struct gw_io wake;     /* eventfd: stop */
	struct gw_io resolved; /* pipe from the resolver thread */
	int resolved_wfd;
	pthread_t thread;
	bool started;
	volatile bool stop;
	/* Held by the loop while it handles events, and by client add/remove. */
	pthread_mutex_t lock;
	struct gateway_client *clients;
	struct gw_conn *conns;
	size_t nconns;
	struct gw_upstream *idle; /* the keep-alive pool, every host */
	struct gw_conn *again;	  /* connections whose turn ended with more to move */
	struct gw_io *dead;
	/* The resolver thread and its queue, under resolve_lock. */
	pthread_t resolver;
	bool resolver_started;
	/* The resolver thread's alone: the system store is loaded (upstream_load_system_store). */
	bool system_store_loaded;
	pthread_mutex_t resolve_lock;
	pthread_cond_t resolve_cond;
	struct gw_resolved *queue;
	struct gw_resolved *cache; /* the loop's only */
	long long last_sweep_ms;
};

struct gw_listener {
	struct gw_io io;
	struct gateway_client *client;
};

struct gateway_client {
	struct gateway *gw;
	struct gateway_client_config config;
	struct gw_listener listen4, listen6;
	uint16_t port4, port6;
	size_t nconns;
	struct gateway_client *next;
};

enum gw_req_state {
	GW_REQ_HANDSHAKE,
	GW_REQ_HEAD,	/* waiting for a request's head */
	GW_REQ_BODY,	/* forwarding its body upstream */
	GW_REQ_DISCARD, /* reading a refused request's body to nothing */
	GW_REQ_DONE,	/* waiting for the response to end */
	GW_REQ_TUNNEL,	/* a WebSocket: bytes both ways */
	GW_REQ_CLOSING, /* flushing what is queued, then closing */
	GW_REQ_LINGER,	/* shut for writing: what the job still sends read to nothing */
};

enum gw_resp_state { GW_RESP_NONE, GW_RESP_HEAD, GW_RESP_BODY };

enum gw_up_state { GW_UP_RESOLVING, GW_UP_CONNECTING, GW_UP_HANDSHAKE, GW_UP_READY };

struct gw_upstream {
	struct gw_io io;
	struct gateway *gw;
	SSL *ssl;
	enum gw_up_state state;
	char host[GW_HOST_MAX];
	uint16_t port;
	struct in6_addr *addrs; /* being tried, in order */
	size_t naddrs, next_addr;
	struct gw_conn *conn; /* NULL while pooled */
	struct gw_buf in, out;
	long long since_ms; /* connect start, or pooled since */
	const char *failed; /* the refusal's reason once connect or handshake failed */
	bool eof;
	bool reused; /* taken from the pool */
	struct gw_upstream *next_idle;
};

/* A job connection and the request it is on. */
struct gw_conn {
	struct gw_io io;
	struct gateway *gw;
	struct gateway_client *client;
	SSL *ssl;
	struct gw_conn *prev, *next;
	struct gw_conn *next_again;
	bool queued;	/* on gw->again */
	bool in_flight; /* an allowed request not yet logged */
	uint16_t peer_port;
	bool peer_v6;
	char sni[GW_HOST_MAX]; /* "" without one */
	enum gw_req_state req;
	enum gw_resp_state resp;
	struct gw_buf in, out;
	bool eof; /* the job closed its side */
	long long active_ms;
	size_t linger_bytes; /* read to nothing since GW_REQ_LINGER */
	struct gw_upstream *up;
	/* The request in flight. */
	const struct policy_http *http;
	uint16_t port; /* upstream's */
	enum http_framing req_framing;
	uint64_t req_left;
	struct http_chunked req_chunked;
	bool keep_alive, upgrade;
	char method[32];
	char host[GW_HOST_MAX];
	char path[HTTP_MAX_PATH_BYTES + 512];
	const char *secret;
	long long start_us;
	uint64_t bytes_out, bytes_in;
	unsigned int status;
	enum http_framing resp_framing;
	uint64_t resp_left;
	struct http_chunked resp_chunked;
	bool resp_close;
	/* The head sent on a pooled connection, kept to send once more on a new one should that
	 * connection turn out closed before any answer (a bodiless request only). */
	char *retry_head;
	size_t retry_len;
};

/* buf.c */
int gw_buf_init(struct gw_buf *buf, size_t cap);
void gw_buf_free(struct gw_buf *buf);
void gw_buf_consume(struct gw_buf *buf, size_t n);
bool gw_buf_append(struct gw_buf *buf, const void *data, size_t n);

/* ca.c */
int gw_ca_init(struct gw_ca *ca, char *errbuf, size_t errlen);
void gw_ca_free(struct gw_ca *ca);
/* The leaf for host, minted the first time and cached; NULL on failure. */
X509 *gw_ca_leaf(struct gw_ca *ca, const char *host);
/* The servername callback: a leaf for an allowed name, minted once and cached. */
int gw_ca_servername(SSL *ssl, int *alert, void *arg);
int gw_ca_pem(const struct gw_ca *ca, char **ret_pem, size_t *ret_len);

/* judge.c: the decision on one request's head, and the head sent upstream. */
struct gw_verdict {
	const char *reason; /* NULL: allowed */
	const char *message;
	unsigned int status;
	const struct policy_http *http;
	uint16_t port;
	const char *secret;
};
void gw_judge(const struct gateway_client_config *client, const char *sni,
	      const struct http_request *req, struct gw_verdict *ret);
/* Writes the upstream's head (the placeholder replaced) into out. 0, or -ENOBUFS. */
int gw_judge_rewrite(const struct gateway_client_config *client, const char *host,
		     const struct http_request *req, struct gw_buf *out);
/* Whether name is an allowed gateway host of the client (lower case, no port). */
const struct policy_entry *gw_judge_host(const struct gateway_client_config *client,
					 const char *name);
/* The gateway's own response: status, the JSON body naming the reason. */
void gw_judge_refusal(struct gw_buf *out, unsigned int status, const char *reason,
		      const char *message, bool close);

/* upstream.c */
int gw_upstream_init(struct gateway *gw, char *errbuf, size_t errlen);
int gw_upstream_start(struct gateway *gw);
void gw_upstream_fini(struct gateway *gw);
/* A pooled connection to host (unless fresh), or a new one; NULL on -ENOMEM. */
struct gw_upstream *gw_upstream_get(struct gateway *gw, const char *host, uint16_t port,
				    bool fresh);
/* Progress on connect and handshake: 0 ready or in progress, else the refusal's reason. */
const char *gw_upstream_advance(struct gw_upstream *up);
/* Back to the pool when reusable, else closed. */
void gw_upstream_release(struct gw_upstream *up, bool reusable);
void gw_upstream_on_idle_event(struct gw_upstream *up);
void gw_upstream_on_resolved(struct gateway *gw);
void gw_upstream_sweep(struct gateway *gw, long long now_ms);
void gw_upstream_destroy(struct gw_upstream *up);

/* relay.c */
void gw_relay_accept(struct gateway_client *client, int fd, bool v6, uint16_t peer_port);
void gw_relay_pump(struct gw_conn *conn);
/* Gives the connections whose turn ended with more to move another one. */
void gw_relay_again(struct gateway *gw);
void gw_relay_close(struct gw_conn *conn);
void gw_relay_sweep(struct gateway *gw, long long now_ms);
void gw_relay_destroy(struct gw_conn *conn);

/* gateway.c */
void gw_io_kill(struct gateway *gw, struct gw_io *io);
int gw_epoll_add(struct gateway *gw, struct gw_io *io);

#endif /* LAUNCH_GATEWAY_INTERNAL_H */
