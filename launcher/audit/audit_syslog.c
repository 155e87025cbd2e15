// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The audit log as syslog: each JSON line becomes one RFC 5424 message (the JSON as MSG, key
 * fields as structured data), sent to a datagram socket (/dev/log), over UDP (RFC 5426) or
 * over TCP with octet counting (RFC 6587).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit.h"

#define AUDIT_SYSLOG_DEFAULT_SOCKET "/dev/log"
/* RFC 5424 6.3.2: a private SD-ID carries an enterprise number; 32473 is the one RFC 5612
 * reserves for documentation and examples. */
#define AUDIT_SYSLOG_SD_ID "launch@32473"
/* LOG_AUTHPRIV: security messages, which Debian's rsyslog puts in /var/log/auth.log. */
#define AUDIT_SYSLOG_FACILITY 10
#define AUDIT_SYSLOG_WARNING  4
#define AUDIT_SYSLOG_INFO     6
/*
 * Bytes of one value in the structured data (before ']' is escaped): the longest lines'
 * values, twice over when ']' doubles them, would not fit rsyslog's default 8 KiB message
 * beside a 4 KiB MSG.
 */
#define AUDIT_SYSLOG_SD_VALUE_MAX 128

/* Top-level fields copied into the structured data when the line has them. */
static const char *const AUDIT_SYSLOG_SD_KEYS[] = {
	"seq",	    "sandbox",	"policy", "op",	    "pid",  "exe",	 "dst_ip",    "dst_port",
	"dst_name", "dst_path", "qname",  "denied", "lost", "unwritten", "exit_code", "signal",
};

/*
 * Finds a top-level key of one of our lines (a flat object whose keys need no escape) and
 * returns its value's text: a string without its quotes, still JSON-escaped.
 */
static bool json_top_value(const char *line, size_t len, const char *key, const char **ret_value,
			   size_t *ret_len, bool *ret_string)
{
	const char *p = line, *end = line + len;
	size_t klen = strlen(key);

	if (p >= end || *p != '{')
		return false;
	p++;
	while (p < end && *p == '"') {
		const char *name = p + 1, *name_end = memchr(name, '"', (size_t)(end - name));
		const char *value, *value_end;

		if (!name_end || name_end + 1 >= end || name_end[1] != ':')
			return false;
		value = name_end + 2;
		value_end = audit_json_skip_value(value, end);
		if (!value_end)
			return false;
		if ((size_t)(name_end - name) == klen && memcmp(name, key, klen) == 0) {
			*ret_string = *value == '"';
			*ret_value = value + *ret_string;
			*ret_len = (size_t)(value_end - value) - 2 * *ret_string;
			return true;
		}
		p = value_end;
		if (p < end && *p == ',')
			p++;
	}
	return false;
}

/*
 * How much of a value goes into the structured data: at most AUDIT_SYSLOG_SD_VALUE_MAX bytes,
 * cut between JSON escapes and UTF-8 sequences (a cut escape's backslash would escape the
 * closing quote). The MSG has every value whole.
 */
static size_t syslog_sd_value_len(const char *value, size_t len)
{
	size_t i = 0;

	if (len <= AUDIT_SYSLOG_SD_VALUE_MAX)
		return len;
	while (i < len) {
		unsigned char c = (unsigned char)value[i];
		size_t unit = c == '\\'	  ? (i + 1 < len && value[i + 1] == 'u' ? 6 : 2)
			      : c >= 0xf0 ? 4
			      : c >= 0xe0 ? 3
			      : c >= 0xc0 ? 2
					  : 1;

		if (i + unit > AUDIT_SYSLOG_SD_VALUE_MAX)
			break;
		i += unit;
	}
	return i;
}

/* RFC 5424 6.2: HOSTNAME, APP-NAME, MSGID are printable US-ASCII without spaces, or "-". */
static void syslog_token(char *buf, size_t *off, size_t cap, const char *s, size_t len, size_t max)
{
	size_t start = *off;

	for (size_t i = 0; i < len && i < max && *off < cap; i++)
		if (s[i] > 32 && s[i] < 127)
			buf[(*off)++] = s[i];
	if (*off == start && *off < cap)
		buf[(*off)++] = '-';
}

int audit_syslog_format(const char *line, size_t len, const char *host, int pid, char *buf,
			size_t cap)
{
	return audit_syslog_format_msg(line, len, line, len, host, pid, buf, cap);
}

int audit_syslog_format_msg(const char *line, size_t len, const char *msg, size_t msg_len,
			    const char *host, int pid, char *buf, size_t cap)
{
	const char *ts, *event, *value;
	size_t ts_len, event_len, value_len, off;
	bool string;
	int n;

	if (len && line[len - 1] == '\n')
		len--;
	if (msg_len && msg[msg_len - 1] == '\n')
		msg_len--;
	if (!json_top_value(line, len, "ts", &ts, &ts_len, &string))
		ts = "-", ts_len = 1;
	if (!json_top_value(line, len, "event", &event, &event_len, &string))
		event = "-", event_len = 1;
	n = snprintf(buf, cap, "<%d>1 %.*s ",
		     AUDIT_SYSLOG_FACILITY * 8 + (event_len == 4 && memcmp(event, "deny", 4) == 0
							  ? AUDIT_SYSLOG_WARNING
							  : AUDIT_SYSLOG_INFO),
		     (int)ts_len, ts);
	if (n < 0 || (size_t)n >= cap)
		return -ENOBUFS;
	off = (size_t)n;
	syslog_token(buf, &off, cap, host, strlen(host), 255);
	n = snprintf(buf + off, cap - off, " launch %d ", pid);
	if (n < 0 || (size_t)n >= cap - off)
		return -ENOBUFS;
	off += (size_t)n;
	syslog_token(buf, &off, cap, event, event_len, 32);
	n = snprintf(buf + off, cap - off, " [%s event=\"%.*s\"", AUDIT_SYSLOG_SD_ID,
		     (int)event_len, event);
	if (n < 0 || (size_t)n >= cap - off)
		return -ENOBUFS;
	off += (size_t)n;
	for (size_t k = 0; k < sizeof(AUDIT_SYSLOG_SD_KEYS) / sizeof(AUDIT_SYSLOG_SD_KEYS[0]);
	     k++) {
		if (!json_top_value(line, len, AUDIT_SYSLOG_SD_KEYS[k], &value, &value_len,
				    &string))
			continue;
		n = snprintf(buf + off, cap - off, " %s=\"", AUDIT_SYSLOG_SD_KEYS[k]);
		if (n < 0 || (size_t)n >= cap - off)
			return -ENOBUFS;
		off += (size_t)n;
		value_len = syslog_sd_value_len(value, value_len);
		/*
		 * JSON's \" and \\ are RFC 5424's escapes too (6.3.3); only ']' needs one more.
		 * Other JSON escapes (\u0001) stay as text: a lone backslash means itself there.
		 */
		for (size_t i = 0; i < value_len; i++) {
			if (off + 2 >= cap)
				return -ENOBUFS;
			if (value[i] == ']')
				buf[off++] = '\\';
			buf[off++] = value[i];
		}
		if (off + 1 >= cap)
			return -ENOBUFS;
		buf[off++] = '"';
	}
	/*
	 * MSG: the JSON line itself (or its OCSF or ECS document), UTF-8 as it is, without a
	 * BOM so it stays plain JSON.
	 */
	if (off + 2 + msg_len >= cap)
		return -ENOBUFS;
	buf[off++] = ']';
	buf[off++] = ' ';
	memcpy(buf + off, msg, msg_len);
	off += msg_len;
	buf[off] = '\0';
	return (int)off;
}

int audit_syslog_parse(const char *spec, enum audit_syslog_transport *ret_transport,
		       char *ret_target, size_t target_len)
{
	const char *target, *port;

	if (strcmp(spec, "syslog") == 0)
		spec = "syslog:" AUDIT_SYSLOG_DEFAULT_SOCKET;
	if (strncmp(spec, "syslog:", 7) != 0)
		return -EINVAL;
	target = spec + 7;
	if (strncmp(target, "udp:", 4) == 0 || strncmp(target, "tcp:", 4) == 0) {
		*ret_transport = target[0] == 'u' ? AUDIT_SYSLOG_UDP : AUDIT_SYSLOG_TCP;
		target += 4;
		port = strrchr(target, ':');
		/* HOST:PORT, with an IPv6 address in brackets: [::1]:514. */
		if (!port || port == target || !port[1] ||
		    strspn(port + 1, "0123456789") != strlen(port + 1))
			return -EINVAL;
	} else if (target[0] == '/') {
		*ret_transport = AUDIT_SYSLOG_UNIX;
		if (strlen(target) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return -ENAMETOOLONG;
	} else {
		return -EINVAL;
	}
	if ((size_t)snprintf(ret_target, target_len, "%s", target) >= target_len)
		return -ENAMETOOLONG;
	return 0;
}

int audit_syslog_connect(enum audit_syslog_transport transport, const char *target,
			 long long timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV }, *res = NULL;
	char host[256];
	const char *port;
	int fd, r;

	if (transport == AUDIT_SYSLOG_UNIX) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", target);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		return fd;
	}
	port = strrchr(target, ':');
	snprintf(host, sizeof(host), "%.*s", (int)(port - target), target);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	hints.ai_socktype = transport == AUDIT_SYSLOG_TCP ? SOCK_STREAM : SOCK_DGRAM;
	if (getaddrinfo(host, port + 1, &hints, &res) != 0 || !res)
		return -EHOSTUNREACH;
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		freeaddrinfo(res);
		return r;
	}
	/* A receiver that never answers fails like a stalled sink, not after minutes. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	r = connect(fd, res->ai_addr, res->ai_addrlen) < 0 ? -errno : 0;
	freeaddrinfo(res);
	if (r < 0) {
		close(fd);
		return r == -EINPROGRESS ? -ETIMEDOUT : r;
	}
	/* Writes block (bounded by the stall timeout) rather than time out on their own. */
	tv = (struct timeval){ 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}
