// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The DNS proxy's event loop: its listeners, the job's TCP clients, the upstream sockets and
 * the timer, around the I/O-free core of dnsproxy.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dnsproxy_internal.h"
#include "lib/util.h"

/* Connected UDP sockets to the upstream; each query goes out on one drawn at random. */
#define DNSPROXY_UPSTREAM_SOCKETS 8
/* While queries wait or TCP clients are connected, the timer ticks this often. */
#define DNSPROXY_TICK_MS 100
#define DNSPROXY_EVENTS	 64
/* Datagrams or connections handled per descriptor and round, so no one starves the rest. */
#define DNSPROXY_BATCH 64
/* Replies queued for a TCP client that does not read; beyond it the connection is closed. */
#define DNSPROXY_TCP_OUT_MAX (256 * 1024)

/* A TCP connection from the job: 2-byte length, message, again (RFC 1035 4.2.2, RFC 7766). */
struct dnsproxy_client {
	int fd;
	unsigned int slot;
	unsigned long long gen;
	uint8_t in[2 + DNSPROXY_QUERY_MAX_LEN];
	size_t in_len;
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	bool want_out;
	long long last_ms;
};

enum dnsproxy_kind {
	KIND_TIMER = 1,
	KIND_LISTEN,
	KIND_UPSTREAM_UDP,
	KIND_UPSTREAM_TCP,
	KIND_CLIENT,
};

enum { LISTEN_UDP4, LISTEN_TCP4, LISTEN_UDP6, LISTEN_TCP6, LISTEN_COUNT };

struct dnsproxy_loop {
	int epoll_fd, timer_fd;
	int listen_fd[LISTEN_COUNT];
	int up_udp[DNSPROXY_UPSTREAM_SOCKETS];
	struct dnsproxy_client *clients[DNSPROXY_MAX_TCP_CLIENTS];
	size_t nclients;
	long long timer_armed_ms; /* 0: not armed */
	uint8_t rx[2 + DNS_TCP_MAX_LEN];
	uint8_t tx[2 + DNS_TCP_MAX_LEN];
};

static void dnsproxy_loop_free(struct dnsproxy_loop *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < DNSPROXY_MAX_TCP_CLIENTS; i++) {
		if (l->clients[i]) {
			close(l->clients[i]->fd);
			free(l->clients[i]->out);
			free(l->clients[i]);
		}
	}
	for (size_t i = 0; i < DNSPROXY_UPSTREAM_SOCKETS; i++)
		if (l->up_udp[i] >= 0)
			close(l->up_udp[i]);
	for (size_t i = 0; i < LISTEN_COUNT; i++)
		if (l->listen_fd[i] >= 0)
			close(l->listen_fd[i]);
	if (l->timer_fd >= 0)
		close(l->timer_fd);
	if (l->epoll_fd >= 0)
		close(l->epoll_fd);
	free(l);
}

static int dnsproxy_loop_new(struct dnsproxy_loop **ret_loop)
{
	struct dnsproxy_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->epoll_fd = l->timer_fd = -1;
	for (size_t i = 0; i < LISTEN_COUNT; i++)
		l->listen_fd[i] = -1;
	for (size_t i = 0; i < DNSPROXY_UPSTREAM_SOCKETS; i++)
		l->up_udp[i] = -1;
	*ret_loop = l;
	return 0;
}

/* Events carry the kind, a slot and the slot's generation, so a stale event finds nothing. */
static uint64_t dnsproxy_tag(enum dnsproxy_kind kind, unsigned int index, unsigned long long gen)
{
	return (uint64_t)kind << 56 | (gen & 0xffffffffffULL) << 16 | (index & 0xffff);
}

static int dnsproxy_watch(struct dnsproxy *p, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(p->loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int dnsproxy_rewatch(struct dnsproxy *p, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(p->loop->epoll_fd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

static int dnsproxy_bind(int family, int type, uint16_t *ret_port, int *ret_fd)
{
	_cleanup_close_ int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int one = 1;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
			return -errno;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		return -errno;
	if (type == SOCK_STREAM && listen(fd, DNSPROXY_MAX_TCP_CLIENTS) < 0)
		return -errno;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	*ret_port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					     : ((struct sockaddr_in *)&ss)->sin_port);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int dnsproxy_listen(struct dnsproxy *p, struct dnsproxy_ports *ret_ports)
{
	struct dnsproxy_ports ports = { 0 };
	int r;

	if (p->loop)
		return -EALREADY;
	r = dnsproxy_loop_new(&p->loop);
	if (r < 0)
		return r;
	p->loop_free = dnsproxy_loop_free;
	p->loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (p->loop->epoll_fd < 0)
		return -errno;
	p->loop->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->loop->timer_fd < 0)
		return -errno;
	r = dnsproxy_watch(p, p->loop->timer_fd, EPOLLIN, dnsproxy_tag(KIND_TIMER, 0, 0));
	if (r < 0)
		return r;

	r = dnsproxy_bind(AF_INET, SOCK_DGRAM, &ports.udp4, &p->loop->listen_fd[LISTEN_UDP4]);
	if (r == 0)
		r = dnsproxy_bind(AF_INET, SOCK_STREAM, &ports.tcp4,
				  &p->loop->listen_fd[LISTEN_TCP4]);
	if (r < 0)
		return r;
	/* No ::1 (IPv6 off): IPv6 sockets are sent to ::ffff:127.0.0.1 instead. */
	r = dnsproxy_bind(AF_INET6, SOCK_DGRAM, &ports.udp6, &p->loop->listen_fd[LISTEN_UDP6]);
	if (r == 0)
		r = dnsproxy_bind(AF_INET6, SOCK_STREAM, &ports.tcp6,
				  &p->loop->listen_fd[LISTEN_TCP6]);
	if (r < 0) {
		if (r != -EADDRNOTAVAIL && r != -EAFNOSUPPORT)
			return r;
		for (size_t i = LISTEN_UDP6; i <= LISTEN_TCP6; i++) {
			if (p->loop->listen_fd[i] >= 0)
				close(p->loop->listen_fd[i]);
			p->loop->listen_fd[i] = -1;
		}
		ports.udp6 = ports.tcp6 = 0;
	}
	for (unsigned int i = 0; i < LISTEN_COUNT; i++) {
		if (p->loop->listen_fd[i] < 0)
			continue;
		r = dnsproxy_watch(p, p->loop->listen_fd[i], EPOLLIN,
				   dnsproxy_tag(KIND_LISTEN, i, 0));
		if (r < 0)
			return r;
	}
	*ret_ports = ports;
	return 0;
}

int dnsproxy_fd(const struct dnsproxy *p)
{
	return p && p->loop ? p->loop->epoll_fd : -1;
}

static void dnsproxy_client_close(struct dnsproxy *p, struct dnsproxy_client *c)
{
	close(c->fd);
	p->loop->clients[c->slot] = NULL;
	p->loop->nclients--;
	free(c->out);
	free(c);
}

/* Sends a framed message to a TCP client, queueing what the socket does not take now. */
static bool dnsproxy_client_send(struct dnsproxy *p, struct dnsproxy_client *c, const uint8_t *msg,
				 size_t len)
{
	if (c->out_off == c->out_len) {
		ssize_t n = send(c->fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			dnsproxy_client_close(p, c);
			return false;
		}
		if (n > 0) {
			msg += n;
			len -= (size_t)n;
		}
		c->out_off = c->out_len = 0;
	}
	if (!len)
		return true;
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + len > DNSPROXY_TCP_OUT_MAX ||
	    array_grow((void **)&c->out, &c->out_cap, c->out_len + len, 1) < 0) {
		dnsproxy_client_close(p, c);
		return false;
	}
	memcpy(c->out + c->out_len, msg, len);
	c->out_len += len;
	if (!c->want_out) {
		c->want_out = true;
		dnsproxy_rewatch(p, c->fd, EPOLLIN | EPOLLOUT,
				 dnsproxy_tag(KIND_CLIENT, c->slot, c->gen));
	}
	return true;
}

/* Sends the reply in p->loop->tx + 2 to whoever asked, and forgets the query. */
static void dnsproxy_deliver(struct dnsproxy *p, struct dnsproxy_query *q, int action, size_t len)
{
	if (action == DNSPROXY_REPLY && q->transport == DNSPROXY_UDP) {
		sendto(q->client_fd, p->loop->tx + 2, len, MSG_DONTWAIT,
		       (struct sockaddr *)&q->client_addr, q->client_addrlen);
	} else if (action == DNSPROXY_REPLY) {
		struct dnsproxy_client *c = p->loop->clients[q->client_slot];

		/* The client may have gone, and its slot been taken by another since. */
		if (c && c->gen == q->client_gen) {
			dnsproxy_put16(p->loop->tx, (uint16_t)len);
			dnsproxy_client_send(p, c, p->loop->tx, len + 2);
		}
	}
	dnsproxy_query_free(p, q);
}

/* reason: the deny line's, "upstream_timeout" or "upstream_error". */
static void dnsproxy_fail_why(struct dnsproxy *p, struct dnsproxy_query *q, const char *reason)
{
	size_t len;
	int action =
		dnsproxy_query_fail(p, q, reason, p->loop->tx + 2, sizeof(p->loop->tx) - 2, &len);

	dnsproxy_deliver(p, q, action, len);
}

static void dnsproxy_fail(struct dnsproxy *p, struct dnsproxy_query *q)
{
	dnsproxy_fail_why(p, q, "upstream_error");
}

static int dnsproxy_upstream_udp(struct dnsproxy *p, unsigned int index)
{
	const struct resolver *up = &p->config.upstream;
	int fd, r;

	if (p->loop->up_udp[index] >= 0)
		return p->loop->up_udp[index];
	fd = socket(up->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Connected: the kernel drops datagrams from anyone but the upstream. */
	if (connect(fd, (const struct sockaddr *)&up->addr, up->addrlen) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = dnsproxy_watch(p, fd, EPOLLIN, dnsproxy_tag(KIND_UPSTREAM_UDP, index, 0));
	if (r < 0) {
		close(fd);
		return r;
	}
	p->loop->up_udp[index] = fd;
	return fd;
}

static int dnsproxy_send_udp(struct dnsproxy *p, struct dnsproxy_query *q)
{
	int fd = dnsproxy_upstream_udp(p, q->up_index);

	if (fd < 0)
		return fd;
	if (send(fd, q->up, q->up_len, MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}

static int dnsproxy_start_tcp(struct dnsproxy *p, struct dnsproxy_query *q, long long now_ms)
{
	const struct resolver *up = &p->config.upstream;

	q->upstream_tcp = true;
	q->deadline_ms = now_ms + DNSPROXY_QUERY_TIMEOUT_MS;
	q->tcp_fd = socket(up->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->tcp_fd < 0)
		return -errno;
	if (connect(q->tcp_fd, (const struct sockaddr *)&up->addr, up->addrlen) < 0 &&
	    errno != EINPROGRESS)
		return -errno;
	q->tcp_buf = malloc(2 + DNS_TCP_MAX_LEN);
	if (!q->tcp_buf)
		return -ENOMEM;
	dnsproxy_put16(q->tcp_buf, (uint16_t)q->up_len);
	memcpy(q->tcp_buf + 2, q->up, q->up_len);
	q->tcp_len = 2 + q->up_len;
	q->tcp_off = 0;
	return dnsproxy_watch(p, q->tcp_fd, EPOLLOUT,
			      dnsproxy_tag(KIND_UPSTREAM_TCP, q->slot, q->gen));
}

static void dnsproxy_forward(struct dnsproxy *p, struct dnsproxy_query *q, long long now_ms)
{
	int r;

	if (q->transport == DNSPROXY_TCP) {
		r = dnsproxy_start_tcp(p, q, now_ms);
	} else {
		q->up_index = dnsproxy_random16(p) % DNSPROXY_UPSTREAM_SOCKETS;
		r = dnsproxy_send_udp(p, q);
	}
	if (r < 0)
		dnsproxy_fail(p, q);
}

/* An answer for q: reply, or go on over TCP, or keep waiting (-ENOMSG). */
static void dnsproxy_on_answer(struct dnsproxy *p, struct dnsproxy_query *q, const uint8_t *answer,
			       size_t len, long long now_ms)
{
	size_t rlen;
	int action = dnsproxy_query_answer(p, q, answer, len, now_ms, p->loop->tx + 2,
					   sizeof(p->loop->tx) - 2, &rlen);

	if (action == -ENOMSG) {
		/* Over UDP someone else's datagram; over TCP the connection carries nothing else.
		 */
		if (q->upstream_tcp)
			dnsproxy_fail(p, q);
		return;
	}
	if (action == DNSPROXY_RETRY_TCP) {
		if (dnsproxy_start_tcp(p, q, now_ms) < 0)
			dnsproxy_fail(p, q);
		return;
	}
	dnsproxy_deliver(p, q, action, rlen);
}

static void dnsproxy_on_upstream_udp(struct dnsproxy *p, unsigned int index, long long now_ms)
{
	int fd = p->loop->up_udp[index];

	for (int i = 0; fd >= 0 && i < DNSPROXY_BATCH; i++) {
		ssize_t n = recv(fd, p->loop->rx, sizeof(p->loop->rx), MSG_DONTWAIT);
		struct dnsproxy_query *q;
		uint16_t slot;

		if (n < 0 && errno == EAGAIN)
			break;
		/* ECONNREFUSED and friends: an earlier datagram's ICMP; the query times out. */
		if (n < DNS_HEADER_LEN)
			continue;
		slot = p->id_slot[dnsproxy_get16(p->loop->rx)];
		if (!slot)
			continue;
		q = p->queries[slot - 1];
		if (q->upstream_tcp || q->up_index != index)
			continue;
		dnsproxy_on_answer(p, q, p->loop->rx, (size_t)n, now_ms);
	}
}

static void dnsproxy_on_upstream_tcp(struct dnsproxy *p, struct dnsproxy_query *q, long long now_ms)
{
	ssize_t n;

	if (!q->tcp_reading) {
		int error = 0;
		socklen_t elen = sizeof(error);

		if (getsockopt(q->tcp_fd, SOL_SOCKET, SO_ERROR, &error, &elen) < 0 || error) {
			dnsproxy_fail(p, q);
			return;
		}
		n = send(q->tcp_fd, q->tcp_buf + q->tcp_off, q->tcp_len - q->tcp_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN) {
			dnsproxy_fail(p, q);
			return;
		}
		if (n > 0)
			q->tcp_off += (size_t)n;
		if (q->tcp_off == q->tcp_len) {
			q->tcp_reading = true;
			q->tcp_off = 0;
			if (dnsproxy_rewatch(p, q->tcp_fd, EPOLLIN,
					     dnsproxy_tag(KIND_UPSTREAM_TCP, q->slot, q->gen)) < 0)
				dnsproxy_fail(p, q);
		}
		return;
	}
	n = recv(q->tcp_fd, q->tcp_buf + q->tcp_off, 2 + DNS_TCP_MAX_LEN - q->tcp_off,
		 MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		dnsproxy_fail(p, q);
		return;
	}
	q->tcp_off += (size_t)n;
	if (q->tcp_off >= 2 && q->tcp_off >= 2 + (size_t)dnsproxy_get16(q->tcp_buf))
		dnsproxy_on_answer(p, q, q->tcp_buf + 2, dnsproxy_get16(q->tcp_buf), now_ms);
}

/* A query from the job; returns false when it cost the TCP client its connection. */
static bool dnsproxy_on_query(struct dnsproxy *p, const uint8_t *pkt, size_t len, int fd,
			      const struct sockaddr_storage *from, socklen_t fromlen,
			      struct dnsproxy_client *c, long long now_ms)
{
	unsigned int slot = c ? c->slot : 0;
	unsigned long long gen = c ? c->gen : 0;
	struct dnsproxy_query *q;
	size_t rlen;
	int action;

	/* The sender, for a deny line's pid: found only if the message is refused. */
	p->peerlen = 0;
	if (from && fromlen <= sizeof(p->peer)) {
		memcpy(&p->peer, from, fromlen);
		p->peerlen = fromlen;
	} else if (c) {
		socklen_t len = sizeof(p->peer);

		if (getpeername(c->fd, (struct sockaddr *)&p->peer, &len) == 0)
			p->peerlen = len;
	}
	action = dnsproxy_query_begin(p, pkt, len, c ? DNSPROXY_TCP : DNSPROXY_UDP, now_ms, &q,
				      p->loop->tx + 2, sizeof(p->loop->tx) - 2, &rlen);

	if (action == DNSPROXY_REPLY && !c) {
		sendto(fd, p->loop->tx + 2, rlen, MSG_DONTWAIT, (const struct sockaddr *)from,
		       fromlen);
	} else if (action == DNSPROXY_REPLY) {
		dnsproxy_put16(p->loop->tx, (uint16_t)rlen);
		return dnsproxy_client_send(p, c, p->loop->tx, rlen + 2);
	} else if (action == DNSPROXY_FORWARD) {
		if (c) {
			q->client_slot = c->slot;
			q->client_gen = c->gen;
		} else {
			q->client_fd = fd;
			memcpy(&q->client_addr, from, fromlen);
			q->client_addrlen = fromlen;
		}
		/* A failure is answered at once, and that may cost the client its connection. */
		dnsproxy_forward(p, q, now_ms);
		if (c)
			return p->loop->clients[slot] && p->loop->clients[slot]->gen == gen;
	}
	return true;
}

static void dnsproxy_on_udp(struct dnsproxy *p, int fd, long long now_ms)
{
	for (int i = 0; i < DNSPROXY_BATCH; i++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(fd, p->loop->rx, sizeof(p->loop->rx), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fromlen);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			continue;
		}
		dnsproxy_on_query(p, p->loop->rx, (size_t)n, fd, &from, fromlen, NULL, now_ms);
	}
}

static void dnsproxy_on_accept(struct dnsproxy *p, int fd, long long now_ms)
{
	for (int i = 0; i < DNSPROXY_BATCH; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct dnsproxy_client *c;
		unsigned int slot;

		if (cfd < 0)
			break;
		if (p->loop->nclients == DNSPROXY_MAX_TCP_CLIENTS || !(c = calloc(1, sizeof(*c)))) {
			close(cfd);
			continue;
		}
		for (slot = 0; p->loop->clients[slot]; slot++)
			;
		c->fd = cfd;
		c->slot = slot;
		c->gen = ++p->gen;
		c->last_ms = now_ms;
		if (dnsproxy_watch(p, cfd, EPOLLIN, dnsproxy_tag(KIND_CLIENT, slot, c->gen)) < 0) {
			close(cfd);
			free(c);
			continue;
		}
		p->loop->clients[slot] = c;
		p->loop->nclients++;
	}
}

static void dnsproxy_on_client(struct dnsproxy *p, struct dnsproxy_client *c, uint32_t events,
			       long long now_ms)
{
	if (events & EPOLLOUT) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN) {
			dnsproxy_client_close(p, c);
			return;
		}
		if (n > 0)
			c->out_off += (size_t)n;
		if (c->out_off == c->out_len) {
			c->out_off = c->out_len = 0;
			c->want_out = false;
			dnsproxy_rewatch(p, c->fd, EPOLLIN,
					 dnsproxy_tag(KIND_CLIENT, c->slot, c->gen));
		}
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (int i = 0; i < DNSPROXY_BATCH; i++) {
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			dnsproxy_client_close(p, c);
			return;
		}
		c->in_len += (size_t)n;
		c->last_ms = now_ms;
		while (c->in_len >= 2) {
			size_t msglen = dnsproxy_get16(c->in);

			/* Longer than any query we take: nothing sensible can follow. */
			if (msglen > DNSPROXY_QUERY_MAX_LEN) {
				dnsproxy_client_close(p, c);
				return;
			}
			if (c->in_len < 2 + msglen)
				break;
			if (!dnsproxy_on_query(p, c->in + 2, msglen, -1, NULL, 0, c, now_ms))
				return;
			memmove(c->in, c->in + 2 + msglen, c->in_len - 2 - msglen);
			c->in_len -= 2 + msglen;
		}
	}
}

static void dnsproxy_on_timer(struct dnsproxy *p, long long now_ms)
{
	uint64_t ticks;

	if (read(p->loop->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	p->loop->timer_armed_ms = 0;
	for (size_t i = 0; i < DNSPROXY_MAX_PENDING; i++) {
		struct dnsproxy_query *q = p->queries[i];

		if (!q)
			continue;
		if (now_ms >= q->deadline_ms) {
			dnsproxy_fail_why(p, q, "upstream_timeout");
		} else if (!q->upstream_tcp && !q->retried && now_ms >= q->retry_ms) {
			size_t len;
			int action = dnsproxy_query_rejudge(p, q, now_ms, p->loop->tx + 2,
							    sizeof(p->loop->tx) - 2, &len);

			/* A launch update since: a name it refuses is not asked again. */
			if (action != -EAGAIN) {
				dnsproxy_deliver(p, q, action, len);
				continue;
			}
			/* Same id, same socket: either answer will do. */
			q->retried = true;
			if (dnsproxy_send_udp(p, q) < 0)
				dnsproxy_fail(p, q);
		}
	}
	for (size_t i = 0; i < DNSPROXY_MAX_TCP_CLIENTS; i++) {
		struct dnsproxy_client *c = p->loop->clients[i];

		if (c && now_ms - c->last_ms >= DNSPROXY_TCP_IDLE_MS)
			dnsproxy_client_close(p, c);
	}
	dnsproxy_expire(p, now_ms);
	dnsproxy_flush_refusals(p, now_ms);
}

/*
 * One timer for everything: the next expiry or refusal line, or a tick while anything waits.
 */
static void dnsproxy_arm_timer(struct dnsproxy *p, long long now_ms)
{
	long long want = p->next_expiry_ms;
	struct itimerspec spec = { 0 };

	if (dnsproxy_next_flush_ms(p) < want)
		want = dnsproxy_next_flush_ms(p);

	if ((p->npending || p->loop->nclients) && now_ms + DNSPROXY_TICK_MS < want)
		want = now_ms + DNSPROXY_TICK_MS;
	if (want == DNSPROXY_NEVER)
		return;
	/* Armed to fire no later than needed: an early tick does no harm. */
	if (p->loop->timer_armed_ms > now_ms && p->loop->timer_armed_ms <= want)
		return;
	if (want <= now_ms)
		want = now_ms + 1;
	spec.it_value.tv_sec = want / 1000;
	spec.it_value.tv_nsec = (want % 1000) * 1000000;
	if (timerfd_settime(p->loop->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) == 0)
		p->loop->timer_armed_ms = want;
}

int dnsproxy_process(struct dnsproxy *p)
{
	struct epoll_event evs[DNSPROXY_EVENTS];
	long long now_ms;
	int n;

	if (!p->loop || p->loop->epoll_fd < 0)
		return 0;
	n = epoll_wait(p->loop->epoll_fd, evs, DNSPROXY_EVENTS, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	now_ms = monotonic_now_ms();
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;
		enum dnsproxy_kind kind = (enum dnsproxy_kind)(tag >> 56);
		unsigned int index = tag & 0xffff;
		unsigned long long gen = (tag >> 16) & 0xffffffffffULL;

		switch (kind) {
		case KIND_TIMER:
			dnsproxy_on_timer(p, now_ms);
			break;
		case KIND_LISTEN:
			if (index == LISTEN_UDP4 || index == LISTEN_UDP6)
				dnsproxy_on_udp(p, p->loop->listen_fd[index], now_ms);
			else
				dnsproxy_on_accept(p, p->loop->listen_fd[index], now_ms);
			break;
		case KIND_UPSTREAM_UDP:
			if (index < DNSPROXY_UPSTREAM_SOCKETS)
				dnsproxy_on_upstream_udp(p, index, now_ms);
			break;
		case KIND_UPSTREAM_TCP:
			if (index < DNSPROXY_MAX_PENDING && p->queries[index] &&
			    (p->queries[index]->gen & 0xffffffffffULL) == gen &&
			    p->queries[index]->tcp_fd >= 0)
				dnsproxy_on_upstream_tcp(p, p->queries[index], now_ms);
			break;
		case KIND_CLIENT:
			if (index < DNSPROXY_MAX_TCP_CLIENTS && p->loop->clients[index] &&
			    (p->loop->clients[index]->gen & 0xffffffffffULL) == gen)
				dnsproxy_on_client(p, p->loop->clients[index], evs[i].events,
						   now_ms);
			break;
		}
	}
	dnsproxy_arm_timer(p, now_ms);
	return p->fatal;
}