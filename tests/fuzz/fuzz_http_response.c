// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: an upstream's response head (http_response_parse) and, when chunked, its
 * body. The first byte picks the request's method (HEAD's answer has no body).
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

/*
 * What a lenient client would take as the head's end and the body's framing (lines end at
 * LF, names trimmed around the colon, the last Content-Length, "chunked" anywhere): the
 * gateway and the job's own HTTP library must agree where each response ends, or one
 * response could pass as two on the job's keep-alive connection.
 */
static bool has_chunked(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i + 7 <= len; i++)
		if (strncasecmp(s + i, "chunked", 7) == 0)
			return true;
	return false;
}

static bool lenient_read(const char *buf, size_t len, size_t *ret_head_len, bool *ret_chunked,
			 bool *ret_has_length, uint64_t *ret_length)
{
	const char *p = buf, *end = buf + len, *nl;
	bool first = true;

	*ret_chunked = *ret_has_length = false;
	*ret_length = 0;
	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		const char *line_end = nl > p && nl[-1] == '\r' ? nl - 1 : nl, *colon, *n1, *v;

		if (line_end == p && !first) {
			*ret_head_len = (size_t)(nl + 1 - buf);
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
				*ret_has_length = true;
				*ret_length = strtoull(v, NULL, 10);
			} else if ((size_t)(n1 - p) == 17 &&
				   strncasecmp(p, "transfer-encoding", 17) == 0 &&
				   has_chunked(v, (size_t)(line_end - v))) {
				*ret_chunked = true;
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
	static const char *const methods[] = { "GET", "HEAD", "POST", NULL };
	static struct http_response resp;
	const char *method;
	char *buf;
	size_t i, len;
	int r;

	if (size == 0)
		return 0;
	method = methods[data[0] % 4];
	len = size - 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, len);
	r = http_response_parse(buf, len, method, &resp);
	FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -E2BIG);
	if (r > 0) {
		FUZZ_ASSERT((size_t)r == resp.head_len && (size_t)r <= len &&
			    resp.head_len <= HTTP_MAX_HEAD_BYTES);
		FUZZ_ASSERT(resp.status >= 100 && resp.status <= 599 && resp.minor <= 1);
		FUZZ_ASSERT(resp.nheaders <= HTTP_MAX_HEADERS);
		for (i = 0; i < resp.nheaders; i++) {
			const struct http_header *h = &resp.headers[i];

			FUZZ_ASSERT(h->name >= buf && h->name + h->name_len <= buf + r);
			FUZZ_ASSERT(h->value >= buf && h->value + h->value_len <= buf + r);
		}
		{
			bool chunked, has_length;
			uint64_t length;
			size_t head_len;

			FUZZ_ASSERT(lenient_read(buf, (size_t)r, &head_len, &chunked, &has_length,
						 &length));
			FUZZ_ASSERT(head_len == (size_t)r);
			if (resp.framing == HTTP_BODY_CHUNKED)
				FUZZ_ASSERT(chunked && !has_length);
			if (resp.framing == HTTP_BODY_LENGTH)
				FUZZ_ASSERT(!chunked && length == resp.content_length);
			if (resp.framing == HTTP_BODY_CLOSE)
				FUZZ_ASSERT(!chunked && !has_length);
		}
		if (method && strcmp(method, "HEAD") == 0)
			FUZZ_ASSERT(resp.framing == HTTP_BODY_NONE);
		if (resp.framing == HTTP_BODY_CLOSE)
			FUZZ_ASSERT(!resp.keep_alive);
		FUZZ_ASSERT(http_response_parse(buf, (size_t)r - 1, method, &resp) == 0);
		r = http_response_parse(buf, len, method, &resp);
		if (resp.framing == HTTP_BODY_CHUNKED) {
			struct http_chunked chunked;
			bool done = false;
			long n;

			http_chunked_init(&chunked);
			n = http_chunked_feed(&chunked, buf + r, len - (size_t)r, &done);
			FUZZ_ASSERT(n == -EBADMSG || (n >= 0 && (size_t)n <= len - (size_t)r));
		}
	}
	free(buf);
	return 0;
}
