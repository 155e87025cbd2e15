// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gateway's life and loop: its TLS contexts, its thread with one epoll set for every
 * listener, job connection and upstream connection, and the clients (sandboxes) it serves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "gateway_internal.h"
#include "lib/util.h"

#define GW_EVENTS	  64
#define GW_SWEEP_MS	  1000
#define GW_LISTEN_BACKLOG 512

static const unsigned char GW_ALPN[] = "\x08http/1.1";

int gw_epoll_add(struct gateway *gw, struct gw_io *io)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.data.ptr = io,
	};

	if (io->kind == GW_LISTENER || io->kind == GW_WAKE || io->kind == GW_RESOLVED)
		ev.events = EPOLLIN;
	return epoll_ctl(gw->epfd, EPOLL_CTL_ADD, io->fd, &ev) < 0 ? -errno : 0;
}

/*
 * Closes the object's socket now and frees it after the loop's current batch of events: an
 * event for it may still be in that batch, and finds it dead.
 */
void gw_io_kill(struct gateway *gw, struct gw_io *io)
{
	if (io->dead)
		return;
	if (io->fd >= 0)
		close(io->fd);
	io->fd = -1;
	io->dead = true;
	io->next_dead = gw->dead;
	gw->dead = io;
}

static void gateway_free_dead(struct gateway *gw)
{
	while (gw->dead) {
		struct gw_io *io = gw->dead;

		gw->dead = io->next_dead;
		if (io->kind == GW_CONN)
			gw_relay_destroy((struct gw_conn *)io);
		else if (io->kind == GW_UPSTREAM)
			gw_upstream_destroy((struct gw_upstream *)io);
		else if (io->kind == GW_LISTENER)
			free(((struct gw_listener *)io)->client);
	}
}

/* Only HTTP/1.1 is offered: a job that asks for h2 alone gets no ALPN, and speaks 1.1. */
static int gateway_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
			const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char *selected;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&selected, outlen, GW_ALPN, sizeof(GW_ALPN) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = selected;
	return SSL_TLSEXT_ERR_OK;
}

static int gateway_server_ctx(struct gateway *gw)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx)
		return -ENOMEM;
	gw->server_ctx = ctx;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_tlsext_servername_callback(ctx, gw_ca_servername);
	SSL_CTX_set_tlsext_servername_arg(ctx, &gw->ca);
	SSL_CTX_set_alpn_select_cb(ctx, gateway_alpn, NULL);
	/* The fallback, for a handshake without a server name (the callback may not run). */
	if (SSL_CTX_use_certificate(ctx, gw->ca.fallback) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, gw->ca.leaf_key) != 1)
		return -EINVAL;
	return 0;
}

int gateway_new(const struct gateway_config *config, struct gateway **ret, char *errbuf,
		size_t errlen)
{
	struct gateway *gw = calloc(1, sizeof(*gw));
	int r;

	if (!gw)
		return -ENOMEM;
	gw->config = *config;
	gw->epfd = epoll_create1(EPOLL_CLOEXEC);
	gw->wake.kind = GW_WAKE;
	gw->wake.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	gw->resolved.fd = -1;
	pthread_mutex_init(&gw->lock, NULL);
	if (gw->epfd < 0 || gw->wake.fd < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "gateway: epoll: %s", strerror(-r));
		goto fail;
	}
	r = gw_ca_init(&gw->ca, errbuf, errlen);
	if (r < 0)
		goto fail;
	r = gateway_server_ctx(gw);
	if (r < 0) {
		snprintf(errbuf, errlen, "gateway: server TLS: %s",
			 ERR_reason_error_string(ERR_get_error()) ?: "OpenSSL failed");
		goto fail;
	}
	r = gw_upstream_init(gw, errbuf, errlen);
	if (r < 0)
		goto fail;
	r = gw_epoll_add(gw, &gw->wake);
	if (r >= 0)
		r = gw_epoll_add(gw, &gw->resolved);
	if (r < 0) {
		snprintf(errbuf, errlen, "gateway: epoll_ctl: %s", strerror(-r));
		goto fail;
	}
	*ret = gw;
	return 0;
fail:
	gateway_free(gw);
	return r;
}

static void gateway_accept(struct gw_listener *l)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(l->io.fd, (struct sockaddr *)&ss, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		bool v6 = ss.ss_family == AF_INET6;
		int one = 1;

		uint16_t port;

		if (fd < 0)
			return;
		port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				: ((struct sockaddr_in *)&ss)->sin_port);
		if (l->client->config.peer_ok &&
		    !l->client->config.peer_ok(l->client->config.ctx, port, v6)) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		gw_relay_accept(l->client, fd, v6, port);
	}
}

static void gateway_dispatch(struct gateway *gw, struct gw_io *io)
{
	uint64_t count;

	switch (io->kind) {
	case GW_LISTENER:
		gateway_accept((struct gw_listener *)io);
		break;
	case GW_CONN:
		gw_relay_pump((struct gw_conn *)io);
		break;
	case GW_UPSTREAM: {
		struct gw_upstream *up = (struct gw_upstream *)io;

		if (up->conn)
			gw_relay_pump(up->conn);
		else
			gw_upstream_on_idle_event(up);
		break;
	}
	case GW_WAKE:
		if (read(io->fd, &count, sizeof(count)) < 0)
			break;
		break;
	case GW_RESOLVED:
		gw_upstream_on_resolved(gw);
		break;
	}
}

static void *gateway_main(void *arg)
{
	struct gateway *gw = arg;
	struct epoll_event events[GW_EVENTS];

	while (!gw->stop) {
		int i, n = epoll_wait(gw->epfd, events, GW_EVENTS, gw->again ? 0 : GW_SWEEP_MS);
		long long now;

		pthread_mutex_lock(&gw->lock);
		for (i = 0; i < n; i++) {
			struct gw_io *io = events[i].data.ptr;

			if (!io->dead)
				gateway_dispatch(gw, io);
		}
		gw_relay_again(gw);
		now = monotonic_now_ms();
		if (now - gw->last_sweep_ms >= GW_SWEEP_MS) {
			gw->last_sweep_ms = now;
			gw_relay_sweep(gw, now);
			gw_upstream_sweep(gw, now);
		}
		gateway_free_dead(gw);
		pthread_mutex_unlock(&gw->lock);
	}
	return NULL;
}

int gateway_start(struct gateway *gw)
{
	int r = gw_upstream_start(gw);

	if (r < 0)
		return r;
	r = thread_start_masked(&gw->thread, gateway_main, gw, 0);
	gw->started = r == 0;
	return r;
}

void gateway_free(struct gateway *gw)
{
	uint64_t one = 1;

	if (!gw)
		return;
	if (gw->started) {
		gw->stop = true;
		if (write(gw->wake.fd, &one, sizeof(one)) < 0)
			abort(); /* the loop would never see the stop */
		pthread_join(gw->thread, NULL);
	}
	while (gw->clients)
		gateway_client_remove(gw->clients);
	while (gw->conns)
		gw_relay_close(gw->conns);
	gw_upstream_fini(gw);
	gateway_free_dead(gw);
	SSL_CTX_free(gw->server_ctx);
	gw_ca_free(&gw->ca);
	if (gw->wake.fd >= 0)
		close(gw->wake.fd);
	if (gw->epfd >= 0)
		close(gw->epfd);
	pthread_mutex_destroy(&gw->lock);
	free(gw);
}

int gateway_ca_pem(const struct gateway *gw, char **ret_pem, size_t *ret_len)
{
	return gw_ca_pem(&gw->ca, ret_pem, ret_len);
}

/* A listener on the loopback address of one family; -EADDRNOTAVAIL when the host has none. */
static int gateway_listen(bool v6, uint16_t *ret_port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd, one = 1, r;

	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if ((v6 ? bind(fd, (struct sockaddr *)&sin6, sizeof(sin6))
		: bind(fd, (struct sockaddr *)&sin, sizeof(sin))) < 0 ||
	    listen(fd, GW_LISTEN_BACKLOG) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
			     : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/*
 * A value goes into a header line as it is: a CR or LF in it would end the line and start a
 * header (or a request) of the value's choosing. The message names the secret, never the value.
 */
static int gateway_check_secrets(const struct gateway_client_config *config, char *errbuf,
				 size_t errlen)
{
	size_t i, j;

	for (i = 0; i < config->nsecrets; i++) {
		const struct gateway_secret *s = &config->secrets[i];

		for (j = 0; j < s->value_len; j++)
			if ((unsigned char)s->value[j] < 0x20 || s->value[j] == 0x7f)
				break;
		if (!s->value_len || j < s->value_len || !s->placeholder[0]) {
			snprintf(errbuf, errlen,
				 "secret %s: its value is empty or holds a control character "
				 "(a line break?)",
				 s->policy->name);
			return -EINVAL;
		}
	}
	return 0;
}

int gateway_client_add(struct gateway *gw, const struct gateway_client_config *config,
		       struct gateway_client **ret, char *errbuf, size_t errlen)
{
	struct gateway_client *client;
	int r;

	r = gateway_check_secrets(config, errbuf, errlen);
	if (r < 0)
		return r;
	client = calloc(1, sizeof(*client));
	if (!client)
		return -ENOMEM;
	client->gw = gw;
	client->config = *config;
	client->listen4 = (struct gw_listener){ .io = { .kind = GW_LISTENER }, .client = client };
	client->listen6 = (struct gw_listener){ .io = { .kind = GW_LISTENER }, .client = client };
	r = gateway_listen(false, &client->port4);
	if (r < 0) {
		snprintf(errbuf, errlen, "gateway: cannot listen on 127.0.0.1: %s", strerror(-r));
		free(client);
		return r;
	}
	client->listen4.io.fd = r;
	r = gateway_listen(true, &client->port6);
	client->listen6.io.fd = r < 0 ? -1 : r;
	if (r < 0)
		client->port6 = 0;
	pthread_mutex_lock(&gw->lock);
	r = gw_epoll_add(gw, &client->listen4.io);
	if (r >= 0 && client->listen6.io.fd >= 0)
		r = gw_epoll_add(gw, &client->listen6.io);
	client->next = gw->clients;
	gw->clients = client;
	pthread_mutex_unlock(&gw->lock);
	if (r < 0) {
		snprintf(errbuf, errlen, "gateway: epoll_ctl: %s", strerror(-r));
		gateway_client_remove(client);
		return r;
	}
	*ret = client;
	return 0;
}

void gateway_client_ports(const struct gateway_client *client, uint16_t *ret_port4,
			  uint16_t *ret_port6)
{
	*ret_port4 = client->port4;
	*ret_port6 = client->port6;
}

void gateway_client_remove(struct gateway_client *client)
{
	struct gateway *gw;
	struct gateway_client **p;
	struct gw_conn *c, *next;

	if (!client)
		return;
	gw = client->gw;
	pthread_mutex_lock(&gw->lock);
	for (c = gw->conns; c; c = next) {
		next = c->next;
		if (c->client == client) {
			/* on_request runs on the gateway's thread only: not for these. */
			c->in_flight = false;
			gw_relay_close(c);
		}
	}
	for (p = &gw->clients; *p; p = &(*p)->next)
		if (*p == client) {
			*p = client->next;
			break;
		}
	if (client->listen6.io.fd >= 0)
		close(client->listen6.io.fd);
	client->listen6.io.fd = -1;
	client->listen6.io.dead = true;
	/* Freed with the client, after the loop's batch. */
	gw_io_kill(gw, &client->listen4.io);
	pthread_mutex_unlock(&gw->lock);
}
