/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DNS wire format: queries, responses and error replies, parsed as hostile input. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dnswire.h"

#define DNS_FLAG_QR   0x8000
#define DNS_FLAG_TC   0x0200
#define DNS_FLAG_RD   0x0100
#define DNS_FLAG_RA   0x0080
#define DNS_FLAG_CD   0x0010
#define DNS_OPCODE(f) (((f) >> 11) & 0xf)
#define DNS_RCODE(f)  ((f)&0xf)
/* TYPE, CLASS, TTL and RDLENGTH after a record's owner name. */
#define DNS_RR_FIXED_LEN 10
#define DNS_EDNS_DO	 0x8000

struct dns_header {
	uint16_t id, flags, qdcount, ancount, nscount, arcount;
};

/* One resource record; the owner name is decompressed, its letters as they were sent. */
struct dns_rr {
	uint8_t name[DNS_NAME_WIRE_MAX];
	size_t name_len;
	uint16_t type, class;
	uint32_t ttl;
	size_t rdata_off;
	uint16_t rdlen;
};

/* A name on the wire, decompressed, as a CNAME chain link with its running minimum TTL. */
struct dns_chain_link {
	uint8_t name[DNS_NAME_WIRE_MAX];
	size_t name_len;
	uint32_t ttl;
};

static uint16_t dns_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t dns_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void dns_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static char dns_ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * Bytes allowed in a label of a name we turn into text: printable ASCII without the
 * separator '.' and the escape '\\', so that the text of a name can never read as another
 * name ("a.b" as one label would otherwise match a policy for a.b).
 */
static bool dns_label_byte_ok(uint8_t c)
{
	return c > 0x20 && c < 0x7f && c != '.' && c != '\\';
}

static int dns_read_header(const uint8_t *pkt, size_t len, struct dns_header *ret_h)
{
	if (!pkt || len < DNS_HEADER_LEN)
		return -EBADMSG;
	ret_h->id = dns_get16(pkt);
	ret_h->flags = dns_get16(pkt + 2);
	ret_h->qdcount = dns_get16(pkt + 4);
	ret_h->ancount = dns_get16(pkt + 6);
	ret_h->nscount = dns_get16(pkt + 8);
	ret_h->arcount = dns_get16(pkt + 10);
	return 0;
}

/*
 * Reads the name at *off into `wire`, uncompressed. Bytes in place (before the first
 * compression pointer) must lie below `limit`, bytes reached through pointers below `len`.
 * Without recursion: a loop bounded by DNS_MAX_POINTER_HOPS jumps and by the 255-byte name
 * limit, so pointer cycles and endless label chains both end in -EBADMSG. *off is moved past
 * the name as it sits in place.
 */
static int dns_read_name(const uint8_t *pkt, size_t len, size_t limit, size_t *off, uint8_t *wire,
			 size_t *ret_wire_len)
{
	size_t pos = *off, wlen = 0, after = 0, bound = limit < len ? limit : len;
	unsigned int hops = 0;
	bool jumped = false;

	for (;;) {
		uint8_t c;

		if (pos >= bound)
			return -EBADMSG;
		c = pkt[pos];
		switch (c & 0xc0) {
		case 0xc0:
			if (pos + 1 >= bound)
				return -EBADMSG;
			if (++hops > DNS_MAX_POINTER_HOPS)
				return -EBADMSG;
			if (!jumped) {
				after = pos + 2;
				jumped = true;
				bound = len;
			}
			pos = (size_t)(c & 0x3f) << 8 | pkt[pos + 1];
			break;
		case 0x00:
			if (c == 0) {
				wire[wlen++] = 0;
				*off = jumped ? after : pos + 1;
				*ret_wire_len = wlen;
				return 0;
			}
			/* Keep room for this label and the final zero. */
			if (wlen + 1 + c + 1 > DNS_NAME_WIRE_MAX)
				return -EBADMSG;
			if (c > bound - pos - 1)
				return -EBADMSG;
			memcpy(wire + wlen, pkt + pos, 1 + (size_t)c);
			wlen += 1 + (size_t)c;
			pos += 1 + (size_t)c;
			break;
		default:
			/* 0x40 and 0x80: extended label types (RFC 6891 5), never deployed. */
			return -EBADMSG;
		}
	}
}

/* Both names are well-formed wire names: equal lengths and caseless bytes mean equal names. */
static bool dns_name_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return false;
	/* Length octets are at most 63, below 'A', so lowering leaves them as they are. */
	for (size_t i = 0; i < alen; i++)
		if (dns_ascii_lower((char)a[i]) != dns_ascii_lower((char)b[i]))
			return false;
	return true;
}

static int dns_name_from_text(const char *text, uint8_t *wire, size_t *ret_wire_len)
{
	size_t tlen, wlen = 0, start = 0;

	if (!text || !*text)
		return -EINVAL;
	tlen = strlen(text);
	if (strcmp(text, ".") == 0) {
		wire[0] = 0;
		*ret_wire_len = 1;
		return 0;
	}
	if (text[tlen - 1] == '.')
		tlen--;
	/* Text of tlen bytes becomes tlen + 2 wire bytes: first length octet and final zero. */
	if (tlen + 2 > DNS_NAME_WIRE_MAX)
		return -EINVAL;
	for (size_t i = 0; i <= tlen; i++) {
		size_t label_len;

		if (i < tlen && text[i] != '.') {
			if (!dns_label_byte_ok((uint8_t)text[i]))
				return -EINVAL;
			continue;
		}
		label_len = i - start;
		if (label_len == 0 || label_len > DNS_LABEL_MAX)
			return -EINVAL;
		wire[wlen++] = (uint8_t)label_len;
		memcpy(wire + wlen, text + start, label_len);
		wlen += label_len;
		start = i + 1;
	}
	wire[wlen++] = 0;
	*ret_wire_len = wlen;
	return 0;
}

/*
 * Lower-case text without a trailing dot, "." for the root, and the same in the case the
 * sender wrote (for the audit log: a payload in a label survives); -EBADMSG for unsafe bytes.
 */
static int dns_name_to_text(const uint8_t *wire, size_t wire_len, char *text, char *original)
{
	size_t pos = 0, tlen = 0;

	if (wire_len == 1) {
		strcpy(text, ".");
		strcpy(original, ".");
		return 0;
	}
	while (pos < wire_len && wire[pos] != 0) {
		uint8_t label_len = wire[pos++];

		if (tlen > 0) {
			original[tlen] = '.';
			text[tlen++] = '.';
		}
		for (uint8_t i = 0; i < label_len; i++) {
			uint8_t c = wire[pos++];

			if (!dns_label_byte_ok(c))
				return -EBADMSG;
			original[tlen] = (char)c;
			text[tlen++] = dns_ascii_lower((char)c);
		}
	}
	original[tlen] = '\0';
	text[tlen] = '\0';
	return 0;
}

static int dns_read_rr(const uint8_t *pkt, size_t len, size_t *off, struct dns_rr *ret_rr)
{
	size_t pos = *off;
	int r;

	r = dns_read_name(pkt, len, len, &pos, ret_rr->name, &ret_rr->name_len);
	if (r < 0)
		return r;
	if (len - pos < DNS_RR_FIXED_LEN)
		return -EBADMSG;
	ret_rr->type = dns_get16(pkt + pos);
	ret_rr->class = dns_get16(pkt + pos + 2);
	ret_rr->ttl = dns_get32(pkt + pos + 4);
	ret_rr->rdlen = dns_get16(pkt + pos + 8);
	pos += DNS_RR_FIXED_LEN;
	if (ret_rr->rdlen > len - pos)
		return -EBADMSG;
	ret_rr->rdata_off = pos;
	*off = pos + ret_rr->rdlen;
	return 0;
}

/* RFC 2181 8: a TTL with the top bit set is to be taken as zero. */
static uint32_t dns_ttl(uint32_t raw)
{
	return raw > 0x7fffffffu ? 0 : raw;
}

int dns_build_query(uint16_t id, const char *name, uint16_t qtype, bool edns, uint8_t *buf,
		    size_t len, size_t *ret_len)
{
	uint8_t wire[DNS_NAME_WIRE_MAX];
	size_t wire_len, need, pos;
	int r;

	r = dns_name_from_text(name, wire, &wire_len);
	if (r < 0)
		return r;
	/* The OPT record: root name, TYPE, CLASS (payload size), TTL, RDLENGTH. */
	need = DNS_HEADER_LEN + wire_len + 4 + (edns ? 1 + DNS_RR_FIXED_LEN : 0);
	if (!buf || len < need)
		return -ENOBUFS;

	memset(buf, 0, need);
	dns_put16(buf, id);
	dns_put16(buf + 2, DNS_FLAG_RD);
	dns_put16(buf + 4, 1);
	dns_put16(buf + 10, edns ? 1 : 0);
	pos = DNS_HEADER_LEN;
	memcpy(buf + pos, wire, wire_len);
	pos += wire_len;
	dns_put16(buf + pos, qtype);
	dns_put16(buf + pos + 2, DNS_CLASS_IN);
	pos += 4;
	if (edns) {
		buf[pos++] = 0;
		dns_put16(buf + pos, DNS_TYPE_OPT);
		dns_put16(buf + pos + 2, DNS_EDNS_UDP_SIZE);
		/* Extended rcode, version 0, flags and RDLENGTH all zero (memset above). */
		pos += DNS_RR_FIXED_LEN;
	}
	if (ret_len)
		*ret_len = pos;
	return 0;
}

int dns_parse_query(const uint8_t *pkt, size_t len, uint16_t *ret_id, struct dns_question *ret_q,
		    struct dns_edns *ret_edns)
{
	struct dns_header h;
	struct dns_question q;
	struct dns_edns edns = { 0 };
	uint8_t wire[DNS_NAME_WIRE_MAX];
	size_t wire_len, off = DNS_HEADER_LEN;
	int r;

	r = dns_read_header(pkt, len, &h);
	if (r < 0)
		return r;
	if (h.flags & DNS_FLAG_QR)
		return -EPROTO;
	if (DNS_OPCODE(h.flags) != 0)
		return -EOPNOTSUPP;
	if (h.qdcount != 1 || h.ancount != 0 || h.nscount != 0)
		return -EBADMSG;

	r = dns_read_name(pkt, len, len, &off, wire, &wire_len);
	if (r < 0)
		return r;
	if (len - off < 4)
		return -EBADMSG;
	r = dns_name_to_text(wire, wire_len, q.name, q.name_original);
	if (r < 0)
		return r;
	q.qtype = dns_get16(pkt + off);
	q.qclass = dns_get16(pkt + off + 2);
	off += 4;

	for (unsigned int i = 0; i < h.arcount; i++) {
		struct dns_rr rr;

		r = dns_read_rr(pkt, len, &off, &rr);
		if (r < 0)
			return r;
		/* RFC 6891 6.1.1: one OPT at most, owned by the root. */
		if (rr.type != DNS_TYPE_OPT || rr.name_len != 1 || edns.present)
			return -EBADMSG;
		edns.present = true;
		edns.udp_size = rr.class < DNS_UDP_MAX_LEN ? DNS_UDP_MAX_LEN : rr.class;
		edns.version = (rr.ttl >> 16) & 0xff;
		edns.dnssec_ok = rr.ttl & DNS_EDNS_DO;
	}
	if (off != len)
		return -EBADMSG;

	if (ret_id)
		*ret_id = h.id;
	if (ret_q)
		*ret_q = q;
	if (ret_edns)
		*ret_edns = edns;
	return 0;
}

/* Reads the CNAME target in the record's RDATA, which must hold exactly that one name. */
static int dns_read_cname(const uint8_t *pkt, size_t len, const struct dns_rr *rr, uint8_t *wire,
			  size_t *ret_wire_len)
{
	size_t off = rr->rdata_off, end = rr->rdata_off + rr->rdlen;
	int r;

	r = dns_read_name(pkt, len, end, &off, wire, ret_wire_len);
	if (r < 0)
		return r;
	return off == end ? 0 : -EBADMSG;
}

/*
 * Looks in the answer section for the first CNAME owned by `owner`: 1 with its target and
 * TTL, 0 when there is none.
 */
static int dns_find_cname(const uint8_t *pkt, size_t len, size_t answers_off, uint16_t ancount,
			  const struct dns_chain_link *owner, uint8_t *wire, size_t *ret_wire_len,
			  uint32_t *ret_ttl)
{
	size_t off = answers_off;
	int r;

	for (unsigned int i = 0; i < ancount; i++) {
		struct dns_rr rr;

		r = dns_read_rr(pkt, len, &off, &rr);
		if (r < 0)
			return r;
		if (rr.type != DNS_TYPE_CNAME || rr.class != DNS_CLASS_IN ||
		    !dns_name_equal(rr.name, rr.name_len, owner->name, owner->name_len))
			continue;
		r = dns_read_cname(pkt, len, &rr, wire, ret_wire_len);
		if (r < 0)
			return r;
		*ret_ttl = dns_ttl(rr.ttl);
		return 1;
	}
	return 0;
}

/* Index of the first chain link with that name, or -1. */
static int dns_chain_find(const struct dns_chain_link *chain, size_t nchain, const uint8_t *name,
			  size_t name_len)
{
	for (size_t i = 0; i < nchain; i++)
		if (dns_name_equal(chain[i].name, chain[i].name_len, name, name_len))
			return (int)i;
	return -1;
}

static void dns_add_addr(struct dns_answer_addr *addrs, size_t max, size_t *n,
			 const struct in6_addr *addr, uint32_t ttl)
{
	for (size_t i = 0; i < *n; i++) {
		if (memcmp(&addrs[i].addr, addr, sizeof(*addr)) == 0) {
			if (ttl < addrs[i].ttl)
				addrs[i].ttl = ttl;
			return;
		}
	}
	if (*n >= max)
		return;
	addrs[*n].addr = *addr;
	addrs[*n].ttl = ttl;
	(*n)++;
}

/*
 * Reads each of the ancount answer records from off once: an A or AAAA record of the wrong
 * size, a CNAME whose target does not read, or a record that runs past the end is -EBADMSG
 * (or dns_read_rr's error), so that later passes over them cannot fail.
 */
static int dns_check_answers(const uint8_t *pkt, size_t len, size_t off, unsigned int ancount)
{
	uint8_t wire[DNS_NAME_WIRE_MAX];
	size_t wire_len;
	int r;

	for (unsigned int i = 0; i < ancount; i++) {
		struct dns_rr rr;

		r = dns_read_rr(pkt, len, &off, &rr);
		if (r < 0)
			return r;
		if (rr.class != DNS_CLASS_IN)
			continue;
		if ((rr.type == DNS_TYPE_A && rr.rdlen != 4) ||
		    (rr.type == DNS_TYPE_AAAA && rr.rdlen != 16))
			return -EBADMSG;
		if (rr.type == DNS_TYPE_CNAME) {
			r = dns_read_cname(pkt, len, &rr, wire, &wire_len);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int dns_parse_response(const uint8_t *pkt, size_t len, uint16_t expect_id, const char *qname,
		       struct dns_answer_addr *ret_addrs, size_t max, size_t *ret_n,
		       uint8_t *ret_rcode, bool *ret_truncated)
{
	struct dns_chain_link chain[DNS_MAX_CNAME_HOPS + 1];
	struct dns_header h;
	uint8_t wire[DNS_NAME_WIRE_MAX];
	size_t wire_len, nchain = 1, naddrs = 0, off = DNS_HEADER_LEN, answers_off;
	uint8_t rcode;
	bool truncated;
	int r;

	if (ret_n)
		*ret_n = 0;
	if (!ret_addrs)
		max = 0;
	r = dns_name_from_text(qname, chain[0].name, &chain[0].name_len);
	if (r < 0)
		return r;
	chain[0].ttl = UINT32_MAX;

	r = dns_read_header(pkt, len, &h);
	if (r < 0)
		return r;
	if (h.id != expect_id || !(h.flags & DNS_FLAG_QR) || DNS_OPCODE(h.flags) != 0)
		return -ENOMSG;
	rcode = DNS_RCODE(h.flags);
	truncated = h.flags & DNS_FLAG_TC;
	if (ret_rcode)
		*ret_rcode = rcode;
	if (ret_truncated)
		*ret_truncated = truncated;

	/*
	 * A truncated reply, or a refusal, may come without the question; neither can hand
	 * us addresses, so the id is all there is to check. Everything else must echo it.
	 */
	if (h.qdcount == 0 &&
	    (truncated || (rcode != DNS_RCODE_NOERROR && rcode != DNS_RCODE_NXDOMAIN)))
		return 0;
	if (h.qdcount != 1)
		return -EBADMSG;
	r = dns_read_name(pkt, len, len, &off, wire, &wire_len);
	if (r < 0)
		return r;
	if (len - off < 4)
		return -EBADMSG;
	if (!dns_name_equal(wire, wire_len, chain[0].name, chain[0].name_len) ||
	    dns_get16(pkt + off + 2) != DNS_CLASS_IN)
		return -ENOMSG;
	off += 4;
	if (truncated || rcode != DNS_RCODE_NOERROR)
		return 0;

	/* Check every answer record once, so later passes can read them without failing. */
	answers_off = off;
	r = dns_check_answers(pkt, len, off, h.ancount);
	if (r < 0)
		return r;

	/*
	 * Follow the chain from the question name, one pass over the answers per hop: at most
	 * DNS_MAX_CNAME_HOPS passes, and a name seen before (a CNAME loop) ends it.
	 */
	while (nchain <= DNS_MAX_CNAME_HOPS) {
		const struct dns_chain_link *tail = &chain[nchain - 1];
		struct dns_chain_link *next = &chain[nchain];
		uint32_t ttl;

		r = dns_find_cname(pkt, len, answers_off, h.ancount, tail, next->name,
				   &next->name_len, &ttl);
		if (r < 0)
			return r;
		if (r == 0 || dns_chain_find(chain, nchain, next->name, next->name_len) >= 0)
			break;
		next->ttl = ttl < tail->ttl ? ttl : tail->ttl;
		nchain++;
	}

	off = answers_off;
	for (unsigned int i = 0; i < h.ancount; i++) {
		struct in6_addr addr = { 0 };
		struct dns_rr rr;
		uint32_t ttl;
		int link;

		r = dns_read_rr(pkt, len, &off, &rr);
		if (r < 0)
			return r;
		if ((rr.type != DNS_TYPE_A && rr.type != DNS_TYPE_AAAA) || rr.class != DNS_CLASS_IN)
			continue;
		link = dns_chain_find(chain, nchain, rr.name, rr.name_len);
		if (link < 0)
			continue;
		if (rr.type == DNS_TYPE_A) {
			addr.s6_addr[10] = 0xff;
			addr.s6_addr[11] = 0xff;
			memcpy(&addr.s6_addr[12], pkt + rr.rdata_off, 4);
		} else {
			memcpy(&addr.s6_addr[0], pkt + rr.rdata_off, 16);
		}
		ttl = dns_ttl(rr.ttl);
		if (chain[link].ttl < ttl)
			ttl = chain[link].ttl;
		dns_add_addr(ret_addrs, max, &naddrs, &addr, ttl);
	}
	if (ret_n)
		*ret_n = naddrs;
	return 0;
}

int dns_build_error_response(const uint8_t *query, size_t qlen, uint8_t rcode, uint8_t *buf,
			     size_t len, size_t *ret_len)
{
	struct dns_header h;
	struct dns_edns edns = { 0 };
	uint8_t wire[DNS_NAME_WIRE_MAX];
	size_t wire_len = 0, off = DNS_HEADER_LEN, need;
	bool has_question = false;
	uint16_t flags;
	int r;

	r = dns_read_header(query, qlen, &h);
	if (r < 0)
		return r;
	if (h.flags & DNS_FLAG_QR)
		return -EPROTO;
	if (rcode > 15)
		return -EINVAL;

	if (h.qdcount == 1 && dns_read_name(query, qlen, qlen, &off, wire, &wire_len) == 0 &&
	    qlen - off >= 4)
		has_question = true;
	/* Only a query that parses completely has an OPT we can trust enough to answer. */
	if (dns_parse_query(query, qlen, NULL, NULL, &edns) < 0)
		edns.present = false;

	need = DNS_HEADER_LEN + (has_question ? wire_len + 4 : 0) +
	       (edns.present ? 1 + DNS_RR_FIXED_LEN : 0);
	if (!buf || len < need)
		return -ENOBUFS;

	memset(buf, 0, need);
	flags = DNS_FLAG_QR | (h.flags & (0xf << 11)) | (h.flags & (DNS_FLAG_RD | DNS_FLAG_CD)) |
		DNS_FLAG_RA | rcode;
	dns_put16(buf, h.id);
	dns_put16(buf + 2, flags);
	dns_put16(buf + 4, has_question ? 1 : 0);
	dns_put16(buf + 10, edns.present ? 1 : 0);
	need = DNS_HEADER_LEN;
	if (has_question) {
		memcpy(buf + need, wire, wire_len);
		need += wire_len;
		memcpy(buf + need, query + off, 4);
		need += 4;
	}
	if (edns.present) {
		buf[need++] = 0;
		dns_put16(buf + need, DNS_TYPE_OPT);
		dns_put16(buf + need + 2, DNS_EDNS_UDP_SIZE);
		need += DNS_RR_FIXED_LEN;
	}
	if (ret_len)
		*ret_len = need;
	return 0;
}

static __thread char dns_name_buf[16];

const char *dns_type_name(uint16_t qtype)
{
	static const struct {
		uint16_t type;
		const char *name;
	} types[] = {
		{ DNS_TYPE_A, "A" },	     { DNS_TYPE_NS, "NS" },	{ DNS_TYPE_CNAME, "CNAME" },
		{ DNS_TYPE_SOA, "SOA" },     { DNS_TYPE_NULL, "NULL" }, { DNS_TYPE_PTR, "PTR" },
		{ DNS_TYPE_MX, "MX" },	     { DNS_TYPE_TXT, "TXT" },	{ DNS_TYPE_AAAA, "AAAA" },
		{ DNS_TYPE_SRV, "SRV" },     { DNS_TYPE_OPT, "OPT" },	{ DNS_TYPE_SVCB, "SVCB" },
		{ DNS_TYPE_HTTPS, "HTTPS" }, { DNS_TYPE_ANY, "ANY" },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == qtype)
			return types[i].name;
	snprintf(dns_name_buf, sizeof(dns_name_buf), "TYPE%u", qtype);
	return dns_name_buf;
}

const char *dns_rcode_name(uint8_t rcode)
{
	static const char *const names[] = {
		[DNS_RCODE_NOERROR] = "NOERROR",   [DNS_RCODE_FORMERR] = "FORMERR",
		[DNS_RCODE_SERVFAIL] = "SERVFAIL", [DNS_RCODE_NXDOMAIN] = "NXDOMAIN",
		[DNS_RCODE_NOTIMP] = "NOTIMP",	   [DNS_RCODE_REFUSED] = "REFUSED",
	};

	if (rcode < sizeof(names) / sizeof(names[0]))
		return names[rcode];
	snprintf(dns_name_buf, sizeof(dns_name_buf), "RCODE%u", rcode);
	return dns_name_buf;
}

/* Length without one trailing dot. */
static size_t dns_text_len(const char *text)
{
	size_t n = strlen(text);

	return n > 0 && text[n - 1] == '.' ? n - 1 : n;
}

static bool dns_text_equal(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (dns_ascii_lower(a[i]) != dns_ascii_lower(b[i]))
			return false;
	return true;
}

int dns_name_matches(const char *pattern, const char *name)
{
	size_t plen, nlen;

	if (!pattern || !name)
		return 0;
	plen = dns_text_len(pattern);
	nlen = dns_text_len(name);
	if (plen >= 3 && pattern[0] == '*' && pattern[1] == '.') {
		/* The suffix keeps its leading dot: "badexample.com" is not below example.com. */
		const char *suffix = pattern + 1;
		size_t slen = plen - 1;

		return nlen > slen && dns_text_equal(name + nlen - slen, suffix, slen);
	}
	return nlen == plen && dns_text_equal(pattern, name, plen);
}
