// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * TLS load for the SNI check's benchmark (tests/bench/sni_bench): a server, and a client that
 * times TCP connect + TLS handshake, or bulk TLS throughput after the handshake.
 *
 * usage: tlsbench serve ADDR PORT CERT KEY       prints "ready", serves until stdin closes
 *        tlsbench handshake ADDR PORT NAME N     N connections one after another: connect,
 *                                                handshake (SNI NAME), close
 *        tlsbench bulk ADDR PORT NAME MB          one connection, then MB MiB of application
 *                                                data, timed until the server has read it all
 * The clients print one JSON line: {"ok": N, "ns": T} (bulk: {"ok": 1, "ns": T, "bytes": B}).
 * The server reads whatever a client sends after its handshake and discards it; a client's
 * close_notify ends the connection, answered with the server's own.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <openssl/ssl.h>

#define TLSBENCH_CHUNK	 (64 * 1024)
#define TLSBENCH_BACKLOG 128

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int parse_addr(const char *addr, const char *port, struct sockaddr_in *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->sin_family = AF_INET;
	ret->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, addr, &ret->sin_addr) == 1 ? 0 : -EINVAL;
}

static void *serve_one(void *arg)
{
	SSL *ssl = arg;
	char sink[TLSBENCH_CHUNK];
	int fd = SSL_get_fd(ssl);

	if (SSL_accept(ssl) == 1) {
		while (SSL_read(ssl, sink, sizeof(sink)) > 0)
			;
		(void)SSL_shutdown(ssl);
	}
	SSL_free(ssl);
	close(fd);
	return NULL;
}

static void *serve_loop(void *arg)
{
	SSL_CTX *ctx = ((void **)arg)[0];
	int lfd = *(int *)((void **)arg)[1];

	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		pthread_t t;
		SSL *ssl;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, fd);
		if (pthread_create(&t, NULL, serve_one, ssl) == 0)
			pthread_detach(t);
		else
			serve_one(ssl);
	}
}

static int serve(const struct sockaddr_in *sin, const char *cert, const char *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
	void *args[2] = { ctx, &lfd };
	pthread_t t;
	char c;

	if (!ctx || lfd < 0 || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
		return 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (const struct sockaddr *)sin, sizeof(*sin)) < 0 ||
	    listen(lfd, TLSBENCH_BACKLOG) < 0 || pthread_create(&t, NULL, serve_loop, args) != 0)
		return 1;
	puts("ready");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return 0;
}

/* One connection with its handshake done, or NULL. */
static SSL *client_open(SSL_CTX *ctx, const struct sockaddr_in *sin, const char *name)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	SSL *ssl;

	if (fd < 0)
		return NULL;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) < 0) {
		close(fd);
		return NULL;
	}
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, name);
	if (SSL_connect(ssl) != 1) {
		SSL_free(ssl);
		close(fd);
		return NULL;
	}
	return ssl;
}

static void client_close(SSL *ssl)
{
	int fd = SSL_get_fd(ssl);

	(void)SSL_shutdown(ssl);
	SSL_free(ssl);
	close(fd);
}

static int handshakes(SSL_CTX *ctx, const struct sockaddr_in *sin, const char *name, long n)
{
	uint64_t t0 = now_ns();
	long ok = 0;

	for (long i = 0; i < n; i++) {
		SSL *ssl = client_open(ctx, sin, name);

		if (!ssl)
			break;
		ok++;
		client_close(ssl);
	}
	printf("{\"ok\": %ld, \"ns\": %llu}\n", ok, (unsigned long long)(now_ns() - t0));
	return ok == n ? 0 : 1;
}

/* Timed from the first byte after the handshake to the server's close_notify. */
static int bulk(SSL_CTX *ctx, const struct sockaddr_in *sin, const char *name, long mb)
{
	static char chunk[TLSBENCH_CHUNK];
	long long bytes = mb * 1024LL * 1024LL, sent = 0;
	SSL *ssl = client_open(ctx, sin, name);
	uint64_t t0;
	int fd, ok;

	if (!ssl) {
		puts("{\"ok\": 0, \"ns\": 0}");
		return 1;
	}
	memset(chunk, 'x', sizeof(chunk));
	t0 = now_ns();
	while (sent < bytes && SSL_write(ssl, chunk, sizeof(chunk)) > 0)
		sent += sizeof(chunk);
	ok = sent >= bytes;
	/* Our close_notify, then the server's: it has read everything before it answers. */
	if (SSL_shutdown(ssl) == 0)
		while (SSL_read(ssl, chunk, sizeof(chunk)) > 0)
			;
	printf("{\"ok\": %d, \"ns\": %llu, \"bytes\": %lld}\n", ok,
	       (unsigned long long)(now_ns() - t0), sent);
	fd = SSL_get_fd(ssl);
	SSL_free(ssl);
	close(fd);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin;
	SSL_CTX *ctx;

	if (argc != 6 || parse_addr(argv[2], argv[3], &sin) < 0) {
		fprintf(stderr, "usage: tlsbench serve|handshake|bulk ADDR PORT ...\n");
		return 2;
	}
	/* A peer that closes first must not kill the other end with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "serve") == 0)
		return serve(&sin, argv[4], argv[5]);
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx)
		return 1;
	/* Each handshake is a full one, as a new client's is: no session resumption. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	if (strcmp(argv[1], "handshake") == 0)
		return handshakes(ctx, &sin, argv[4], atol(argv[5]));
	if (strcmp(argv[1], "bulk") == 0)
		return bulk(ctx, &sin, argv[4], atol(argv[5]));
	fprintf(stderr, "tlsbench: unknown mode %s\n", argv[1]);
	return 2;
}
