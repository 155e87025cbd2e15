/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The TLS ClientHello parser of the sk_msg program (tls.bpf.c): the first record, copied
 * whole into a buffer, to its one server name. Written for the verifier (every loop is
 * bpf_loop, every read bounded by the buffer's size) and compiled as C too, by the unit test
 * that checks it against its twin, launcher/policy/tlshello.c. Needs only the __u8..__u32
 * types, __always_inline and bpf_loop from its includer.
 */
#ifndef LAUNCH_TLS_BPF_H
#define LAUNCH_TLS_BPF_H

#include "launch.h"

/* Hides a value from clang's range analysis, so that a mask it would prove useless stays. */
#ifdef __bpf__
#define TLS_OPAQUE(x) asm volatile("" : "+r"(x))
#else
#define TLS_OPAQUE(x) ((void)0)
#endif

/*
 * A byte of the buffer, or -1 beyond what it holds. The buffer is TLS_BUF_SIZE bytes (a power
 * of two), and the mask, a no-op once off < len <= TLS_HELLO_BUF_LEN, is what the verifier
 * reads as the bound: clang may test one copy of off and index with another.
 */
static __always_inline int tls_u8(const __u8 *buf, __u32 len, __u32 off)
{
	if (off >= len || off >= TLS_HELLO_BUF_LEN)
		return -1;
	TLS_OPAQUE(off);
	return buf[off & (TLS_BUF_SIZE - 1)];
}

/* Two bytes, big-endian, or -1 beyond what the buffer holds. */
static __always_inline int tls_u16(const __u8 *buf, __u32 len, __u32 off)
{
	int hi = tls_u8(buf, len, off), lo = tls_u8(buf, len, off + 1);

	return hi < 0 || lo < 0 ? -1 : hi << 8 | lo;
}

/*
 * Judges the record header in the first bytes the job sends (len of them, at least 1).
 * Returns 0 and the bytes of the whole first record (header included) in *ret_need, or the
 * reason to refuse (TLS_REASON_*); with fewer than 5 bytes and nothing wrong yet, 0 and
 * *ret_need 5.
 */
static __always_inline __u32 tls_record_check(const __u8 *buf, __u32 len, __u32 *ret_need)
{
	int type = tls_u8(buf, len, 0), major = tls_u8(buf, len, 1), rlen = tls_u16(buf, len, 3);

	*ret_need = TLS_RECORD_HEADER_LEN;
	/* 22: handshake. A plain HTTP request ("GET ...") fails here, on its first byte. */
	if (type != 22)
		return TLS_REASON_NOT_TLS;
	if (major >= 0 && major != 3)
		return TLS_REASON_NOT_TLS;
	if (rlen < 0)
		return 0;
	if (rlen == 0)
		return TLS_REASON_MALFORMED;
	if (rlen > TLS_RECORD_MAX)
		return TLS_REASON_TOO_LARGE;
	*ret_need = TLS_RECORD_HEADER_LEN + (__u32)rlen;
	return 0;
}

/* The parser's state, shared with its loop bodies. */
struct tls_parse {
	const __u8 *buf;
	__u32 len; /* the end of the ClientHello: its record's */
	__u32 off; /* the next extension (extension loop), the next name (name loop) */
	__u32 ext_end;
	__u32 reason;
	__u32 nsni_ext; /* server_name extensions seen */
	__u32 sni_off;	/* the server_name extension's data */
	__u32 sni_end;
	__u32 nnames; /* host_name entries seen */
	__u32 name_off;
	__u32 name_len;
	__u32 ech;
	char *name; /* out: the name, lower case, without its trailing dot, zero padded */
	__u32 prev_dot;
};

static long tls_ext_step(__u32 i __attribute__((unused)), void *data)
{
	struct tls_parse *p = data;
	int type, elen;

	if (p->off == p->ext_end)
		return 1;
	type = tls_u16(p->buf, p->ext_end, p->off);
	elen = tls_u16(p->buf, p->ext_end, p->off + 2);
	if (type < 0 || elen < 0 || p->off + 4 + (__u32)elen > p->ext_end) {
		p->reason = TLS_REASON_MALFORMED;
		return 1;
	}
	if (type == TLS_EXT_SERVER_NAME) {
		p->nsni_ext++;
		p->sni_off = p->off + 4;
		p->sni_end = p->off + 4 + (__u32)elen;
	} else if (type == TLS_EXT_ECH) {
		p->ech = 1;
	}
	p->off += 4 + (__u32)elen;
	return 0;
}

static long tls_name_entry_step(__u32 i __attribute__((unused)), void *data)
{
	struct tls_parse *p = data;
	int type, nlen;

	if (p->off == p->sni_end)
		return 1;
	type = tls_u8(p->buf, p->sni_end, p->off);
	nlen = tls_u16(p->buf, p->sni_end, p->off + 1);
	/* RFC 6066 knows one name type, host_name (0); no client sends another. */
	if (type != 0 || nlen < 0 || p->off + 3 + (__u32)nlen > p->sni_end) {
		p->reason = TLS_REASON_MALFORMED;
		return 1;
	}
	p->nnames++;
	p->name_off = p->off + 3;
	p->name_len = (__u32)nlen;
	p->off += 3 + (__u32)nlen;
	return 0;
}

/*
 * One character of the name: folded to lower case and copied; anything but letters, digits,
 * '-', '_' and '.' or an empty label is malformed (a NUL or a byte above 127 would let two
 * spellings of one name differ).
 */
static long tls_name_char_step(__u32 i, void *data)
{
	struct tls_parse *p = data;
	int c = tls_u8(p->buf, p->len, p->name_off + i);

	if (c >= 'A' && c <= 'Z')
		c += 'a' - 'A';
	if (c == '.') {
		if (p->prev_dot) {
			p->reason = TLS_REASON_MALFORMED;
			return 1;
		}
		p->prev_dot = 1;
	} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
		p->prev_dot = 0;
	} else {
		p->reason = TLS_REASON_MALFORMED;
		return 1;
	}
	if (i < SNI_NAME_LEN)
		p->name[i & (SNI_NAME_LEN - 1)] = (char)c;
	return 0;
}

/*
 * Parses the ClientHello in buf (TLS_BUF_SIZE bytes), the whole first record (len bytes, as
 * tls_record_check asked). Returns 0 with the server name in name (SNI_NAME_LEN bytes, zeroed by
 * the caller) and its length in *ret_name_len, or the reason to refuse. *ret_ech: the hello carries
 * an encrypted_client_hello extension, whose outer name is the one returned.
 */
static __always_inline __u32 tls_hello_parse(const __u8 *buf, __u32 len, char *name,
					     __u32 *ret_name_len, __u32 *ret_ech)
{
	struct tls_parse p = { .buf = buf, .len = len, .name = name };
	__u32 need = 0, reason, hs_len, off;
	int v, sid_len, cs_len, comp_len, ext_len, list_len;

	*ret_name_len = 0;
	*ret_ech = 0;
	reason = tls_record_check(buf, len, &need);
	if (reason)
		return reason;
	if (need != len)
		return TLS_REASON_MALFORMED;
	/* Handshake header: type 1 (client_hello), 24-bit length, all of it in this record. */
	if (tls_u8(buf, len, 5) != 1)
		return TLS_REASON_MALFORMED;
	v = tls_u8(buf, len, 6);
	if (v < 0)
		return TLS_REASON_MALFORMED;
	hs_len = (__u32)v << 16;
	v = tls_u16(buf, len, 7);
	if (v < 0)
		return TLS_REASON_MALFORMED;
	hs_len |= (__u32)v;
	/* A ClientHello split over several records: this one does not hold its name. */
	if (hs_len > len - 9)
		return TLS_REASON_TOO_LARGE;
	if (hs_len < len - 9)
		return TLS_REASON_MALFORMED;
	/* legacy_version (2), random (32), then the session id. */
	off = 9 + 2 + 32;
	sid_len = tls_u8(buf, len, off);
	if (sid_len < 0 || sid_len > 32)
		return TLS_REASON_MALFORMED;
	off += 1 + (__u32)sid_len;
	cs_len = tls_u16(buf, len, off);
	if (cs_len < 2 || (cs_len & 1))
		return TLS_REASON_MALFORMED;
	off += 2 + (__u32)cs_len;
	comp_len = tls_u8(buf, len, off);
	if (comp_len < 1)
		return TLS_REASON_MALFORMED;
	off += 1 + (__u32)comp_len;
	if (off == len)
		return TLS_REASON_NO_SNI; /* no extensions at all */
	ext_len = tls_u16(buf, len, off);
	if (ext_len < 0 || off + 2 + (__u32)ext_len != len)
		return TLS_REASON_MALFORMED;
	p.off = off + 2;
	p.ext_end = len;
	bpf_loop(TLS_MAX_EXTENSIONS, tls_ext_step, &p, 0);
	if (p.reason)
		return p.reason;
	if (p.off != p.ext_end)
		return TLS_REASON_MALFORMED; /* more than TLS_MAX_EXTENSIONS */
	*ret_ech = p.ech;
	if (p.nsni_ext == 0)
		return TLS_REASON_NO_SNI;
	if (p.nsni_ext > 1)
		return TLS_REASON_MULTIPLE_NAMES;
	list_len = tls_u16(buf, p.sni_end, p.sni_off);
	if (list_len < 0 || p.sni_off + 2 + (__u32)list_len != p.sni_end)
		return TLS_REASON_MALFORMED;
	p.off = p.sni_off + 2;
	bpf_loop(TLS_MAX_SNI_ENTRIES, tls_name_entry_step, &p, 0);
	if (p.reason)
		return p.reason;
	if (p.off != p.sni_end)
		return TLS_REASON_MALFORMED;
	if (p.nnames == 0)
		return TLS_REASON_NO_SNI;
	if (p.nnames > 1)
		return TLS_REASON_MULTIPLE_NAMES;
	/* 253 characters, and one trailing dot; a leading dot is an empty label. */
	if (p.name_len == 0 || p.name_len > SNI_NAME_MAX + 1 || tls_u8(buf, len, p.name_off) == '.')
		return TLS_REASON_MALFORMED;
	bpf_loop(p.name_len, tls_name_char_step, &p, 0);
	if (p.reason)
		return p.reason;
	if (p.prev_dot) {
		p.name_len--;
		name[p.name_len & (SNI_NAME_LEN - 1)] = '\0';
	}
	if (p.name_len == 0 || p.name_len > SNI_NAME_MAX)
		return TLS_REASON_MALFORMED;
	*ret_name_len = p.name_len;
	return 0;
}

#endif /* LAUNCH_TLS_BPF_H */
