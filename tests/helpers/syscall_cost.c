// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cost of one system call that nothing but a seccomp filter inspects: getppid() N times
 * (default 1,000,000), best of five rounds, printed as "getppid NS ns". The kernel suite runs
 * it outside and inside a sandbox: the difference is the seccomp filter's floor per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	double best = -1;

	if (n <= 0) {
		fprintf(stderr, "usage: syscall_cost [CALLS]\n");
		return 2;
	}
	for (int round = 0; round < 5; round++) {
		double start = now_ns(), per;

		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		per = (now_ns() - start) / (double)n;
		if (best < 0 || per < best)
			best = per;
	}
	printf("getppid %.1f ns\n", best);
	return 0;
}
