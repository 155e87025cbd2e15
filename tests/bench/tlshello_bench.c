// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The user-space twin of the kernel's ClientHello judgement (launcher/policy/tlshello.c, which
 * the unit tests hold to bpf/tls.bpf.h), timed on OpenSSL's own ClientHello: a lower bound for
 * the sk_msg program's parse, without the program's entry, cork and map look-ups.
 *
 * usage: tlshello_bench NAME N    prints {"ns_per_hello": T, "bytes": B, "reason": R}
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <openssl/ssl.h>

#include "policy/tlshello.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static uint8_t hello[TLS_HELLO_BUF_LEN];
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	struct tlshello parsed;
	unsigned int reason = 0;
	uint64_t t0, ns;
	size_t need = 0;
	long n;
	int len;
	SSL *ssl;

	if (argc != 3 || !ctx || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: tlshello_bench NAME N\n");
		return 2;
	}
	ssl = SSL_new(ctx);
	SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_connect_state(ssl);
	SSL_set_tlsext_host_name(ssl, argv[1]);
	(void)SSL_do_handshake(ssl);
	len = BIO_read(SSL_get_wbio(ssl), hello, sizeof(hello));
	if (len <= 0)
		return 1;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		reason = tlshello_need(hello, (size_t)len, &need);
		if (reason == 0)
			tlshello_parse(hello, need, &parsed);
		/* Keeps the compiler from hoisting the call out of the loop. */
		__asm__ volatile("" : : "r"(&parsed) : "memory");
	}
	ns = now_ns() - t0;
	printf("{\"ns_per_hello\": %.1f, \"bytes\": %d, \"reason\": %u}\n", (double)ns / (double)n,
	       len, reason ? reason : parsed.reason);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return 0;
}
