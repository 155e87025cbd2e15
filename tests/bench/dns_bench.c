// SPDX-License-Identifier: LGPL-2.1-or-later
/* DNS load generator for the proxy benchmark: latency (one query at a time) or throughput. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: dns_bench latency SERVER PORT COUNT
 *        dns_bench throughput SERVER PORT SECONDS WINDOW
 * Queries A records of n0..n63.cdn.provider.test over UDP from one unconnected socket
 * (sendto/recvfrom, as glibc's stub does per query), and prints one JSON line.
 */

#define NAMES	    64
#define TIMEOUT_MS  1000
#define MAX_WINDOW  1024
#define MAX_LATENCY 1000000

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t build_query(uint8_t *buf, uint16_t id, unsigned int name)
{
	char label[8];
	size_t n = 0;
	int len = snprintf(label, sizeof(label), "n%u", name);
	static const char tail[] = "\3cdn\10provider\4test";

	buf[n++] = id >> 8;
	buf[n++] = id & 0xff;
	buf[n++] = 0x01; /* RD */
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = 1; /* QDCOUNT */
	memset(buf + n, 0, 6);
	n += 6;
	buf[n++] = (uint8_t)len;
	memcpy(buf + n, label, (size_t)len);
	n += (size_t)len;
	memcpy(buf + n, tail, sizeof(tail)); /* with the root's zero */
	n += sizeof(tail);
	buf[n++] = 0;
	buf[n++] = 1; /* A */
	buf[n++] = 0;
	buf[n++] = 1; /* IN */
	return n;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static int open_socket(const char *server, const char *port, struct sockaddr_storage *ret_addr,
		       socklen_t *ret_len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ret_addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret_addr;
	int fd;

	memset(ret_addr, 0, sizeof(*ret_addr));
	if (inet_pton(AF_INET, server, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(port));
		*ret_len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, server, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)atoi(port));
		*ret_len = sizeof(*sin6);
	} else {
		fprintf(stderr, "dns_bench: bad address %s\n", server);
		return -1;
	}
	fd = socket(ret_addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		perror("dns_bench: socket");
	return fd;
}

static int latency(int fd, const struct sockaddr_storage *to, socklen_t tolen, long count)
{
	long long *rtt = calloc((size_t)count, sizeof(*rtt));
	long done = 0, lost = 0;
	uint8_t q[512], a[4096];

	if (!rtt)
		return 1;
	for (long i = 0; i < count; i++) {
		uint16_t id = (uint16_t)(i * 7919 + 1);
		size_t len = build_query(q, id, (unsigned int)(i % NAMES));
		long long start = now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (sendto(fd, q, len, 0, (const struct sockaddr *)to, tolen) < 0) {
			perror("dns_bench: sendto");
			return 1;
		}
		for (;;) {
			struct sockaddr_storage from;
			socklen_t fromlen = sizeof(from);
			ssize_t n;

			if (poll(&pfd, 1, TIMEOUT_MS) <= 0) {
				lost++;
				break;
			}
			n = recvfrom(fd, a, sizeof(a), 0, (struct sockaddr *)&from, &fromlen);
			if (n >= 12 && a[0] == q[0] && a[1] == q[1]) {
				rtt[done++] = now_ns() - start;
				break;
			}
		}
	}
	if (!done) {
		fprintf(stderr, "dns_bench: no answer at all\n");
		return 1;
	}
	qsort(rtt, (size_t)done, sizeof(*rtt), cmp_ll);
	printf("{\"mode\":\"latency\",\"answered\":%ld,\"lost\":%ld,\"median_us\":%.1f,"
	       "\"p90_us\":%.1f,\"p99_us\":%.1f}\n",
	       done, lost, rtt[done / 2] / 1e3, rtt[done * 9 / 10] / 1e3,
	       rtt[done * 99 / 100] / 1e3);
	free(rtt);
	return lost * 100 > count ? 1 : 0;
}

static int throughput(int fd, const struct sockaddr_storage *to, socklen_t tolen, double seconds,
		      int window)
{
	long long start = now_ns(), end = start + (long long)(seconds * 1e9);
	static long long sent_at[65536];
	long answered = 0, sent = 0, lost = 0;
	int outstanding = 0;
	uint16_t next_id = 1;
	uint8_t q[512], a[4096];

	while (now_ns() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		while (outstanding < window) {
			size_t len = build_query(q, next_id, (unsigned int)(sent % NAMES));

			if (sendto(fd, q, len, 0, (const struct sockaddr *)to, tolen) < 0) {
				if (errno == EAGAIN || errno == ENOBUFS)
					break;
				perror("dns_bench: sendto");
				return 1;
			}
			sent_at[next_id] = now_ns();
			next_id = next_id == 65535 ? 1 : next_id + 1;
			sent++;
			outstanding++;
		}
		if (poll(&pfd, 1, 100) <= 0) {
			/* Nothing for 100 ms: count the window as lost and start over. */
			lost += outstanding;
			outstanding = 0;
			continue;
		}
		for (;;) {
			ssize_t n = recv(fd, a, sizeof(a), MSG_DONTWAIT);
			uint16_t id;

			if (n < 0)
				break;
			if (n < 12)
				continue;
			id = (uint16_t)(a[0] << 8 | a[1]);
			if (!sent_at[id])
				continue;
			sent_at[id] = 0;
			answered++;
			if (outstanding > 0)
				outstanding--;
		}
	}
	seconds = (now_ns() - start) / 1e9;
	printf("{\"mode\":\"throughput\",\"window\":%d,\"seconds\":%.2f,\"sent\":%ld,"
	       "\"answered\":%ld,\"lost\":%ld,\"qps\":%.0f}\n",
	       window, seconds, sent, answered, lost, answered / seconds);
	return answered ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage to;
	socklen_t tolen;
	int fd;

	if (argc == 5 && strcmp(argv[1], "latency") == 0) {
		long count = atol(argv[4]);

		fd = open_socket(argv[2], argv[3], &to, &tolen);
		if (fd < 0 || count <= 0 || count > MAX_LATENCY)
			return 2;
		return latency(fd, &to, tolen, count);
	}
	if (argc == 6 && strcmp(argv[1], "throughput") == 0) {
		int window = atoi(argv[5]);

		fd = open_socket(argv[2], argv[3], &to, &tolen);
		if (fd < 0 || window <= 0 || window > MAX_WINDOW)
			return 2;
		return throughput(fd, &to, tolen, atof(argv[4]), window);
	}
	fprintf(stderr, "usage: dns_bench latency SERVER PORT COUNT\n"
			"       dns_bench throughput SERVER PORT SECONDS WINDOW\n");
	return 2;
}
