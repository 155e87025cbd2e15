// SPDX-License-Identifier: LGPL-2.1-or-later
/* Connects and sends "hello" through io_uring only, printing "OK" or the errno's name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <liburing.h>

#include "helpers.h"

#include "lib/util.h"

/* Exit status for a malformed command line; every operation result exits 0. */
#define IOURING_EXIT_USAGE  2
#define IOURING_QUEUE_DEPTH 4

static const char IOURING_PAYLOAD[] = "hello\n";

/* Submits one prepared request and returns its result (>= 0, or -errno). */
static int iouring_run_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int r;

	r = io_uring_submit(ring);
	if (r < 0)
		return r;
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		return r;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

/*
 * The socket itself comes from socket(2): the point is that connect and send reach the
 * stack from an io_uring worker, not from the connect/sendto system calls.
 */
static int iouring_connect_send(const struct sockaddr_storage *dest, socklen_t len)
{
	_cleanup_close_ int fd = -1;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int r;

	r = io_uring_queue_init(IOURING_QUEUE_DEPTH, &ring, 0);
	if (r < 0)
		return r;
	fd = socket(dest->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_connect(sqe, fd, (const struct sockaddr *)dest, len);
	r = iouring_run_one(&ring);
	if (r < 0)
		goto out;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_send(sqe, fd, IOURING_PAYLOAD, sizeof(IOURING_PAYLOAD) - 1, MSG_NOSIGNAL);
	r = iouring_run_one(&ring);
	if (r >= 0 && (size_t)r != sizeof(IOURING_PAYLOAD) - 1)
		r = -EIO;
	if (r >= 0) {
		r = 0;
		/* A FIN, so the listener logs the message before we exit. */
		(void)shutdown(fd, SHUT_WR);
	}
out:
	io_uring_queue_exit(&ring);
	return r;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage dest;
	socklen_t len;

	if (argc != 3 || helper_parse_dest(argv[1], argv[2], &dest, &len) < 0) {
		fprintf(stderr,
			"usage: iouring_connect ADDR PORT  (prints OK or the errno name)\n");
		return IOURING_EXIT_USAGE;
	}
	helper_report(iouring_connect_send(&dest, len));
	return 0;
}
