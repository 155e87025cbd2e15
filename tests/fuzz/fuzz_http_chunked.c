// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: the chunked decoder, differentially. The body is fed whole and then in
 * pieces whose sizes the first two bytes choose; since the gateway forwards whatever arrives,
 * the decoder must find the same end (or the same refusal) however the bytes are split.
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
	struct http_chunked whole, pieces;
	bool done_whole = false, done_pieces = false;
	long r_whole, r_pieces = 0;
	unsigned int seed;
	size_t off = 0, len;
	char *buf;

	if (size < 2)
		return 0;
	seed = (unsigned int)data[0] << 8 | data[1];
	len = size - 2;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, len);

	http_chunked_init(&whole);
	r_whole = http_chunked_feed(&whole, buf, len, &done_whole);
	FUZZ_ASSERT(r_whole == -EBADMSG || (r_whole >= 0 && (size_t)r_whole <= len));
	if (r_whole >= 0 && !done_whole)
		FUZZ_ASSERT((size_t)r_whole == len); /* it stops early only at the end */

	http_chunked_init(&pieces);
	while (off < len) {
		size_t n = 1 + seed % 7;
		long r;

		seed = seed * 1103515245u + 12345u;
		if (n > len - off)
			n = len - off;
		r = http_chunked_feed(&pieces, buf + off, n, &done_pieces);
		if (r < 0) {
			r_pieces = r;
			break;
		}
		FUZZ_ASSERT((size_t)r <= n);
		off += (size_t)r;
		r_pieces = (long)off;
		if (done_pieces)
			break;
		FUZZ_ASSERT((size_t)r == n);
	}
	FUZZ_ASSERT(r_pieces == r_whole);
	FUZZ_ASSERT(done_pieces == done_whole);
	free(buf);
	return 0;
}
