// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sends many UDP datagrams or TCP connects to one destination and counts the results by errno. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "helpers.h"

#include "lib/util.h"

/* Distinct errno values reported; more than this many kinds would mean a broken test anyway. */
#define FLOOD_MAX_KINDS 8

struct flood_tally {
	int err; /* 0 for success */
	unsigned long count;
};

static void flood_count(struct flood_tally *tally, size_t *nkinds, int err)
{
	for (size_t i = 0; i < *nkinds; i++) {
		if (tally[i].err == err) {
			tally[i].count++;
			return;
		}
	}
	if (*nkinds < FLOOD_MAX_KINDS) {
		tally[*nkinds].err = err;
		tally[*nkinds].count = 1;
		(*nkinds)++;
	}
}

int main(int argc, char **argv)
{
	struct flood_tally tally[FLOOD_MAX_KINDS];
	struct sockaddr_storage dest;
	_cleanup_close_ int udp_fd = -1;
	size_t nkinds = 0;
	socklen_t len;
	unsigned long n;
	bool tcp;
	char *end;

	if (argc != 5 || (strcmp(argv[1], "tcp") != 0 && strcmp(argv[1], "udp") != 0) ||
	    helper_parse_dest(argv[2], argv[3], &dest, &len) < 0) {
		fprintf(stderr,
			"usage: flood tcp|udp ADDR PORT COUNT  (prints OK=n EPERM=n ...)\n");
		return 2;
	}
	n = strtoul(argv[4], &end, 10);
	if (*argv[4] == '\0' || *end != '\0') {
		fprintf(stderr, "flood: bad count '%s'\n", argv[4]);
		return 2;
	}
	tcp = strcmp(argv[1], "tcp") == 0;
	if (!tcp) {
		udp_fd = socket(dest.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (udp_fd < 0) {
			printf("socket=%s\n", strerrorname_np(errno));
			return 0;
		}
	}
	for (unsigned long i = 0; i < n; i++) {
		int err = 0;

		if (tcp) {
			_cleanup_close_ int fd = socket(
				dest.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

			if (fd < 0 || connect(fd, (struct sockaddr *)&dest, len) < 0)
				err = errno == EINPROGRESS ? 0 : errno;
		} else if (sendto(udp_fd, "x", 1, 0, (struct sockaddr *)&dest, len) < 0) {
			err = errno;
		}
		flood_count(tally, &nkinds, err);
	}
	for (size_t i = 0; i < nkinds; i++) {
		const char *name = tally[i].err ? strerrorname_np(tally[i].err) : "OK";

		printf("%s%s=%lu", i ? " " : "", name ? name : "E?", tally[i].count);
	}
	printf("\n");
	return 0;
}
