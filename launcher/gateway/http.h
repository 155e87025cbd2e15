/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gateway's HTTP/1.1 parser: strict, allocation-free, on bytes a hostile job sends. Pure
 * logic (no I/O), fuzzed (tests/fuzz/) and unit-tested.
 */
#ifndef LAUNCH_HTTP_H
#define LAUNCH_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD_BYTES 32768 /* request line or status line plus headers */
#define HTTP_MAX_HEADERS    100
#define HTTP_MAX_PATH_BYTES 8192

struct http_header {
	const char *name; /* into the parsed buffer, not NUL-terminated */
	size_t name_len;
	const char *value; /* leading and trailing spaces and tabs removed */
	size_t value_len;
};

enum http_framing {
	HTTP_BODY_NONE,	   /* no body (request without length, 1xx/204/304, HEAD's answer) */
	HTTP_BODY_LENGTH,  /* Content-Length bytes */
	HTTP_BODY_CHUNKED, /* Transfer-Encoding: chunked (the last coding) */
	HTTP_BODY_CLOSE,   /* responses only: until the connection closes */
};

struct http_request {
	const char *method; /* into the buffer */
	size_t method_len;
	const char *target; /* the request target as sent (origin form: "/v1/x?y=1") */
	size_t target_len;
	char path[HTTP_MAX_PATH_BYTES]; /* percent-decoded, query removed, NUL-terminated */
	const char *query;		/* after '?', into the buffer; NULL when none */
	size_t query_len;
	unsigned int minor; /* HTTP/1.<minor>: 0 or 1 */
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t nheaders;
	const char *host; /* the Host header's value (one, required in 1.1); NULL in 1.0 without */
	size_t host_len;
	enum http_framing framing;
	uint64_t content_length;
	bool keep_alive; /* 1.1 without "Connection: close", or 1.0 with "keep-alive" */
	bool upgrade;	 /* "Connection: upgrade" and "Upgrade: websocket" */
	bool expect_continue;
	size_t head_len; /* bytes of the request line and headers, with the blank line */
};

struct http_response {
	unsigned int status;
	unsigned int minor;
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t nheaders;
	enum http_framing framing;
	uint64_t content_length;
	bool keep_alive;
	bool event_stream; /* Content-Type: text/event-stream */
	size_t head_len;
};

/*
 * Parses a request's head from buf. Returns head_len (> 0) when a whole head is there, 0 when
 * more bytes are needed, -EBADMSG when it is malformed or ambiguous (Content-Length with
 * Transfer-Encoding, two Content-Lengths, obs-fold, a bare LF or CR, a control byte, a space
 * before a colon, a target not in origin form, a transfer coding other than one "chunked",
 * no or two Hosts; in the path %00, an invalid escape, a decoded control byte, ".", ".." or
 * empty segments), -E2BIG when it passes HTTP_MAX_HEAD_BYTES or HTTP_MAX_HEADERS or its
 * decoded path HTTP_MAX_PATH_BYTES. ret is meaningful only when the result is > 0 (it is
 * scratch otherwise). docs/gateway.md, "The parser and its limits", has the whole list.
 */
int http_request_parse(const char *buf, size_t len, struct http_request *ret);

/* The same for an upstream's response head; request_method tells HEAD's bodiless answer. */
int http_response_parse(const char *buf, size_t len, const char *request_method,
			struct http_response *ret);

/* The header's value, or NULL; name compared case-insensitively. Works on both heads. */
const struct http_header *http_header_find(const struct http_header *headers, size_t nheaders,
					   const char *name);

/* Streaming chunked decoder: tells where the body ends, passing its bytes through unchanged. */
struct http_chunked {
	int state;     /* private */
	uint64_t left; /* bytes left in the current chunk */
	unsigned int line_len;
	/*
	 * A request's body: trailer fields are refused (-EBADMSG), as they would go upstream
	 * unjudged (an Authorization there passes no credential check). Set after init.
	 */
	bool no_trailers;
};

void http_chunked_init(struct http_chunked *chunked);
/*
 * Consumes up to len bytes of a chunked body (sizes, extensions, data, trailers). Returns the
 * bytes consumed (the caller forwards them as they are), sets *ret_done once the last chunk
 * and trailers are in; -EBADMSG on an invalid size, a size above 2^62, a missing CRLF, or a
 * chunk line or trailer longer than HTTP_MAX_HEAD_BYTES.
 */
long http_chunked_feed(struct http_chunked *chunked, const char *buf, size_t len, bool *ret_done);

#endif /* LAUNCH_HTTP_H */
