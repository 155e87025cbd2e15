// SPDX-License-Identifier: LGPL-2.1-or-later
/* A unit "test" that fails as real ones can (SELFTEST_CRASH says how): tests/selftest/run. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Opaque to the compiler, so the faults below are not optimised away or warned about. */
static void *volatile selftest_null;

static void selftest_pass_line(void)
{
	printf("PASS before_the_crash\n");
	fflush(stdout);
}

int main(void)
{
	const char *mode = getenv("SELFTEST_CRASH");
	char *volatile heap;

	if (!mode) {
		fprintf(stderr, "crash: set SELFTEST_CRASH\n");
		return 2;
	}
	if (strcmp(mode, "pass") == 0) {
		printf("PASS selftest_pass\n");
		return 0;
	}
	if (strcmp(mode, "silent") == 0)
		return 0;
	selftest_pass_line();
	if (strcmp(mode, "segv") == 0) {
		*(int *)selftest_null = 1;
	} else if (strcmp(mode, "heap-overflow") == 0) {
		heap = malloc(8);
		((volatile char *)heap)[8] = 1; /* one past the end: ASan aborts the run */
		free(heap);
	} else if (strcmp(mode, "abort") == 0) {
		abort();
	} else if (strcmp(mode, "kill") == 0) {
		kill(getpid(), SIGKILL);
	} else if (strcmp(mode, "exit") == 0) {
		return 3;
	}
	return 0;
}
