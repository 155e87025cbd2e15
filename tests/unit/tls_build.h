/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Builds TLS ClientHellos for the tests from a description (names, extensions, how to break
 * them), so that the builder knows what a correct parser must say: the tests' oracle.
 */
#ifndef LAUNCH_TLS_BUILD_H
#define LAUNCH_TLS_BUILD_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bpf/launch.h"

struct tls_build {
	const char *names[4]; /* host_name entries of the server_name extension */
	unsigned int nnames;
	bool no_sni_ext;      /* leave the server_name extension out */
	bool two_sni_ext;     /* a second server_name extension, with the same names */
	bool ech;	      /* an encrypted_client_hello extension */
	unsigned int nfiller; /* other extensions, of filler_len bytes each */
	unsigned int filler_len;
	unsigned int sid_len; /* session id, 0-32 */
	unsigned int ncipher; /* cipher suites */
	bool no_extensions;   /* no extensions block at all */
};

static size_t tb_put16(uint8_t *out, size_t off, unsigned int v)
{
	out[off] = (uint8_t)(v >> 8);
	out[off + 1] = (uint8_t)v;
	return off + 2;
}

static size_t tb_sni_ext(uint8_t *out, size_t off, const struct tls_build *b)
{
	size_t list = 0;

	for (unsigned int i = 0; i < b->nnames; i++)
		list += 3 + strlen(b->names[i]);
	off = tb_put16(out, off, 0);
	off = tb_put16(out, off, (unsigned int)(list + 2));
	off = tb_put16(out, off, (unsigned int)list);
	for (unsigned int i = 0; i < b->nnames; i++) {
		size_t n = strlen(b->names[i]);

		out[off++] = 0;
		off = tb_put16(out, off, (unsigned int)n);
		memcpy(out + off, b->names[i], n);
		off += n;
	}
	return off;
}

/* Writes the record into out (room for TLS_HELLO_BUF_LEN + 4096); returns its length. */
static size_t tls_build(const struct tls_build *b, uint8_t *out)
{
	size_t off = 9, ext_start;

	out[0] = 22;
	out[1] = 3;
	out[2] = 1;
	out[5] = 1;
	off = tb_put16(out, off, 0x0303);
	memset(out + off, 0xab, 32);
	off += 32;
	out[off++] = (uint8_t)b->sid_len;
	memset(out + off, 0x11, b->sid_len);
	off += b->sid_len;
	off = tb_put16(out, off, 2 * (b->ncipher ? b->ncipher : 1));
	for (unsigned int i = 0; i < (b->ncipher ? b->ncipher : 1); i++)
		off = tb_put16(out, off, 0x1301 + i);
	out[off++] = 1;
	out[off++] = 0;
	if (!b->no_extensions) {
		ext_start = off;
		off += 2;
		for (unsigned int i = 0; i < b->nfiller; i++) {
			off = tb_put16(out, off, 0x0a0a + i);
			off = tb_put16(out, off, b->filler_len);
			memset(out + off, 0x5a, b->filler_len);
			off += b->filler_len;
			if (i == 0 && !b->no_sni_ext)
				off = tb_sni_ext(out, off, b);
		}
		if (b->nfiller == 0 && !b->no_sni_ext)
			off = tb_sni_ext(out, off, b);
		if (b->two_sni_ext)
			off = tb_sni_ext(out, off, b);
		if (b->ech) {
			off = tb_put16(out, off, 0xfe0d);
			off = tb_put16(out, off, 4);
			memset(out + off, 0x77, 4);
			off += 4;
		}
		tb_put16(out, ext_start, (unsigned int)(off - ext_start - 2));
	}
	tb_put16(out, 3, (unsigned int)(off - 5));
	out[6] = (uint8_t)((off - 9) >> 16);
	tb_put16(out, 7, (unsigned int)(off - 9));
	return off;
}

#endif /* LAUNCH_TLS_BUILD_H */
