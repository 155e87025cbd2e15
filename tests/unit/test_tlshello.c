// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ClientHello parser: the sk_msg program's (bpf/tls.bpf.h, compiled here as C) against
 * its twin (policy/tlshello.c), on crafted hellos, on random ones whose builder knows the
 * answer, and on every truncation and random corruption of them.
 */
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy/tlshello.h"
#include "test.h"
#include "tls_build.h"

/* What tls.bpf.h needs of its includer: the inline attribute and bpf_loop, as the kernel runs it.
 */
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

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

static unsigned int rnd(unsigned int n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? (unsigned int)(rng_state % n) : 0;
}

/* The BPF parser's verdict, in the twin's terms. */
static void bpf_parse(const uint8_t *buf, size_t len, struct tlshello *ret)
{
	/* The program parses from a buffer of TLS_HELLO_BUF_LEN; nothing longer reaches it. */
	static uint8_t copy[TLS_BUF_SIZE];
	__u32 name_len = 0, ech = 0;

	memset(ret, 0, sizeof(*ret));
	memset(copy, 0, sizeof(copy));
	if (len > TLS_HELLO_BUF_LEN) {
		ret->reason = TLS_REASON_TOO_LARGE;
		return;
	}
	memcpy(copy, buf, len);
	ret->reason = tls_hello_parse(copy, (__u32)len, ret->name, &name_len, &ech);
	ret->ech = ech;
	ret->name_len = name_len;
	if (ret->reason)
		memset(ret->name, 0, sizeof(ret->name));
}

/* Whether both parsers agree on buf; prints the first disagreement. */
static bool parsers_agree(const uint8_t *buf, size_t len)
{
	struct tlshello twin, prog;
	size_t need = 0;
	__u32 bneed = 0;
	unsigned int r1, r2;

	tlshello_parse(buf, len, &twin);
	bpf_parse(buf, len, &prog);
	if (twin.reason != prog.reason ||
	    (!twin.reason && (twin.ech != prog.ech || strcmp(twin.name, prog.name) != 0 ||
			      twin.name_len != prog.name_len))) {
		printf("  disagree on %zu bytes: twin %u \"%s\" ech %d, bpf %u \"%s\" ech %d\n",
		       len, twin.reason, twin.name, twin.ech, prog.reason, prog.name, prog.ech);
		return false;
	}
	for (size_t n = 1; n <= len && n <= 6; n++) {
		r1 = tlshello_need(buf, n, &need);
		r2 = tls_record_check(buf, (__u32)n, &bneed);
		if (r1 != r2 || (!r1 && need != bneed)) {
			printf("  need disagrees at %zu bytes: %u/%zu vs %u/%u\n", n, r1, need, r2,
			       bneed);
			return false;
		}
	}
	return true;
}

static uint8_t hello[TLS_HELLO_BUF_LEN + 65536];

/* Builds b, checks both parsers say reason (and name when 0), and agree. */
static void expect(const struct tls_build *b, unsigned int reason, const char *name)
{
	size_t len = tls_build(b, hello);
	struct tlshello twin;

	tlshello_parse(hello, len, &twin);
	CHECK_EQ_INT(twin.reason, reason);
	if (reason == 0 && name)
		CHECK_EQ_STR(twin.name, name);
	CHECK(parsers_agree(hello, len));
}

static void test_crafted(void)
{
	char long_name[300];

	expect(&(struct tls_build){ .names = { "api.openai.com" }, .nnames = 1 }, 0,
	       "api.openai.com");
	expect(&(struct tls_build){ .names = { "API.OpenAI.Com." },
				    .nnames = 1,
				    .nfiller = 5,
				    .filler_len = 30,
				    .sid_len = 32,
				    .ncipher = 16 },
	       0, "api.openai.com");
	expect(&(struct tls_build){ .names = { "a", "b" }, .nnames = 2 }, TLS_REASON_MULTIPLE_NAMES,
	       NULL);
	expect(&(struct tls_build){ .names = { "a" }, .nnames = 1, .two_sni_ext = true },
	       TLS_REASON_MULTIPLE_NAMES, NULL);
	expect(&(struct tls_build){ .no_sni_ext = true, .nfiller = 3, .filler_len = 8 },
	       TLS_REASON_NO_SNI, NULL);
	expect(&(struct tls_build){ .no_extensions = true }, TLS_REASON_NO_SNI, NULL);
	expect(&(struct tls_build){ .nnames = 0 }, TLS_REASON_NO_SNI, NULL);
	expect(&(struct tls_build){ .names = { "x.example" }, .nnames = 1, .ech = true }, 0,
	       "x.example");
	expect(&(struct tls_build){ .names = { "a..b" }, .nnames = 1 }, TLS_REASON_MALFORMED, NULL);
	expect(&(struct tls_build){ .names = { ".a" }, .nnames = 1 }, TLS_REASON_MALFORMED, NULL);
	expect(&(struct tls_build){ .names = { "a.." }, .nnames = 1 }, TLS_REASON_MALFORMED, NULL);
	expect(&(struct tls_build){ .names = { "." }, .nnames = 1 }, TLS_REASON_MALFORMED, NULL);
	expect(&(struct tls_build){ .names = { "" }, .nnames = 1 }, TLS_REASON_MALFORMED, NULL);
	expect(&(struct tls_build){ .names = { "a b" }, .nnames = 1 }, TLS_REASON_MALFORMED, NULL);
	expect(&(struct tls_build){ .names = { "caf\xc3\xa9" }, .nnames = 1 }, TLS_REASON_MALFORMED,
	       NULL);
	expect(&(struct tls_build){ .names = { "under_score-1.example" }, .nnames = 1 }, 0,
	       "under_score-1.example");
	/* 253 characters, with and without the trailing dot; 254 is too long. */
	memset(long_name, 'a', 253);
	long_name[253] = '\0';
	expect(&(struct tls_build){ .names = { long_name }, .nnames = 1 }, 0, long_name);
	long_name[253] = '.';
	long_name[254] = '\0';
	expect(&(struct tls_build){ .names = { long_name }, .nnames = 1 }, 0, NULL);
	long_name[253] = 'a';
	expect(&(struct tls_build){ .names = { long_name }, .nnames = 1 }, TLS_REASON_MALFORMED,
	       NULL);
	/* TLS_MAX_EXTENSIONS in all are walked; one more is refused. */
	expect(&(struct tls_build){ .names = { "a" },
				    .nnames = 1,
				    .nfiller = TLS_MAX_EXTENSIONS - 1 },
	       0, "a");
	expect(&(struct tls_build){ .names = { "a" }, .nnames = 1, .nfiller = TLS_MAX_EXTENSIONS },
	       TLS_REASON_MALFORMED, NULL);
	/* A hello beyond 16 KiB cannot be in one record. */
	expect(
		&(struct tls_build){
			.names = { "a" }, .nnames = 1, .nfiller = 20, .filler_len = 1000 },
		TLS_REASON_TOO_LARGE, NULL);
}

static void test_not_hello(void)
{
	static const uint8_t http[] =
		"GET /?k=sk_live_SECRET HTTP/1.1\r\nHost: evil.example\r\n\r\n";
	struct tlshello r;
	size_t len, need;

	tlshello_parse(http, sizeof(http) - 1, &r);
	CHECK_EQ_INT(r.reason, TLS_REASON_NOT_TLS);
	CHECK(parsers_agree(http, sizeof(http) - 1));
	CHECK_EQ_INT(tlshello_need(http, 1, &need), TLS_REASON_NOT_TLS);
	/* A ClientHello split over two records: the first holds only part of it. */
	len = tls_build(&(struct tls_build){ .names = { "evil.example" }, .nnames = 1 }, hello);
	hello[3] = 0;
	hello[4] = 20;
	tlshello_parse(hello, 25, &r);
	CHECK_EQ_INT(r.reason, TLS_REASON_TOO_LARGE);
	CHECK(parsers_agree(hello, 25));
	/* Record length 0, and beyond 16 KiB. */
	hello[4] = 0;
	CHECK_EQ_INT(tlshello_need(hello, 5, &need), TLS_REASON_MALFORMED);
	hello[3] = 0x40;
	hello[4] = 1;
	CHECK_EQ_INT(tlshello_need(hello, 5, &need), TLS_REASON_TOO_LARGE);
	/* Some other handshake message: not a ClientHello. */
	len = tls_build(&(struct tls_build){ .names = { "a" }, .nnames = 1 }, hello);
	hello[5] = 2;
	tlshello_parse(hello, len, &r);
	CHECK_EQ_INT(r.reason, TLS_REASON_MALFORMED);
	CHECK(parsers_agree(hello, len));
	CHECK_EQ_STR(tlshello_reason_name(TLS_REASON_ECH), "ech");
	CHECK(tlshello_reason_name(99) == NULL);
}

/* The oracle: what a name must parse to, computed the simple way. */
static unsigned int oracle_name(const char *name, char *ret)
{
	size_t n = strlen(name);

	if (n && name[n - 1] == '.')
		n--;
	if (n == 0 || n > SNI_NAME_MAX)
		return TLS_REASON_MALFORMED;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-_.", c) || !c)
			return TLS_REASON_MALFORMED;
		if (c == '.' && (i == 0 || ret[i - 1] == '.'))
			return TLS_REASON_MALFORMED;
		ret[i] = c;
	}
	if (n < strlen(name) && ret[n - 1] == '.')
		return TLS_REASON_MALFORMED;
	ret[n] = '\0';
	return 0;
}

static void random_name(char *out, size_t room)
{
	static const char alphabet[] = "abcXYZ019-_..";
	size_t n = rnd(5) == 0 ? rnd((unsigned int)room - 1) : 1 + rnd(30);

	for (size_t i = 0; i < n; i++)
		out[i] = alphabet[rnd(sizeof(alphabet) - 1)];
	if (rnd(8) == 0 && n)
		out[rnd((unsigned int)n)] = (char)(1 + rnd(255));
	out[n] = '\0';
}

static void test_random_hellos(void)
{
	static char names[3][300];
	unsigned int bad = 0;

	for (int iter = 0; iter < 3000; iter++) {
		struct tls_build b = { .nnames = rnd(4),
				       .nfiller = rnd(12),
				       .filler_len = rnd(4) ? rnd(40) : rnd(2000),
				       .sid_len = rnd(33),
				       .ncipher = 1 + rnd(20),
				       .no_sni_ext = rnd(10) == 0,
				       .two_sni_ext = rnd(10) == 0,
				       .ech = rnd(4) == 0,
				       .no_extensions = rnd(20) == 0 };
		char expect_name[SNI_NAME_LEN] = "";
		unsigned int want;
		struct tlshello r;
		size_t len;

		if (b.nnames > 3)
			b.nnames = 3;
		for (unsigned int i = 0; i < b.nnames; i++) {
			random_name(names[i], sizeof(names[i]) - 40);
			b.names[i] = names[i];
		}
		len = tls_build(&b, hello);
		if (len - 5 > TLS_RECORD_MAX)
			want = TLS_REASON_TOO_LARGE;
		else if (b.no_extensions || (b.no_sni_ext && !b.two_sni_ext))
			want = TLS_REASON_NO_SNI;
		else if (b.two_sni_ext && !b.no_sni_ext)
			want = TLS_REASON_MULTIPLE_NAMES;
		else if (b.nnames == 0)
			want = TLS_REASON_NO_SNI;
		else if (b.nnames > 1)
			want = TLS_REASON_MULTIPLE_NAMES;
		else
			want = oracle_name(b.names[0], expect_name);
		tlshello_parse(hello, len, &r);
		if (r.reason != want || (!want && strcmp(r.name, expect_name) != 0) ||
		    (!want && r.ech != b.ech)) {
			if (bad++ < 5)
				printf("  iteration %d: reason %u \"%s\", oracle %u \"%s\"\n", iter,
				       r.reason, r.name, want, expect_name);
		}
		if (!parsers_agree(hello, len))
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
}

/* Every truncation and many corruptions of random hellos: the two parsers agree. */
static void test_mutations(void)
{
	unsigned int bad = 0;

	for (int iter = 0; iter < 300 && bad < 5; iter++) {
		struct tls_build b = { .names = { "api.example.com", "evil.example" },
				       .nnames = 1 + (rnd(6) == 0),
				       .nfiller = rnd(6),
				       .filler_len = rnd(20),
				       .sid_len = rnd(33),
				       .ncipher = 1 + rnd(4),
				       .ech = rnd(3) == 0 };
		size_t len = tls_build(&b, hello);
		static uint8_t copy[TLS_HELLO_BUF_LEN];

		for (size_t n = 0; n <= len; n++)
			if (!parsers_agree(hello, n))
				bad++;
		for (int m = 0; m < 200; m++) {
			memcpy(copy, hello, len);
			for (unsigned int k = 1 + rnd(3); k; k--)
				copy[rnd((unsigned int)len)] = (uint8_t)rnd(256);
			if (!parsers_agree(copy, len))
				bad++;
		}
	}
	CHECK_EQ_INT(bad, 0);
}

int main(void)
{
	const char *seed = getenv("TLSHELLO_TEST_SEED");

	if (seed && *seed)
		rng_state = strtoull(seed, NULL, 0) | 1;
	printf("tlshello tests: seed 0x%llx\n", rng_state);
	RUN(test_crafted);
	RUN(test_not_hello);
	RUN(test_random_hellos);
	RUN(test_mutations);
	return test_failures != 0;
}
