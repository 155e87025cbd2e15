// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: a request head from a hostile job (http_request_parse), then its chunked
 * body, and the next request on the connection. Checks the parser's promises, not just that
 * it does not crash: what it points at lies in the head, every shorter prefix of a head it
 * accepts is "need more", the path it decoded is one the rules can trust.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/http.h"

#define FUZZ_ASSERT(cond)                 \
	do {                              \
		if (!(cond))              \
			__builtin_trap(); \
	} while (0)

static void check_span(const char *p, size_t n, const char *buf, size_t len)
{
	FUZZ_ASSERT(p >= buf && p + n <= buf + len);
}

static void check_request(const struct http_request *req, const char *buf, size_t head_len)
{
	size_t i, plen = strlen(req->path);

	FUZZ_ASSERT(req->head_len == head_len && head_len <= HTTP_MAX_HEAD_BYTES);
	FUZZ_ASSERT(plen < HTTP_MAX_PATH_BYTES && req->path[0] == '/');
	for (i = 0; i < plen; i++)
		FUZZ_ASSERT((unsigned char)req->path[i] >= 0x20 && req->path[i] != 0x7f);
	FUZZ_ASSERT(!strstr(req->path, "//") && !strstr(req->path, "/./") &&
		    !strstr(req->path, "/../"));
	check_span(req->method, req->method_len, buf, head_len);
	check_span(req->target, req->target_len, buf, head_len);
	FUZZ_ASSERT(req->minor <= 1 && req->nheaders <= HTTP_MAX_HEADERS);
	if (req->query)
		check_span(req->query, req->query_len, buf, head_len);
	if (req->minor == 1)
		FUZZ_ASSERT(req->host != NULL);
	if (req->host)
		check_span(req->host, req->host_len, buf, head_len);
	for (i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];

		check_span(h->name, h->name_len, buf, head_len);
		check_span(h->value, h->value_len, buf, head_len);
		FUZZ_ASSERT(h->name_len > 0);
		FUZZ_ASSERT(!memchr(h->value, '\r', h->value_len) &&
			    !memchr(h->value, '\n', h->value_len));
	}
	if (req->framing == HTTP_BODY_CHUNKED)
		FUZZ_ASSERT(http_header_find(req->headers, req->nheaders, "content-length") ==
			    NULL);
	FUZZ_ASSERT(req->framing != HTTP_BODY_CLOSE);
}

/*
 * A lenient second reader, as a server behind the gateway might be: lines end at LF (a CR
 * before it dropped), names trimmed around the colon, the last Content-Length wins, and
 * "chunked" anywhere in Transfer-Encoding means chunked. Smuggling is two readers splitting
 * one stream differently, so on every head the strict parser accepts, this one must find the
 * same end and the same body.
 */
struct lenient_view {
	size_t head_len;
	enum http_framing framing;
	uint64_t content_length;
};

/* "chunked" anywhere, in any case (codings are case-insensitive). */
static bool has_chunked(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i + 7 <= len; i++)
		if (strncasecmp(s + i, "chunked", 7) == 0)
			return true;
	return false;
}

static bool lenient_read(const char *buf, size_t len, struct lenient_view *ret)
{
	const char *p = buf, *end = buf + len, *nl;
	bool first = true, chunked = false, has_length = false;
	uint64_t length = 0;

	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		const char *line_end = nl > p && nl[-1] == '\r' ? nl - 1 : nl, *colon, *n1, *v;

		if (line_end == p && !first) {
			ret->head_len = (size_t)(nl + 1 - buf);
			ret->framing = chunked	    ? HTTP_BODY_CHUNKED
				       : has_length ? HTTP_BODY_LENGTH
						    : HTTP_BODY_NONE;
			ret->content_length = chunked ? 0 : length;
			return true;
		}
		colon = memchr(p, ':', (size_t)(line_end - p));
		if (!first && colon) {
			n1 = colon;
			while (n1 > p && (n1[-1] == ' ' || n1[-1] == '\t'))
				n1--;
			v = colon + 1;
			while (v < line_end && (*v == ' ' || *v == '\t'))
				v++;
			if ((size_t)(n1 - p) == 14 && strncasecmp(p, "content-length", 14) == 0) {
				has_length = true;
				length = strtoull(v, NULL, 10);
			} else if ((size_t)(n1 - p) == 17 &&
				   strncasecmp(p, "transfer-encoding", 17) == 0 &&
				   has_chunked(v, (size_t)(line_end - v))) {
				chunked = true;
			}
		}
		first = false;
		p = nl + 1;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_request req;
	/* A copy of exactly the input's size: ASan sees a read past its end. */
	char *buf = malloc(size ? size : 1);
	size_t off = 0;
	int round;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	/* Up to four requests on one connection, as the gateway reads them. */
	for (round = 0; round < 4 && off < size; round++) {
		int r = http_request_parse(buf + off, size - off, &req);

		FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -E2BIG);
		if (r <= 0)
			break;
		check_request(&req, buf + off, (size_t)r);
		{
			struct lenient_view view;

			FUZZ_ASSERT(lenient_read(buf + off, (size_t)r, &view));
			FUZZ_ASSERT(view.head_len == (size_t)r && view.framing == req.framing);
			FUZZ_ASSERT(view.content_length == req.content_length);
		}
		FUZZ_ASSERT(http_request_parse(buf + off, (size_t)r - 1, &req) == 0);
		r = http_request_parse(buf + off, size - off, &req);
		off += (size_t)r;
		if (req.framing == HTTP_BODY_LENGTH) {
			if (req.content_length > size - off)
				break;
			off += req.content_length;
		} else if (req.framing == HTTP_BODY_CHUNKED) {
			struct http_chunked chunked;
			bool done = false;
			long n;

			http_chunked_init(&chunked);
			n = http_chunked_feed(&chunked, buf + off, size - off, &done);
			FUZZ_ASSERT(n == -EBADMSG || (n >= 0 && (size_t)n <= size - off));
			if (n < 0 || !done)
				break;
			off += (size_t)n;
		}
	}
	free(buf);
	return 0;
}
