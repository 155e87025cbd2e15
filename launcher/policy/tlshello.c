// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The TLS ClientHello's server name in plain C: a cursor over the record, written to be read
 * against RFC 8446 4.1.2 and RFC 6066 3 rather than for the verifier, so that the unit tests
 * comparing it with bpf/tls.bpf.h catch a mistake in either.
 */
#include <string.h>

#include "tlshello.h"

/* A bounded reader: any read past end sets bad and yields 0. */
struct cursor {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static unsigned int take(struct cursor *c, size_t n)
{
	unsigned int v = 0;

	if (c->bad || c->left < n) {
		c->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v = v << 8 | c->p[i];
	c->p += n;
	c->left -= n;
	return v;
}

/* A sub-cursor over the next n bytes (a vector with its length read already). */
static struct cursor sub(struct cursor *c, size_t n)
{
	struct cursor s = { .p = c->p, .left = n };

	if (c->bad || c->left < n) {
		c->bad = true;
		s.bad = true;
		s.left = 0;
		return s;
	}
	c->p += n;
	c->left -= n;
	return s;
}

unsigned int tlshello_need(const uint8_t *buf, size_t len, size_t *ret_need)
{
	size_t rlen;

	*ret_need = TLS_RECORD_HEADER_LEN;
	if (len < 1 || buf[0] != 22)
		return TLS_REASON_NOT_TLS;
	if (len >= 2 && buf[1] != 3)
		return TLS_REASON_NOT_TLS;
	if (len < TLS_RECORD_HEADER_LEN)
		return 0;
	rlen = (size_t)buf[3] << 8 | buf[4];
	if (rlen == 0)
		return TLS_REASON_MALFORMED;
	if (rlen > TLS_RECORD_MAX)
		return TLS_REASON_TOO_LARGE;
	*ret_need = TLS_RECORD_HEADER_LEN + rlen;
	return 0;
}

/* Checks and copies a host_name: LDH and '_', no empty label, one trailing dot dropped. */
static unsigned int copy_name(struct cursor name, struct tlshello *ret)
{
	size_t n = name.left;

	if (n > 0 && name.p[n - 1] == '.')
		n--;
	if (n == 0 || n > SNI_NAME_MAX)
		return TLS_REASON_MALFORMED;
	for (size_t i = 0; i < n; i++) {
		char c = (char)name.p[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == '.') {
			if (i == 0 || ret->name[i - 1] == '.')
				return TLS_REASON_MALFORMED;
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			     c == '_')) {
			return TLS_REASON_MALFORMED;
		}
		ret->name[i] = c;
	}
	/* "a..": the dot dropped was the second of two, an empty label. */
	if (n < name.left && ret->name[n - 1] == '.')
		return TLS_REASON_MALFORMED;
	ret->name[n] = '\0';
	ret->name_len = n;
	return 0;
}

/* The server_name extension's data: exactly one host_name entry. */
static unsigned int read_server_name(struct cursor ext, struct tlshello *ret)
{
	struct cursor list = sub(&ext, take(&ext, 2)), name = { 0 };
	size_t names = 0, entries = 0;

	if (ext.bad || ext.left)
		return TLS_REASON_MALFORMED;
	while (list.left) {
		unsigned int type = take(&list, 1);
		struct cursor n = sub(&list, take(&list, 2));

		if (list.bad || type != 0 || ++entries > TLS_MAX_SNI_ENTRIES)
			return TLS_REASON_MALFORMED;
		names++;
		name = n;
	}
	if (names == 0)
		return TLS_REASON_NO_SNI;
	if (names > 1)
		return TLS_REASON_MULTIPLE_NAMES;
	return copy_name(name, ret);
}

static unsigned int parse(const uint8_t *buf, size_t len, struct tlshello *ret)
{
	struct cursor rec = { .p = buf, .left = len }, hello, exts, sni = { 0 };
	size_t need, n_ext = 0, n_sni = 0;
	unsigned int reason = tlshello_need(buf, len, &need), hs_len;

	if (reason)
		return reason;
	if (need != len)
		return TLS_REASON_MALFORMED;
	take(&rec, TLS_RECORD_HEADER_LEN);
	if (take(&rec, 1) != 1)
		return TLS_REASON_MALFORMED;
	hs_len = take(&rec, 3);
	if (rec.bad)
		return TLS_REASON_MALFORMED;
	if (hs_len > rec.left)
		return TLS_REASON_TOO_LARGE;
	if (hs_len < rec.left)
		return TLS_REASON_MALFORMED;
	hello = rec;
	take(&hello, 2 + 32); /* legacy_version, random */
	{
		unsigned int sid = take(&hello, 1), cs, comp;

		if (hello.bad || sid > 32)
			return TLS_REASON_MALFORMED;
		sub(&hello, sid);
		cs = take(&hello, 2);
		if (hello.bad || cs < 2 || cs % 2)
			return TLS_REASON_MALFORMED;
		sub(&hello, cs);
		comp = take(&hello, 1);
		if (hello.bad || comp < 1)
			return TLS_REASON_MALFORMED;
		sub(&hello, comp);
	}
	if (hello.bad)
		return TLS_REASON_MALFORMED;
	if (!hello.left)
		return TLS_REASON_NO_SNI;
	exts = sub(&hello, take(&hello, 2));
	if (hello.bad || hello.left)
		return TLS_REASON_MALFORMED;
	while (exts.left) {
		unsigned int type = take(&exts, 2);
		struct cursor data = sub(&exts, take(&exts, 2));

		if (exts.bad || ++n_ext > TLS_MAX_EXTENSIONS)
			return TLS_REASON_MALFORMED;
		if (type == TLS_EXT_SERVER_NAME) {
			n_sni++;
			sni = data;
		} else if (type == TLS_EXT_ECH) {
			ret->ech = true;
		}
	}
	if (n_sni == 0)
		return TLS_REASON_NO_SNI;
	if (n_sni > 1)
		return TLS_REASON_MULTIPLE_NAMES;
	return read_server_name(sni, ret);
}

void tlshello_parse(const uint8_t *buf, size_t len, struct tlshello *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->reason = parse(buf, len, ret);
	if (ret->reason) {
		ret->name_len = 0;
		memset(ret->name, 0, sizeof(ret->name));
	}
}

const char *tlshello_reason_name(unsigned int reason)
{
	static const char *const names[] = {
		[TLS_REASON_NAME] = "name",
		[TLS_REASON_NO_SNI] = "no_sni",
		[TLS_REASON_MULTIPLE_NAMES] = "multiple_names",
		[TLS_REASON_NOT_TLS] = "not_tls",
		[TLS_REASON_MALFORMED] = "malformed",
		[TLS_REASON_ECH] = "ech",
		[TLS_REASON_TOO_LARGE] = "too_large",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : NULL;
}
