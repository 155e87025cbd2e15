/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 (FIPS 180-4), for the policy files' digests in the audit log. */
#ifndef LAUNCH_SHA256_H
#define LAUNCH_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_BYTES 32
/* Lower-case hex and its NUL. */
#define SHA256_HEX_BYTES (2 * SHA256_DIGEST_BYTES + 1)

struct sha256_ctx {
	uint32_t state[8];
	uint64_t total_bytes;
	uint8_t block[64];
	size_t used;
};

void sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(struct sha256_ctx *ctx, uint8_t ret_digest[SHA256_DIGEST_BYTES]);
/* The digest of data as lower-case hex in ret_hex. */
void sha256_hex(const void *data, size_t len, char ret_hex[SHA256_HEX_BYTES]);

#endif /* LAUNCH_SHA256_H */
