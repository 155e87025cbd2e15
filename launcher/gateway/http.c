// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gateway's HTTP/1.1 parser: request and response heads and the chunked framing, strict
 * where two readers could disagree about where a request ends (RFC 9112 section 11.2).
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "http.h"

/* Content-Length and chunk sizes above this are refused: no body is that large. */
#define HTTP_MAX_BODY_LENGTH (1ULL << 62)

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A field value's byte: visible ASCII, space, tab, and obs-text (RFC 9110 section 5.5). */
static bool is_field_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return (unsigned int)((c | 0x20) - 'a' + 10);
}

/* Exact, case-insensitive comparison of a counted string with a literal. */
static bool span_is(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && strncasecmp(s, lit, len) == 0;
}

/*
 * Finds the end of the head: the offset after the empty line. Every line must end in CRLF:
 * a bare LF or a CR without its LF is refused here, before any line is read, since the
 * readers behind us may each split such a head differently.
 */
static int head_end(const char *buf, size_t len, size_t *ret_len)
{
	size_t max = len < HTTP_MAX_HEAD_BYTES ? len : HTTP_MAX_HEAD_BYTES;
	size_t i, line_start = 0;

	for (i = 0; i < max; i++) {
		if (buf[i] == '\n')
			return -EBADMSG; /* a CR's LF is consumed below: this one is bare */
		if (buf[i] != '\r')
			continue;
		if (i + 1 >= len)
			return 0;
		if (buf[i + 1] != '\n')
			return -EBADMSG;
		if (i + 2 > HTTP_MAX_HEAD_BYTES)
			return -E2BIG;
		if (i == line_start) {
			if (i == 0)
				return -EBADMSG; /* no leading empty line either */
			*ret_len = i + 2;
			return 1;
		}
		i++;
		line_start = i + 1;
	}
	return len >= HTTP_MAX_HEAD_BYTES ? -E2BIG : 0;
}

/*
 * Reads the header lines from p (after the start line) to the empty line at end. Refuses
 * obs-fold (a line starting with a space or tab), a space before the colon, an empty name,
 * and control bytes.
 */
static int parse_headers(const char *p, const char *end, struct http_header *headers, size_t *ret_n)
{
	size_t n = 0;

	while (p < end) {
		const char *eol = memchr(p, '\r', (size_t)(end - p)), *name = p, *value, *vend;

		/* head_end() saw a CRLF ending every line, the empty one last. */
		if (eol == p)
			break;
		if (n == HTTP_MAX_HEADERS)
			return -E2BIG;
		while (p < eol && is_tchar((unsigned char)*p))
			p++;
		if (p == name || p == eol || *p != ':')
			return -EBADMSG; /* obs-fold, "Name :", no colon, or a bad byte in a name */
		value = p + 1;
		while (value < eol && (*value == ' ' || *value == '\t'))
			value++;
		for (vend = value; vend < eol; vend++)
			if (!is_field_byte((unsigned char)*vend))
				return -EBADMSG;
		while (vend > value && (vend[-1] == ' ' || vend[-1] == '\t'))
			vend--;
		headers[n++] = (struct http_header){ .name = name,
						     .name_len = (size_t)(p - name),
						     .value = value,
						     .value_len = (size_t)(vend - value) };
		p = eol + 2;
	}
	*ret_n = n;
	return 0;
}

/*
 * "1*DIGIT" and no more: no sign, no list ("5, 5"), no spaces inside, and no leading zero (a
 * reader that takes "010" as octal, or that refuses it, would end the body elsewhere).
 */
static int parse_length(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || (len > 1 && s[0] == '0'))
		return -EBADMSG;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > HTTP_MAX_BODY_LENGTH)
			return -EBADMSG;
	}
	*ret = v;
	return 0;
}

/* Calls fn on each element of a comma-separated list of tokens; empty elements skipped. */
static int for_each_token(const char *s, size_t len, int (*fn)(const char *t, size_t n, void *ctx),
			  void *ctx)
{
	size_t i = 0;

	while (i < len) {
		size_t start, stop;
		int r;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && is_tchar((unsigned char)s[i]))
			i++;
		stop = i;
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (stop == start || (i < len && s[i] != ','))
			return -EBADMSG;
		r = fn(s + start, stop - start, ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

struct connection_tokens {
	bool close, keep_alive, upgrade;
};

static int connection_token(const char *t, size_t n, void *ctx)
{
	struct connection_tokens *c = ctx;

	if (span_is(t, n, "close"))
		c->close = true;
	else if (span_is(t, n, "keep-alive"))
		c->keep_alive = true;
	else if (span_is(t, n, "upgrade"))
		c->upgrade = true;
	return 0;
}

/* Transfer codings: "chunked" must come last and once; before it only compressions. */
struct codings {
	size_t n;
	bool chunked_last, chunked_seen_early, unknown;
};

static int coding_token(const char *t, size_t n, void *ctx)
{
	struct codings *c = ctx;

	if (c->chunked_last)
		c->chunked_seen_early = true; /* something after "chunked" */
	c->chunked_last = false;
	if (span_is(t, n, "chunked"))
		c->chunked_last = true;
	else if (!span_is(t, n, "gzip") && !span_is(t, n, "x-gzip") && !span_is(t, n, "deflate") &&
		 !span_is(t, n, "compress"))
		c->unknown = true;
	c->n++;
	return 0;
}

static int websocket_token(const char *t, size_t n, void *ctx)
{
	bool *websocket = ctx;

	if (span_is(t, n, "websocket"))
		*websocket = true;
	return 0;
}

/* What both heads' framing is read from: the headers that say where the body ends. */
struct framing_headers {
	const struct http_header *content_length, *transfer_encoding;
	struct connection_tokens connection;
	struct codings codings;
};

static int read_framing(const struct http_header *headers, size_t n, struct framing_headers *ret)
{
	size_t i;
	int r;

	memset(ret, 0, sizeof(*ret));
	for (i = 0; i < n; i++) {
		const struct http_header *h = &headers[i];

		if (span_is(h->name, h->name_len, "content-length")) {
			/* Two, even equal: a reader that takes the other one is what smuggling
			 * needs, and no client we serve sends two. */
			if (ret->content_length)
				return -EBADMSG;
			ret->content_length = h;
		} else if (span_is(h->name, h->name_len, "transfer-encoding")) {
			if (ret->transfer_encoding)
				return -EBADMSG;
			ret->transfer_encoding = h;
			r = for_each_token(h->value, h->value_len, coding_token, &ret->codings);
			if (r < 0)
				return r;
		} else if (span_is(h->name, h->name_len, "connection")) {
			r = for_each_token(h->value, h->value_len, connection_token,
					   &ret->connection);
			if (r < 0)
				return r;
		}
	}
	if (ret->content_length && ret->transfer_encoding)
		return -EBADMSG;
	if (ret->transfer_encoding &&
	    (ret->codings.n == 0 || ret->codings.unknown || ret->codings.chunked_seen_early))
		return -EBADMSG;
	return 0;
}

/* "HTTP/1.0" or "HTTP/1.1", exactly. */
static int parse_version(const char *s, size_t len, unsigned int *ret_minor)
{
	if (len != 8 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1'))
		return -EBADMSG;
	*ret_minor = (unsigned int)(s[7] - '0');
	return 0;
}

/* RFC 3986's pchar without '%' (checked apart), and '/': what a path may hold as sent. */
static bool is_path_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-._~!$&'()*+,;=:@/", c));
}

/*
 * Decodes the path into ret (HTTP_MAX_PATH_BYTES with its NUL) and checks what the rules
 * would otherwise be fooled by: "%00" and invalid escapes, a decoded control byte, and "."
 * "..", or empty segments, which an upstream may resolve or collapse into a path no rule saw.
 */
static int decode_path(const char *s, size_t len, char *ret)
{
	size_t i, n = 0, seg = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			if (i + 2 >= len || !is_hex((unsigned char)s[i + 1]) ||
			    !is_hex((unsigned char)s[i + 2]))
				return -EBADMSG;
			c = (unsigned char)(hex_value((unsigned char)s[i + 1]) << 4 |
					    hex_value((unsigned char)s[i + 2]));
			i += 2;
			if (c < 0x20 || c == 0x7f)
				return -EBADMSG; /* %00 among them */
		} else if (!is_path_byte(c)) {
			return -EBADMSG;
		}
		if (n + 1 >= HTTP_MAX_PATH_BYTES)
			return -E2BIG;
		ret[n++] = (char)c;
		if (c == '/') {
			size_t seglen = n - 1 - seg;

			if (n > 1 && (seglen == 0 || (seglen == 1 && ret[seg] == '.') ||
				      (seglen == 2 && ret[seg] == '.' && ret[seg + 1] == '.')))
				return -EBADMSG;
			seg = n;
		}
	}
	ret[n] = '\0';
	/* The last segment: "/a/.." and "/a/." too. */
	if ((n - seg == 1 && ret[seg] == '.') ||
	    (n - seg == 2 && ret[seg] == '.' && ret[seg + 1] == '.'))
		return -EBADMSG;
	return 0;
}

/* Origin form only ("/path?query"): absolute, authority and asterisk forms are refused. */
static int parse_target(const char *s, size_t len, struct http_request *req)
{
	const char *q = memchr(s, '?', len);
	size_t path_len = q ? (size_t)(q - s) : len, i;

	if (len == 0 || s[0] != '/')
		return -EBADMSG;
	if (q) {
		req->query = q + 1;
		req->query_len = len - path_len - 1;
		/* Visible ASCII, no fragment: what may be sent is passed on as it is. */
		for (i = 0; i < req->query_len; i++)
			if ((unsigned char)req->query[i] <= 0x20 ||
			    (unsigned char)req->query[i] >= 0x7f || req->query[i] == '#')
				return -EBADMSG;
	}
	return decode_path(s, path_len, req->path);
}

static int parse_request_line(const char *buf, const char *eol, struct http_request *req)
{
	const char *p = buf, *sp1, *sp2;

	/*
	 * Methods are upper-case tokens: a rule that denies DELETE must not miss "delete", which
	 * some servers fold to DELETE, and HEAD's bodiless answer is told by its name.
	 */
	while (p < eol && is_tchar((unsigned char)*p) && !(*p >= 'a' && *p <= 'z'))
		p++;
	if (p == buf || p == eol || *p != ' ')
		return -EBADMSG;
	sp1 = p;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2)
		return -EBADMSG;
	req->method = buf;
	req->method_len = (size_t)(sp1 - buf);
	req->target = sp1 + 1;
	req->target_len = (size_t)(sp2 - sp1 - 1);
	if (parse_version(sp2 + 1, (size_t)(eol - sp2 - 1), &req->minor) < 0)
		return -EBADMSG;
	return parse_target(req->target, req->target_len, req);
}

/* Reg-name, IPv4 or "[IPv6]", with an optional port: no userinfo, path or spaces. */
static bool host_value_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("-._~:[]", c)))
			return false;
	}
	return true;
}

/* The request's own headers: Host once, Expect only 100-continue, the upgrade's kind. */
static int read_request_headers(struct http_request *req, bool *ret_websocket)
{
	size_t i;
	int r;

	for (i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];

		if (span_is(h->name, h->name_len, "host")) {
			if (req->host || !host_value_ok(h->value, h->value_len))
				return -EBADMSG;
			req->host = h->value;
			req->host_len = h->value_len;
		} else if (span_is(h->name, h->name_len, "expect")) {
			if (req->expect_continue ||
			    !span_is(h->value, h->value_len, "100-continue"))
				return -EBADMSG;
			req->expect_continue = true;
		} else if (span_is(h->name, h->name_len, "upgrade")) {
			bool websocket = false;

			r = for_each_token(h->value, h->value_len, websocket_token, &websocket);
			if (r < 0)
				return r;
			/* Any other protocol (h2c) is refused even without "Connection: upgrade":
			 * a lenient upstream that switched would hand the stream to a protocol the
			 * gateway does not parse. */
			if (!websocket)
				return -EBADMSG;
			*ret_websocket = true;
		}
	}
	return 0;
}

int http_request_parse(const char *buf, size_t len, struct http_request *ret)
{
	struct framing_headers framing;
	struct http_request *req = ret;
	bool websocket = false;
	size_t head_len = 0;
	const char *eol;
	int r;

	if (!buf || !ret)
		return -EINVAL;
	r = head_end(buf, len, &head_len);
	if (r <= 0)
		return r;
	/* ret is scratch from here: the caller reads it only when we return > 0. */
	req->query = NULL;
	req->query_len = 0;
	req->nheaders = 0;
	req->host = NULL;
	req->host_len = 0;
	req->content_length = 0;
	req->keep_alive = req->upgrade = req->expect_continue = false;
	eol = memchr(buf, '\r', head_len);
	r = parse_request_line(buf, eol, req);
	if (r < 0)
		return r;
	r = parse_headers(eol + 2, buf + head_len, req->headers, &req->nheaders);
	if (r < 0)
		return r;
	r = read_framing(req->headers, req->nheaders, &framing);
	if (r < 0)
		return r;
	r = read_request_headers(req, &websocket);
	if (r < 0)
		return r;
	if (req->minor == 1 && !req->host)
		return -EBADMSG;
	/* HTTP/1.0 has no chunked framing: a 1.0 reader would take the body as the next request. */
	if (framing.transfer_encoding) {
		if (req->minor == 0 || !framing.codings.chunked_last || framing.codings.n != 1)
			return -EBADMSG;
		req->framing = HTTP_BODY_CHUNKED;
	} else if (framing.content_length) {
		r = parse_length(framing.content_length->value, framing.content_length->value_len,
				 &req->content_length);
		if (r < 0)
			return r;
		req->framing = HTTP_BODY_LENGTH;
	} else {
		req->framing = HTTP_BODY_NONE;
	}
	req->upgrade = framing.connection.upgrade && websocket;
	req->keep_alive = req->minor == 1
				  ? !framing.connection.close
				  : framing.connection.keep_alive && !framing.connection.close;
	req->head_len = head_len;
	return (int)head_len;
}

static int parse_status_line(const char *buf, const char *eol, struct http_response *resp)
{
	const char *p;

	if (eol - buf < 12 || parse_version(buf, 8, &resp->minor) < 0 || buf[8] != ' ')
		return -EBADMSG;
	if (buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' ||
	    buf[11] > '9')
		return -EBADMSG;
	resp->status = (unsigned int)((buf[9] - '0') * 100 + (buf[10] - '0') * 10 + buf[11] - '0');
	/* "HTTP/1.1 200" without its space and reason is common enough and unambiguous. */
	if (eol - buf == 12)
		return 0;
	if (buf[12] != ' ')
		return -EBADMSG;
	for (p = buf + 13; p < eol; p++)
		if (!is_field_byte((unsigned char)*p))
			return -EBADMSG;
	return 0;
}

static bool is_event_stream(const struct http_header *headers, size_t n)
{
	const struct http_header *h = http_header_find(headers, n, "content-type");
	static const char type[] = "text/event-stream";
	size_t tlen = sizeof(type) - 1;

	if (!h || h->value_len < tlen || strncasecmp(h->value, type, tlen) != 0)
		return false;
	return h->value_len == tlen || h->value[tlen] == ';' || h->value[tlen] == ' ' ||
	       h->value[tlen] == '\t';
}

int http_response_parse(const char *buf, size_t len, const char *request_method,
			struct http_response *ret)
{
	struct framing_headers framing;
	struct http_response *resp = ret;
	size_t head_len = 0;
	const char *eol;
	bool bodiless;
	int r;

	if (!buf || !ret)
		return -EINVAL;
	r = head_end(buf, len, &head_len);
	if (r <= 0)
		return r;
	resp->nheaders = 0;
	resp->content_length = 0;
	eol = memchr(buf, '\r', head_len);
	r = parse_status_line(buf, eol, resp);
	if (r < 0)
		return r;
	r = parse_headers(eol + 2, buf + head_len, resp->headers, &resp->nheaders);
	if (r < 0)
		return r;
	r = read_framing(resp->headers, resp->nheaders, &framing);
	if (r < 0)
		return r;
	if (framing.transfer_encoding && resp->minor == 0)
		return -EBADMSG;
	/* A length given is checked even where it does not frame the body. */
	if (framing.content_length) {
		r = parse_length(framing.content_length->value, framing.content_length->value_len,
				 &resp->content_length);
		if (r < 0)
			return r;
	}
	bodiless = resp->status < 200 || resp->status == 204 || resp->status == 304 ||
		   (request_method && strcmp(request_method, "HEAD") == 0);
	resp->keep_alive = resp->minor == 1
				   ? !framing.connection.close
				   : framing.connection.keep_alive && !framing.connection.close;
	if (bodiless) {
		resp->framing = HTTP_BODY_NONE;
	} else if (framing.transfer_encoding) {
		/* Codings ending in "chunked" only (read_framing refused the rest). */
		if (!framing.codings.chunked_last)
			return -EBADMSG;
		resp->framing = HTTP_BODY_CHUNKED;
	} else if (framing.content_length) {
		resp->framing = HTTP_BODY_LENGTH;
	} else {
		resp->framing = HTTP_BODY_CLOSE;
		resp->keep_alive = false;
	}
	resp->event_stream = is_event_stream(resp->headers, resp->nheaders);
	resp->head_len = head_len;
	return (int)head_len;
}

const struct http_header *http_header_find(const struct http_header *headers, size_t nheaders,
					   const char *name)
{
	size_t i;

	if (!headers || !name)
		return NULL;
	for (i = 0; i < nheaders; i++)
		if (span_is(headers[i].name, headers[i].name_len, name))
			return &headers[i];
	return NULL;
}

/* The decoder's states; line_len counts a size line's bytes, or all the trailers' bytes. */
enum chunked_state {
	CHUNK_SIZE_FIRST, /* the first hex digit of a size */
	CHUNK_SIZE,	  /* more hex digits, ';', or CR */
	CHUNK_EXT,	  /* a chunk extension, up to CR */
	CHUNK_SIZE_LF,
	CHUNK_DATA,
	CHUNK_DATA_CR,
	CHUNK_DATA_LF,
	CHUNK_TRAILER_START, /* a trailer field's first byte, or CR of the empty line */
	CHUNK_TRAILER_NAME,
	CHUNK_TRAILER_VALUE,
	CHUNK_TRAILER_LF,
	CHUNK_END_LF,
	CHUNK_DONE,
};

void http_chunked_init(struct http_chunked *chunked)
{
	memset(chunked, 0, sizeof(*chunked));
	chunked->state = CHUNK_SIZE_FIRST;
}

/* One byte of a size line or of the trailers; -EBADMSG when it is not allowed there. */
static int chunked_line_byte(struct http_chunked *c, unsigned char b)
{
	if (++c->line_len > HTTP_MAX_HEAD_BYTES)
		return -EBADMSG;
	switch (c->state) {
	case CHUNK_SIZE_FIRST:
	case CHUNK_SIZE:
		if (is_hex(b)) {
			/* Before the shift, which would drop the high bits of a long size. */
			if (c->left > HTTP_MAX_BODY_LENGTH >> 4)
				return -EBADMSG;
			c->left = c->left << 4 | hex_value(b);
			if (c->left > HTTP_MAX_BODY_LENGTH)
				return -EBADMSG;
			c->state = CHUNK_SIZE;
		} else if (c->state == CHUNK_SIZE && b == ';') {
			c->state = CHUNK_EXT;
		} else if (c->state == CHUNK_SIZE && b == '\r') {
			c->state = CHUNK_SIZE_LF;
		} else {
			return -EBADMSG;
		}
		return 0;
	case CHUNK_EXT:
		if (b == '\r')
			c->state = CHUNK_SIZE_LF;
		else if (!is_field_byte(b))
			return -EBADMSG;
		return 0;
	case CHUNK_SIZE_LF:
		if (b != '\n')
			return -EBADMSG;
		c->line_len = 0;
		c->state = c->left ? CHUNK_DATA : CHUNK_TRAILER_START;
		return 0;
	case CHUNK_TRAILER_START:
		if (b == '\r')
			c->state = CHUNK_END_LF;
		else if (is_tchar(b) && !c->no_trailers)
			c->state = CHUNK_TRAILER_NAME;
		else
			return -EBADMSG; /* obs-fold and junk */
		return 0;
	case CHUNK_TRAILER_NAME:
		if (b == ':')
			c->state = CHUNK_TRAILER_VALUE;
		else if (!is_tchar(b))
			return -EBADMSG;
		return 0;
	case CHUNK_TRAILER_VALUE:
		if (b == '\r')
			c->state = CHUNK_TRAILER_LF;
		else if (!is_field_byte(b))
			return -EBADMSG;
		return 0;
	case CHUNK_TRAILER_LF:
		if (b != '\n')
			return -EBADMSG;
		c->state = CHUNK_TRAILER_START;
		return 0;
	case CHUNK_END_LF:
		if (b != '\n')
			return -EBADMSG;
		c->state = CHUNK_DONE;
		return 0;
	default:
		return -EBADMSG;
	}
}

long http_chunked_feed(struct http_chunked *chunked, const char *buf, size_t len, bool *ret_done)
{
	size_t i = 0;
	int r;

	if (!chunked || (!buf && len) || !ret_done)
		return -EINVAL;
	/* The caller forwards what we consume; more than a long's worth at once is not asked. */
	if (len > (size_t)(~0UL >> 1))
		len = (size_t)(~0UL >> 1);
	while (i < len && chunked->state != CHUNK_DONE) {
		unsigned char b = (unsigned char)buf[i];

		switch (chunked->state) {
		case CHUNK_DATA: {
			size_t n = len - i;

			if (n > chunked->left)
				n = (size_t)chunked->left;
			chunked->left -= n;
			i += n;
			if (chunked->left == 0)
				chunked->state = CHUNK_DATA_CR;
			continue;
		}
		case CHUNK_DATA_CR:
			if (b != '\r')
				return -EBADMSG;
			chunked->state = CHUNK_DATA_LF;
			break;
		case CHUNK_DATA_LF:
			if (b != '\n')
				return -EBADMSG;
			chunked->state = CHUNK_SIZE_FIRST;
			chunked->left = 0;
			chunked->line_len = 0;
			break;
		default:
			r = chunked_line_byte(chunked, b);
			if (r < 0)
				return r;
		}
		i++;
	}
	*ret_done = chunked->state == CHUNK_DONE;
	return (long)i;
}
