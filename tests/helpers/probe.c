// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Performs one operation (network, or a way out of the sandbox) and prints "OK" or the errno's
 * name (bubblewrap's try-syscall).
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/seg6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#include "lib/util.h"

/* Exit status for a malformed command line; every operation result exits 0. */
#define PROBE_EXIT_USAGE 2
/* Long enough for loopback, short enough that a silently dropped SYN never hangs a test. */
#define PROBE_CONNECT_TIMEOUT_MS 2000

/* IPV6_SRCRT_TYPE_4 of uapi/linux/ipv6.h, which clashes with netinet/in.h. */
#define PROBE_SRCRT_TYPE_SEG6 4

static const char PROBE_PAYLOAD[] = "hello\n";
#define PROBE_PAYLOAD_LEN (sizeof(PROBE_PAYLOAD) - 1)

/* A destination given on the command line as ADDR PORT. */
struct probe_dest {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int family;
};

struct probe_name {
	const char *name;
	int value;
};

static const struct probe_name probe_families[] = {
	{ "unix", AF_UNIX },	 { "local", AF_UNIX },	  { "inet", AF_INET },
	{ "inet6", AF_INET6 },	 { "packet", AF_PACKET }, { "netlink", AF_NETLINK },
	{ "unspec", AF_UNSPEC },
};

static const struct probe_name probe_types[] = {
	{ "stream", SOCK_STREAM },	 { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW },
	{ "seqpacket", SOCK_SEQPACKET }, { "rdm", SOCK_RDM },
};

static const struct probe_name probe_protocols[] = {
	{ "ip", 0 },
	{ "default", 0 },
	{ "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 },
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ "udplite", IPPROTO_UDPLITE },
	{ "sctp", IPPROTO_SCTP },
	{ "raw", IPPROTO_RAW },
};

/*
 * Accepts a name from the table or a decimal/hex number. "all" is ETH_P_ALL for AF_PACKET,
 * which takes its protocol in network byte order. Returns 0 or -EINVAL.
 */
static int probe_parse_name(const struct probe_name *table, size_t n, const char *text,
			    int *ret_value)
{
	char *end;
	long value;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(table[i].name, text) == 0) {
			*ret_value = table[i].value;
			return 0;
		}
	}
	if (table == probe_protocols && strcmp(text, "all") == 0) {
		*ret_value = htons(ETH_P_ALL);
		return 0;
	}
	errno = 0;
	value = strtol(text, &end, 0);
	if (errno != 0 || end == text || *end != '\0' || value < 0 || value > 0xffff)
		return -EINVAL;
	*ret_value = (int)value;
	return 0;
}

static int probe_parse_port(const char *text, in_port_t *ret_port)
{
	char *end;
	long port;

	errno = 0;
	port = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || port < 0 || port > 65535)
		return -EINVAL;
	*ret_port = htons((uint16_t)port);
	return 0;
}

/* IPv4 text gives an AF_INET destination; anything else (incl. ::ffff:a.b.c.d) AF_INET6. */
static int probe_parse_dest(const char *addr, const char *port, struct probe_dest *ret_dest)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&ret_dest->addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ret_dest->addr;
	in_port_t nport;

	memset(ret_dest, 0, sizeof(*ret_dest));
	if (probe_parse_port(port, &nport) < 0)
		return -EINVAL;
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = nport;
		ret_dest->addrlen = sizeof(*sin);
		ret_dest->family = AF_INET;
		return 0;
	}
	memset(&ret_dest->addr, 0, sizeof(ret_dest->addr));
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = nport;
		ret_dest->addrlen = sizeof(*sin6);
		ret_dest->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/*
 * "@name" is an abstract socket: sun_path starts with a NUL and is not NUL-terminated; in
 * the name, the two characters "\0" stand for a NUL byte (an abstract name may hold them).
 */
static int probe_parse_unix(const char *path, struct probe_dest *ret_dest)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)&ret_dest->addr;
	size_t len = strlen(path);

	memset(ret_dest, 0, sizeof(*ret_dest));
	if (len == 0 || len >= sizeof(sun->sun_path))
		return -EINVAL;
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, len);
	if (path[0] == '@') {
		size_t n = 1;

		for (size_t i = 1; i < len; i++, n++) {
			bool nul = path[i] == '\\' && path[i + 1] == '0';

			sun->sun_path[n] = nul ? '\0' : path[i];
			i += nul;
		}
		len = n;
		memset(sun->sun_path + len, 0, sizeof(sun->sun_path) - len);
		sun->sun_path[0] = '\0';
		ret_dest->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else {
		ret_dest->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	}
	ret_dest->family = AF_UNIX;
	return 0;
}

static int probe_socket(int family, int type, int protocol, int *ret_fd)
{
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

/* The destination ADDR PORT of argv, and an unconnected UDP socket of its family. */
static int probe_udp_open(char **argv, struct probe_dest *ret_dest, int *ret_fd)
{
	if (probe_parse_dest(argv[0], argv[1], ret_dest) < 0)
		return -EINVAL;
	return probe_socket(ret_dest->family, SOCK_DGRAM, 0, ret_fd);
}

/* Waits for a non-blocking connect (or a SYN sent by MSG_FASTOPEN) to finish. */
static int probe_wait_connected(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int r, soerr = 0;

	r = poll(&pfd, 1, PROBE_CONNECT_TIMEOUT_MS);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
		return -errno;
	return -soerr;
}

static int probe_connect(int fd, const struct probe_dest *dest)
{
	if (connect(fd, (const struct sockaddr *)&dest->addr, dest->addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	return probe_wait_connected(fd);
}

static int probe_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN) {
				int r = probe_wait_connected(fd);

				if (r < 0)
					return r;
				continue;
			}
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int probe_stream_connect_send(const struct probe_dest *dest, int protocol)
{
	_cleanup_close_ int fd = -1;
	int r;

	r = probe_socket(dest->family, SOCK_STREAM, protocol, &fd);
	if (r < 0)
		return r;
	r = probe_connect(fd, dest);
	if (r < 0)
		return r;
	r = probe_write_all(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN);
	if (r < 0)
		return r;
	/* A FIN, so the listener sees the end of the message before we exit. */
	(void)shutdown(fd, SHUT_WR);
	return 0;
}

static int probe_op_tcp(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	return probe_stream_connect_send(&dest, 0);
}

/*
 * Calls attempt(dest, fd) again and again until stop_path exists, appending one line per
 * attempt to log_path: the wall-clock time it began (microseconds since the epoch) and its
 * outcome, so that a test can tell what was allowed before, during and after a change of policy.
 */
static int probe_attempt_loop(const char *log_path, const char *stop_path,
			      int (*attempt)(const struct probe_dest *dest, int fd),
			      const struct probe_dest *dest, int fd)
{
	FILE *log = fopen(log_path, "ae");

	if (!log)
		return -errno;
	while (access(stop_path, F_OK) < 0) {
		struct timespec now, pause = { .tv_nsec = 1000000 };
		const char *name;
		int r;

		clock_gettime(CLOCK_REALTIME, &now);
		r = attempt(dest, fd);
		name = r ? strerrorname_np(-r) : "OK";
		fprintf(log, "%lld %s\n", (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000,
			name ? name : "E?");
		fflush(log);
		nanosleep(&pause, NULL);
	}
	fclose(log);
	return 0;
}

static int probe_tcp_attempt(const struct probe_dest *dest, int fd __attribute__((unused)))
{
	return probe_stream_connect_send(dest, 0);
}

/* Connects to ADDR PORT again and again until STOPFILE exists, each attempt in LOGFILE. */
static int probe_op_tcp_loop(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	return probe_attempt_loop(argv[2], argv[3], probe_tcp_attempt, &dest, -1);
}

/* An operation that prints its own result line instead of OK or an errno name. */
#define PROBE_PRINTED 1

/* Whether the connect hooks let a TCP connect to dest through: anything but EPERM. */
static bool probe_connect_passes(const struct probe_dest *dest)
{
	int fd = socket(dest->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	bool passes;

	if (fd < 0)
		return false;
	/* Non-blocking: the hook decides inside connect(), nothing waits for a handshake. */
	passes = connect(fd, (const struct sockaddr *)&dest->addr, dest->addrlen) == 0 ||
		 errno != EPERM;
	close(fd);
	return passes;
}

/*
 * Once GOFILE exists, connects to NEW then to OLD, again and again with no pause, until 2000
 * rounds after NEW first passed (or 20 s). Prints "new=N old_before=N mixed=N": the rounds
 * where NEW passed, where OLD passed before NEW ever did, and where OLD passed after NEW had
 * in the same round (one thread: NEW's connect had returned before OLD's began). A policy
 * swap from one that allows only OLD to one that allows only NEW makes mixed 0.
 */
static int probe_op_connect_race(char **argv)
{
	struct probe_dest new_dest, old_dest;
	unsigned long news = 0, old_before = 0, mixed = 0, after = 0;
	struct timespec start, now;

	if (probe_parse_dest(argv[0], argv[1], &new_dest) < 0 ||
	    probe_parse_dest(argv[2], argv[3], &old_dest) < 0)
		return -EINVAL;
	while (access(argv[4], F_OK) < 0) {
		struct timespec pause = { .tv_nsec = 1000000 };

		nanosleep(&pause, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned long round = 0; after < 2000; round++) {
		bool new_passes = probe_connect_passes(&new_dest);
		bool old_passes = probe_connect_passes(&old_dest);

		news += new_passes;
		if (news)
			after++;
		if (old_passes && !news)
			old_before++;
		if (old_passes && news)
			mixed++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((round & 255) == 0 && now.tv_sec - start.tv_sec > 20)
			break;
	}
	printf("new=%lu old_before=%lu mixed=%lu\n", news, old_before, mixed);
	return PROBE_PRINTED;
}

/* One datagram to dest on the unconnected UDP socket fd. */
static int probe_udp_send(const struct probe_dest *dest, int fd)
{
	return sendto(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, 0, (const struct sockaddr *)&dest->addr,
		      dest->addrlen) < 0
		       ? -errno
		       : 0;
}

/*
 * Like tcp-loop, but every attempt is a sendto() of one datagram on the same unconnected UDP
 * socket: what a socket was let send before a change of policy must not outlast it.
 */
static int probe_op_udp_loop(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	int r;

	r = probe_udp_open(argv, &dest, &fd);
	if (r < 0)
		return r;
	return probe_attempt_loop(argv[2], argv[3], probe_udp_send, &dest, fd);
}

static int probe_op_udp(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	int r;

	r = probe_udp_open(argv, &dest, &fd);
	if (r < 0)
		return r;
	return probe_udp_send(&dest, fd);
}

static int probe_op_udpconn(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	int r;

	r = probe_udp_open(argv, &dest, &fd);
	if (r < 0)
		return r;
	r = probe_connect(fd, &dest);
	if (r < 0)
		return r;
	if (send(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, 0) < 0)
		return -errno;
	return 0;
}

static int probe_op_udp_sendmsg(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	struct iovec iov = { .iov_base = (void *)PROBE_PAYLOAD, .iov_len = PROBE_PAYLOAD_LEN };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int r;

	r = probe_udp_open(argv, &dest, &fd);
	if (r < 0)
		return r;
	msg.msg_name = &dest.addr;
	msg.msg_namelen = dest.addrlen;
	if (sendmsg(fd, &msg, 0) < 0)
		return -errno;
	return 0;
}

/*
 * One unconnected UDP datagram of SIZE bytes, the payload first: bigger than the path's MTU,
 * the kernel sends it as IP fragments.
 */
static int probe_op_udp_big(char **argv)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	long size = atol(argv[2]);
	int r;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0 || size < (long)PROBE_PAYLOAD_LEN ||
	    size > 65000)
		return -EINVAL;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	memset(buf, '.', (size_t)size);
	memcpy(buf, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN);
	r = probe_socket(dest.family, SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	if (sendto(fd, buf, (size_t)size, 0, (struct sockaddr *)&dest.addr, dest.addrlen) < 0)
		return -errno;
	return 0;
}

/* Two datagrams in one call; a short count means the next one failed, so retry it for errno. */
static int probe_op_udp_sendmmsg(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	struct iovec iov = { .iov_base = (void *)PROBE_PAYLOAD, .iov_len = PROBE_PAYLOAD_LEN };
	struct mmsghdr msgs[2];
	unsigned int sent = 0;
	int r;

	r = probe_udp_open(argv, &dest, &fd);
	if (r < 0)
		return r;
	memset(msgs, 0, sizeof(msgs));
	for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
		msgs[i].msg_hdr.msg_name = &dest.addr;
		msgs[i].msg_hdr.msg_namelen = dest.addrlen;
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (sent < ARRAY_SIZE(msgs)) {
		int n = sendmmsg(fd, msgs + sent, ARRAY_SIZE(msgs) - sent, 0);

		if (n < 0)
			return -errno;
		sent += (unsigned int)n;
	}
	return 0;
}

/* The SYN is sent by sendto itself, not by connect: a separate path into the stack. */
static int probe_op_tcp_fastopen(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	size_t queued = 0;
	ssize_t n;
	int r;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	r = probe_socket(dest.family, SOCK_STREAM, 0, &fd);
	if (r < 0)
		return r;
	n = sendto(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, MSG_FASTOPEN | MSG_NOSIGNAL,
		   (struct sockaddr *)&dest.addr, dest.addrlen);
	if (n < 0 && errno != EINPROGRESS)
		return -errno;
	if (n > 0)
		queued = (size_t)n;
	/* Without a cookie the SYN carries no data; closing before the handshake would drop it. */
	r = probe_wait_connected(fd);
	if (r < 0)
		return r;
	r = probe_write_all(fd, PROBE_PAYLOAD + queued, PROBE_PAYLOAD_LEN - queued);
	if (r < 0)
		return r;
	(void)shutdown(fd, SHUT_WR);
	return 0;
}

/* A connected UDP socket may be connected again: the second destination must be judged too. */
static int probe_op_reconnect(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest first, second;
	int r;

	if (probe_parse_dest(argv[0], argv[1], &first) < 0 ||
	    probe_parse_dest(argv[2], argv[3], &second) < 0 || first.family != second.family)
		return -EINVAL;
	r = probe_socket(first.family, SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	r = probe_connect(fd, &first);
	if (r < 0)
		return r;
	r = probe_connect(fd, &second);
	if (r < 0)
		return r;
	if (send(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, 0) < 0)
		return -errno;
	return 0;
}

/* An explicit address on a connected UDP socket overrides the connected one. */
static int probe_op_udpconn_sendto(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest first, second;
	int r;

	if (probe_parse_dest(argv[0], argv[1], &first) < 0 ||
	    probe_parse_dest(argv[2], argv[3], &second) < 0 || first.family != second.family)
		return -EINVAL;
	r = probe_socket(first.family, SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	r = probe_connect(fd, &first);
	if (r < 0)
		return r;
	if (sendto(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, 0, (struct sockaddr *)&second.addr,
		   second.addrlen) < 0)
		return -errno;
	return 0;
}

static int probe_op_socket(char **argv)
{
	_cleanup_close_ int fd = -1;
	int family, type, protocol;

	if (probe_parse_name(probe_families, ARRAY_SIZE(probe_families), argv[0], &family) < 0 ||
	    probe_parse_name(probe_types, ARRAY_SIZE(probe_types), argv[1], &type) < 0 ||
	    probe_parse_name(probe_protocols, ARRAY_SIZE(probe_protocols), argv[2], &protocol) < 0)
		return -EINVAL;
	return probe_socket(family, type, protocol, &fd);
}

static int probe_op_unix(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_unix(argv[0], &dest) < 0)
		return -EINVAL;
	return probe_stream_connect_send(&dest, 0);
}

static int probe_op_unix_dgram(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	int r;

	if (probe_parse_unix(argv[0], &dest) < 0)
		return -EINVAL;
	r = probe_socket(AF_UNIX, SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	if (sendto(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, 0, (struct sockaddr *)&dest.addr,
		   dest.addrlen) < 0)
		return -errno;
	return 0;
}

static int probe_op_socketpair(char **argv)
{
	int family, type, protocol, fds[2];

	if (probe_parse_name(probe_families, ARRAY_SIZE(probe_families), argv[0], &family) < 0 ||
	    probe_parse_name(probe_types, ARRAY_SIZE(probe_types), argv[1], &type) < 0 ||
	    probe_parse_name(probe_protocols, ARRAY_SIZE(probe_protocols), argv[2], &protocol) < 0)
		return -EINVAL;
	if (socketpair(family, type | SOCK_CLOEXEC, protocol, fds) < 0)
		return -errno;
	close(fds[0]);
	close(fds[1]);
	return 0;
}

/* Listens on PATH, connects to it and exchanges the payload: a socket of the job's own. */
static int probe_op_unix_self(char **argv)
{
	_cleanup_close_ int listen_fd = -1, fd = -1, peer = -1;
	struct probe_dest dest;
	char buf[sizeof(PROBE_PAYLOAD)];
	int r;

	if (probe_parse_unix(argv[0], &dest) < 0)
		return -EINVAL;
	if (argv[0][0] != '@')
		(void)unlink(argv[0]);
	r = probe_socket(AF_UNIX, SOCK_STREAM, 0, &listen_fd);
	if (r < 0)
		return r;
	if (bind(listen_fd, (struct sockaddr *)&dest.addr, dest.addrlen) < 0 ||
	    listen(listen_fd, 1) < 0)
		return -errno;
	r = probe_socket(AF_UNIX, SOCK_STREAM, 0, &fd);
	if (r == 0)
		r = probe_connect(fd, &dest);
	if (r == 0)
		r = probe_write_all(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN);
	if (r == 0) {
		peer = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (peer < 0 || recv(peer, buf, sizeof(buf), 0) != (ssize_t)PROBE_PAYLOAD_LEN)
			r = peer < 0 ? -errno : -EIO;
	}
	if (argv[0][0] != '@')
		(void)unlink(argv[0]);
	return r;
}

/* How long a server waits for its one client, and a client for the server's data. */
#define PROBE_SERVE_TIMEOUT_MS 3000

/* Creates PATH holding TEXT, whole (a rename), for a test that polls for it. */
static void probe_say(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s\n", text);
	fclose(f);
	rename(tmp, path);
}

static int probe_wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r = poll(&pfd, 1, PROBE_SERVE_TIMEOUT_MS);

	if (r < 0)
		return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/*
 * A server: listens at dest, says "ready PORT" in READY, accepts one client within the
 * timeout and writes it the payload. The bind and the listen are what a sandbox judges.
 */
static int probe_serve(const struct probe_dest *dest, const char *ready)
{
	_cleanup_close_ int fd = -1, peer = -1;
	struct sockaddr_storage bound;
	socklen_t len = sizeof(bound);
	char text[32];
	int r, one = 1;

	r = probe_socket(dest->family, SOCK_STREAM, 0, &fd);
	if (r < 0)
		return r;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&dest->addr, dest->addrlen) < 0 || listen(fd, 4) < 0)
		return -errno;
	if (getsockname(fd, (struct sockaddr *)&bound, &len) < 0)
		return -errno;
	snprintf(text, sizeof(text), "ready %u",
		 dest->family == AF_UNIX ? 0u : ntohs(((struct sockaddr_in *)&bound)->sin_port));
	probe_say(ready, text);
	r = probe_wait_readable(fd);
	if (r < 0)
		return r;
	peer = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (peer < 0)
		return -errno;
	return probe_write_all(peer, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN);
}

static int probe_op_serve(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	return probe_serve(&dest, argv[2]);
}

static int probe_op_serve_unix(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_unix(argv[0], &dest) < 0)
		return -EINVAL;
	return probe_serve(&dest, argv[1]);
}

/* A client that reads: OK only when the server's payload arrived whole. */
static int probe_fetch(const struct probe_dest *dest)
{
	_cleanup_close_ int fd = -1;
	char buf[sizeof(PROBE_PAYLOAD)];
	size_t got = 0;
	int r;

	r = probe_socket(dest->family, SOCK_STREAM, 0, &fd);
	if (r < 0)
		return r;
	r = probe_connect(fd, dest);
	if (r < 0)
		return r;
	while (got < PROBE_PAYLOAD_LEN) {
		ssize_t n;

		r = probe_wait_readable(fd);
		if (r < 0)
			return r;
		n = recv(fd, buf + got, PROBE_PAYLOAD_LEN - got, 0);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		got += (size_t)n;
	}
	return memcmp(buf, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN) == 0 ? 0 : -EIO;
}

static int probe_op_fetch(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	return probe_fetch(&dest);
}

static int probe_op_fetch_unix(char **argv)
{
	struct probe_dest dest;

	if (probe_parse_unix(argv[0], &dest) < 0)
		return -EINVAL;
	return probe_fetch(&dest);
}

/* bind() alone, of a TCP or UDP socket: a UDP server needs no more. */
static int probe_op_bind(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	int r;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	r = probe_socket(dest.family, strcmp(argv[2], "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM, 0,
			 &fd);
	if (r < 0)
		return r;
	return bind(fd, (const struct sockaddr *)&dest.addr, dest.addrlen) < 0 ? -errno : 0;
}

/* listen() on a socket never bound: the kernel binds it to the wildcard address. */
static int probe_op_listen_unbound(char **argv)
{
	_cleanup_close_ int fd = -1;
	int r;

	(void)argv;
	r = probe_socket(AF_INET, SOCK_STREAM, 0, &fd);
	if (r < 0)
		return r;
	return listen(fd, 1) < 0 ? -errno : 0;
}

/*
 * A datagram of the given text: what a DNS proxy must judge when it is no query. Then, as a
 * resolver's client would, it waits a moment for an answer (whether one comes does not
 * matter): the proxy names the sender's pid only while the sender is alive.
 */
static int probe_op_udp_text(char **argv)
{
	_cleanup_close_ int fd = -1;
	struct probe_dest dest;
	int r;

	r = probe_udp_open(argv, &dest, &fd);
	if (r < 0)
		return r;
	if (sendto(fd, argv[2], strlen(argv[2]), 0, (struct sockaddr *)&dest.addr, dest.addrlen) <
	    0)
		return -errno;
	(void)probe_wait_readable(fd);
	return 0;
}

/* NETLINK_USERSOCK: any process may unicast to any other's port id, as any user. */
static int probe_netlink_socket(int *ret_fd)
{
	return probe_socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK, ret_fd);
}

static int probe_op_netlink_send(char **argv)
{
	struct {
		struct nlmsghdr hdr;
		char data[sizeof(PROBE_PAYLOAD)];
	} msg = { 0 };
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	_cleanup_close_ int fd = -1;
	int r;

	to.nl_pid = (__u32)strtoul(argv[0], NULL, 10);
	r = probe_netlink_socket(&fd);
	if (r < 0)
		return r;
	msg.hdr.nlmsg_len = NLMSG_LENGTH(PROBE_PAYLOAD_LEN);
	msg.hdr.nlmsg_type = NLMSG_MIN_TYPE;
	memcpy(msg.data, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN);
	if (sendto(fd, &msg, msg.hdr.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* Binds port id PORTID, says "ready" in READY, and waits for the payload. */
static int probe_op_netlink_recv(char **argv)
{
	struct sockaddr_nl self = { .nl_family = AF_NETLINK };
	_cleanup_close_ int fd = -1;
	char buf[256];
	ssize_t n;
	int r;

	self.nl_pid = (__u32)strtoul(argv[0], NULL, 10);
	r = probe_netlink_socket(&fd);
	if (r < 0)
		return r;
	if (bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0)
		return -errno;
	probe_say(argv[1], "ready");
	r = probe_wait_readable(fd);
	if (r < 0)
		return r;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return memmem(buf, (size_t)n, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN) ? 0 : -EIO;
}

/*
 * A call by the x32 numbering (bit 30 set): the kernel here has no x32 ABI, so outside it
 * fails with ENOSYS; only seccomp sees it first. "socket" makes socket(AF_INET, STREAM, 0).
 */
static int probe_op_x32(char **argv)
{
	const long x32_bit = 0x40000000L;
	long r;

	if (strcmp(argv[0], "socket") != 0)
		return -EINVAL;
	r = syscall(x32_bit | __NR_socket, AF_INET, SOCK_STREAM, 0);
	if (r < 0)
		return -errno;
	close((int)r);
	return 0;
}

/* Writes TEXT to an existing file: "0" into a cgroup.procs moves the writer. */
static int probe_op_write(char **argv)
{
	_cleanup_close_ int fd = open(argv[0], O_WRONLY | O_CLOEXEC);
	size_t len = strlen(argv[1]);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, argv[1], len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * Creates PATH (which must not exist) and removes it again: what counts is that it could be
 * made.
 */
static int probe_op_create(char **argv)
{
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	close(fd);
	(void)unlink(argv[0]);
	return 0;
}

/*
 * Reads a file and writes the same bytes back in one write(): an attempt to change a kernel
 * tunable that changes nothing if it gets through.
 */
static int probe_op_rewrite(char **argv)
{
	_cleanup_close_ int fd = open(argv[0], O_RDWR | O_CLOEXEC);
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (n == 0 || lseek(fd, 0, SEEK_SET) < 0)
		return n == 0 ? -ENODATA : -errno;
	if (write(fd, buf, (size_t)n) < 0)
		return -errno;
	return 0;
}

/* chmod(2) with the file's own mode: an attempt to change it that changes nothing. */
static int probe_op_chmod_same(char **argv)
{
	struct stat st;

	if (stat(argv[0], &st) < 0)
		return -errno;
	return chmod(argv[0], st.st_mode & 07777) < 0 ? -errno : 0;
}

/* OK when PATH has something to show: a byte of a file, an entry of a folder; else ENODATA. */
static int probe_op_nonempty(char **argv)
{
	_cleanup_close_ int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	struct stat st;
	char buf[4096];
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		/* "." and ".." take 24 bytes each. */
		for (ssize_t off = 0; off < n;) {
			const char *name = buf + off + 19;
			unsigned short reclen;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
				return 0;
			off += reclen;
		}
		return -ENODATA;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	return n > 0 ? 0 : -ENODATA;
}

/* OK when the mount holding PATH is writable, EROFS when it is read-only. */
static int probe_op_rw_mount(char **argv)
{
	struct statvfs st;

	if (statvfs(argv[0], &st) < 0)
		return -errno;
	return st.f_flag & ST_RDONLY ? -EROFS : 0;
}

/* The kernel's Landlock ABI: OK when there is one, else why not (ENOSYS, EOPNOTSUPP). */
static int probe_op_landlock(char **argv)
{
	(void)argv;
	return syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* VERSION */) < 0 ? -errno : 0;
}

/* Creates a directory and removes it again: what counts is that it could be created. */
static int probe_op_mkdir(char **argv)
{
	if (mkdir(argv[0], 0755) < 0)
		return -errno;
	(void)rmdir(argv[0]);
	return 0;
}

static int probe_op_unlink(char **argv)
{
	return unlink(argv[0]) < 0 ? -errno : 0;
}

/*
 * Opening /proc/PID/fd/N, or reading the link, is checked like ptrace: the way into another
 * process's descriptors.
 */
static int probe_op_open(char **argv)
{
	_cleanup_close_ int fd = open(argv[0], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	return fd < 0 ? -errno : 0;
}

static int probe_op_readlink(char **argv)
{
	char target[PATH_MAX];

	return readlink(argv[0], target, sizeof(target)) < 0 ? -errno : 0;
}

/* A fresh cgroup2 mount would be writable whatever the existing ones are; unmounted at once. */
static int probe_op_mount_cgroup2(char **argv)
{
	if (mount("cgroup2", argv[0], "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	(void)umount2(argv[0], MNT_DETACH);
	return 0;
}

/* Remounts the mount holding PATH read-write, keeping the flags a bind remount must repeat. */
static int probe_op_remount_rw(char **argv)
{
	unsigned long flags = MS_REMOUNT | MS_BIND;
	struct statvfs st;

	if (statvfs(argv[0], &st) < 0)
		return -errno;
	if (st.f_flag & ST_NOSUID)
		flags |= MS_NOSUID;
	if (st.f_flag & ST_NODEV)
		flags |= MS_NODEV;
	if (st.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	return mount(NULL, argv[0], NULL, flags, NULL) < 0 ? -errno : 0;
}

/* The first BPF program of the system, by id: the handle to attach it elsewhere with. */
static int probe_op_bpf_prog_next(char **argv)
{
	union bpf_attr attr;
	int fd;

	(void)argv;
	memset(&attr, 0, sizeof(attr));
	attr.start_id = 0;
	if (syscall(__NR_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)) < 0)
		return -errno;
	attr.prog_id = attr.next_id;
	attr.next_id = 0;
	fd = (int)syscall(__NR_bpf, BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Detaches the connect4 program of cgroup CGROUP (attached without a link, as launch does). */
static int probe_op_bpf_detach(char **argv)
{
	union bpf_attr attr;
	int fd = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (__u32)fd;
	attr.attach_type = BPF_CGROUP_INET4_CONNECT;
	if (syscall(__NR_bpf, BPF_PROG_DETACH, &attr, sizeof(attr)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int probe_parse_pid(const char *text, pid_t *ret_pid)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || pid <= 0 || pid > INT32_MAX)
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	return 0;
}

static int probe_op_kill0(char **argv)
{
	pid_t pid;

	if (probe_parse_pid(argv[0], &pid) < 0)
		return -EINVAL;
	return kill(pid, 0) < 0 ? -errno : 0;
}

/* PTRACE_SEIZE does not stop the tracee; our exit detaches it. */
static int probe_op_ptrace(char **argv)
{
	pid_t pid;

	if (probe_parse_pid(argv[0], &pid) < 0)
		return -EINVAL;
	return ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0 ? -errno : 0;
}

/* Opening /proc/PID/mem passes the same access check as reading it. */
static int probe_op_readmem(char **argv)
{
	_cleanup_close_ int fd = -1;
	char path[64];
	pid_t pid;

	if (probe_parse_pid(argv[0], &pid) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : 0;
}

static int probe_op_userns_unshare(char **argv)
{
	(void)argv;
	return unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
}

/* The child of a successful clone only exits; its status says nothing more. */
static int probe_wait_child(pid_t pid)
{
	int status;

	if (pid == 0)
		_exit(0);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int probe_op_userns_clone(char **argv)
{
	long pid;

	(void)argv;
	pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0)
		return -errno;
	return probe_wait_child((pid_t)pid);
}

/* Bounds of the resource ops: they must end on their own even where no limit stops them. */
#define PROBE_FORKBOMB_MAX_S  60
#define PROBE_FORKBOMB_FANOUT 16
#define PROBE_FORKBOMB_DEPTH  4 /* at most 16^4 + ... = 69,905 processes in all */
#define PROBE_MEMHOG_MAX_MIB  65536

static long long probe_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * A fork bomb, for limit tests only (run it inside a sandbox): every process forks up to
 * FANOUT children, each of which does the same down to DEPTH generations, retrying failed
 * forks, and every process stays until the deadline. Prints the errno of the first failed
 * fork of the first process, or OK if none failed.
 */
static int probe_op_forkbomb(char **argv)
{
	long long deadline = probe_now_ms() + atoi(argv[0]) * 1000LL;
	int first_error = 0, depth = 0, forked = 0;

	while (probe_now_ms() < deadline) {
		pid_t pid;

		if (depth >= PROBE_FORKBOMB_DEPTH || forked >= PROBE_FORKBOMB_FANOUT) {
			/* Done forking: one long sleep, so that thousands of these cost no CPU. */
			long long left = deadline - probe_now_ms();

			if (left > 0)
				usleep((useconds_t)(left > 1000 ? 1000000 : left * 1000));
			continue;
		}
		pid = fork();
		if (pid < 0) {
			if (depth == 0 && !first_error)
				first_error = errno;
			usleep(1000);
			continue;
		}
		if (pid == 0) {
			depth++;
			forked = 0;
			first_error = 0;
			continue;
		}
		forked++;
	}
	if (depth > 0)
		_exit(0);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return -first_error;
}

static bool probe_valid_forkbomb(char **argv)
{
	int s = atoi(argv[0]);

	return s > 0 && s <= PROBE_FORKBOMB_MAX_S;
}

/* Allocates and touches MIB mebibytes, one at a time; OK when it got them all. */
static int probe_op_memhog(char **argv)
{
	int mib = atoi(argv[0]);

	for (int i = 0; i < mib; i++) {
		char *chunk = malloc(1 << 20);

		if (!chunk)
			return -ENOMEM;
		memset(chunk, i + 1, 1 << 20);
	}
	return 0;
}

static bool probe_valid_memhog(char **argv)
{
	int mib = atoi(argv[0]);

	return mib > 0 && mib <= PROBE_MEMHOG_MAX_MIB;
}

static int probe_op_userns_clone3(char **argv)
{
	struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	long pid;

	(void)argv;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0)
		return -errno;
	return probe_wait_child((pid_t)pid);
}

/* How a rerouted probe sends: TCP (SYN with data), UDP sendto, or UDP connect then send. */
enum probe_route_send {
	PROBE_ROUTE_TCP,
	PROBE_ROUTE_UDP,
	PROBE_ROUTE_UDPCONN,
};

static int probe_parse_route_send(const char *text, enum probe_route_send *ret)
{
	if (strcmp(text, "tcp") == 0)
		*ret = PROBE_ROUTE_TCP;
	else if (strcmp(text, "udp") == 0)
		*ret = PROBE_ROUTE_UDP;
	else if (strcmp(text, "udpconn") == 0)
		*ret = PROBE_ROUTE_UDPCONN;
	else
		return -EINVAL;
	return 0;
}

/*
 * Sends the payload to dest on fd, which carries a route option already. TCP uses
 * MSG_FASTOPEN, so the SYN itself carries the data (with net.ipv4.tcp_fastopen allowing it
 * without a cookie) and nothing waits for a handshake that an address mismatch may never
 * finish: what counts is what left. The message, when given, carries ancillary data.
 */
static int probe_route_send(int fd, enum probe_route_send how, const struct probe_dest *dest,
			    struct msghdr *msg)
{
	struct iovec iov = { .iov_base = (void *)PROBE_PAYLOAD, .iov_len = PROBE_PAYLOAD_LEN };
	struct msghdr plain = { 0 };
	int r;

	if (!msg)
		msg = &plain;
	msg->msg_iov = &iov;
	msg->msg_iovlen = 1;
	switch (how) {
	case PROBE_ROUTE_TCP:
		if (sendto(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, MSG_FASTOPEN | MSG_NOSIGNAL,
			   (const struct sockaddr *)&dest->addr, dest->addrlen) < 0 &&
		    errno != EINPROGRESS)
			return -errno;
		return 0;
	case PROBE_ROUTE_UDPCONN:
		r = probe_connect(fd, dest);
		if (r < 0)
			return r;
		break;
	case PROBE_ROUTE_UDP:
		msg->msg_name = (void *)&dest->addr;
		msg->msg_namelen = dest->addrlen;
		break;
	}
	return sendmsg(fd, msg, 0) < 0 ? -errno : 0;
}

/*
 * A segment routing header (type 4) whose only segment is FIRST, segments left 0: the kernel
 * sends the packet to FIRST, and puts the address that connect/sendto named in the header as
 * the final one. FIRST's host, with seg6_enabled, takes it as its own.
 */
static int probe_op_rthdr(char **argv)
{
	struct {
		struct ipv6_sr_hdr hdr;
		struct in6_addr segment;
	} srh = { 0 };
	_cleanup_close_ int fd = -1;
	enum probe_route_send how;
	struct probe_dest dest;
	int r;

	if (probe_parse_route_send(argv[0], &how) < 0 ||
	    probe_parse_dest(argv[1], argv[2], &dest) < 0 || dest.family != AF_INET6 ||
	    inet_pton(AF_INET6, argv[3], &srh.segment) != 1)
		return -EINVAL;
	srh.hdr.hdrlen = sizeof(srh.segment) / 8;
	srh.hdr.type = PROBE_SRCRT_TYPE_SEG6;
	r = probe_socket(AF_INET6, how == PROBE_ROUTE_TCP ? SOCK_STREAM : SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, &srh, sizeof(srh)) < 0)
		return -errno;
	return probe_route_send(fd, how, &dest, NULL);
}

/*
 * IPv4 option bytes, padded with a NOP to 8: "lsrr=FIRST", a loose source route through FIRST,
 * or "rr", a record route with one empty slot (which needs no privilege).
 */
static int probe_ipv4_option(const char *spec, uint8_t ret_opt[8])
{
	struct in_addr hop = { 0 };

	if (strncmp(spec, "lsrr=", 5) == 0) {
		if (inet_pton(AF_INET, spec + 5, &hop) != 1)
			return -EINVAL;
		ret_opt[1] = IPOPT_LSRR;
	} else if (strcmp(spec, "rr") == 0) {
		ret_opt[1] = IPOPT_RR;
	} else {
		return -EINVAL;
	}
	ret_opt[0] = IPOPT_NOP;
	ret_opt[2] = 7;		   /* length */
	ret_opt[3] = IPOPT_MINOFF; /* pointer to the first address */
	memcpy(&ret_opt[4], &hop, 4);
	return 0;
}

static int probe_lsrr(const char *first, uint8_t ret_opt[8])
{
	char spec[INET_ADDRSTRLEN + 8];

	snprintf(spec, sizeof(spec), "lsrr=%s", first);
	return probe_ipv4_option(spec, ret_opt);
}

/* setsockopt(IP_OPTIONS) with a loose source route through FIRST, then one send. */
static int probe_op_ipopts(char **argv)
{
	_cleanup_close_ int fd = -1;
	enum probe_route_send how;
	struct probe_dest dest;
	uint8_t opt[8];
	int r;

	if (probe_parse_route_send(argv[0], &how) < 0 ||
	    probe_parse_dest(argv[1], argv[2], &dest) < 0 || dest.family != AF_INET ||
	    probe_lsrr(argv[3], opt) < 0)
		return -EINVAL;
	r = probe_socket(AF_INET, how == PROBE_ROUTE_TCP ? SOCK_STREAM : SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)) < 0)
		return -errno;
	return probe_route_send(fd, how, &dest, NULL);
}

/*
 * IPv4 options as ancillary data (IP_RETOPTS) on one sendmsg: no socket option, so nothing
 * but the packet itself shows them. OPT as probe_ipv4_option.
 */
static int probe_op_retopts(char **argv)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(8)];
	} control = { 0 };
	struct msghdr msg = { .msg_control = &control, .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cmsg = &control.hdr;
	_cleanup_close_ int fd = -1;
	enum probe_route_send how;
	struct probe_dest dest;
	int r;

	if (probe_parse_route_send(argv[0], &how) < 0 || how == PROBE_ROUTE_TCP ||
	    probe_parse_dest(argv[1], argv[2], &dest) < 0 || dest.family != AF_INET)
		return -EINVAL;
	cmsg->cmsg_level = IPPROTO_IP;
	cmsg->cmsg_type = IP_RETOPTS;
	cmsg->cmsg_len = CMSG_LEN(8);
	if (probe_ipv4_option(argv[3], CMSG_DATA(cmsg)) < 0)
		return -EINVAL;
	r = probe_socket(AF_INET, SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	return probe_route_send(fd, how, &dest, &msg);
}

/* N datagrams with the options of retopts, each on its own socket: the last one's result. */
static int probe_op_retopts_burst(char **argv)
{
	char *end;
	long n;
	int r = 0;

	errno = 0;
	n = strtol(argv[0], &end, 10);
	if (errno || end == argv[0] || *end || n < 1 || n > 100000)
		return -EINVAL;
	for (long i = 0; i < n; i++)
		r = probe_op_retopts(argv + 1);
	return r;
}

/*
 * Listens on ADDR PORT, connects to it and exchanges the payload both ways: a TCP server of
 * the job's own, reached by the job (SYN-ACK from a listener, replies on an accepted socket).
 */
static int probe_op_tcp_self(char **argv)
{
	_cleanup_close_ int listen_fd = -1, fd = -1, peer = -1;
	char buf[sizeof(PROBE_PAYLOAD)];
	struct probe_dest dest;
	struct pollfd pfd;
	int one = 1, r;

	if (probe_parse_dest(argv[0], argv[1], &dest) < 0)
		return -EINVAL;
	r = probe_socket(dest.family, SOCK_STREAM, 0, &listen_fd);
	if (r < 0)
		return r;
	(void)setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listen_fd, (struct sockaddr *)&dest.addr, dest.addrlen) < 0 ||
	    listen(listen_fd, 1) < 0)
		return -errno;
	r = probe_socket(dest.family, SOCK_STREAM, 0, &fd);
	if (r == 0)
		r = probe_connect(fd, &dest);
	if (r == 0)
		r = probe_write_all(fd, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN);
	if (r < 0)
		return r;
	peer = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (peer < 0)
		return -errno;
	if (recv(peer, buf, sizeof(buf), 0) != (ssize_t)PROBE_PAYLOAD_LEN ||
	    send(peer, PROBE_PAYLOAD, PROBE_PAYLOAD_LEN, MSG_NOSIGNAL) !=
		    (ssize_t)PROBE_PAYLOAD_LEN)
		return -EIO;
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, PROBE_CONNECT_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	return recv(fd, buf, sizeof(buf), 0) == (ssize_t)PROBE_PAYLOAD_LEN ? 0 : -EIO;
}

static int probe_parse_hex(const char *hex, uint8_t *buf, size_t cap, size_t *ret_len)
{
	size_t n = strlen(hex);

	if (strcmp(hex, "-") == 0) {
		*ret_len = 0;
		return 0;
	}
	if (n % 2 || n / 2 > cap)
		return -EINVAL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int byte;

		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return -EINVAL;
		buf[i] = (uint8_t)byte;
	}
	*ret_len = n / 2;
	return 0;
}

/* setsockopt(LEVEL, OPTNAME) with the bytes HEX ("-": none) on a UDP socket of FAMILY. */
static int probe_op_sockopt(char **argv)
{
	_cleanup_close_ int fd = -1;
	int family, level, optname, r;
	uint8_t value[256];
	size_t len;

	if (probe_parse_name(probe_families, ARRAY_SIZE(probe_families), argv[0], &family) < 0 ||
	    probe_parse_name(probe_protocols, 0, argv[1], &level) < 0 ||
	    probe_parse_name(probe_protocols, 0, argv[2], &optname) < 0 ||
	    probe_parse_hex(argv[3], value, sizeof(value), &len) < 0)
		return -EINVAL;
	r = probe_socket(family, SOCK_DGRAM, 0, &fd);
	if (r < 0)
		return r;
	return setsockopt(fd, level, optname, value, (socklen_t)len) < 0 ? -errno : 0;
}

/* Writable cgroup mounts (v1 or v2) and bpf mounts in our view: "RW BPF". */
static int probe_op_cgroup_mounts(char **argv)
{
	_cleanup_free_ char *line = NULL;
	unsigned int rw = 0, bpf = 0;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	(void)argv;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *sep = strstr(line, " - "), *fields[6], *save = NULL, *fstype;
		size_t n = 0;

		if (!sep)
			continue;
		*sep = '\0';
		for (char *w = strtok_r(line, " ", &save); w && n < 6;
		     w = strtok_r(NULL, " ", &save))
			fields[n++] = w;
		fstype = strtok_r(sep + 3, " ", &save);
		if (n < 6 || !fstype)
			continue;
		if ((strcmp(fstype, "cgroup") == 0 || strcmp(fstype, "cgroup2") == 0) &&
		    (strncmp(fields[5], "rw,", 3) == 0 || strcmp(fields[5], "rw") == 0))
			rw++;
		if (strcmp(fstype, "bpf") == 0)
			bpf++;
	}
	fclose(f);
	printf("%u %u\n", rw, bpf);
	return PROBE_PRINTED;
}

/* Our capability sets, no_new_privs and seccomp mode, as /proc/self/status gives them. */
static int probe_op_status_caps(char **argv)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:",     "CapEff:", "CapBnd:",
					    "CapAmb:", "NoNewPrivs:", "Seccomp:" };
	_cleanup_free_ char *line = NULL;
	char values[ARRAY_SIZE(keys)][32] = { { 0 } };
	size_t cap = 0;
	FILE *f = fopen("/proc/self/status", "re");

	(void)argv;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				sscanf(line + strlen(keys[i]), "%31s", values[i]);
	fclose(f);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		printf("%s%s", i ? " " : "", values[i][0] ? values[i] : "-");
	putchar('\n');
	return PROBE_PRINTED;
}

/* Our open descriptors, in order, but the one that lists them. */
static int probe_op_fds(char **argv)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	bool first = true;
	int fds[1024], n = 0;

	(void)argv;
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < (int)ARRAY_SIZE(fds)) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(dir))
			continue;
		fds[n++] = atoi(de->d_name);
	}
	closedir(dir);
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && fds[k - 1] > fds[k]; k--) {
			int t = fds[k];

			fds[k] = fds[k - 1];
			fds[k - 1] = t;
		}
	for (int i = 0; i < n; i++, first = false)
		printf("%s%d", first ? "" : " ", fds[i]);
	putchar('\n');
	return PROBE_PRINTED;
}

/* Our cgroup v2 line of /proc/self/cgroup ("0::/PATH"). */
static int probe_op_cgroup_v2(char **argv)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/cgroup", "re");
	int r = -ENOENT;

	(void)argv;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "0::", 3) == 0) {
			fputs(line, stdout);
			r = PROBE_PRINTED;
			break;
		}
	}
	fclose(f);
	return r;
}

/* Whether /proc/PID is in our view (another PID namespace's process is not). */
static int probe_op_pid_visible(char **argv)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s", argv[0]);
	return stat(path, &st) < 0 ? -errno : 0;
}

/* A relative AF_UNIX path, connected from DIR. */
static int probe_op_unix_at(char **argv)
{
	if (chdir(argv[0]) < 0)
		return -errno;
	return probe_op_unix(argv + 1);
}

/* A symlink at LINK to TARGET, made now, then connected to through the link. */
static int probe_op_unix_via_link(char **argv)
{
	if (symlink(argv[0], argv[1]) < 0)
		return -errno;
	return probe_op_unix(argv + 1);
}

/*
 * The program a row names: a path, or a file beside the probe (the other helpers), or one
 * found in PATH.
 */
static void probe_each_exec(char **args)
{
	char path[PATH_MAX];
	ssize_t n;

	if (!strchr(args[0], '/')) {
		n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n > 0) {
			char *slash;

			path[n] = '\0';
			slash = strrchr(path, '/');
			if (slash && (size_t)(slash + 1 - path) + strlen(args[0]) < sizeof(path)) {
				strcpy(slash + 1, args[0]);
				if (access(path, X_OK) == 0)
					execv(path, args);
			}
		}
	}
	execvp(args[0], args);
}

/*
 * One row: its words, an argument "<FILE" replaced by FILE's first line (what is known only
 * once the job runs, such as the launcher's pid). Prints the program's output on one line,
 * words joined by one space, "EXITn" after it when it exited n != 0 ("SIGn" when killed), or
 * "NONE" for no output at all.
 */
static int probe_each_row(const char *row)
{
	_cleanup_free_ char *copy = strdup(row);
	char *args[32], *save = NULL, out[4096], values[32][256];
	size_t nargs = 0, len = 0;
	int pipefd[2], status;
	bool space = false;
	pid_t pid;
	ssize_t n;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (nargs == ARRAY_SIZE(args) - 1)
			return -E2BIG;
		if (w[0] == '<' && w[1]) {
			FILE *f = fopen(w + 1, "re");

			values[nargs][0] = '\0';
			if (f) {
				if (fgets(values[nargs], sizeof(values[nargs]), f))
					values[nargs][strcspn(values[nargs], "\n")] = '\0';
				fclose(f);
			}
			w = values[nargs];
		}
		args[nargs++] = w;
	}
	args[nargs] = NULL;
	if (!nargs)
		return -EINVAL;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* dup2 clears close-on-exec on the copies: the program sees only the job's. */
		if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(null, 2) < 0)
			_exit(126);
		probe_each_exec(args);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0 ||
	       (n < 0 && errno == EINTR))
		len += n > 0 ? (size_t)n : 0;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	out[len] = '\0';
	for (char *w = strtok_r(out, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		printf("%s%s", space ? " " : "", w);
		space = true;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status))
		printf("%sEXIT%d", space ? " " : "", WEXITSTATUS(status)), space = true;
	else if (WIFSIGNALED(status))
		printf("%sSIG%d", space ? " " : "", WTERMSIG(status)), space = true;
	puts(space ? "" : "NONE");
	return 0;
}

/*
 * The tests' tables: runs each ROW ("PROGRAM ARGS...", words split at spaces, no shell) in a
 * process of its own, in order, one result line each.
 */
static int probe_op_each(char **argv)
{
	for (; *argv; argv++) {
		int r = probe_each_row(*argv);

		if (r < 0)
			printf("ROW-%s\n", strerrorname_np(-r) ? strerrorname_np(-r) : "ERROR");
	}
	return PROBE_PRINTED;
}

struct probe_op {
	const char *name;
	const char *args;
	int nargs; /* -1: any number */
	/*
	 * Returns 0 or -errno, or PROBE_PRINTED when it printed its own result; called only
	 * after `valid` accepted the arguments.
	 */
	int (*run)(char **argv);
	/* Parses the arguments without acting, so a typo is a usage error (exit 2), not "EINVAL".
	 */
	bool (*valid)(char **argv);
};

static bool probe_valid_dest(char **argv)
{
	struct probe_dest dest;

	return probe_parse_dest(argv[0], argv[1], &dest) == 0;
}

static bool probe_valid_two_dests(char **argv)
{
	struct probe_dest first, second;

	return probe_parse_dest(argv[0], argv[1], &first) == 0 &&
	       probe_parse_dest(argv[2], argv[3], &second) == 0 && first.family == second.family;
}

static bool probe_valid_socket(char **argv)
{
	int value;

	return probe_parse_name(probe_families, ARRAY_SIZE(probe_families), argv[0], &value) == 0 &&
	       probe_parse_name(probe_types, ARRAY_SIZE(probe_types), argv[1], &value) == 0 &&
	       probe_parse_name(probe_protocols, ARRAY_SIZE(probe_protocols), argv[2], &value) == 0;
}

static bool probe_valid_unix(char **argv)
{
	struct probe_dest dest;

	return probe_parse_unix(argv[0], &dest) == 0;
}

static bool probe_valid_unix_at(char **argv)
{
	struct probe_dest dest;

	return probe_parse_unix(argv[1], &dest) == 0;
}

static bool probe_valid_any(char **argv)
{
	(void)argv;
	return true;
}

static bool probe_valid_pid(char **argv)
{
	pid_t pid;

	return probe_parse_pid(argv[0], &pid) == 0;
}

static bool probe_valid_route(char **argv)
{
	enum probe_route_send how;
	struct probe_dest dest;

	return probe_parse_route_send(argv[0], &how) == 0 &&
	       probe_parse_dest(argv[1], argv[2], &dest) == 0;
}

static bool probe_valid_burst(char **argv)
{
	return atoi(argv[0]) > 0 && probe_valid_route(argv + 1);
}

static bool probe_valid_sockopt(char **argv)
{
	uint8_t value[256];
	size_t len;
	int n;

	return probe_parse_name(probe_families, ARRAY_SIZE(probe_families), argv[0], &n) == 0 &&
	       probe_parse_name(probe_protocols, 0, argv[1], &n) == 0 &&
	       probe_parse_name(probe_protocols, 0, argv[2], &n) == 0 &&
	       probe_parse_hex(argv[3], value, sizeof(value), &len) == 0;
}

static const struct probe_op probe_ops[] = {
	{ "tcp", "ADDR PORT", 2, probe_op_tcp, probe_valid_dest },
	{ "udp", "ADDR PORT", 2, probe_op_udp, probe_valid_dest },
	{ "udpconn", "ADDR PORT", 2, probe_op_udpconn, probe_valid_dest },
	{ "udp-sendmsg", "ADDR PORT", 2, probe_op_udp_sendmsg, probe_valid_dest },
	{ "udp-sendmmsg", "ADDR PORT", 2, probe_op_udp_sendmmsg, probe_valid_dest },
	{ "udp-big", "ADDR PORT SIZE", 3, probe_op_udp_big, probe_valid_dest },
	{ "tcp-fastopen", "ADDR PORT", 2, probe_op_tcp_fastopen, probe_valid_dest },
	{ "reconnect", "ADDR1 PORT1 ADDR2 PORT2", 4, probe_op_reconnect, probe_valid_two_dests },
	{ "udpconn-sendto", "ADDR1 PORT1 ADDR2 PORT2", 4, probe_op_udpconn_sendto,
	  probe_valid_two_dests },
	{ "socket", "FAMILY TYPE PROTO", 3, probe_op_socket, probe_valid_socket },
	{ "unix", "PATH|@NAME", 1, probe_op_unix, probe_valid_unix },
	{ "unix-dgram", "PATH|@NAME", 1, probe_op_unix_dgram, probe_valid_unix },
	{ "unix-self", "PATH|@NAME", 1, probe_op_unix_self, probe_valid_unix },
	{ "socketpair", "FAMILY TYPE PROTO", 3, probe_op_socketpair, probe_valid_socket },
	{ "write", "PATH TEXT", 2, probe_op_write, probe_valid_any },
	{ "mkdir", "PATH", 1, probe_op_mkdir, probe_valid_any },
	{ "create", "PATH", 1, probe_op_create, probe_valid_any },
	{ "rewrite", "PATH", 1, probe_op_rewrite, probe_valid_any },
	{ "chmod-same", "PATH", 1, probe_op_chmod_same, probe_valid_any },
	{ "nonempty", "PATH", 1, probe_op_nonempty, probe_valid_any },
	{ "rw-mount", "PATH", 1, probe_op_rw_mount, probe_valid_any },
	{ "landlock", "", 0, probe_op_landlock, probe_valid_any },
	{ "unlink", "PATH", 1, probe_op_unlink, probe_valid_any },
	{ "open", "PATH", 1, probe_op_open, probe_valid_any },
	{ "readlink", "PATH", 1, probe_op_readlink, probe_valid_any },
	{ "mount-cgroup2", "DIR", 1, probe_op_mount_cgroup2, probe_valid_any },
	{ "remount-rw", "PATH", 1, probe_op_remount_rw, probe_valid_any },
	{ "bpf-prog-next", "", 0, probe_op_bpf_prog_next, probe_valid_any },
	{ "bpf-detach", "CGROUP", 1, probe_op_bpf_detach, probe_valid_any },
	{ "kill0", "PID", 1, probe_op_kill0, probe_valid_pid },
	{ "ptrace", "PID", 1, probe_op_ptrace, probe_valid_pid },
	{ "readmem", "PID", 1, probe_op_readmem, probe_valid_pid },
	{ "userns-unshare", "", 0, probe_op_userns_unshare, probe_valid_any },
	{ "userns-clone", "", 0, probe_op_userns_clone, probe_valid_any },
	{ "userns-clone3", "", 0, probe_op_userns_clone3, probe_valid_any },
	{ "rthdr", "tcp|udp|udpconn ADDR6 PORT FIRST6", 4, probe_op_rthdr, probe_valid_route },
	{ "ipopts", "tcp|udp|udpconn ADDR4 PORT FIRST4", 4, probe_op_ipopts, probe_valid_route },
	{ "retopts", "udp|udpconn ADDR4 PORT lsrr=FIRST4|rr", 4, probe_op_retopts,
	  probe_valid_route },
	{ "retopts-burst", "N udp|udpconn ADDR4 PORT lsrr=FIRST4|rr", 5, probe_op_retopts_burst,
	  probe_valid_burst },
	{ "tcp-self", "ADDR PORT", 2, probe_op_tcp_self, probe_valid_dest },
	{ "sockopt", "FAMILY LEVEL OPTNAME HEX|-", 4, probe_op_sockopt, probe_valid_sockopt },
	{ "forkbomb", "SECONDS", 1, probe_op_forkbomb, probe_valid_forkbomb },
	{ "memhog", "MIB", 1, probe_op_memhog, probe_valid_memhog },
	{ "serve", "ADDR PORT READYFILE", 3, probe_op_serve, probe_valid_dest },
	{ "serve-unix", "PATH|@NAME READYFILE", 2, probe_op_serve_unix, probe_valid_unix },
	{ "fetch", "ADDR PORT", 2, probe_op_fetch, probe_valid_dest },
	{ "tcp-loop", "ADDR PORT LOGFILE STOPFILE", 4, probe_op_tcp_loop, probe_valid_dest },
	{ "connect-race", "NEWADDR NEWPORT OLDADDR OLDPORT GOFILE", 5, probe_op_connect_race,
	  probe_valid_two_dests },
	{ "udp-loop", "ADDR PORT LOGFILE STOPFILE", 4, probe_op_udp_loop, probe_valid_dest },
	{ "fetch-unix", "PATH|@NAME", 1, probe_op_fetch_unix, probe_valid_unix },
	{ "bind", "ADDR PORT tcp|udp", 3, probe_op_bind, probe_valid_dest },
	{ "listen-unbound", "", 0, probe_op_listen_unbound, probe_valid_any },
	{ "udp-text", "ADDR PORT TEXT", 3, probe_op_udp_text, probe_valid_dest },
	{ "netlink-send", "PORTID", 1, probe_op_netlink_send, probe_valid_pid },
	{ "netlink-recv", "PORTID READYFILE", 2, probe_op_netlink_recv, probe_valid_pid },
	{ "x32", "socket", 1, probe_op_x32, probe_valid_any },
	{ "cgroup-mounts", "", 0, probe_op_cgroup_mounts, probe_valid_any },
	{ "status-caps", "", 0, probe_op_status_caps, probe_valid_any },
	{ "fds", "", 0, probe_op_fds, probe_valid_any },
	{ "cgroup-v2", "", 0, probe_op_cgroup_v2, probe_valid_any },
	{ "pid-visible", "PID", 1, probe_op_pid_visible, probe_valid_pid },
	{ "unix-at", "DIR PATH", 2, probe_op_unix_at, probe_valid_unix_at },
	{ "unix-via-link", "TARGET LINK", 2, probe_op_unix_via_link, probe_valid_unix_at },
	{ "each", "'PROGRAM ARGS...'...", -1, probe_op_each, probe_valid_any },
};

static void probe_usage(FILE *out)
{
	fprintf(out, "usage: probe OP ARGS...  (prints OK or the errno name, exits 0)\n");
	for (size_t i = 0; i < ARRAY_SIZE(probe_ops); i++)
		fprintf(out, "  probe %s %s\n", probe_ops[i].name, probe_ops[i].args);
}

int main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		probe_usage(stdout);
		return 0;
	}
	for (size_t i = 0; argc >= 2 && i < ARRAY_SIZE(probe_ops); i++) {
		const struct probe_op *op = &probe_ops[i];

		if (strcmp(argv[1], op->name) != 0)
			continue;
		int r;

		if ((op->nargs >= 0 && argc - 2 != op->nargs) || !op->valid(argv + 2)) {
			fprintf(stderr, "probe: usage: probe %s %s\n", op->name, op->args);
			return PROBE_EXIT_USAGE;
		}
		r = op->run(argv + 2);
		if (r != PROBE_PRINTED)
			helper_report(r);
		return 0;
	}
	probe_usage(stderr);
	return PROBE_EXIT_USAGE;
}
