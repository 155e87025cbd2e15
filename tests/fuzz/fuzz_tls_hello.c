// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer entry point: the first bytes of a connection, as the job would write them, through
 * the ClientHello parser's twin (policy/tlshello.c) and the sk_msg program's parser
 * (bpf/tls.bpf.h, compiled as C); any crash, sanitizer report or disagreement is a finding.
 */
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/tlshello.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
static long bpf_loop(__u32 n, long (*fn)(__u32, void *), void *ctx, __u64 flags)
{
	(void)flags;
	for (__u32 i = 0; i < n; i++)
		if (fn(i, ctx))
			return i + 1;
	return n;
}

#include "bpf/tls.bpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The program sees at most one record, in a buffer of exactly this size. */
	static uint8_t buf[TLS_BUF_SIZE];
	char name[SNI_NAME_LEN];
	struct tlshello twin;
	__u32 name_len = 0, ech = 0, need = 0, reason;
	size_t tneed = 0;

	if (size > TLS_HELLO_BUF_LEN)
		return 0;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, size);
	memset(name, 0, sizeof(name));
	tlshello_parse(data, size, &twin);
	reason = tls_hello_parse(buf, (__u32)size, name, &name_len, &ech);
	if (reason != twin.reason)
		abort();
	if (!reason && (strcmp(name, twin.name) != 0 || name_len != twin.name_len ||
			!ech != !twin.ech || name_len == 0 || name_len > SNI_NAME_MAX))
		abort();
	if (size &&
	    (tlshello_need(data, size, &tneed) != tls_record_check(buf, (__u32)size, &need) ||
	     (!tlshello_need(data, size, &tneed) && tneed != need)))
		abort();
	return 0;
}
