// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for gateway/http.c: heads, framing, smuggling refused, the chunked decoder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "gateway/http.h"

static struct http_request req;
static struct http_response resp;

static int parse_req(const char *text)
{
	return http_request_parse(text, strlen(text), &req);
}

static int parse_resp(const char *text, const char *method)
{
	return http_response_parse(text, strlen(text), method, &resp);
}

#define REQ_BAD(text)	   CHECK_EQ_INT(parse_req(text), -EBADMSG)
#define RESP_BAD(text, m)  CHECK_EQ_INT(parse_resp(text, m), -EBADMSG)
#define H11(line, headers) line " HTTP/1.1\r\nHost: api.x.com\r\n" headers "\r\n"

static bool span_eq(const char *s, size_t n, const char *lit)
{
	return s && strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static void test_request_simple(void)
{
	const char text[] = "POST /v1/customers?limit=3&x=%20 HTTP/1.1\r\n"
			    "Host: api.stripe.com\r\n"
			    "Authorization:  Bearer x \t\r\n"
			    "Content-Length: 12\r\n"
			    "\r\n"
			    "name=example";
	const struct http_header *h;

	CHECK_EQ_INT(parse_req(text), (int)(strlen(text) - 12));
	CHECK(span_eq(req.method, req.method_len, "POST"));
	CHECK(span_eq(req.target, req.target_len, "/v1/customers?limit=3&x=%20"));
	CHECK_EQ_STR(req.path, "/v1/customers");
	CHECK(span_eq(req.query, req.query_len, "limit=3&x=%20"));
	CHECK_EQ_INT(req.minor, 1);
	CHECK_EQ_INT(req.nheaders, 3);
	CHECK(span_eq(req.host, req.host_len, "api.stripe.com"));
	CHECK_EQ_INT(req.framing, HTTP_BODY_LENGTH);
	CHECK_EQ_INT(req.content_length, 12);
	CHECK(req.keep_alive);
	CHECK(!req.upgrade);
	CHECK(!req.expect_continue);
	CHECK_EQ_INT(req.head_len, strlen(text) - 12);
	h = http_header_find(req.headers, req.nheaders, "authorization");
	CHECK(h && span_eq(h->value, h->value_len, "Bearer x"));
	CHECK(http_header_find(req.headers, req.nheaders, "cookie") == NULL);
}

static void test_request_incomplete(void)
{
	const char text[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

	for (size_t n = 0; n < strlen(text); n++)
		CHECK_EQ_INT(http_request_parse(text, n, &req), 0);
	CHECK_EQ_INT(parse_req(text), (int)strlen(text));
	CHECK_EQ_INT(req.framing, HTTP_BODY_NONE);
	CHECK(req.query == NULL);
}

static void test_request_flags(void)
{
	CHECK(parse_req(H11("GET /", "Connection: close\r\n")) > 0);
	CHECK(!req.keep_alive);
	CHECK(parse_req("GET / HTTP/1.0\r\n\r\n") > 0);
	CHECK(!req.keep_alive);
	CHECK(req.host == NULL);
	CHECK_EQ_INT(req.minor, 0);
	CHECK(parse_req("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n") > 0);
	CHECK(req.keep_alive);
	CHECK(parse_req(H11("GET /ws",
			    "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n")) > 0);
	CHECK(req.upgrade);
	CHECK(req.keep_alive);
	CHECK(parse_req(H11("GET /ws", "Upgrade: websocket\r\n")) > 0);
	CHECK(!req.upgrade);
	CHECK(parse_req(H11("PUT /f", "Expect: 100-continue\r\nContent-Length: 5\r\n")) > 0);
	CHECK(req.expect_continue);
	CHECK(parse_req(H11("POST /f", "Transfer-Encoding: Chunked\r\n")) > 0);
	CHECK_EQ_INT(req.framing, HTTP_BODY_CHUNKED);
	CHECK(parse_req(H11("POST /f", "Content-Length: 0\r\n")) > 0);
	CHECK_EQ_INT(req.framing, HTTP_BODY_LENGTH);
	CHECK_EQ_INT(req.content_length, 0);
	CHECK(parse_req("GET / HTTP/1.1\r\nHost: [::1]:8443\r\nX-Empty:\r\n\r\n") > 0);
	CHECK(span_eq(req.host, req.host_len, "[::1]:8443"));
	CHECK(span_eq(req.headers[1].value, req.headers[1].value_len, ""));
}

static void test_path_decoding(void)
{
	CHECK(parse_req(H11("GET /v1/%63ustomers%2fx%C3%A9/", "")) > 0);
	CHECK_EQ_STR(req.path, "/v1/customers/x\xc3\xa9/");
	CHECK(parse_req(H11("GET /?", "")) > 0);
	CHECK_EQ_STR(req.path, "/");
	CHECK(span_eq(req.query, req.query_len, ""));
	CHECK(parse_req(H11("GET /a.b/..c/.d", "")) > 0);
	REQ_BAD(H11("GET /v1/%00", ""));
	REQ_BAD(H11("GET /v1/%0a", ""));
	REQ_BAD(H11("GET /v1/%", ""));
	REQ_BAD(H11("GET /v1/%4", ""));
	REQ_BAD(H11("GET /v1/%4g", ""));
	REQ_BAD(H11("GET /v1/%%41", ""));
	REQ_BAD(H11("GET /v1/../webhook_endpoints", ""));
	REQ_BAD(H11("GET /v1/%2e%2E/webhook_endpoints", ""));
	REQ_BAD(H11("GET /v1/./x", ""));
	REQ_BAD(H11("GET /v1/..", ""));
	REQ_BAD(H11("GET /v1/.", ""));
	REQ_BAD(H11("GET /v1//webhook_endpoints", ""));
	REQ_BAD(H11("GET /v1/a%2F%2Fb", ""));
	REQ_BAD(H11("GET /a\"b", ""));
	REQ_BAD(H11("GET /a\\b", ""));
	REQ_BAD(H11("GET /a#frag", ""));
	REQ_BAD(H11("GET /a?b#frag", ""));
	REQ_BAD(H11("GET /a\x80", ""));
	REQ_BAD(H11("GET /a?\x7f", ""));
}

static void test_path_too_long(void)
{
	static char text[HTTP_MAX_PATH_BYTES + 128];
	int n = snprintf(text, sizeof(text), "GET /");

	memset(text + n, 'a', HTTP_MAX_PATH_BYTES - 2);
	n += HTTP_MAX_PATH_BYTES - 2;
	snprintf(text + n, sizeof(text) - (size_t)n, " HTTP/1.1\r\nHost: a\r\n\r\n");
	CHECK(parse_req(text) > 0);
	CHECK_EQ_INT(strlen(req.path), HTTP_MAX_PATH_BYTES - 1);
	memmove(text + 6, text + 5, strlen(text + 5) + 1);
	text[5] = 'a';
	CHECK_EQ_INT(parse_req(text), -E2BIG);
}

static void test_request_line_bad(void)
{
	REQ_BAD("GET  / HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1 \r\nHost: a\r\n\r\n");
	REQ_BAD("GET / HTTP/1.2\r\nHost: a\r\n\r\n");
	REQ_BAD("GET / HTTP/2.0\r\nHost: a\r\n\r\n");
	REQ_BAD("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	REQ_BAD("GET / http/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("GET http://evil.com/ HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("CONNECT evil.com:443 HTTP/1.1\r\nHost: evil.com:443\r\n\r\n");
	REQ_BAD("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("G(T / HTTP/1.1\r\nHost: a\r\n\r\n");
	/* Methods are upper case: a rule on DELETE must not miss "delete". */
	REQ_BAD("delete /v1/x HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("Get / HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD(" GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
	REQ_BAD("GET /\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\n\r\n"); /* no Host in 1.1 */
}

static void test_smuggling(void)
{
	REQ_BAD(H11("POST /", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 5\r\nContent-Length: 6\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 5\r\nContent-Length: 5\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 5, 5\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: +5\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 0x5\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: \r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 99999999999999999999\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 5 6\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 010\r\n"));
	REQ_BAD(H11("POST /", "Content-Length: 00\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: gzip, chunked\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: chunked, gzip\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: chunked, chunked\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: xchunked\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: identity\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding: \"chunked\"\r\n"));
	REQ_BAD(H11("POST /", "Transfer-Encoding:\r\n"));
	REQ_BAD("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
	/* obs-fold */
	REQ_BAD(H11("POST /", "X-A: 1\r\n Transfer-Encoding: chunked\r\n"));
	REQ_BAD(H11("POST /", "X-A: 1\r\n\tchunked\r\n"));
	/* a space or tab before the colon */
	REQ_BAD(H11("POST /", "Transfer-Encoding : chunked\r\n"));
	REQ_BAD(H11("POST /", "Content-Length\t: 5\r\n"));
	/* bare LF and bare CR */
	REQ_BAD("GET / HTTP/1.1\nHost: a\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\nHost: a\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\nHost: a\r\n\n");
	REQ_BAD("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\nX: a\nTransfer-Encoding: chunked\r\nHost: a\r\n\r\n");
	/* control bytes */
	CHECK_EQ_INT(http_request_parse("GET / HTTP/1.1\r\nHost: a\r\nX: \0\r\n\r\n", 34, &req),
		     -EBADMSG);
	REQ_BAD(H11("GET /", "X: a\x01"
			     "b\r\n"));
	REQ_BAD(H11("GET /", "X: a\x7f\r\n"));
	REQ_BAD(H11("GET /", "X\x01: a\r\n"));
	/* bad or missing names, no colon */
	REQ_BAD(H11("GET /", ": a\r\n"));
	REQ_BAD(H11("GET /", "NoColon\r\n"));
	REQ_BAD(H11("GET /", "X(Y): a\r\n"));
	/* Host twice, or not a host */
	REQ_BAD(H11("GET /", "Host: b.com\r\n"));
	REQ_BAD("GET / HTTP/1.1\r\nHost:\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\nHost: a@b.com\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\nHost: a.com/x\r\n\r\n");
	REQ_BAD("GET / HTTP/1.1\r\nHost: a.com b.com\r\n\r\n");
	/* Expect other than 100-continue, an upgrade to something not parsed */
	REQ_BAD(H11("GET /", "Expect: 200-ok\r\n"));
	REQ_BAD(H11("GET /", "Connection: Upgrade\r\nUpgrade: h2c\r\n"));
	REQ_BAD(H11("GET /", "Upgrade: h2c\r\n"));
	REQ_BAD(H11("GET /", "Upgrade: websocket/13\r\n"));
	REQ_BAD(H11("GET /", "Connection: close;x\r\n"));
}

static void test_head_limits(void)
{
	static char text[HTTP_MAX_HEAD_BYTES + 256];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 1; i < HTTP_MAX_HEADERS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "X-%d: v\r\n", i);
	snprintf(text + n, sizeof(text) - n, "\r\n");
	CHECK(parse_req(text) > 0);
	CHECK_EQ_INT(req.nheaders, HTTP_MAX_HEADERS);
	snprintf(text + n, sizeof(text) - n, "X-last: v\r\n\r\n");
	CHECK_EQ_INT(parse_req(text), -E2BIG);

	/* A head of exactly the limit is read, one byte more is refused, and so is a buffer
	 * of the limit's size that holds no end of the head. */
	n = (size_t)snprintf(text, sizeof(text), "GET / HTTP/1.1\r\nHost: a\r\nX: ");
	memset(text + n, 'v', HTTP_MAX_HEAD_BYTES - n - 4);
	memcpy(text + HTTP_MAX_HEAD_BYTES - 4, "\r\n\r\n", 5);
	CHECK_EQ_INT(parse_req(text), HTTP_MAX_HEAD_BYTES);
	memmove(text + n + 1, text + n, strlen(text + n) + 1);
	CHECK_EQ_INT(parse_req(text), -E2BIG);
	memset(text, 'v', sizeof(text));
	memcpy(text, "GET / HTTP/1.1\r\nX: ", 19);
	CHECK_EQ_INT(http_request_parse(text, HTTP_MAX_HEAD_BYTES - 1, &req), 0);
	CHECK_EQ_INT(http_request_parse(text, HTTP_MAX_HEAD_BYTES, &req), -E2BIG);
	CHECK_EQ_INT(http_request_parse(text, sizeof(text), &req), -E2BIG);
}

static void test_pipelined(void)
{
	const char text[] = "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n";
	int n = parse_req(text);

	CHECK_EQ_INT(n, (int)(strlen(text) / 2));
	CHECK_EQ_STR(req.path, "/a");
	CHECK_EQ_INT(http_request_parse(text + n, strlen(text) - (size_t)n, &req), n);
	CHECK_EQ_STR(req.path, "/b");
}

static void test_response(void)
{
	CHECK(parse_resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", "GET") > 0);
	CHECK_EQ_INT(resp.status, 200);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_LENGTH);
	CHECK_EQ_INT(resp.content_length, 3);
	CHECK(resp.keep_alive);
	CHECK(!resp.event_stream);
	CHECK(parse_resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", "HEAD") > 0);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_NONE);
	CHECK(parse_resp("HTTP/1.1 204\r\n\r\n", "DELETE") > 0);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_NONE);
	CHECK(parse_resp("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", "GET") >
	      0);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_NONE);
	CHECK(parse_resp("HTTP/1.1 100 Continue\r\n\r\n", "PUT") > 0);
	CHECK_EQ_INT(resp.status, 100);
	CHECK(parse_resp("HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n"
			 "Upgrade: websocket\r\n\r\n",
			 "GET") > 0);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_NONE);
	CHECK(parse_resp("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
			 "Transfer-Encoding: chunked\r\n\r\n",
			 "POST") > 0);
	CHECK(resp.event_stream);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_CHUNKED);
	CHECK(parse_resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "GET") > 0);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_CHUNKED);
	CHECK(parse_resp("HTTP/1.1 200 OK\r\nContent-Type: text/event-streamx\r\n\r\n", "GET") > 0);
	CHECK(!resp.event_stream);
	CHECK_EQ_INT(resp.framing, HTTP_BODY_CLOSE);
	CHECK(!resp.keep_alive);
	CHECK(parse_resp("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", "GET") > 0);
	CHECK(!resp.keep_alive);
	CHECK_EQ_INT(resp.minor, 0);
	CHECK(parse_resp("HTTP/1.1 503 \r\nConnection: close\r\nContent-Length: 0\r\n\r\n", "GET") >
	      0);
	CHECK(!resp.keep_alive);
	CHECK_EQ_INT(parse_resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n", "GET"), 0);
}

static void test_response_bad(void)
{
	RESP_BAD("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		 "GET");
	RESP_BAD("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 200 OK\r\nTransfer-Encoding: br\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 200 OK\nContent-Length: 3\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 600 Nope\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 20 OK\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 2000 OK\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 200 O\x01K\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1  200 OK\r\n\r\n", "GET");
	RESP_BAD("HTTP/2 200\r\n\r\n", "GET");
	RESP_BAD("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HEAD");
}

/* Feeds text whole, then in every split into two pieces, and byte by byte. */
static long chunked_consume(const char *text, size_t len, size_t split, bool *ret_done)
{
	struct http_chunked c;
	long a, b;

	http_chunked_init(&c);
	*ret_done = false;
	a = http_chunked_feed(&c, text, split, ret_done);
	if (a < 0 || *ret_done)
		return a;
	b = http_chunked_feed(&c, text + split, len - split, ret_done);
	return b < 0 ? b : a + b;
}

static void check_chunked_ok(int line, const char *text, size_t body_end)
{
	size_t len = strlen(text);

	for (size_t split = 0; split <= len; split++) {
		bool done = false;
		long r = chunked_consume(text, len, split, &done);

		if (r != (long)body_end || !done) {
			printf("  %s:%d: split %zu: %ld done %d, expected %zu done\n", __FILE__,
			       line, split, r, done, body_end);
			test_current_failed = 1;
			return;
		}
	}
}
#define CHUNKED_OK(text, end) check_chunked_ok(__LINE__, text, end)

static void check_chunked_bad(int line, const char *text)
{
	struct http_chunked c;
	bool done = false;
	long r;

	http_chunked_init(&c);
	r = http_chunked_feed(&c, text, strlen(text), &done);
	if (r != -EBADMSG) {
		printf("  %s:%d: \"%s\": %ld, expected -EBADMSG\n", __FILE__, line, text, r);
		test_current_failed = 1;
	}
}
#define CHUNKED_BAD(text) check_chunked_bad(__LINE__, text)

static void test_chunked(void)
{
	CHUNKED_OK("0\r\n\r\n", 5);
	CHUNKED_OK("5\r\nhello\r\n0\r\n\r\n", 15);
	CHUNKED_OK("5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n", 15);
	CHUNKED_OK("A;name=value\r\n0123456789\r\n000\r\n\r\n", 33);
	CHUNKED_OK("a\r\n0123456789\r\n0\r\nX-Trailer: yes\r\nY:\r\n\r\n", 40);
	CHUNKED_OK("1\r\n\r\r\n0\r\n\r\n", 11);
}

/* A request's body: no trailer field (it would go upstream unjudged), the empty end is fine. */
static void test_chunked_no_trailers(void)
{
	static const char with[] = "a\r\n0123456789\r\n0\r\nAuthorization: Bearer x\r\n\r\n";
	static const char without[] = "a\r\n0123456789\r\n0\r\n\r\n";
	struct http_chunked c;
	bool done = false;

	http_chunked_init(&c);
	c.no_trailers = true;
	CHECK(http_chunked_feed(&c, with, sizeof(with) - 1, &done) == -EBADMSG);
	http_chunked_init(&c);
	c.no_trailers = true;
	CHECK(http_chunked_feed(&c, without, sizeof(without) - 1, &done) ==
	      (long)(sizeof(without) - 1));
	CHECK(done);
}

static void test_chunked_partial(void)
{
	struct http_chunked c;
	bool done = true;

	http_chunked_init(&c);
	CHECK_EQ_INT(http_chunked_feed(&c, "10\r\nabc", 7, &done), 7);
	CHECK(!done);
	CHECK_EQ_INT(c.left, 13);
	CHECK_EQ_INT(http_chunked_feed(&c, "", 0, &done), 0);
	CHECK(!done);
	CHECK_EQ_INT(http_chunked_feed(&c, "0123456789abc\r\n0\r\n\r\nrest", 25, &done), 20);
	CHECK(done);
	CHECK_EQ_INT(http_chunked_feed(&c, "rest", 4, &done), 0);
	CHECK(done);
}

static void test_chunked_bad(void)
{
	CHUNKED_BAD("\r\n");
	CHUNKED_BAD("g\r\n");
	CHUNKED_BAD("-1\r\n");
	CHUNKED_BAD("+1\r\n");
	CHUNKED_BAD("0x5\r\n");
	CHUNKED_BAD(" 5\r\n");
	CHUNKED_BAD("5 \r\n");
	CHUNKED_BAD("5\n");
	CHUNKED_BAD("5\rx");
	CHUNKED_BAD("5\r\nhelloX");
	CHUNKED_BAD("5\r\nhello\rX");
	CHUNKED_BAD("5\r\nhello\n");
	CHUNKED_BAD("5;a\x01\r\n");
	CHUNKED_BAD("40000000000000001\r\n");
	CHUNKED_BAD("4000000000000001\r\n");
	CHUNKED_BAD("ffffffffffffffffffff\r\n");
	CHUNKED_BAD("0\r\n X: a\r\n\r\n");
	CHUNKED_BAD("0\r\nX : a\r\n\r\n");
	CHUNKED_BAD("0\r\nX: a\n\r\n");
	CHUNKED_BAD("0\r\n\r\r");
	CHUNKED_BAD("0\r\nX: \x7f\r\n\r\n");
}

static void test_chunked_limits(void)
{
	static char text[HTTP_MAX_HEAD_BYTES + 16];
	struct http_chunked c;
	bool done = false;

	/* 2^62 exactly is the largest size; leading zeros count against the line's length. */
	http_chunked_init(&c);
	CHECK_EQ_INT(http_chunked_feed(&c, "4000000000000000\r\n", 18, &done), 18);
	CHECK_EQ_INT(c.left, 1ULL << 62);
	memset(text, '0', sizeof(text));
	http_chunked_init(&c);
	CHECK_EQ_INT(http_chunked_feed(&c, text, HTTP_MAX_HEAD_BYTES, &done), HTTP_MAX_HEAD_BYTES);
	CHECK_EQ_INT(http_chunked_feed(&c, text, 1, &done), -EBADMSG);
	/* Trailers: their total is bounded too. */
	http_chunked_init(&c);
	CHECK_EQ_INT(http_chunked_feed(&c, "0\r\nX: ", 6, &done), 6);
	memset(text, 'v', sizeof(text));
	CHECK_EQ_INT(http_chunked_feed(&c, text, sizeof(text), &done), -EBADMSG);
}

int main(void)
{
	RUN(test_request_simple);
	RUN(test_request_incomplete);
	RUN(test_request_flags);
	RUN(test_path_decoding);
	RUN(test_path_too_long);
	RUN(test_request_line_bad);
	RUN(test_smuggling);
	RUN(test_head_limits);
	RUN(test_pipelined);
	RUN(test_response);
	RUN(test_response_bad);
	RUN(test_chunked);
	RUN(test_chunked_partial);
	RUN(test_chunked_no_trailers);
	RUN(test_chunked_bad);
	RUN(test_chunked_limits);
	return test_failures ? 1 : 0;
}
