// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gateway's side towards the provider: names resolved by a thread of their own (resolve_host
 * blocks), verified TLS connections to those addresses, and a keep-alive pool per host.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "gateway_internal.h"
#include "lib/util.h"

/*
 * The system store, loaded on the resolver thread before its first answer rather than in
 * gateway_new: parsing the store's file (some 140 certificates) is most of a gateway's start-up
 * cost (about 8 ms of a 2-vCPU machine's launch -- /bin/true), and a job that never reaches a
 * gateway host should not pay it. Safe without a lock: every upstream connection waits for a
 * resolver answer (upstream_resolve, a cached answer included came from this thread), and the
 * answer's write to the pipe orders the store's loading before any handshake that uses it.
 * A store that cannot load fails closed: the handshakes then fail their check (upstream_tls).
 */
static void upstream_load_system_store(struct gateway *gw)
{
	if (gw->system_store_loaded)
		return;
	gw->system_store_loaded = true;
	if (SSL_CTX_set_default_verify_paths(gw->upstream_ctx) != 1)
		ERR_clear_error();
}

static void *upstream_resolver_main(void *arg)
{
	struct gateway *gw = arg;

	for (;;) {
		struct gw_resolved *job;

		pthread_mutex_lock(&gw->resolve_lock);
		while (!gw->queue && !gw->stop)
			pthread_cond_wait(&gw->resolve_cond, &gw->resolve_lock);
		job = gw->queue;
		if (job)
			gw->queue = job->next;
		pthread_mutex_unlock(&gw->resolve_lock);
		if (!job)
			return NULL;
		upstream_load_system_store(gw);
		job->error =
			resolve_host(job->host, gw->config.resolver, &job->addrs, &job->naddrs);
		/* A pointer is 8 bytes: a pipe writes it whole (PIPE_BUF). */
		if (write(gw->resolved_wfd, &job, sizeof(job)) != sizeof(job)) {
			free(job->addrs);
			free(job);
		}
	}
}

int gw_upstream_init(struct gateway *gw, char *errbuf, size_t errlen)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	int pipefd[2], r;
	size_t i;

	gw->upstream_ctx = SSL_CTX_new(TLS_client_method());
	if (!gw->upstream_ctx)
		goto ssl_fail;
	SSL_CTX_set_min_proto_version(gw->upstream_ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(gw->upstream_ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(gw->upstream_ctx,
			 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/* The system store comes later, off the launch's path (upstream_load_system_store). */
	if (SSL_CTX_set_alpn_protos(gw->upstream_ctx, alpn, sizeof(alpn) - 1))
		goto ssl_fail;
	for (i = 0; i < gw->config.nupstream_ca_files; i++) {
		const char *file = gw->config.upstream_ca_files[i];

		if (SSL_CTX_load_verify_locations(gw->upstream_ctx, file, NULL) != 1) {
			snprintf(errbuf, errlen, "--upstream-ca %s: not a readable PEM certificate",
				 file);
			return -EINVAL;
		}
	}
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "gateway: pipe: %s", strerror(-r));
		return r;
	}
	gw->resolved.kind = GW_RESOLVED;
	gw->resolved.fd = pipefd[0];
	gw->resolved_wfd = pipefd[1];
	/* The resolver's end blocks: the loop reads fast, and a result must never be lost. */
	fcntl(pipefd[1], F_SETFL, 0);
	pthread_mutex_init(&gw->resolve_lock, NULL);
	pthread_cond_init(&gw->resolve_cond, NULL);
	return 0;
ssl_fail:
	snprintf(errbuf, errlen, "gateway: upstream TLS: %s",
		 ERR_reason_error_string(ERR_get_error()) ?: "OpenSSL failed");
	return -ENOMEM;
}

int gw_upstream_start(struct gateway *gw)
{
	int r = thread_start_masked(&gw->resolver, upstream_resolver_main, gw, 0);

	gw->resolver_started = r == 0;
	return r;
}

static void upstream_free_list(struct gw_resolved *list)
{
	while (list) {
		struct gw_resolved *next = list->next;

		free(list->addrs);
		free(list);
		list = next;
	}
}

void gw_upstream_fini(struct gateway *gw)
{
	struct gw_resolved *job;

	if (gw->resolver_started) {
		pthread_mutex_lock(&gw->resolve_lock);
		gw->stop = true;
		pthread_cond_broadcast(&gw->resolve_cond);
		pthread_mutex_unlock(&gw->resolve_lock);
		pthread_join(gw->resolver, NULL);
		gw->resolver_started = false;
	}
	if (gw->resolved.fd > 0) {
		while (read(gw->resolved.fd, &job, sizeof(job)) == sizeof(job)) {
			free(job->addrs);
			free(job);
		}
		close(gw->resolved.fd);
		close(gw->resolved_wfd);
		gw->resolved.fd = -1;
	}
	upstream_free_list(gw->queue);
	upstream_free_list(gw->cache);
	gw->queue = gw->cache = NULL;
	while (gw->idle) {
		struct gw_upstream *up = gw->idle;

		gw->idle = up->next_idle;
		gw_upstream_destroy(up);
	}
	SSL_CTX_free(gw->upstream_ctx);
}

static struct gw_resolved *upstream_cached(struct gateway *gw, const char *host)
{
	struct gw_resolved *c;

	for (c = gw->cache; c; c = c->next)
		if (!strcmp(c->host, host))
			return c;
	return NULL;
}

/* Asks the resolver thread for host unless it is fresh in the cache or on its way. */
static void upstream_resolve(struct gateway *gw, const char *host)
{
	struct gw_resolved *c = upstream_cached(gw, host), *job;

	if (c && (c->pending || c->expires_ms > monotonic_now_ms()))
		return;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		snprintf(c->host, sizeof(c->host), "%s", host);
		c->next = gw->cache;
		gw->cache = c;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		c->error = -ENOMEM;
		return;
	}
	snprintf(job->host, sizeof(job->host), "%s", host);
	c->pending = true;
	pthread_mutex_lock(&gw->resolve_lock);
	job->next = gw->queue;
	gw->queue = job;
	pthread_cond_signal(&gw->resolve_cond);
	pthread_mutex_unlock(&gw->resolve_lock);
}

void gw_upstream_on_resolved(struct gateway *gw)
{
	struct gw_resolved *job, *c;
	struct gw_conn *conn, *next;

	while (read(gw->resolved.fd, &job, sizeof(job)) == sizeof(job)) {
		c = upstream_cached(gw, job->host);
		if (c) {
			free(c->addrs);
			c->addrs = TAKE_PTR(job->addrs);
			c->naddrs = job->naddrs;
			c->error = job->error;
			c->pending = false;
			c->expires_ms = monotonic_now_ms() +
					(job->error ? GW_RESOLVE_NEG_MS : GW_RESOLVE_TTL_MS);
		}
		free(job->addrs);
		free(job);
	}
	for (conn = gw->conns; conn; conn = next) {
		next = conn->next;
		if (conn->up && conn->up->state == GW_UP_RESOLVING)
			gw_relay_pump(conn);
	}
}

struct gw_upstream *gw_upstream_get(struct gateway *gw, const char *host, uint16_t port, bool fresh)
{
	struct gw_upstream **p, *up;

	for (p = &gw->idle; *p && !fresh; p = &(*p)->next_idle) {
		up = *p;
		if (up->port == port && !strcmp(up->host, host)) {
			*p = up->next_idle;
			up->next_idle = NULL;
			up->reused = true;
			return up;
		}
	}
	up = calloc(1, sizeof(*up));
	if (!up)
		return NULL;
	if (gw_buf_init(&up->in, GW_OUT_BYTES) || gw_buf_init(&up->out, GW_IN_BYTES + 4096)) {
		gw_buf_free(&up->in);
		free(up);
		return NULL;
	}
	up->io.kind = GW_UPSTREAM;
	up->io.fd = -1;
	up->gw = gw;
	up->port = port;
	up->state = GW_UP_RESOLVING;
	up->since_ms = monotonic_now_ms();
	snprintf(up->host, sizeof(up->host), "%s", host);
	upstream_resolve(gw, host);
	return up;
}

/* Starts a connect to the next address; false when none is left. */
static bool upstream_connect_next(struct gw_upstream *up)
{
	while (up->next_addr < up->naddrs) {
		const struct in6_addr *a = &up->addrs[up->next_addr++];
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
					     .sin6_port = htons(up->port) };
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(up->port) };
		bool v4 = IN6_IS_ADDR_V4MAPPED(a);
		int fd, one = 1;

		fd = socket(v4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		memcpy(&sin.sin_addr, &a->s6_addr[12], 4);
		sin6.sin6_addr = *a;
		if ((v4 ? connect(fd, (struct sockaddr *)&sin, sizeof(sin))
			: connect(fd, (struct sockaddr *)&sin6, sizeof(sin6))) < 0 &&
		    errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		up->io.fd = fd;
		if (gw_epoll_add(up->gw, &up->io) < 0) {
			close(fd);
			up->io.fd = -1;
			continue;
		}
		return true;
	}
	return false;
}

static const char *upstream_start_tls(struct gw_upstream *up)
{
	up->ssl = SSL_new(up->gw->upstream_ctx);
	if (!up->ssl || SSL_set_fd(up->ssl, up->io.fd) != 1)
		return "upstream";
	/* The name is checked against the certificate: a chain to a trusted root is not enough. */
	SSL_set_hostflags(up->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (SSL_set1_host(up->ssl, up->host) != 1)
		return "upstream_tls";
	SSL_set_tlsext_host_name(up->ssl, up->host);
	SSL_set_connect_state(up->ssl);
	up->state = GW_UP_HANDSHAKE;
	return NULL;
}

static const char *upstream_connecting(struct gw_upstream *up)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (up->io.fd < 0)
		return upstream_connect_next(up) ? NULL : "upstream";
	/* getpeername succeeds once the connect is done; SO_ERROR says why it failed. */
	if (getpeername(up->io.fd, (struct sockaddr *)&ss, &len) == 0)
		return upstream_start_tls(up);
	{
		int err = 0;
		socklen_t elen = sizeof(err);

		getsockopt(up->io.fd, SOL_SOCKET, SO_ERROR, &err, &elen);
		if (!err)
			return NULL;
	}
	close(up->io.fd);
	up->io.fd = -1;
	return upstream_connect_next(up) ? NULL : "upstream";
}

const char *gw_upstream_advance(struct gw_upstream *up)
{
	struct gw_resolved *c;
	int r;

	for (;;) {
		if (up->failed)
			return up->failed;
		switch (up->state) {
		case GW_UP_RESOLVING:
			c = upstream_cached(up->gw, up->host);
			if (c && c->pending)
				return NULL;
			if (!c || c->error || !c->naddrs)
				return up->failed = "upstream";
			up->addrs = calloc(c->naddrs, sizeof(*up->addrs));
			if (!up->addrs)
				return up->failed = "upstream";
			memcpy(up->addrs, c->addrs, c->naddrs * sizeof(*up->addrs));
			up->naddrs = c->naddrs;
			up->state = GW_UP_CONNECTING;
			up->since_ms = monotonic_now_ms();
			break;
		case GW_UP_CONNECTING:
			up->failed = upstream_connecting(up);
			if (up->state == GW_UP_CONNECTING)
				return up->failed;
			break;
		case GW_UP_HANDSHAKE:
			r = SSL_do_handshake(up->ssl);
			if (r == 1) {
				up->state = GW_UP_READY;
				break;
			}
			r = SSL_get_error(up->ssl, r);
			if (r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE)
				return NULL;
			ERR_clear_error();
			return up->failed = "upstream_tls";
		case GW_UP_READY:
			return NULL;
		}
	}
}

void gw_upstream_destroy(struct gw_upstream *up)
{
	if (!up)
		return;
	SSL_free(up->ssl);
	if (up->io.fd >= 0)
		close(up->io.fd);
	free(up->addrs);
	gw_buf_free(&up->in);
	gw_buf_free(&up->out);
	free(up);
}

static void upstream_close(struct gw_upstream *up)
{
	SSL_free(up->ssl);
	up->ssl = NULL;
	gw_io_kill(up->gw, &up->io);
}

/* Whether the connection's socket has bytes not read yet. */
static bool upstream_unread(const struct gw_upstream *up)
{
	char byte;

	return recv(up->io.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

void gw_upstream_release(struct gw_upstream *up, bool reusable)
{
	struct gateway *gw = up->gw;
	struct gw_upstream *p;
	size_t same = 0;

	up->conn = NULL;
	for (p = gw->idle; p; p = p->next_idle)
		same += p->port == up->port && !strcmp(p->host, up->host);
	/*
	 * Bytes the provider sent past the response (a second answer to a GET with a body) would be
	 * the next request's answer, maybe another sandbox's: such a connection is not pooled. SSL
	 * holds at most a record; the socket may hold more (edge-triggered, no event comes again).
	 */
	if (!reusable || up->state != GW_UP_READY || up->eof || up->in.len || up->out.len ||
	    same >= GATEWAY_POOL_PER_HOST || SSL_pending(up->ssl) > 0 || upstream_unread(up)) {
		upstream_close(up);
		return;
	}
	up->since_ms = monotonic_now_ms();
	up->next_idle = gw->idle;
	gw->idle = up;
}

static void upstream_unpool(struct gw_upstream *up)
{
	struct gw_upstream **p;

	for (p = &up->gw->idle; *p; p = &(*p)->next_idle)
		if (*p == up) {
			*p = up->next_idle;
			break;
		}
	upstream_close(up);
}

/* A pooled connection that speaks (a close, stray bytes) is done; a session ticket is not. */
void gw_upstream_on_idle_event(struct gw_upstream *up)
{
	char byte;
	int r = SSL_read(up->ssl, &byte, 1);

	if (r <= 0) {
		r = SSL_get_error(up->ssl, r);
		if (r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE)
			return;
	}
	ERR_clear_error();
	upstream_unpool(up);
}

void gw_upstream_sweep(struct gateway *gw, long long now_ms)
{
	struct gw_upstream *up, *next;
	struct gw_conn *conn, *cnext;

	for (up = gw->idle; up; up = next) {
		next = up->next_idle;
		if (now_ms - up->since_ms > GATEWAY_UPSTREAM_IDLE_MS)
			upstream_unpool(up);
	}
	for (conn = gw->conns; conn; conn = cnext) {
		cnext = conn->next;
		up = conn->up;
		if (up && up->state != GW_UP_READY && !up->failed &&
		    now_ms - up->since_ms > GATEWAY_UPSTREAM_TIMEOUT_MS) {
			up->failed = "upstream";
			gw_relay_pump(conn);
		}
	}
}
