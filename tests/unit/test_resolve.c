/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for launcher/policy/resolve.c, with a small DNS server thread on 127.0.0.1. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "lib/dnswire.h"
#include "policy/resolve.h"
#include "lib/util.h"
#include "test.h"

static const char *addr_text(const struct in6_addr *a, char *buf, size_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(a->s6_addr, mapped, 12) == 0)
		return inet_ntop(AF_INET, &a->s6_addr[12], buf, (socklen_t)len);
	return inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

static bool has_addr(const struct in6_addr *addrs, size_t n, const char *text)
{
	char buf[INET6_ADDRSTRLEN];

	for (size_t i = 0; i < n; i++)
		if (strcmp(addr_text(&addrs[i], buf, sizeof(buf)), text) == 0)
			return true;
	return false;
}

static bool all_distinct(const struct in6_addr *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (memcmp(&addrs[i], &addrs[j], sizeof(addrs[i])) == 0)
				return false;
	return true;
}

static uint16_t server_port(const struct resolver *s)
{
	if (s->addr.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&s->addr)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)&s->addr)->sin6_port);
}

static const char *server_host(const struct resolver *s, char *buf, size_t len)
{
	if (s->addr.ss_family == AF_INET)
		return inet_ntop(AF_INET, &((const struct sockaddr_in *)&s->addr)->sin_addr, buf,
				 (socklen_t)len);
	return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&s->addr)->sin6_addr, buf,
			 (socklen_t)len);
}

static void test_parse_server_good(void)
{
	static const struct {
		const char *text, *host;
		int family;
		uint16_t port;
	} cases[] = {
		{ "192.0.2.53", "192.0.2.53", AF_INET, 53 },
		{ "192.0.2.53:5353", "192.0.2.53", AF_INET, 5353 },
		{ "127.0.0.1:1", "127.0.0.1", AF_INET, 1 },
		{ "192.0.2.53:65535", "192.0.2.53", AF_INET, 65535 },
		{ "192.0.2.53:00053", "192.0.2.53", AF_INET, 53 },
		{ "2001:db8::53", "2001:db8::53", AF_INET6, 53 },
		{ "[2001:db8::53]:5353", "2001:db8::53", AF_INET6, 5353 },
		{ "[2001:db8::53]", "2001:db8::53", AF_INET6, 53 },
		{ "::1", "::1", AF_INET6, 53 },
		{ "[::1]:65535", "::1", AF_INET6, 65535 },
		/* Without brackets a last ":5353" is part of the address, as in any IPv6 text. */
		{ "2001:db8::53:5353", "2001:db8::53:5353", AF_INET6, 53 },
		{ "[::ffff:192.0.2.53]:53", "::ffff:192.0.2.53", AF_INET6, 53 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct resolver s;
		char buf[INET6_ADDRSTRLEN];
		int r = resolve_parse_server(cases[i].text, &s);

		if (r != 0)
			printf("  \"%s\"\n", cases[i].text);
		CHECK_EQ_INT(r, 0);
		if (r != 0)
			continue;
		CHECK_EQ_INT(s.addr.ss_family, cases[i].family);
		CHECK_EQ_INT(s.addrlen, cases[i].family == AF_INET ? sizeof(struct sockaddr_in)
								   : sizeof(struct sockaddr_in6));
		CHECK_EQ_INT(server_port(&s), cases[i].port);
		CHECK_EQ_STR(server_host(&s, buf, sizeof(buf)), cases[i].host);
	}
}

static void test_parse_server_bad(void)
{
	static const char *const bad[] = {
		"",
		":",
		":53",
		"192.0.2.53:",
		"192.0.2.53:0",
		"192.0.2.53:65536",
		"192.0.2.53:99999999999999999999",
		"192.0.2.53:53x",
		"192.0.2.53:-1",
		"192.0.2.53:+53",
		"192.0.2.53: 53",
		"192.0.2.53:5:3",
		" 192.0.2.53",
		"192.0.2.53 ",
		"192.0.2.256",
		"192.0.2",
		"192.0.2.053",
		"example.com",
		"example.com:53",
		"localhost",
		"[2001:db8::53",
		"[2001:db8::53]x",
		"[2001:db8::53]:",
		"[2001:db8::53]:0",
		"[2001:db8::53]:70000",
		"[2001:db8::53]]:53",
		"[192.0.2.53]:53",
		"[]",
		"[]:53",
		"[fe80::1%lo]:53",
		"2001:db8::53::1",
		"2001:db8::zz",
		"[[2001:db8::53]]",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct resolver s;
		int r = resolve_parse_server(bad[i], &s);

		if (r != -EINVAL)
			printf("  \"%s\"\n", bad[i]);
		CHECK_EQ_INT(r, -EINVAL);
	}
	CHECK_EQ_INT(resolve_parse_server(NULL, &(struct resolver){ 0 }), -EINVAL);
}

/* What the server thread does with each query it gets. */
enum fake_mode {
	FAKE_ANSWER,	  /* A: 192.0.2.1, 192.0.2.2, 192.0.2.1 again; AAAA: 2001:db8::1, and
			     ::ffff:192.0.2.2, a duplicate across families */
	FAKE_CNAME,	  /* www -> cdn, addresses on cdn */
	FAKE_NXDOMAIN,	  /* both NXDOMAIN */
	FAKE_NODATA,	  /* both NOERROR without records */
	FAKE_SERVFAIL,	  /* both SERVFAIL */
	FAKE_AAAA_FAILS,  /* A: 192.0.2.1; AAAA: SERVFAIL */
	FAKE_TRUNCATE,	  /* UDP: TC and nothing else; TCP: 40 A records, 3 AAAA */
	FAKE_FORGERIES,	  /* before each real answer: wrong id, wrong question, cut short */
	FAKE_DROP_FIRST,  /* ignores the first try of each question */
	FAKE_SILENT,	  /* never answers */
	FAKE_TCP_REFUSED, /* UDP: TC; no TCP listener */
};

struct fake_dns {
	enum fake_mode mode;
	int udp_fd, tcp_fd;
	int stop_pipe[2];
	struct resolver server;
	pthread_t thread;
	bool running;
	atomic_int udp_queries, tcp_queries;
	atomic_int a_queries, aaaa_queries;
	pthread_mutex_t lock;
	char last_name[DNS_NAME_TEXT_MAX];
};

struct wbuf {
	uint8_t b[4096];
	size_t len;
};

static void w8(struct wbuf *w, uint8_t v)
{
	w->b[w->len++] = v;
}

static void w16(struct wbuf *w, uint16_t v)
{
	w8(w, v >> 8);
	w8(w, v & 0xff);
}

static void wrr_addr(struct wbuf *w, uint16_t owner_off, const char *text, uint32_t ttl)
{
	uint8_t addr[16];
	bool v4 = inet_pton(AF_INET, text, addr) == 1;

	if (!v4)
		inet_pton(AF_INET6, text, addr);
	w16(w, 0xc000 | owner_off);
	w16(w, v4 ? DNS_TYPE_A : DNS_TYPE_AAAA);
	w16(w, DNS_CLASS_IN);
	w16(w, ttl >> 16);
	w16(w, ttl & 0xffff);
	w16(w, v4 ? 4 : 16);
	memcpy(w->b + w->len, addr, v4 ? 4 : 16);
	w->len += v4 ? 4 : 16;
}

/* Header and the query's own question; the answer count is patched by fake_set_ancount. */
static void fake_head(struct wbuf *w, const uint8_t *query, size_t qend, uint16_t id,
		      uint16_t flags)
{
	w->len = 0;
	w16(w, id);
	w16(w, flags);
	w16(w, 1);
	w16(w, 0);
	w16(w, 0);
	w16(w, 0);
	memcpy(w->b + w->len, query + DNS_HEADER_LEN, qend - DNS_HEADER_LEN);
	w->len += qend - DNS_HEADER_LEN;
}

static void fake_set_ancount(struct wbuf *w, uint16_t n)
{
	w->b[6] = n >> 8;
	w->b[7] = n & 0xff;
}

/*
 * The reply to one query in `mode`, or 0 to send nothing. `forged` receives the datagrams
 * FAKE_FORGERIES sends first, `nforged` their number.
 */
static size_t fake_reply(struct fake_dns *f, const uint8_t *query, size_t qlen, bool tcp,
			 struct wbuf *w, struct wbuf *forged, int *nforged)
{
	struct dns_question q;
	uint16_t id;
	size_t qend = DNS_HEADER_LEN;
	bool aaaa;
	int seen;

	*nforged = 0;
	if (dns_parse_query(query, qlen, &id, &q, NULL) < 0)
		return 0;
	while (query[qend] != 0)
		qend += query[qend] + 1u;
	qend += 5;
	aaaa = q.qtype == DNS_TYPE_AAAA;
	seen = aaaa ? ++f->aaaa_queries : ++f->a_queries;
	pthread_mutex_lock(&f->lock);
	strcpy(f->last_name, q.name);
	pthread_mutex_unlock(&f->lock);

	fake_head(w, query, qend, id, 0x8180);
	switch (f->mode) {
	case FAKE_ANSWER:
		if (aaaa) {
			wrr_addr(w, DNS_HEADER_LEN, "2001:db8::1", 300);
			wrr_addr(w, DNS_HEADER_LEN, "::ffff:192.0.2.2", 300);
			fake_set_ancount(w, 2);
		} else {
			wrr_addr(w, DNS_HEADER_LEN, "192.0.2.1", 300);
			wrr_addr(w, DNS_HEADER_LEN, "192.0.2.2", 300);
			wrr_addr(w, DNS_HEADER_LEN, "192.0.2.1", 300);
			fake_set_ancount(w, 3);
		}
		break;
	case FAKE_CNAME: {
		size_t cdn_off;

		/* www.example.test CNAME cdn.example.test: "cdn" then a pointer to the tail. */
		w16(w, 0xc000 | DNS_HEADER_LEN);
		w16(w, DNS_TYPE_CNAME);
		w16(w, DNS_CLASS_IN);
		w16(w, 0);
		w16(w, 60);
		w16(w, 6);
		cdn_off = w->len;
		w8(w, 3);
		memcpy(w->b + w->len, "cdn", 3);
		w->len += 3;
		w16(w, 0xc000 | (DNS_HEADER_LEN + 4));
		wrr_addr(w, (uint16_t)cdn_off, aaaa ? "2001:db8::10" : "192.0.2.10", 300);
		/* An address for a name off the chain must not be taken. */
		wrr_addr(w, DNS_HEADER_LEN + 4, aaaa ? "2001:db8::66" : "203.0.113.66", 300);
		fake_set_ancount(w, 3);
		break;
	}
	case FAKE_NXDOMAIN:
		w->b[3] |= DNS_RCODE_NXDOMAIN;
		break;
	case FAKE_NODATA:
		break;
	case FAKE_SERVFAIL:
		w->b[3] |= DNS_RCODE_SERVFAIL;
		break;
	case FAKE_AAAA_FAILS:
		if (aaaa) {
			w->b[3] |= DNS_RCODE_SERVFAIL;
		} else {
			wrr_addr(w, DNS_HEADER_LEN, "192.0.2.1", 300);
			fake_set_ancount(w, 1);
		}
		break;
	case FAKE_TRUNCATE:
	case FAKE_TCP_REFUSED:
		if (!tcp) {
			w->b[2] |= 0x02; /* TC */
			break;
		}
		if (aaaa) {
			for (int i = 1; i <= 3; i++) {
				char text[INET6_ADDRSTRLEN];

				snprintf(text, sizeof(text), "2001:db8::%d", i);
				wrr_addr(w, DNS_HEADER_LEN, text, 300);
			}
			fake_set_ancount(w, 3);
		} else {
			/* 40 records: 640 bytes of answers, more than a 512-byte datagram. */
			for (int i = 1; i <= 40; i++) {
				char text[32];

				snprintf(text, sizeof(text), "198.51.100.%d", i);
				wrr_addr(w, DNS_HEADER_LEN, text, 300);
			}
			fake_set_ancount(w, 40);
		}
		break;
	case FAKE_FORGERIES: {
		struct wbuf *f0 = &forged[0], *f1 = &forged[1], *f2 = &forged[2];

		/* The right answer with the wrong id. */
		fake_head(f0, query, qend, id ^ 0x5a5a, 0x8180);
		wrr_addr(f0, DNS_HEADER_LEN, aaaa ? "2001:db8::66" : "203.0.113.66", 300);
		fake_set_ancount(f0, 1);
		/* The right id with another question. */
		*f1 = *f0;
		f1->b[0] = id >> 8;
		f1->b[1] = id & 0xff;
		f1->b[DNS_HEADER_LEN + 1] = 'x';
		/* The right id and question, cut in the middle of a record. */
		*f2 = *f0;
		f2->b[0] = id >> 8;
		f2->b[1] = id & 0xff;
		f2->len -= 3;
		*nforged = 3;
		wrr_addr(w, DNS_HEADER_LEN, aaaa ? "2001:db8::1" : "192.0.2.1", 300);
		fake_set_ancount(w, 1);
		break;
	}
	case FAKE_DROP_FIRST:
		if (seen == 1)
			return 0;
		wrr_addr(w, DNS_HEADER_LEN, aaaa ? "2001:db8::1" : "192.0.2.1", 300);
		fake_set_ancount(w, 1);
		break;
	case FAKE_SILENT:
		return 0;
	}
	return w->len;
}

static void fake_serve_udp(struct fake_dns *f)
{
	uint8_t query[DNS_UDP_MAX_LEN];
	struct sockaddr_storage from;
	socklen_t fromlen = sizeof(from);
	struct wbuf reply, forged[3];
	int nforged;
	ssize_t n;

	n = recvfrom(f->udp_fd, query, sizeof(query), 0, (struct sockaddr *)&from, &fromlen);
	if (n <= 0)
		return;
	f->udp_queries++;
	if (fake_reply(f, query, (size_t)n, false, &reply, forged, &nforged) == 0)
		return;
	for (int i = 0; i < nforged; i++)
		sendto(f->udp_fd, forged[i].b, forged[i].len, 0, (struct sockaddr *)&from, fromlen);
	sendto(f->udp_fd, reply.b, reply.len, 0, (struct sockaddr *)&from, fromlen);
}

static bool read_full(int fd, uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = read(fd, buf, len);

		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

static void fake_serve_tcp(struct fake_dns *f)
{
	struct timeval tv = { .tv_sec = 2 };
	uint8_t query[DNS_UDP_MAX_LEN], prefix[2];
	struct wbuf reply, forged[3];
	size_t len;
	int nforged;
	_cleanup_close_ int fd = accept(f->tcp_fd, NULL, NULL);

	if (fd < 0)
		return;
	f->tcp_queries++;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!read_full(fd, prefix, 2))
		return;
	len = (size_t)prefix[0] << 8 | prefix[1];
	if (len > sizeof(query) || !read_full(fd, query, len))
		return;
	if (fake_reply(f, query, len, true, &reply, forged, &nforged) == 0)
		return;
	prefix[0] = (uint8_t)(reply.len >> 8);
	prefix[1] = (uint8_t)reply.len;
	/* Two writes, so that the client must put the length and the message together. */
	if (write(fd, prefix, 2) != 2)
		return;
	if (write(fd, reply.b, reply.len) != (ssize_t)reply.len)
		return;
}

static void *fake_run(void *arg)
{
	struct fake_dns *f = arg;

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = f->stop_pipe[0], .events = POLLIN },
			{ .fd = f->udp_fd, .events = POLLIN },
			{ .fd = f->tcp_fd, .events = POLLIN },
		};
		/* Ten idle seconds end the thread even if the test forgot to stop it. */
		int r = poll(p, f->tcp_fd >= 0 ? 3 : 2, 10000);

		if (r <= 0 || p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			fake_serve_udp(f);
		if (f->tcp_fd >= 0 && (p[2].revents & POLLIN))
			fake_serve_tcp(f);
	}
	return NULL;
}

/* Starts a server on `host` (127.0.0.1 or ::1), UDP and TCP on one random port. */
static int fake_start(struct fake_dns *f, enum fake_mode mode, const char *host)
{
	int family = strchr(host, ':') ? AF_INET6 : AF_INET;

	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->udp_fd = f->tcp_fd = f->stop_pipe[0] = f->stop_pipe[1] = -1;
	pthread_mutex_init(&f->lock, NULL);

	/* The UDP port is picked by the kernel; TCP on the same port can be taken: try again. */
	for (int attempt = 0; attempt < 20; attempt++) {
		char text[64];
		struct resolver any;
		int one = 1;

		snprintf(text, sizeof(text), family == AF_INET6 ? "[%s]:1" : "%s:1", host);
		if (resolve_parse_server(text, &any) < 0)
			return -EINVAL;
		if (family == AF_INET)
			((struct sockaddr_in *)&any.addr)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&any.addr)->sin6_port = 0;

		f->udp_fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (f->udp_fd < 0)
			return -errno;
		if (bind(f->udp_fd, (struct sockaddr *)&any.addr, any.addrlen) < 0) {
			int r = -errno;

			close(f->udp_fd);
			return r;
		}
		f->server = any;
		getsockname(f->udp_fd, (struct sockaddr *)&f->server.addr, &f->server.addrlen);
		if (mode == FAKE_TCP_REFUSED)
			break;
		f->tcp_fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (f->tcp_fd < 0)
			return -errno;
		setsockopt(f->tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(f->tcp_fd, (struct sockaddr *)&f->server.addr, f->server.addrlen) == 0 &&
		    listen(f->tcp_fd, 8) == 0)
			break;
		close(f->tcp_fd);
		close(f->udp_fd);
		f->tcp_fd = f->udp_fd = -1;
	}
	if (f->udp_fd < 0)
		return -EADDRINUSE;
	if (pipe2(f->stop_pipe, O_CLOEXEC) < 0)
		return -errno;
	if (pthread_create(&f->thread, NULL, fake_run, f) != 0)
		return -EAGAIN;
	f->running = true;
	return 0;
}

static void fake_stop(struct fake_dns *f)
{
	if (f->running && write(f->stop_pipe[1], "x", 1) == 1)
		pthread_join(f->thread, NULL);
	if (f->stop_pipe[1] >= 0) {
		close(f->stop_pipe[0]);
		close(f->stop_pipe[1]);
	}
	if (f->udp_fd >= 0)
		close(f->udp_fd);
	if (f->tcp_fd >= 0)
		close(f->tcp_fd);
	pthread_mutex_destroy(&f->lock);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs resolve_host against a fresh server in `mode`; the server is left for checks. */
static int resolve_with(struct fake_dns *f, enum fake_mode mode, const char *name,
			struct in6_addr **ret_addrs, size_t *ret_n, int64_t *ret_ms)
{
	int64_t start;
	int r;

	*ret_addrs = NULL;
	*ret_n = 0;
	r = fake_start(f, mode, "127.0.0.1");
	CHECK_EQ_INT(r, 0);
	if (r < 0)
		return r;
	start = now_ms();
	r = resolve_host(name, &f->server, ret_addrs, ret_n);
	if (ret_ms)
		*ret_ms = now_ms() - start;
	return r;
}

static void test_resolve_answer(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;

	CHECK_EQ_INT(resolve_with(&f, FAKE_ANSWER, "WWW.Example.Test.", &addrs, &n, NULL), 0);
	CHECK_EQ_INT(n, 3);
	CHECK(has_addr(addrs, n, "192.0.2.1"));
	CHECK(has_addr(addrs, n, "192.0.2.2"));
	CHECK(has_addr(addrs, n, "2001:db8::1"));
	CHECK(all_distinct(addrs, n));
	CHECK_EQ_INT(f.a_queries, 1);
	CHECK_EQ_INT(f.aaaa_queries, 1);
	CHECK_EQ_INT(f.tcp_queries, 0);
	/* After the thread has ended, so the name is read without a race. */
	fake_stop(&f);
	CHECK_EQ_STR(f.last_name, "www.example.test");
}

static void test_resolve_cname(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;

	CHECK_EQ_INT(resolve_with(&f, FAKE_CNAME, "www.example.test", &addrs, &n, NULL), 0);
	CHECK_EQ_INT(n, 2);
	CHECK(has_addr(addrs, n, "192.0.2.10"));
	CHECK(has_addr(addrs, n, "2001:db8::10"));
	CHECK(!has_addr(addrs, n, "203.0.113.66"));
	fake_stop(&f);
}

static void test_resolve_no_address(void)
{
	static const enum fake_mode modes[] = { FAKE_NXDOMAIN, FAKE_NODATA };

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		_cleanup_free_ struct in6_addr *addrs = NULL;
		struct fake_dns f;
		size_t n;
		int64_t ms;

		CHECK_EQ_INT(resolve_with(&f, modes[i], "gone.example.test", &addrs, &n, &ms),
			     -ENOENT);
		CHECK(addrs == NULL);
		CHECK_EQ_INT(n, 0);
		CHECK(ms < 1000);
		fake_stop(&f);
	}
}

static void test_resolve_servfail(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	_cleanup_free_ struct in6_addr *addrs2 = NULL;
	struct fake_dns f;
	size_t n;

	CHECK_EQ_INT(resolve_with(&f, FAKE_SERVFAIL, "www.example.test", &addrs, &n, NULL), -EIO);
	fake_stop(&f);

	/* One family failing does not hide the other's addresses. */
	CHECK_EQ_INT(resolve_with(&f, FAKE_AAAA_FAILS, "www.example.test", &addrs2, &n, NULL), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(has_addr(addrs2, n, "192.0.2.1"));
	fake_stop(&f);
}

static void test_resolve_tcp_fallback(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;

	CHECK_EQ_INT(resolve_with(&f, FAKE_TRUNCATE, "big.example.test", &addrs, &n, NULL), 0);
	CHECK_EQ_INT(n, 43);
	CHECK(has_addr(addrs, n, "198.51.100.1"));
	CHECK(has_addr(addrs, n, "198.51.100.40"));
	CHECK(has_addr(addrs, n, "2001:db8::3"));
	CHECK(all_distinct(addrs, n));
	CHECK_EQ_INT(f.udp_queries, 2);
	CHECK_EQ_INT(f.tcp_queries, 2);
	fake_stop(&f);
}

static void test_resolve_tcp_refused(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;
	int64_t ms;

	/* Truncated over UDP and nobody on TCP: an error, not an empty answer. */
	CHECK_EQ_INT(resolve_with(&f, FAKE_TCP_REFUSED, "big.example.test", &addrs, &n, &ms),
		     -ECONNREFUSED);
	CHECK(ms < 1000);
	fake_stop(&f);
}

static void test_resolve_ignores_forgeries(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;

	CHECK_EQ_INT(resolve_with(&f, FAKE_FORGERIES, "www.example.test", &addrs, &n, NULL), 0);
	CHECK_EQ_INT(n, 2);
	CHECK(has_addr(addrs, n, "192.0.2.1"));
	CHECK(has_addr(addrs, n, "2001:db8::1"));
	CHECK(!has_addr(addrs, n, "203.0.113.66"));
	CHECK(!has_addr(addrs, n, "2001:db8::66"));
	fake_stop(&f);
}

static void test_resolve_retries(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;
	int64_t ms;

	CHECK_EQ_INT(resolve_with(&f, FAKE_DROP_FIRST, "www.example.test", &addrs, &n, &ms), 0);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(f.udp_queries, 4);
	/* The second try goes out once the first has waited its 2 s. */
	CHECK(ms >= 1900 && ms < 3500);
	fake_stop(&f);
}

static void test_resolve_timeout(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;
	int64_t ms;

	CHECK_EQ_INT(resolve_with(&f, FAKE_SILENT, "www.example.test", &addrs, &n, &ms),
		     -ETIMEDOUT);
	CHECK(addrs == NULL);
	CHECK_EQ_INT(f.udp_queries, 4);
	CHECK(ms >= 3900 && ms < 6000);
	fake_stop(&f);
}

static void test_resolve_refused(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct resolver s;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int64_t start;
	size_t n;
	int fd;

	/* A port that was just free: the ICMP port unreachable ends the wait at once. */
	CHECK_EQ_INT(resolve_parse_server("127.0.0.1:9", &s), 0);
	((struct sockaddr_in *)&s.addr)->sin_port = 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK_EQ_INT(bind(fd, (struct sockaddr *)&s.addr, s.addrlen), 0);
	CHECK_EQ_INT(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	((struct sockaddr_in *)&s.addr)->sin_port = sin.sin_port;

	start = now_ms();
	CHECK_EQ_INT(resolve_host("www.example.test", &s, &addrs, &n), -ECONNREFUSED);
	CHECK(now_ms() - start < 1000);
}

static void test_resolve_ipv6_server(void)
{
	_cleanup_free_ struct in6_addr *addrs = NULL;
	struct fake_dns f;
	size_t n;
	int r;

	r = fake_start(&f, FAKE_TRUNCATE, "::1");
	if (r < 0) {
		/* No IPv6 loopback here (disabled in this namespace): nothing to test. */
		printf("  skipped: no [::1] (%s)\n", strerror(-r));
		fake_stop(&f);
		return;
	}
	CHECK_EQ_INT(resolve_host("big.example.test", &f.server, &addrs, &n), 0);
	CHECK_EQ_INT(n, 43);
	CHECK_EQ_INT(f.tcp_queries, 2);
	fake_stop(&f);
}

static void test_resolve_literals_and_bad_names(void)
{
	struct fake_dns f;
	struct in6_addr *addrs = (void *)1;
	size_t n = 99;

	CHECK_EQ_INT(fake_start(&f, FAKE_ANSWER, "127.0.0.1"), 0);

	/* Addresses need no question to the server, as with getaddrinfo. */
	CHECK_EQ_INT(resolve_host("192.0.2.7", &f.server, &addrs, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(has_addr(addrs, n, "192.0.2.7"));
	free(addrs);
	CHECK_EQ_INT(resolve_host("2001:db8::7", &f.server, &addrs, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(has_addr(addrs, n, "2001:db8::7"));
	free(addrs);

	CHECK_EQ_INT(resolve_host("", &f.server, &addrs, &n), -EINVAL);
	CHECK_EQ_INT(resolve_host(NULL, &f.server, &addrs, &n), -EINVAL);
	CHECK_EQ_INT(resolve_host("a..example.test", &f.server, &addrs, &n), -EINVAL);
	CHECK_EQ_INT(resolve_host("bad name.example.test", &f.server, &addrs, &n), -EINVAL);
	CHECK(addrs == NULL);
	CHECK_EQ_INT(f.udp_queries, 0);
	fake_stop(&f);
}

static void test_resolve_system(void)
{
	_cleanup_free_ struct in6_addr *v4 = NULL;
	_cleanup_free_ struct in6_addr *v6 = NULL;
	_cleanup_free_ struct in6_addr *local = NULL;
	char line[512];
	bool hosts_has_localhost = false, files_first = false;
	size_t n;
	FILE *fp;

	/* Literals: getaddrinfo answers them without asking anyone. */
	CHECK_EQ_INT(resolve_host("127.0.0.1", NULL, &v4, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(has_addr(v4, n, "127.0.0.1"));
	CHECK_EQ_INT(resolve_host("::1", NULL, &v6, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(has_addr(v6, n, "::1"));

	/*
	 * "localhost" only when /etc/hosts has it and is read first, so that the test never
	 * sends a DNS query off this machine.
	 */
	fp = fopen("/etc/hosts", "re");
	while (fp && fgets(line, sizeof(line), fp))
		if (strncmp(line, "127.0.0.1", 9) == 0 && strstr(line, "localhost"))
			hosts_has_localhost = true;
	if (fp)
		fclose(fp);
	fp = fopen("/etc/nsswitch.conf", "re");
	while (fp && fgets(line, sizeof(line), fp)) {
		char first[64];

		if (sscanf(line, "hosts: %63s", first) == 1 && strcmp(first, "files") == 0)
			files_first = true;
	}
	if (fp)
		fclose(fp);
	if (!hosts_has_localhost || !files_first) {
		printf("  skipped localhost: /etc/hosts or nsswitch.conf not as expected\n");
		return;
	}
	CHECK_EQ_INT(resolve_host("localhost", NULL, &local, &n), 0);
	CHECK(n >= 1);
	CHECK(has_addr(local, n, "127.0.0.1"));
	/* getaddrinfo gives 127.0.0.1 once per socket type unless asked for one: deduped. */
	CHECK(all_distinct(local, n));
}

int main(void)
{
	RUN(test_parse_server_good);
	RUN(test_parse_server_bad);
	RUN(test_resolve_literals_and_bad_names);
	RUN(test_resolve_system);
	RUN(test_resolve_answer);
	RUN(test_resolve_cname);
	RUN(test_resolve_no_address);
	RUN(test_resolve_servfail);
	RUN(test_resolve_tcp_fallback);
	RUN(test_resolve_tcp_refused);
	RUN(test_resolve_ignores_forgeries);
	RUN(test_resolve_refused);
	RUN(test_resolve_ipv6_server);
	RUN(test_resolve_retries);
	RUN(test_resolve_timeout);
	return test_failures != 0;
}
