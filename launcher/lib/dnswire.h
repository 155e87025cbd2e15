/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DNS wire format (RFC 1035, 3596, 6891): building and parsing packets, no I/O. */
#ifndef LAUNCH_DNS_H
#define LAUNCH_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#define DNS_HEADER_LEN 12
/* A name on the wire, length octets and the final zero included (RFC 1035 2.3.4). */
#define DNS_NAME_WIRE_MAX 255
#define DNS_LABEL_MAX	  63
/* The text form of the longest name: 253 characters, no trailing dot, plus NUL. */
#define DNS_NAME_TEXT_MAX 256
/* A classic UDP message without EDNS0. */
#define DNS_UDP_MAX_LEN 512
/* The payload size we advertise in EDNS0 (the DNS flag day 2020 value). */
#define DNS_EDNS_UDP_SIZE 1232
/* A message over TCP, after the two-byte length prefix. */
#define DNS_TCP_MAX_LEN 65535
/* CNAMEs followed from the question name within one answer section. */
#define DNS_MAX_CNAME_HOPS 16
/* Compression pointers followed in one name: a name has at most 127 labels. */
#define DNS_MAX_POINTER_HOPS 127

#define DNS_CLASS_IN 1

#define DNS_TYPE_A     1
#define DNS_TYPE_NS    2
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_SOA   6
#define DNS_TYPE_NULL  10
#define DNS_TYPE_PTR   12
#define DNS_TYPE_MX    15
#define DNS_TYPE_TXT   16
#define DNS_TYPE_AAAA  28
#define DNS_TYPE_SRV   33
#define DNS_TYPE_OPT   41
#define DNS_TYPE_SVCB  64
#define DNS_TYPE_HTTPS 65
#define DNS_TYPE_ANY   255

#define DNS_RCODE_NOERROR  0
#define DNS_RCODE_FORMERR  1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP   4
#define DNS_RCODE_REFUSED  5

struct dns_question {
	char name[DNS_NAME_TEXT_MAX];	       /* lower-case, no trailing dot; "." for the root */
	char name_original[DNS_NAME_TEXT_MAX]; /* the same, in the case the job wrote it */
	uint16_t qtype, qclass;
};

/* What a query's OPT record (RFC 6891) says; present is false without one. */
struct dns_edns {
	bool present;
	uint16_t udp_size; /* at least 512: smaller values mean 512 (RFC 6891 6.2.5) */
	uint8_t version;
	bool dnssec_ok;
};

struct dns_answer_addr {
	struct in6_addr addr; /* IPv4 mapped ::ffff:a.b.c.d */
	uint32_t ttl;	      /* seconds: minimum over the CNAME chain and the record */
};

/*
 * Builds a recursive (RD) query for `name` ("example.com" or "example.com.", "." for the
 * root) of class IN, with an EDNS0 OPT record advertising DNS_EDNS_UDP_SIZE when `edns`.
 * Returns 0, -EINVAL for a name that is not a valid host-style name (empty label, label over
 * 63 bytes, name over 255 bytes on the wire, a byte that is not printable ASCII, '\\'),
 * or -ENOBUFS when `len` is too small.
 */
int dns_build_query(uint16_t id, const char *name, uint16_t qtype, bool edns, uint8_t *buf,
		    size_t len, size_t *ret_len);

/*
 * Parses a standard query: QR=0, OPCODE=0, exactly one question, no answer or authority
 * records, additional records that are at most one OPT, nothing after them. The name is
 * returned in lower case; names with a label holding '.', '\\', a space or a byte that is
 * not printable ASCII are refused, so the text form always means the wire name.
 * Every output may be NULL. Returns 0; -EPROTO when the message is a response (never answer
 * it); -EOPNOTSUPP for another opcode (answer NOTIMP); -EBADMSG for anything malformed
 * (answer FORMERR).
 */
int dns_parse_query(const uint8_t *pkt, size_t len, uint16_t *ret_id, struct dns_question *ret_q,
		    struct dns_edns *ret_edns);

/*
 * Parses the response to a query for `qname` with id `expect_id`, and collects the A and
 * AAAA records of the answer section owned by qname or by a name reached from it through
 * CNAME records of the answer section (at most DNS_MAX_CNAME_HOPS). Duplicate addresses are
 * merged; at most `max` are returned, the rest dropped. The rcode and TC bit are always
 * reported; no address is collected when the rcode is not NOERROR or TC is set (the answer
 * may be cut short: ask again over TCP). Every output but ret_n may be NULL.
 * Returns 0; -ENOMSG when the message is not a response to that query (wrong id, QR=0,
 * other opcode, other question: a UDP client keeps waiting); -EBADMSG when it is malformed;
 * -EINVAL when qname is not a valid name.
 */
int dns_parse_response(const uint8_t *pkt, size_t len, uint16_t expect_id, const char *qname,
		       struct dns_answer_addr *ret_addrs, size_t max, size_t *ret_n,
		       uint8_t *ret_rcode, bool *ret_truncated);

/*
 * Builds the reply with `rcode` (REFUSED, NXDOMAIN, SERVFAIL, FORMERR, ...: 0-15) to a
 * query: same id, opcode, RD and CD bits, RA set, the question echoed byte for byte (the
 * case of its letters too, for clients that check it, RFC 5452 / draft-vixie-dnsext-dns0x20),
 * and an OPT record when the query had one. A query whose question cannot be parsed gets
 * a header-only reply (QDCOUNT=0), which is what FORMERR needs.
 * Returns 0; -EBADMSG when the query is shorter than a header; -EPROTO when it is a
 * response; -EINVAL for an rcode over 15; -ENOBUFS when `len` is too small.
 */
int dns_build_error_response(const uint8_t *query, size_t qlen, uint8_t rcode, uint8_t *buf,
			     size_t len, size_t *ret_len);

/*
 * "A", "AAAA", "TXT", ... or "TYPE123" (RFC 3597) for a type without a name here; that
 * text lives in a thread-local buffer valid until the next call in the same thread.
 */
const char *dns_type_name(uint16_t qtype);
/* "NOERROR", "NXDOMAIN", ... or "RCODE12". Same buffer rule as dns_type_name. */
const char *dns_rcode_name(uint8_t rcode);

/*
 * Returns 1 when `name` matches `pattern`, else 0. ASCII case is ignored and so is one
 * trailing dot on either side. "*.example.com" matches every name strictly below
 * example.com at any depth ("a.example.com", "a.b.example.com"), not example.com itself;
 * a '*' anywhere else is an ordinary character.
 */
int dns_name_matches(const char *pattern, const char *name);

#endif /* LAUNCH_DNS_H */
