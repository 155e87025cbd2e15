// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One job connection through the gateway: its TLS, each request judged before a byte goes
 * upstream, bodies and responses moved as they come (a bounded buffer per direction), the
 * request's log line. Driven by the loop (gateway.c) on any event of either socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <openssl/err.h>

#include "gateway_internal.h"
#include "lib/util.h"

/* Reads what TLS has into buf: bytes read, 0 when it would block, -1 at the end or an error. */
static long relay_read(SSL *ssl, struct gw_buf *buf)
{
	int n, err;

	if (buf->len == buf->cap)
		return 0;
	n = SSL_read(ssl, buf->data + buf->len, (int)(buf->cap - buf->len));
	if (n > 0) {
		buf->len += n;
		return n;
	}
	err = SSL_get_error(ssl, n);
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
		return 0;
	ERR_clear_error();
	return -1;
}

static long relay_write(SSL *ssl, struct gw_buf *buf)
{
	int n, err;

	if (!buf->len)
		return 0;
	n = SSL_write(ssl, buf->data, (int)buf->len);
	if (n > 0) {
		gw_buf_consume(buf, n);
		return n;
	}
	err = SSL_get_error(ssl, n);
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
		return 0;
	ERR_clear_error();
	return -1;
}

/*
 * Moves body bytes from `from` to `to` (NULL: to nothing) as far as the framing, and the room
 * in `to`, allow. Returns the bytes moved, -EBADMSG on a bad chunk; *done once the body ended.
 */
static long relay_move(enum http_framing framing, uint64_t *left, struct http_chunked *chunked,
		       struct gw_buf *from, struct gw_buf *to, bool *done)
{
	size_t n = from->len;
	long r;

	*done = false;
	if (to && n > to->cap - to->len)
		n = to->cap - to->len;
	switch (framing) {
	case HTTP_BODY_NONE:
		*done = true;
		return 0;
	case HTTP_BODY_LENGTH:
		if (n > *left)
			n = *left;
		*left -= n;
		*done = *left == 0;
		break;
	case HTTP_BODY_CHUNKED:
		if (!n)
			return 0;
		r = http_chunked_feed(chunked, from->data, n, done);
		if (r < 0)
			return r;
		n = r;
		break;
	case HTTP_BODY_CLOSE:
		break;
	}
	if (to)
		gw_buf_append(to, from->data, n);
	gw_buf_consume(from, n);
	return n;
}

static void relay_log(struct gw_conn *c, bool allowed, const char *reason)
{
	const struct gateway_client_config *cfg = &c->client->config;
	struct gateway_request_log log = {
		.method = c->method,
		.host = c->host,
		.path = c->path,
		.status = c->status,
		.bytes_out = c->bytes_out,
		.bytes_in = c->bytes_in,
		.duration_ms = (monotonic_now_us() - c->start_us) / 1000.0,
		.allowed = allowed,
		.reason = reason ?: "",
		.secret = allowed ? c->secret : NULL,
		.peer_port = c->peer_port,
		.peer_v6 = c->peer_v6,
	};

	c->in_flight = false;
	if (cfg->on_request)
		cfg->on_request(cfg->ctx, &log);
}

/* The gateway's own answer; the connection goes on unless close (or the job asked to). */
static void relay_refuse(struct gw_conn *c, unsigned int status, const char *reason,
			 const char *message, bool close)
{
	close = close || !c->keep_alive;
	c->status = status;
	gw_judge_refusal(&c->out, status, reason, message, close);
	relay_log(c, false, reason);
	if (close)
		c->req = GW_REQ_CLOSING;
}

static void relay_drop_upstream(struct gw_conn *c, bool reusable)
{
	if (c->up)
		gw_upstream_release(c->up, reusable);
	c->up = NULL;
	c->resp = GW_RESP_NONE;
}

/*
 * A request whose answer has begun cannot get the gateway's own: it is logged with the reason
 * and the connection closed once what is queued for the job is out.
 */
static void relay_abort(struct gw_conn *c, const char *reason)
{
	relay_drop_upstream(c, false);
	if (c->in_flight)
		relay_log(c, false, reason);
	c->req = GW_REQ_CLOSING;
}

/* What the log says of a request: its method, Host and path (with the query if asked). */
static void relay_note_request(struct gw_conn *c, const struct http_request *req)
{
	size_t n = req->method_len < sizeof(c->method) ? req->method_len : sizeof(c->method) - 1;
	size_t i;

	memcpy(c->method, req->method, n);
	c->method[n] = '\0';
	n = req->host ? req->host_len : 0;
	if (n >= sizeof(c->host))
		n = sizeof(c->host) - 1;
	for (i = 0; i < n; i++)
		c->host[i] = (req->host[i] >= 'A' && req->host[i] <= 'Z') ? req->host[i] + 32
									  : req->host[i];
	c->host[n] = '\0';
	if (!n)
		snprintf(c->host, sizeof(c->host), "%s", c->sni);
	if (c->gw->config.log_query && req->query)
		snprintf(c->path, sizeof(c->path), "%s?%.*s", req->path, (int)req->query_len,
			 req->query);
	else
		snprintf(c->path, sizeof(c->path), "%s", req->path);
	c->keep_alive = req->keep_alive;
	c->upgrade = req->upgrade;
	c->req_framing = req->framing;
	c->req_left = req->content_length;
	http_chunked_init(&c->req_chunked);
	c->req_chunked.no_trailers = true;
	c->bytes_out = c->bytes_in = 0;
	c->secret = NULL;
	c->status = 0;
}

/* RFC 9110, 9.2.2: sent twice, these do what they do once (a POST may not). */
static bool relay_idempotent(const char *method)
{
	static const char *const idempotent[] = { "GET", "HEAD", "OPTIONS", "PUT", "DELETE" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(idempotent); i++)
		if (!strcmp(method, idempotent[i]))
			return true;
	return false;
}

/* The kept head holds the secret's value: wiped, not just freed. */
static void relay_forget_retry(struct gw_conn *c)
{
	if (c->retry_head)
		explicit_bzero(c->retry_head, c->retry_len);
	free(c->retry_head);
	c->retry_head = NULL;
	c->retry_len = 0;
}

/*
 * A pooled connection the provider closed while it idled (its keep-alive timeout passed as the
 * request went out) fails before any answer: the request goes again, once, on a new one.
 */
static bool relay_retry(struct gw_conn *c)
{
	struct gw_upstream *up;

	if (!c->retry_head || c->resp != GW_RESP_HEAD || c->up->in.len)
		return false;
	relay_drop_upstream(c, false);
	up = gw_upstream_get(c->gw, c->sni, c->port, true);
	if (!up)
		return false;
	c->up = up;
	up->conn = c;
	c->resp = GW_RESP_HEAD;
	gw_buf_append(&up->out, c->retry_head, c->retry_len);
	relay_forget_retry(c);
	return true;
}

static void relay_request(struct gw_conn *c, const struct http_request *req)
{
	struct gw_verdict v;
	int r;

	c->start_us = monotonic_now_us();
	relay_note_request(c, req);
	gw_judge(&c->client->config, c->sni, req, &v);
	/*
	 * req points into c->in: the head is taken off it only once it is rewritten, or the body
	 * behind it (a POST's, in the same read) would be moved over the head being copied.
	 */
	if (v.reason)
		gw_buf_consume(&c->in, req->head_len);
	/* The log names the host that refused it: the SNI when no rule serves that name. */
	if (v.reason && !strcmp(v.reason, "host") && !gw_judge_host(&c->client->config, c->sni))
		snprintf(c->host, sizeof(c->host), "%s", c->sni);
	if (v.reason) {
		/* A body the job holds back for a 100 Continue never comes: no way to skip it. */
		relay_refuse(c, v.status, v.reason, v.message,
			     v.status == 413 ||
				     (req->expect_continue && req->framing != HTTP_BODY_NONE));
		if (c->req != GW_REQ_CLOSING)
			c->req = GW_REQ_DISCARD;
		return;
	}
	c->http = v.http;
	c->secret = v.secret;
	c->port = v.port;
	c->up = gw_upstream_get(c->gw, c->sni, v.port, false);
	if (!c->up) {
		gw_buf_consume(&c->in, req->head_len);
		return relay_refuse(c, 502, "upstream", "the gateway is out of memory", true);
	}
	c->up->conn = c;
	r = gw_judge_rewrite(&c->client->config, c->sni, req, &c->up->out);
	gw_buf_consume(&c->in, req->head_len);
	if (r < 0) {
		relay_drop_upstream(c, false);
		return relay_refuse(c, 400, "malformed", "the request's head is too large", true);
	}
	relay_forget_retry(c);
	if (c->up->reused && req->framing == HTTP_BODY_NONE && !req->upgrade &&
	    relay_idempotent(c->method)) {
		c->retry_head = malloc(c->up->out.len);
		c->retry_len = c->retry_head ? c->up->out.len : 0;
		if (c->retry_head)
			memcpy(c->retry_head, c->up->out.data, c->retry_len);
	}
	c->req = GW_REQ_BODY;
	c->resp = GW_RESP_HEAD;
	c->in_flight = true;
}

static int relay_head(struct gw_conn *c)
{
	struct http_request req;
	int r;

	if (!c->in.len || c->out.len || c->resp != GW_RESP_NONE)
		return 0;
	r = http_request_parse(c->in.data, c->in.len, &req);
	if (r == 0 && c->in.len < HTTP_MAX_HEAD_BYTES)
		return 0;
	if (r <= 0) {
		c->start_us = monotonic_now_us();
		c->method[0] = c->path[0] = '\0';
		snprintf(c->host, sizeof(c->host), "%s", c->sni);
		c->bytes_out = c->bytes_in = 0;
		relay_refuse(c, 400, "malformed", "the request is malformed or ambiguous", true);
		return 1;
	}
	relay_request(c, &req);
	return 1;
}

/* The request side: a head to judge, a body to forward or discard, a tunnel. */
static long relay_request_side(struct gw_conn *c)
{
	struct gw_buf *to = c->up ? &c->up->out : NULL;
	bool done;
	long n;

	switch (c->req) {
	case GW_REQ_HEAD:
		if (c->eof && !c->in.len)
			return c->out.len ? 0 : -1;
		return relay_head(c);
	case GW_REQ_BODY:
	case GW_REQ_DISCARD:
		n = relay_move(c->req_framing, &c->req_left, &c->req_chunked, &c->in,
			       c->req == GW_REQ_BODY ? to : NULL, &done);
		if (n < 0 && c->req == GW_REQ_BODY && c->resp != GW_RESP_HEAD) {
			relay_abort(c, "malformed");
			return 1;
		}
		if (n < 0) {
			relay_drop_upstream(c, false);
			relay_refuse(c, 400, "malformed", "the request's chunked body is invalid",
				     true);
			return 1;
		}
		if (c->req == GW_REQ_BODY) {
			c->bytes_out += n;
			if (c->bytes_out > c->http->max_body_bytes) {
				if (c->resp != GW_RESP_HEAD) {
					relay_abort(c, "too_large");
					return 1;
				}
				relay_drop_upstream(c, false);
				relay_refuse(c, 413, "too_large",
					     "the request body is larger than the policy's "
					     "max_body_bytes",
					     true);
				return 1;
			}
		}
		if (done)
			c->req = c->req == GW_REQ_BODY ? GW_REQ_DONE : GW_REQ_HEAD;
		if (!done && c->eof && !c->in.len)
			return -1;
		return n || done;
	case GW_REQ_TUNNEL:
		if (!to)
			return c->out.len ? 0 : -1;
		n = c->in.len < to->cap - to->len ? c->in.len : to->cap - to->len;
		gw_buf_append(to, c->in.data, n);
		gw_buf_consume(&c->in, n);
		if (c->eof && !c->in.len && !to->len)
			return -1;
		return n;
	default:
		return 0;
	}
}

static void relay_response_done(struct gw_conn *c)
{
	bool reusable =
		!c->resp_close && c->req == GW_REQ_DONE && c->resp_framing != HTTP_BODY_CLOSE;

	relay_log(c, true, NULL);
	relay_drop_upstream(c, reusable);
	if (c->req == GW_REQ_DONE && c->keep_alive && c->resp_framing != HTTP_BODY_CLOSE)
		c->req = GW_REQ_HEAD;
	else
		c->req = GW_REQ_CLOSING;
}

/* The response's head to the job, its hop-by-hop headers replaced by the gateway's. */
static int relay_response_head(struct gw_conn *c, const struct http_response *resp)
{
	const char *head = c->up->in.data, *eol = memchr(head, '\n', resp->head_len);
	bool close = !c->keep_alive || resp->framing == HTTP_BODY_CLOSE;
	size_t i;

	relay_forget_retry(c);
	c->status = resp->status;
	/* A 101 the job did not ask for would tunnel its later bytes upstream unjudged. */
	if (resp->status == 101 && !c->upgrade) {
		relay_drop_upstream(c, false);
		relay_refuse(c, 502, "upstream", "the provider switched protocols unasked", true);
		return 1;
	}
	if (resp->status < 200) {
		/* 100 Continue, 101 Switching Protocols: as they are. */
		gw_buf_append(&c->out, head, resp->head_len);
		gw_buf_consume(&c->up->in, resp->head_len);
		if (resp->status == 101) {
			relay_log(c, true, NULL);
			c->req = GW_REQ_TUNNEL;
			c->resp = GW_RESP_BODY;
			c->resp_framing = HTTP_BODY_CLOSE;
		}
		return 1;
	}
	gw_buf_append(&c->out, head, eol - head + 1);
	for (i = 0; i < resp->nheaders; i++) {
		const struct http_header *h = &resp->headers[i];

		if ((h->name_len == 10 && !strncasecmp(h->name, "connection", 10)) ||
		    (h->name_len == 10 && !strncasecmp(h->name, "keep-alive", 10)))
			continue;
		gw_buf_append(&c->out, h->name, h->name_len);
		gw_buf_append(&c->out, ": ", 2);
		gw_buf_append(&c->out, h->value, h->value_len);
		gw_buf_append(&c->out, "\r\n", 2);
	}
	if (close)
		gw_buf_append(&c->out, "Connection: close\r\n", 19);
	gw_buf_append(&c->out, "\r\n", 2);
	gw_buf_consume(&c->up->in, resp->head_len);
	c->resp_framing = resp->framing;
	c->resp_left = resp->content_length;
	c->resp_close = !resp->keep_alive;
	http_chunked_init(&c->resp_chunked);
	c->resp = GW_RESP_BODY;
	if (resp->framing == HTTP_BODY_NONE)
		relay_response_done(c);
	return 1;
}

static void relay_upstream_failed(struct gw_conn *c, const char *reason)
{
	bool answered = c->resp != GW_RESP_HEAD;

	if (!strcmp(reason, "upstream") && relay_retry(c))
		return;

	if (answered)
		return relay_abort(c, reason);
	relay_drop_upstream(c, false);
	relay_refuse(c, 502, reason,
		     !strcmp(reason, "upstream_tls")
			     ? "the provider's certificate did not verify for its name"
			     : "the gateway could not reach the provider",
		     true);
}

/* The response side: the head once it is whole, then its body as it comes. */
static long relay_response_side(struct gw_conn *c)
{
	struct gw_upstream *up = c->up;
	struct http_response resp;
	bool done;
	long n;
	int r;

	if (c->resp == GW_RESP_HEAD) {
		if (!up->in.len || c->out.len)
			goto eof;
		r = http_response_parse(up->in.data, up->in.len, c->method, &resp);
		if (r > 0)
			return relay_response_head(c, &resp);
		if (r < 0 || up->in.len >= HTTP_MAX_HEAD_BYTES) {
			relay_upstream_failed(c, "upstream");
			return 1;
		}
		goto eof;
	}
	if (c->req == GW_REQ_TUNNEL) {
		n = up->in.len < c->out.cap - c->out.len ? up->in.len : c->out.cap - c->out.len;
		gw_buf_append(&c->out, up->in.data, n);
		gw_buf_consume(&up->in, n);
		if (up->eof && !up->in.len)
			c->req = GW_REQ_CLOSING;
		return n;
	}
	n = relay_move(c->resp_framing, &c->resp_left, &c->resp_chunked, &up->in, &c->out, &done);
	if (n < 0) {
		relay_abort(c, "upstream");
		return 1;
	}
	c->bytes_in += n;
	if (c->resp_framing == HTTP_BODY_CLOSE)
		done = up->eof && !up->in.len;
	if (done) {
		relay_response_done(c);
		return 1;
	}
	if (n)
		return n;
eof:
	if (up->eof && !up->in.len) {
		relay_upstream_failed(c, "upstream");
		return 1;
	}
	return 0;
}

static long relay_upstream_io(struct gw_conn *c)
{
	struct gw_upstream *up = c->up;
	const char *reason = gw_upstream_advance(up);
	long progress = 0, n;

	if (reason) {
		relay_upstream_failed(c, reason);
		return 1;
	}
	if (up->state != GW_UP_READY)
		return 0;
	n = relay_write(up->ssl, &up->out);
	if (n < 0) {
		relay_upstream_failed(c, "upstream");
		return 1;
	}
	progress += n;
	if (!up->eof) {
		n = relay_read(up->ssl, &up->in);
		if (n < 0)
			up->eof = true;
		progress += n != 0;
	}
	n = relay_response_side(c);
	if (n < 0)
		return n;
	return progress + n;
}

/*
 * After the gateway's last answer on a connection it closes (a refusal with a body still
 * coming, a 413 above all), its close_notify out and the socket shut for writing: what the
 * job still sends is read to nothing, so that the close is a FIN after the answer rather than
 * a reset, which the kernel sends when unread bytes are left and which can reach the job
 * before the answer it has not read yet. Ends at the job's EOF, after GATEWAY_LINGER_BYTES,
 * or GATEWAY_LINGER_MS without a byte (gw_relay_sweep).
 */
static long relay_linger(struct gw_conn *c)
{
	char buf[16384];
	long progress = 0;
	ssize_t n;

	for (;;) {
		n = recv(c->io.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			c->linger_bytes += (size_t)n;
			if (c->linger_bytes > GATEWAY_LINGER_BYTES)
				return -1;
			progress = 1;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return progress;
		} else {
			return -1;
		}
	}
}

/* One pass over both sockets; > 0 when anything moved, < 0 when the connection is done. */
static long relay_step(struct gw_conn *c)
{
	long progress = 0, n;
	int r;

	if (c->req == GW_REQ_LINGER)
		return relay_linger(c);
	if (c->req == GW_REQ_HANDSHAKE) {
		r = SSL_do_handshake(c->ssl);
		if (r != 1) {
			r = SSL_get_error(c->ssl, r);
			ERR_clear_error();
			return r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE ? 0 : -1;
		}
		c->req = GW_REQ_HEAD;
		progress = 1;
	}
	if (c->req != GW_REQ_CLOSING && !c->eof) {
		n = relay_read(c->ssl, &c->in);
		if (n < 0)
			c->eof = true;
		progress += n != 0;
	}
	n = relay_request_side(c);
	if (n < 0)
		return n;
	progress += n;
	if (c->up) {
		n = relay_upstream_io(c);
		if (n < 0)
			return n;
		progress += n;
	}
	n = relay_write(c->ssl, &c->out);
	if (n < 0)
		return -1;
	progress += n;
	if (c->req == GW_REQ_CLOSING && !c->out.len) {
		SSL_shutdown(c->ssl);
		ERR_clear_error();
		if (c->eof || shutdown(c->io.fd, SHUT_WR) < 0)
			return -1;
		c->req = GW_REQ_LINGER;
		return 1;
	}
	return progress;
}

void gw_relay_pump(struct gw_conn *c)
{
	long n;

	int rounds = 0;

	if (c->io.dead)
		return;
	do {
		n = relay_step(c);
		if (n < 0) {
			gw_relay_close(c);
			return;
		}
		if (n > 0)
			c->active_ms = monotonic_now_ms();
		/*
		 * A stream that never blocks would keep the loop from every other connection:
		 * after a few rounds it waits for its next turn (no event will come,
		 * edge-triggered).
		 */
		if (n > 0 && ++rounds >= GW_PUMP_ROUNDS) {
			if (!c->queued) {
				c->queued = true;
				c->next_again = c->gw->again;
				c->gw->again = c;
			}
			return;
		}
	} while (n > 0);
}

void gw_relay_again(struct gateway *gw)
{
	struct gw_conn *c = gw->again, *next;

	gw->again = NULL;
	for (; c; c = next) {
		next = c->next_again;
		c->queued = false;
		gw_relay_pump(c);
	}
}

void gw_relay_accept(struct gateway_client *client, int fd, bool v6, uint16_t peer_port)
{
	struct gateway *gw = client->gw;
	struct gw_conn *c;

	if (gw->nconns >= GATEWAY_MAX_CONNECTIONS || client->nconns >= GW_CLIENT_MAX_CONNECTIONS) {
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || gw_buf_init(&c->in, GW_IN_BYTES) || gw_buf_init(&c->out, GW_OUT_BYTES))
		goto fail;
	c->ssl = SSL_new(gw->server_ctx);
	if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1)
		goto fail;
	SSL_set_app_data(c->ssl, c);
	SSL_set_accept_state(c->ssl);
	c->io.kind = GW_CONN;
	c->io.fd = fd;
	c->gw = gw;
	c->client = client;
	c->peer_port = peer_port;
	c->peer_v6 = v6;
	c->req = GW_REQ_HANDSHAKE;
	c->active_ms = monotonic_now_ms();
	if (gw_epoll_add(gw, &c->io) < 0)
		goto fail;
	c->next = gw->conns;
	if (gw->conns)
		gw->conns->prev = c;
	gw->conns = c;
	gw->nconns++;
	client->nconns++;
	gw_relay_pump(c);
	return;
fail:
	if (c) {
		c->io.fd = -1;
		gw_relay_destroy(c);
	}
	close(fd);
}

void gw_relay_close(struct gw_conn *c)
{
	struct gateway *gw = c->gw;

	if (c->io.dead)
		return;
	if (c->queued) {
		struct gw_conn **p;

		for (p = &gw->again; *p; p = &(*p)->next_again)
			if (*p == c) {
				*p = c->next_again;
				break;
			}
		c->queued = false;
	}
	relay_drop_upstream(c, false);
	/* Once per request: one the job left before its answer ended too. */
	if (c->in_flight)
		relay_log(c, true, NULL);
	if (c->prev)
		c->prev->next = c->next;
	else
		gw->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	gw->nconns--;
	c->client->nconns--;
	gw_io_kill(gw, &c->io);
}

void gw_relay_destroy(struct gw_conn *c)
{
	if (!c)
		return;
	relay_forget_retry(c);
	SSL_free(c->ssl);
	if (c->io.fd >= 0)
		close(c->io.fd);
	gw_buf_free(&c->in);
	gw_buf_free(&c->out);
	free(c);
}

void gw_relay_sweep(struct gateway *gw, long long now_ms)
{
	struct gw_conn *c, *next;

	for (c = gw->conns; c; c = next) {
		/* A request in flight may wait long for its answer (a completion that is not
		 * streamed takes minutes): only a connection between requests counts as idle. */
		bool between = c->req == GW_REQ_HEAD || c->req == GW_REQ_DISCARD ||
			       c->req == GW_REQ_CLOSING;
		long long limit = c->req == GW_REQ_HANDSHAKE ? GATEWAY_HANDSHAKE_MS
				  : c->req == GW_REQ_LINGER  ? GATEWAY_LINGER_MS
				  : between		     ? GATEWAY_IDLE_MS
							     : GATEWAY_INFLIGHT_IDLE_MS;

		next = c->next;
		if (now_ms - c->active_ms > limit)
			gw_relay_close(c);
	}
}
