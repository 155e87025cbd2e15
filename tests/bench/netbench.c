// SPDX-License-Identifier: LGPL-2.1-or-later
/* The benchmarks' network load: a listener, timed connects and sends, a refused-connect flood. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "lib/util.h"

/* Enough for every core of any machine the benchmark is meant for. */
#define NETBENCH_MAX_THREADS 256
/* The flood looks at the clock once per this many attempts, so the clock costs nothing. */
#define NETBENCH_CLOCK_EVERY   64
#define NETBENCH_PACE_SLEEP_NS 50000L
/*
 * getppid() calls per connect in `all`: a call costs a two-hundredth of a connect, and the
 * loop must last long enough for the clock and the scheduler not to count.
 */
#define NETBENCH_SYSCALLS_PER_CONNECT 20

static const char USAGE[] =
	"usage: netbench [--cgroup DIR] [--hold] MODE ...\n"
	"  listen ADDR PORT              TCP listener and UDP sink; \"ready\" on stdout, ends at "
	"EOF\n"
	"                                on stdin\n"
	"  tcp ADDR PORT COUNT           COUNT blocking connect()s, each on a new socket closed\n"
	"                                with a reset (no TIME_WAIT)\n"
	"  udp ADDR PORT COUNT           COUNT sendto()s of one byte on one unconnected socket\n"
	"  all ADDR PORT COUNT           tcp, udp, then 20 x COUNT getppid() system calls (the\n"
	"                                cost of any per-syscall filter, such as seccomp)\n"
	"  bulk ADDR PORT MBYTES         one TCP connection to a receiver thread of its own\n"
	"                                listening at ADDR PORT: MBYTES MiB sent in 64 KiB writes\n"
	"                                (both ends in the caller's sandbox, if any)\n"
	"  flood ADDR PORT SECONDS [RATE]\n"
	"                                connect()s that the sandbox refuses, from one thread per\n"
	"                                core, as fast as possible or at RATE per second in all\n"
	"  --cgroup DIR                  join this cgroup v2 folder first (the nftables peer)\n"
	"  --seccomp                     install a filter that allows every call first (the floor\n"
	"                                of any seccomp filter: the kernel's slow system call "
	"entry)\n"
	"  --hold                        after the result line, wait for EOF on stdin (so that "
	"the\n"
	"                                caller can read the sandbox's BPF statistics)\n"
	"Prints a line per loop: MODE attempts=N ok=N eperm=N other=N ns=N [cpu_ns=N] (wall time,\n"
	"and the thread's CPU time for tcp, udp and the getppid() loop, \"sys\").\n";

struct netbench_target {
	struct sockaddr_storage addr;
	socklen_t len;
};

struct netbench_tally {
	unsigned long long ok;
	unsigned long long eperm;
	unsigned long long other;
	int first_other; /* errno of the first unexpected failure, for the report */
};

struct netbench_flood {
	const struct netbench_target *target;
	uint64_t deadline_ns;
	uint64_t start_ns;
	double rate_per_thread; /* 0: as fast as possible */
	struct netbench_tally tally;
	int error;
};

static uint64_t netbench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int netbench_parse_number(const char *s, unsigned long long max,
				 unsigned long long *ret_value)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno || v > max)
		return -EINVAL;
	*ret_value = v;
	return 0;
}

static int netbench_parse_target(const char *addr, const char *port,
				 struct netbench_target *ret_target)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&ret_target->addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ret_target->addr;
	unsigned long long p;

	if (netbench_parse_number(port, 65535, &p) < 0)
		return -EINVAL;
	memset(ret_target, 0, sizeof(*ret_target));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		ret_target->len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)p);
		ret_target->len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

static void netbench_count(struct netbench_tally *tally, int err)
{
	if (err == 0) {
		tally->ok++;
	} else if (err == EPERM) {
		tally->eperm++;
	} else {
		if (!tally->other)
			tally->first_other = err;
		tally->other++;
	}
}

/*
 * The calling thread's CPU time. On loopback a connect or a send does all its work in the
 * caller's context (the softirqs run there when it re-enables them), so this is the call's
 * cost; unlike wall time, it does not depend on the share the scheduler gives the caller's
 * cgroup on a busy machine.
 */
static uint64_t netbench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* cpu_ns: the thread's CPU time over the loop, or 0 when not measured. */
static void netbench_print(const char *mode, const struct netbench_tally *tally,
			   unsigned long long attempts, uint64_t ns, uint64_t cpu_ns)
{
	printf("%s attempts=%llu ok=%llu eperm=%llu other=%llu ns=%llu", mode, attempts, tally->ok,
	       tally->eperm, tally->other, (unsigned long long)ns);
	if (cpu_ns)
		printf(" cpu_ns=%llu", (unsigned long long)cpu_ns);
	if (tally->other)
		printf(" first_error=%s", strerrorname_np(tally->first_other) ?: "?");
	printf("\n");
	fflush(stdout);
}

/* Moves this process into a cgroup v2 folder, as a job started there would be. */
static int netbench_join_cgroup(const char *dir)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;

	if (asprintf(&path, "%s/cgroup.procs", dir) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1)
		return -errno;
	return 0;
}

static void netbench_wait_eof(void)
{
	char buf[256];

	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0 || errno == EINTR)
		errno = 0;
}

static void *netbench_accept_loop(void *arg)
{
	int listen_fd = *(int *)arg;

	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0)
			close(fd);
		else if (errno != EINTR && errno != ECONNABORTED && errno != EMFILE &&
			 errno != ENFILE)
			return NULL;
	}
}

static int netbench_listen(const struct netbench_target *target)
{
	_cleanup_close_ int tcp_fd = -1, udp_fd = -1;
	int one = 1, small = 4096;
	pthread_t thread;

	tcp_fd = socket(target->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (tcp_fd < 0)
		return -errno;
	setsockopt(tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(tcp_fd, (const struct sockaddr *)&target->addr, target->len) < 0 ||
	    listen(tcp_fd, 4096) < 0)
		return -errno;
	/* The sink is never read: a full receive queue drops datagrams, the cheapest end. */
	udp_fd = socket(target->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (udp_fd < 0)
		return -errno;
	setsockopt(udp_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (bind(udp_fd, (const struct sockaddr *)&target->addr, target->len) < 0)
		return -errno;
	errno = pthread_create(&thread, NULL, netbench_accept_loop, &tcp_fd);
	if (errno)
		return -errno;
	printf("ready\n");
	fflush(stdout);
	netbench_wait_eof();
	return 0;
}

static int netbench_tcp(const struct netbench_target *target, unsigned long long count)
{
	struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	struct netbench_tally tally = { 0 };
	uint64_t start = netbench_now_ns(), cpu = netbench_cpu_ns();

	for (unsigned long long i = 0; i < count; i++) {
		int fd = socket(target->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int err = 0;

		if (fd < 0)
			return -errno;
		if (connect(fd, (const struct sockaddr *)&target->addr, target->len) < 0)
			err = errno;
		/*
		 * A reset instead of a FIN leaves no TIME_WAIT behind, so 200,000 connects do not
		 * run out of ephemeral ports.
		 */
		else
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
		close(fd);
		netbench_count(&tally, err);
	}
	netbench_print("tcp", &tally, count, netbench_now_ns() - start, netbench_cpu_ns() - cpu);
	return 0;
}

static int netbench_udp(const struct netbench_target *target, unsigned long long count)
{
	struct netbench_tally tally = { 0 };
	_cleanup_close_ int fd = -1;
	uint64_t start, cpu;

	fd = socket(target->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	start = netbench_now_ns();
	cpu = netbench_cpu_ns();
	for (unsigned long long i = 0; i < count; i++) {
		int err = 0;

		if (sendto(fd, "x", 1, 0, (const struct sockaddr *)&target->addr, target->len) < 0)
			err = errno;
		netbench_count(&tally, err);
	}
	netbench_print("udp", &tally, count, netbench_now_ns() - start, netbench_cpu_ns() - cpu);
	return 0;
}

static int netbench_syscalls(unsigned long long count)
{
	struct netbench_tally tally = { 0 };
	uint64_t start = netbench_now_ns(), cpu = netbench_cpu_ns();

	/* syscall(2), not getppid(3): nothing may cache the answer. */
	for (unsigned long long i = 0; i < count; i++)
		netbench_count(&tally, syscall(SYS_getppid) < 0 ? errno : 0);
	netbench_print("sys", &tally, count, netbench_now_ns() - start, netbench_cpu_ns() - cpu);
	return 0;
}

static void *netbench_flood_thread(void *arg)
{
	struct netbench_flood *flood = arg;
	const struct netbench_target *target = flood->target;
	_cleanup_close_ int fd = -1;
	unsigned long long attempts = 0;

	/* A refused connect leaves the socket unconnected, so one socket serves every attempt. */
	fd = socket(target->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		flood->error = errno;
		return NULL;
	}
	for (;;) {
		if (attempts % NETBENCH_CLOCK_EVERY == 0) {
			uint64_t now = netbench_now_ns();

			if (now >= flood->deadline_ns)
				break;
			if (flood->rate_per_thread > 0) {
				double due = flood->rate_per_thread *
					     (double)(now - flood->start_ns) / 1e9;
				struct timespec pause = { 0, NETBENCH_PACE_SLEEP_NS };

				if ((double)attempts >= due) {
					nanosleep(&pause, NULL);
					continue;
				}
			}
		}
		attempts++;
		if (connect(fd, (const struct sockaddr *)&target->addr, target->len) < 0) {
			netbench_count(&flood->tally, errno);
			continue;
		}
		/* Not refused after all (a wrong policy): counted, and a fresh socket goes on. */
		netbench_count(&flood->tally, 0);
		close(fd);
		fd = socket(target->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			flood->error = errno;
			return NULL;
		}
	}
	return NULL;
}

static int netbench_flood(const struct netbench_target *target, unsigned long long seconds,
			  unsigned long long rate)
{
	static struct netbench_flood floods[NETBENCH_MAX_THREADS];
	static pthread_t threads[NETBENCH_MAX_THREADS];
	struct netbench_tally total = { 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = ncpu < 1 ? 1 : ncpu > NETBENCH_MAX_THREADS ? NETBENCH_MAX_THREADS : ncpu;
	uint64_t start = netbench_now_ns();

	for (size_t i = 0; i < nthreads; i++) {
		floods[i].target = target;
		floods[i].start_ns = start;
		floods[i].deadline_ns = start + seconds * 1000000000ULL;
		floods[i].rate_per_thread = (double)rate / (double)nthreads;
		errno = pthread_create(&threads[i], NULL, netbench_flood_thread, &floods[i]);
		if (errno)
			return -errno;
	}
	for (size_t i = 0; i < nthreads; i++) {
		pthread_join(threads[i], NULL);
		if (floods[i].error)
			return -floods[i].error;
		total.ok += floods[i].tally.ok;
		total.eperm += floods[i].tally.eperm;
		if (floods[i].tally.other && !total.other)
			total.first_other = floods[i].tally.first_other;
		total.other += floods[i].tally.other;
	}
	netbench_print("flood", &total, total.ok + total.eperm + total.other,
		       netbench_now_ns() - start, 0);
	return 0;
}

/* Bulk transfer: the size of each write, and the receiver's side. */
#define NETBENCH_BULK_CHUNK (64 * 1024)

struct netbench_bulk_sink {
	int listen_fd;
	unsigned long long received;
	int error;
};

static void *netbench_bulk_receive(void *data)
{
	struct netbench_bulk_sink *sink = data;
	static char buf[NETBENCH_BULK_CHUNK];
	int fd = accept4(sink->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		sink->error = errno;
		return NULL;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sink->received += (unsigned long long)n;
	if (n < 0)
		sink->error = errno;
	close(fd);
	return NULL;
}

/*
 * MBYTES MiB over one loopback TCP connection, sender and receiver in this process: every
 * data segment and every ACK passes the cgroup's egress program when run in a sandbox.
 * Prints "bulk ... ns=N bytes=B", timed from connect to the receiver's EOF.
 */
static int netbench_bulk(const struct netbench_target *target, unsigned long long mbytes)
{
	struct netbench_bulk_sink sink = { .listen_fd = -1 };
	static char buf[NETBENCH_BULK_CHUNK];
	unsigned long long total = mbytes << 20, sent = 0;
	struct netbench_tally tally = { 0 };
	_cleanup_close_ int fd = -1;
	pthread_t thread;
	uint64_t start;
	int one = 1;

	sink.listen_fd = socket(target->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sink.listen_fd < 0)
		return -errno;
	setsockopt(sink.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(sink.listen_fd, (const struct sockaddr *)&target->addr, target->len) < 0 ||
	    listen(sink.listen_fd, 1) < 0) {
		close(sink.listen_fd);
		return -errno;
	}
	errno = pthread_create(&thread, NULL, netbench_bulk_receive, &sink);
	if (errno) {
		close(sink.listen_fd);
		return -errno;
	}
	memset(buf, 'x', sizeof(buf));
	start = netbench_now_ns();
	fd = socket(target->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)&target->addr, target->len) < 0) {
		netbench_count(&tally, errno);
		/* The receiver waits in accept: a connection of our own ends it. */
		shutdown(sink.listen_fd, SHUT_RDWR);
	} else {
		while (sent < total) {
			ssize_t n = write(fd, buf, sizeof(buf));

			if (n < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			sent += (unsigned long long)n;
		}
		netbench_count(&tally, sent < total ? errno : 0);
		close(fd);
		fd = -1;
	}
	pthread_join(thread, NULL);
	close(sink.listen_fd);
	printf("bulk attempts=1 ok=%llu eperm=%llu other=%llu ns=%llu bytes=%llu\n", tally.ok,
	       tally.eperm, tally.other, (unsigned long long)(netbench_now_ns() - start),
	       sink.received);
	fflush(stdout);
	return 0;
}

/*
 * One instruction, "allow": the kernel answers every call from its constant-action cache
 * and never runs it, so what remains is the cost of having a filter at all.
 */
static int netbench_seccomp_allow(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) <
		    0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct netbench_target target;
	unsigned long long count = 0, rate = 0;
	const char *cgroup = NULL, *mode;
	bool hold = false, seccomp = false;
	int i = 1, r;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--hold") == 0)
			hold = true;
		else if (strcmp(argv[i], "--seccomp") == 0)
			seccomp = true;
		else if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc)
			cgroup = argv[++i];
		else
			goto usage;
	}
	if (argc - i < 3 || netbench_parse_target(argv[i + 1], argv[i + 2], &target) < 0)
		goto usage;
	mode = argv[i];
	if (strcmp(mode, "listen") == 0) {
		if (argc - i != 3)
			goto usage;
	} else if (strcmp(mode, "flood") == 0) {
		if (argc - i < 4 || argc - i > 5 ||
		    netbench_parse_number(argv[i + 3], 3600, &count) < 0 ||
		    (argc - i == 5 && netbench_parse_number(argv[i + 4], 100000000, &rate) < 0))
			goto usage;
	} else if (strcmp(mode, "bulk") == 0) {
		if (argc - i != 4 || netbench_parse_number(argv[i + 3], 1ULL << 20, &count) < 0)
			goto usage;
	} else if (strcmp(mode, "tcp") == 0 || strcmp(mode, "udp") == 0 ||
		   strcmp(mode, "all") == 0) {
		if (argc - i != 4 || netbench_parse_number(argv[i + 3], 1ULL << 40, &count) < 0)
			goto usage;
	} else {
		goto usage;
	}
	/* A peer that is gone must not kill the load; the result line is what matters. */
	signal(SIGPIPE, SIG_IGN);

	if (cgroup) {
		r = netbench_join_cgroup(cgroup);
		if (r < 0) {
			fprintf(stderr, "netbench: cannot join cgroup %s: %s\n", cgroup,
				strerror(-r));
			return 1;
		}
	}
	if (seccomp) {
		r = netbench_seccomp_allow();
		if (r < 0) {
			fprintf(stderr, "netbench: cannot install a seccomp filter: %s\n",
				strerror(-r));
			return 1;
		}
	}
	if (strcmp(mode, "listen") == 0) {
		r = netbench_listen(&target);
	} else if (strcmp(mode, "flood") == 0) {
		r = netbench_flood(&target, count, rate);
	} else if (strcmp(mode, "bulk") == 0) {
		r = netbench_bulk(&target, count);
	} else {
		r = 0;
		if (strcmp(mode, "udp") != 0)
			r = netbench_tcp(&target, count);
		if (r >= 0 && strcmp(mode, "tcp") != 0)
			r = netbench_udp(&target, count);
		if (r >= 0 && strcmp(mode, "all") == 0)
			r = netbench_syscalls(count * NETBENCH_SYSCALLS_PER_CONNECT);
	}
	if (r < 0) {
		fprintf(stderr, "netbench %s: %s\n", mode, strerror(-r));
		return 1;
	}
	if (hold)
		netbench_wait_eof();
	return 0;

usage:
	fputs(USAGE, stderr);
	return 2;
}
