/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A tiny test harness: each check prints "PASS name" or "FAIL name: why"; tests/run counts. */
#ifndef LAUNCH_TEST_H
#define LAUNCH_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failures;
static const char *test_current = "?";
static int test_current_failed;

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			test_current_failed = 1;                                          \
		}                                                                         \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                       \
	do {                                                                                     \
		long long _a = (long long)(a), _b = (long long)(b);                              \
		if (_a != _b) {                                                                  \
			printf("  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
			       #a, _a, #b, _b);                                                  \
			test_current_failed = 1;                                                 \
		}                                                                                \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                           \
			printf("  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
			       _a ? _a : "(null)", _b ? _b : "(null)");                            \
			test_current_failed = 1;                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_CONTAINS(haystack, needle)                                                        \
	do {                                                                                    \
		const char *_h = (haystack), *_n = (needle);                                    \
		if (!_h || !strstr(_h, _n)) {                                                   \
			printf("  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
			       _h ? _h : "(null)", _n);                                         \
			test_current_failed = 1;                                                \
		}                                                                               \
	} while (0)

static inline void test_run(const char *name, void (*fn)(void))
{
	test_current = name;
	test_current_failed = 0;
	fn();
	if (test_current_failed) {
		test_failures++;
		printf("FAIL %s\n", name);
	} else {
		printf("PASS %s\n", name);
	}
	fflush(stdout);
}

#define RUN(fn) test_run(#fn, fn)

#endif /* LAUNCH_TEST_H */
