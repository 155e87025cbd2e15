/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TLS ClientHello's server name, read as the sk_msg program reads it (bpf/tls.bpf.h):
 * its twin in plain C, which the unit tests check against it and the fuzzer drives.
 */
#ifndef LAUNCH_TLSHELLO_H
#define LAUNCH_TLSHELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/launch.h"

/* What the first record of a connection says. */
struct tlshello {
	unsigned int reason; /* 0: a ClientHello with one valid name; else enum tls_reason */
	bool ech;	     /* it carries encrypted_client_hello: name is the outer one */
	size_t name_len;
	char name[SNI_NAME_LEN]; /* lower case, no trailing dot, NUL-terminated */
};

/*
 * The bytes the first record needs, header included, from the first len bytes the job sent:
 * 0 and *ret_need, or a reason (enum tls_reason) to refuse already. With fewer than the 5
 * bytes of the header and nothing wrong yet, *ret_need is 5.
 */
unsigned int tlshello_need(const uint8_t *buf, size_t len, size_t *ret_need);

/* Parses exactly the first record (len bytes, as tlshello_need asked) into *ret. */
void tlshello_parse(const uint8_t *buf, size_t len, struct tlshello *ret);

/* The audit log's word for a reason ("name", "no_sni", ...), or NULL for another number. */
const char *tlshello_reason_name(unsigned int reason);

#endif /* LAUNCH_TLSHELLO_H */
