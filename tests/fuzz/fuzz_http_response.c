// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: an upstream's response head (http_response_parse) and, when chunked, its
 * body. The first byte picks the request's method (HEAD's answer has no body).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/http.h"

#define FUZZ_ASSERT(cond)                 \
	do {                              \
		if (!(cond))              \
			__builtin_trap(); \
	} while (0)

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
