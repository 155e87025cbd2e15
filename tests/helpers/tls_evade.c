// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A TLS client whose ClientHello leaves by a chosen path, for the tests of the kernel's check
 * of the TLS server name: OpenSSL writes the ClientHello into a memory BIO, and this program
 * (not OpenSSL) hands those bytes to the kernel, reshaped as the mode says.
 *
 * usage: tls_evade MODE ADDR PORT NAME [CAFILE]
 * MODE: normal, bytewise, tworecords, twonames, nosni, http, fastopen, fastopen-connect,
 * writev, sendfile, splice, iouring, zerocopy, quic, ech, large (EVADE_MODES).
 * NAME is the server name sent (and checked in the certificate when CAFILE is given); "a,b"
 * sends both names in one server_name extension (mode twonames), OpenSSL's ClientHello being
 * for the last. After the handshake it sends GET /?k=sk_live_SECRET with Host: NAME.
 * Prints one line: "OK <name the server says it served, or -> <HTTP status>", or the errno
 * name of the first failing call (EPERM, ECONNRESET, ...), or EOF when the peer closed first,
 * or EPROTO when the TLS handshake failed. Exits 0 then, 2 for a bad command line.
 * With TLS_EVADE_HOLD=DIR it keeps the connection open at its end, whatever its outcome: it
 * prints "COOKIE <the socket's SO_COOKIE>" first and waits up to 20 s for DIR/go before it
 * closes (a test looks the socket up in the kernel's maps meanwhile).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <liburing.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "helpers.h"

#include "lib/util.h"

#define EVADE_EXIT_USAGE 2
#define EVADE_BUF_BYTES	 65536
#define EVADE_TIMEOUT_S	 4
/* writev's iovecs: a few bytes each, so the ClientHello spans a hundred or more of them. */
#define EVADE_IOV_BYTES 3
#define EVADE_IOV_MAX	1024
#define EVADE_TLS_HDR	5
#define EVADE_NAMES_MAX 4

static const char EVADE_KEY_PATH[] = "/?k=sk_live_SECRET";

struct evade_hello {
	unsigned char bytes[EVADE_BUF_BYTES];
	size_t len;
};

typedef int (*evade_send_fn)(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
			     const struct evade_hello *hello);

static void put16(unsigned char *p, size_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static size_t get16(const unsigned char *p)
{
	return (size_t)p[0] << 8 | p[1];
}

/* Sends all of buf with send(MSG_NOSIGNAL): -errno on failure. */
static int evade_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int evade_connect(int fd, const struct sockaddr_storage *dest, socklen_t dlen)
{
	return connect(fd, (const struct sockaddr *)dest, dlen) < 0 ? -errno : 0;
}

static int send_normal(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
		       const struct evade_hello *h)
{
	int r = evade_connect(fd, dest, dlen);

	return r < 0 ? r : evade_send_all(fd, h->bytes, h->len);
}

/* One byte per write(2), with Nagle off so that each can be a segment of its own. */
static int send_bytewise(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
			 const struct evade_hello *h)
{
	int one = 1, r;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r = evade_connect(fd, dest, dlen);
	for (size_t i = 0; r == 0 && i < h->len; i++)
		if (write(fd, h->bytes + i, 1) != 1)
			r = -errno;
	return r;
}

static int send_writev(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
		       const struct evade_hello *h)
{
	static struct iovec iov[EVADE_IOV_MAX];
	size_t n = 0, off;
	ssize_t sent;
	int r = evade_connect(fd, dest, dlen);

	if (r < 0)
		return r;
	for (off = 0; off < h->len && n < EVADE_IOV_MAX; off += EVADE_IOV_BYTES, n++) {
		iov[n].iov_base = (void *)(h->bytes + off);
		iov[n].iov_len = h->len - off < EVADE_IOV_BYTES ? h->len - off : EVADE_IOV_BYTES;
	}
	if (off < h->len)
		return -E2BIG;
	sent = writev(fd, iov, (int)n);
	if (sent < 0)
		return -errno;
	return (size_t)sent == h->len ? 0 : -EIO;
}

/* From a regular file in /tmp (the job's own tmpfs), unlinked at once. */
static int send_sendfile(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
			 const struct evade_hello *h)
{
	char path[] = "/tmp/tls_evade.XXXXXX";
	_cleanup_close_ int file = mkstemp(path);
	off_t off = 0;
	int r;

	if (file < 0)
		return -errno;
	(void)unlink(path);
	if (write(file, h->bytes, h->len) != (ssize_t)h->len)
		return -EIO;
	r = evade_connect(fd, dest, dlen);
	while (r == 0 && (size_t)off < h->len)
		if (sendfile(fd, file, &off, h->len - (size_t)off) < 0)
			r = -errno;
	return r;
}

static int send_splice(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
		       const struct evade_hello *h)
{
	int pipefd[2], r;
	size_t left = h->len;

	if (pipe(pipefd) < 0)
		return -errno;
	r = write(pipefd[1], h->bytes, h->len) == (ssize_t)h->len ? 0 : -EIO;
	if (r == 0)
		r = evade_connect(fd, dest, dlen);
	while (r == 0 && left) {
		ssize_t n = splice(pipefd[0], NULL, fd, NULL, left, 0);

		if (n < 0)
			r = -errno;
		else
			left -= (size_t)n;
	}
	close(pipefd[0]);
	close(pipefd[1]);
	return r;
}

/* connect(2) as usual; the ClientHello itself is an io_uring IORING_OP_SEND. */
static int send_iouring(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
			const struct evade_hello *h)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int r = evade_connect(fd, dest, dlen);

	if (r < 0)
		return r;
	r = io_uring_queue_init(2, &ring, 0);
	if (r < 0)
		return r;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_send(sqe, fd, h->bytes, h->len, MSG_NOSIGNAL);
	r = io_uring_submit(&ring);
	if (r >= 0)
		r = io_uring_wait_cqe(&ring, &cqe);
	if (r >= 0) {
		r = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	if (r >= 0)
		r = (size_t)r == h->len ? 0 : -EIO;
	return r;
}

static int send_zerocopy(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
			 const struct evade_hello *h)
{
	int one = 1, r;
	ssize_t n;

	if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0)
		return -errno;
	r = evade_connect(fd, dest, dlen);
	if (r < 0)
		return r;
	n = send(fd, h->bytes, h->len, MSG_ZEROCOPY | MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == h->len ? 0 : -EIO;
}

/* No connect(2): the SYN itself carries the ClientHello (net.ipv4.tcp_fastopen bit 4). */
static int send_fastopen(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
			 const struct evade_hello *h)
{
	ssize_t n = sendto(fd, h->bytes, h->len, MSG_FASTOPEN | MSG_NOSIGNAL,
			   (const struct sockaddr *)dest, dlen);

	if (n < 0)
		return -errno;
	return (size_t)n == h->len ? 0 : evade_send_all(fd, h->bytes + n, h->len - (size_t)n);
}

/* connect(2) returns at once without a SYN; the first write sends SYN and ClientHello. */
static int send_fastopen_connect(int fd, const struct sockaddr_storage *dest, socklen_t dlen,
				 const struct evade_hello *h)
{
	int one = 1, r;

	if (setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one)) < 0)
		return -errno;
	r = evade_connect(fd, dest, dlen);
	return r < 0 ? r : evade_send_all(fd, h->bytes, h->len);
}

/*
 * Splits the one record OpenSSL wrote into two records, the handshake message cut in its
 * middle (RFC 8446 5.1 lets a handshake message span records).
 */
static int reshape_two_records(struct evade_hello *h)
{
	size_t body = h->len - EVADE_TLS_HDR, first = body / 2;
	unsigned char *p = h->bytes;

	if (h->len + EVADE_TLS_HDR > sizeof(h->bytes))
		return -E2BIG;
	memmove(p + EVADE_TLS_HDR + first + EVADE_TLS_HDR, p + EVADE_TLS_HDR + first, body - first);
	memcpy(p + EVADE_TLS_HDR + first, p, 3);
	put16(p + 3, first);
	put16(p + EVADE_TLS_HDR + first + 3, body - first);
	h->len += EVADE_TLS_HDR;
	return 0;
}

/* Offset of the extensions block's length in a one-record ClientHello, or -EBADMSG. */
static long hello_extensions_at(const struct evade_hello *h)
{
	size_t p = EVADE_TLS_HDR + 4 + 2 + 32;

	if (p + 1 > h->len)
		return -EBADMSG;
	p += 1 + h->bytes[p];
	if (p + 2 > h->len)
		return -EBADMSG;
	p += 2 + get16(h->bytes + p);
	if (p + 1 > h->len)
		return -EBADMSG;
	p += 1 + h->bytes[p];
	return p + 2 <= h->len ? (long)p : -EBADMSG;
}

/*
 * Puts more host names in front of the one in the server_name extension, every length that
 * holds them adjusted: the ClientHello then names the allowed host first and the served one
 * last.
 */
static int reshape_more_names(struct evade_hello *h, char **front, size_t nfront)
{
	unsigned char add[EVADE_NAMES_MAX * 260];
	size_t alen = 0, p, end, i, hs;
	long ext = hello_extensions_at(h);

	if (ext < 0)
		return (int)ext;
	for (i = 0; i < nfront; i++) {
		size_t n = strlen(front[i]);

		add[alen] = 0;
		put16(add + alen + 1, n);
		memcpy(add + alen + 3, front[i], n);
		alen += 3 + n;
	}
	end = (size_t)ext + 2 + get16(h->bytes + ext);
	for (p = (size_t)ext + 2; p + 4 <= end && get16(h->bytes + p) != 0;)
		p += 4 + get16(h->bytes + p + 2);
	if (p + 4 > end || h->len + alen > sizeof(h->bytes))
		return -EBADMSG;
	/* p: the server_name extension; its list starts at p + 6. */
	memmove(h->bytes + p + 6 + alen, h->bytes + p + 6, h->len - (p + 6));
	memcpy(h->bytes + p + 6, add, alen);
	h->len += alen;
	put16(h->bytes + p + 2, get16(h->bytes + p + 2) + alen);
	put16(h->bytes + p + 4, get16(h->bytes + p + 4) + alen);
	put16(h->bytes + ext, get16(h->bytes + ext) + alen);
	put16(h->bytes + 3, h->len - EVADE_TLS_HDR);
	hs = h->len - EVADE_TLS_HDR - 4;
	h->bytes[EVADE_TLS_HDR + 1] = (unsigned char)(hs >> 16);
	put16(h->bytes + EVADE_TLS_HDR + 2, hs);
	return 0;
}

/* What OpenSSL has written for the peer, sent as it is. */
static int evade_flush(int fd, BIO *wbio)
{
	unsigned char buf[EVADE_BUF_BYTES];
	int n, r;

	while ((n = BIO_read(wbio, buf, sizeof(buf))) > 0) {
		r = evade_send_all(fd, buf, (size_t)n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One read from the socket into OpenSSL: 0, -errno, or 1 at end of stream. */
static int evade_feed(int fd, BIO *rbio)
{
	unsigned char buf[EVADE_BUF_BYTES];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	if (n == 0)
		return 1;
	return BIO_write(rbio, buf, (int)n) == n ? 0 : -ENOMEM;
}

static void evade_print_reply(const char *reply)
{
	const char *served = strstr(reply, "\r\n\r\nserved ");
	int status = 0;
	char name[256] = "-";

	if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1) {
		puts("BADREPLY");
		return;
	}
	/* Another server than tests/standin/sni_server.py: its name is "-". */
	if (served && sscanf(served + 11, "%255s", name) != 1)
		snprintf(name, sizeof(name), "-");
	printf("OK %s %d\n", name, status);
}

/* After the first flight: the handshake, the request with the key, the reply to its end. */
static int evade_finish(int fd, SSL *ssl, const char *host)
{
	BIO *rbio = SSL_get_rbio(ssl), *wbio = SSL_get_wbio(ssl);
	static char reply[EVADE_BUF_BYTES];
	char request[512];
	size_t got = 0;
	int r, n;

	while ((n = SSL_do_handshake(ssl)) != 1) {
		if (SSL_get_error(ssl, n) != SSL_ERROR_WANT_READ)
			return -EPROTO;
		r = evade_flush(fd, wbio);
		if (r == 0)
			r = evade_feed(fd, rbio);
		if (r)
			return r < 0 ? r : -ENODATA;
	}
	snprintf(request, sizeof(request),
		 "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", EVADE_KEY_PATH, host);
	if (SSL_write(ssl, request, (int)strlen(request)) <= 0)
		return -EPROTO;
	r = evade_flush(fd, wbio);
	while (r == 0) {
		n = SSL_read(ssl, reply + got, (int)(sizeof(reply) - 1 - got));
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (SSL_get_error(ssl, n) != SSL_ERROR_WANT_READ)
			break;
		r = evade_flush(fd, wbio);
		if (r == 0)
			r = evade_feed(fd, rbio);
	}
	if (r < 0)
		return r;
	reply[got] = '\0';
	evade_print_reply(reply);
	return 0;
}

/* A plain HTTP request on the TLS port: the key in the clear, no ClientHello at all. */
static int evade_plain_http(const struct sockaddr_storage *dest, socklen_t dlen, const char *host)
{
	static char reply[EVADE_BUF_BYTES];
	_cleanup_close_ int fd = socket(dest->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { .tv_sec = EVADE_TIMEOUT_S };
	char request[512];
	size_t got = 0;
	ssize_t n;
	int r;

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = evade_connect(fd, dest, dlen);
	snprintf(request, sizeof(request),
		 "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", EVADE_KEY_PATH, host);
	if (r == 0)
		r = evade_send_all(fd, request, strlen(request));
	while (r == 0 && (n = read(fd, reply + got, sizeof(reply) - 1 - got)) != 0) {
		if (n < 0)
			r = errno == EAGAIN ? -ETIMEDOUT : -errno;
		else
			got += (size_t)n;
	}
	if (r < 0)
		return r;
	if (got == 0)
		return -ENODATA;
	reply[got] = '\0';
	evade_print_reply(reply);
	return 0;
}

/* Appends a QUIC variable-length integer of two bytes (values below 16384). */
static size_t put_varint2(unsigned char *p, size_t v)
{
	put16(p, v | 0x4000);
	return 2;
}

/*
 * A QUIC-like Initial datagram to the port: long header, the ClientHello in a CRYPTO frame
 * and the request with the key in a STREAM frame, both in the clear (real QUIC encrypts them
 * with keys anyone can derive, so a filter that lets the datagram through has lost anyway).
 */
static int evade_quic(const struct sockaddr_storage *dest, socklen_t dlen,
		      const struct evade_hello *h, const char *host)
{
	static unsigned char dgram[EVADE_BUF_BYTES];
	_cleanup_close_ int fd = socket(dest->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	size_t hs = h->len - EVADE_TLS_HDR, p = 0, rlen, lenat;
	struct timeval tv = { .tv_sec = EVADE_TIMEOUT_S };
	char request[512], reply[512], name[256] = "-";
	ssize_t n;

	if (fd < 0)
		return -errno;
	rlen = (size_t)snprintf(request, sizeof(request), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n",
				EVADE_KEY_PATH, host);
	if (hs + rlen + 64 > sizeof(dgram))
		return -E2BIG;
	dgram[p++] = 0xc3;
	memcpy(dgram + p, "\0\0\0\1", 4);
	p += 4;
	dgram[p++] = 8;
	memcpy(dgram + p, "launchqc", 8);
	p += 8;
	dgram[p++] = 0; /* source connection ID length */
	dgram[p++] = 0; /* token length */
	lenat = p;
	p += 2 + 4; /* length, then a four-byte packet number of 0 */
	memset(dgram + lenat + 2, 0, 4);
	dgram[p++] = 0x06; /* CRYPTO, offset 0 */
	dgram[p++] = 0;
	p += put_varint2(dgram + p, hs);
	memcpy(dgram + p, h->bytes + EVADE_TLS_HDR, hs);
	p += hs;
	dgram[p++] = 0x0a; /* STREAM 0 with a length */
	dgram[p++] = 0;
	p += put_varint2(dgram + p, rlen);
	memcpy(dgram + p, request, rlen);
	p += rlen;
	put_varint2(dgram + lenat, p - lenat - 2);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, dgram, p, 0, (const struct sockaddr *)dest, dlen) < 0)
		return -errno;
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	reply[n] = '\0';
	if (sscanf(reply, "served %255s", name) != 1)
		snprintf(name, sizeof(name), "-");
	printf("OK %s udp\n", name);
	return 0;
}

struct evade_mode {
	const char *name;
	evade_send_fn send;
	bool two_records;
	bool no_sni;
	/* An extension OpenSSL adds to its ClientHello (0: none), of extra_len bytes. */
	unsigned int extra_type;
	size_t extra_len;
};

/* encrypted_client_hello (RFC 9849), which OpenSSL 3.0 does not know: its bytes are ours. */
#define EVADE_EXT_ECH 0xfe0d
/* An unassigned extension type, big enough that the ClientHello spans two records. */
#define EVADE_EXT_LARGE	      0xff5a
#define EVADE_EXT_LARGE_BYTES 17000
#define EVADE_EXT_ECH_BYTES   200

static const struct evade_mode EVADE_MODES[] = {
	{ "normal", send_normal, false, false, 0, 0 },
	{ "bytewise", send_bytewise, false, false, 0, 0 },
	{ "tworecords", send_normal, true, false, 0, 0 },
	{ "twonames", send_normal, false, false, 0, 0 },
	{ "nosni", send_normal, false, true, 0, 0 },
	{ "http", NULL, false, false, 0, 0 },
	{ "fastopen", send_fastopen, false, false, 0, 0 },
	{ "fastopen-connect", send_fastopen_connect, false, false, 0, 0 },
	{ "writev", send_writev, false, false, 0, 0 },
	{ "sendfile", send_sendfile, false, false, 0, 0 },
	{ "splice", send_splice, false, false, 0, 0 },
	{ "iouring", send_iouring, false, false, 0, 0 },
	{ "zerocopy", send_zerocopy, false, false, 0, 0 },
	{ "quic", NULL, false, false, 0, 0 },
	/* The evil name is the outer one; the "inner" hello is random bytes. */
	{ "ech", send_normal, false, false, EVADE_EXT_ECH, EVADE_EXT_ECH_BYTES },
	{ "large", send_normal, false, false, EVADE_EXT_LARGE, EVADE_EXT_LARGE_BYTES },
};

static const struct evade_mode *evade_mode_find(const char *name)
{
	for (size_t i = 0; i < sizeof(EVADE_MODES) / sizeof(EVADE_MODES[0]); i++)
		if (strcmp(EVADE_MODES[i].name, name) == 0)
			return &EVADE_MODES[i];
	return NULL;
}

static int evade_extra_add(SSL *s, unsigned int ext_type, unsigned int context,
			   const unsigned char **out, size_t *outlen, X509 *x, size_t chainidx,
			   int *al, void *add_arg)
{
	static unsigned char body[EVADE_EXT_LARGE_BYTES];

	(void)s, (void)ext_type, (void)context, (void)x, (void)chainidx, (void)al;
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i * 131 + 7);
	*out = body;
	*outlen = (size_t)add_arg;
	return 1;
}

/* OpenSSL's ClientHello for host (SNI unless no_sni), written into its memory BIO. */
static SSL *evade_client_hello(SSL_CTX *ctx, const char *host, bool no_sni, const char *cafile,
			       struct evade_hello *ret)
{
	SSL *ssl = SSL_new(ctx);
	int n;

	if (!ssl)
		return NULL;
	SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_connect_state(ssl);
	if ((!no_sni && SSL_set_tlsext_host_name(ssl, host) != 1) ||
	    (cafile && SSL_set1_host(ssl, host) != 1))
		goto fail;
	n = SSL_do_handshake(ssl);
	if (n == 1 || SSL_get_error(ssl, n) != SSL_ERROR_WANT_READ)
		goto fail;
	n = BIO_read(SSL_get_wbio(ssl), ret->bytes, sizeof(ret->bytes));
	if (n <= EVADE_TLS_HDR || BIO_pending(SSL_get_wbio(ssl)))
		goto fail;
	ret->len = (size_t)n;
	return ssl;
fail:
	SSL_free(ssl);
	return NULL;
}

/* TLS_EVADE_HOLD: the socket's cookie on standard output, then DIR/go awaited. */
static void evade_hold(int fd)
{
	const char *dir = getenv("TLS_EVADE_HOLD");
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	char path[4096];

	if (!dir || fd < 0 || getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) < 0)
		return;
	printf("COOKIE %llu\n", (unsigned long long)cookie);
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (int i = 0; i < 2000 && access(path, F_OK) < 0; i++)
		usleep(10000);
}

static int evade_tls(const struct evade_mode *mode, const struct sockaddr_storage *dest,
		     socklen_t dlen, char **names, size_t nnames, const char *cafile)
{
	static struct evade_hello hello;
	const char *host = names[nnames - 1];
	struct timeval tv = { .tv_sec = EVADE_TIMEOUT_S };
	_cleanup_close_ int fd = -1;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = NULL;
	int r = -EPROTO;

	if (!ctx)
		return -ENOMEM;
	if (cafile) {
		if (SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1)
			goto out;
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	}
	if (mode->extra_type &&
	    SSL_CTX_add_custom_ext(ctx, mode->extra_type, SSL_EXT_CLIENT_HELLO, evade_extra_add,
				   NULL, (void *)mode->extra_len, NULL, NULL) != 1)
		goto out;
	ssl = evade_client_hello(ctx, host, mode->no_sni, cafile, &hello);
	if (!ssl)
		goto out;
	r = mode->two_records ? reshape_two_records(&hello) : 0;
	if (r == 0 && nnames > 1)
		r = reshape_more_names(&hello, names, nnames - 1);
	if (r < 0)
		goto out;
	if (!mode->send) {
		r = evade_quic(dest, dlen, &hello, host);
		goto out;
	}
	fd = socket(dest->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = mode->send(fd, dest, dlen, &hello);
	if (r == 0)
		r = evade_finish(fd, ssl, host);
	evade_hold(fd);
out:
	if (r == -EPROTO)
		ERR_print_errors_fp(stderr);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return r;
}

int main(int argc, char **argv)
{
	const struct evade_mode *mode = argc >= 5 ? evade_mode_find(argv[1]) : NULL;
	char *names[EVADE_NAMES_MAX], *save = NULL, *name;
	struct sockaddr_storage dest;
	size_t nnames = 0;
	socklen_t dlen;
	int r;

	if (!mode || argc > 6 || helper_parse_dest(argv[2], argv[3], &dest, &dlen) < 0) {
		fprintf(stderr, "usage: tls_evade MODE ADDR PORT NAME[,NAME...] [CAFILE]\n");
		return EVADE_EXIT_USAGE;
	}
	for (name = strtok_r(argv[4], ",", &save); name && nnames < EVADE_NAMES_MAX;
	     name = strtok_r(NULL, ",", &save))
		names[nnames++] = name;
	if (nnames == 0 || name) {
		fprintf(stderr, "tls_evade: NAME: 1 to %d names\n", EVADE_NAMES_MAX);
		return EVADE_EXIT_USAGE;
	}
	/* A write to a reset connection is an EPIPE to report, not a signal that kills. */
	signal(SIGPIPE, SIG_IGN);
	if (!mode->send && strcmp(mode->name, "http") == 0)
		r = evade_plain_http(&dest, dlen, names[nnames - 1]);
	else
		r = evade_tls(mode, &dest, dlen, names, nnames, argc == 6 ? argv[5] : NULL);
	if (r == -ENODATA)
		puts("EOF");
	else if (r == -EPROTO)
		puts("EPROTO");
	else if (r < 0)
		helper_report(r);
	return 0;
}
