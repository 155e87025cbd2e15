// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for rules.c: every way rules_compile fails leaves its one line in errbuf. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "policy/rules.h"

/*
 * The build links this test with --wrap for each allocator, so every allocation of the
 * modules under test comes here; rules_alloc_fail_at makes the one with that index fail.
 * (cJSON's and libc's own allocations are not wrapped: they are in shared libraries.)
 */
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_reallocarray(void *p, size_t n, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
char *__wrap_strdup(const char *s);

static long rules_alloc_fail_at = -1; /* -1: none fails */
static long rules_alloc_count;

static bool rules_alloc_fails(void)
{
	return rules_alloc_fail_at >= 0 && rules_alloc_count++ == rules_alloc_fail_at;
}

void *__wrap_malloc(size_t size)
{
	return rules_alloc_fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return rules_alloc_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return rules_alloc_fails() ? NULL : __real_realloc(p, size);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	return rules_alloc_fails() ? NULL : __real_reallocarray(p, n, size);
}

char *__wrap_strdup(const char *s)
{
	return rules_alloc_fails() ? NULL : __real_strdup(s);
}

static char rules_dir[] = "/tmp/launch-test-rules.XXXXXX";
static char rules_paths[16][256]; /* every file written, for rules_cleanup */
static int rules_npaths;

/* Writes a policy file named NAME in the test's directory; returns its path. */
static const char *rules_write(const char *name, const char *json)
{
	char *path = rules_paths[rules_npaths++ % ARRAY_SIZE(rules_paths)];
	FILE *f;

	snprintf(path, sizeof(rules_paths[0]), "%s/%s", rules_dir, name);
	f = fopen(path, "w");
	if (!f) {
		printf("  cannot write %s\n", path);
		return path;
	}
	fputs(json, f);
	fclose(f);
	return path;
}

/* No message has it: a path that leaves errbuf as it found it shows up in the checks. */
#define RULES_GARBAGE '\x7f'

/* Fills errbuf with garbage first, as main's stack would be. */
static int rules_compile_dirty(char *const *paths, size_t npaths, struct rules **ret_rules,
			       char *errbuf, size_t errlen)
{
	memset(errbuf, RULES_GARBAGE, errlen - 1);
	errbuf[errlen - 1] = '\0';
	return rules_compile(paths, npaths, NULL, true, ret_rules, errbuf, errlen);
}

static const char RULES_BUSY_POLICY[] =
	"{\"name\": \"a\", \"allow\": ["
	"{\"cidr\": \"192.0.2.1\", \"ports\": [443]},"
	"{\"cidr\": \"198.51.100.0/24\", \"ports\": [8443, \"9000-9010\"], \"protocol\": \"any\"},"
	"{\"cidr\": \"2001:db8::1\", \"protocol\": \"udp\"},"
	"{\"cidr\": \"2001:db8:1::/48\", \"ports\": [53]},"
	"{\"host\": \"*.example.com\", \"ports\": [443]}],"
	"\"unix\": [\"/run/app.sock\", \"@abstract\"]}";

static void test_rules_compiles(void)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	char *paths[2];
	char err[POLICY_ERR_LEN + 256];

	paths[0] = (char *)rules_write("a.json", RULES_BUSY_POLICY);
	paths[1] = (char *)rules_write("b.json", "{\"name\": \"b\", \"allow\": []}");
	CHECK_EQ_INT(rules_compile_dirty(paths, 2, &rules, err, sizeof(err)), 0);
	if (!rules)
		return;
	CHECK_EQ_STR(rules->names, "a,b");
	CHECK_EQ_INT(rules->nrules, 4);
	CHECK_EQ_INT(rules->nhosts, 1);
	CHECK_EQ_INT(rules->nunix, 2);
	CHECK_EQ_INT(rules->list->nexact, 2);
	CHECK_EQ_INT(rules->list->nprefixes, 2);
}

/*
 * Makes the first allocation fail, then the second, ... until rules_compile no longer
 * allocates as often as the failure index: each failure must come back as -ENOMEM with a
 * line saying so, and leak nothing (ASan's leak check runs at exit).
 */
static void test_rules_out_of_memory(void)
{
	char *paths[2];
	char err[POLICY_ERR_LEN + 256];
	long failed = 0;

	paths[0] = (char *)rules_write("a.json", RULES_BUSY_POLICY);
	paths[1] = (char *)rules_write("b.json", "{\"name\": \"b\", \"allow\": [{\"cidr\": "
						 "\"10.0.0.0/8\"}], \"unix\": [\"@b\"]}");
	for (long at = 0; at < 10000; at++) {
		struct rules *rules = NULL;
		int r;

		rules_alloc_count = 0;
		rules_alloc_fail_at = at;
		r = rules_compile_dirty(paths, 2, &rules, err, sizeof(err));
		rules_alloc_fail_at = -1;
		if (r == 0) {
			rules_free(rules);
			CHECK(rules_alloc_count <=
			      at); /* nothing failed: every allocation was seen */
			break;
		}
		failed++;
		if (r != -ENOMEM || !strstr(err, strerror(ENOMEM)) || strchr(err, RULES_GARBAGE)) {
			printf("  allocation %ld failing: rules_compile returned %d, errbuf "
			       "\"%.80s\"\n",
			       at, r, err);
			CHECK_EQ_INT(r, -ENOMEM);
			CHECK_CONTAINS(err, strerror(ENOMEM));
			CHECK(!strchr(err, RULES_GARBAGE));
			break;
		}
		CHECK(rules == NULL);
	}
	/* The policies, their entries, the rules, the allowlist's arrays, the unix keys. */
	CHECK(failed >= 10);
	printf("  %ld allocations, each made to fail once\n", failed);
}

/* 40 + 40 unix entries: each file is within its limit, the two together are not. */
static void test_rules_unix_too_many(void)
{
	struct rules *rules = NULL;
	char json[4096], err[POLICY_ERR_LEN + 256], *paths[2];
	size_t used;

	for (int f = 0; f < 2; f++) {
		used = (size_t)snprintf(json, sizeof(json),
					"{\"name\": \"u%d\", \"allow\": [], "
					"\"unix\": [",
					f);
		for (int i = 0; i < 40; i++)
			used += (size_t)snprintf(json + used, sizeof(json) - used, "%s\"@u%d-%d\"",
						 i ? ", " : "", f, i);
		snprintf(json + used, sizeof(json) - used, "]}");
		paths[f] = (char *)rules_write(f ? "u1.json" : "u0.json", json);
	}
	CHECK_EQ_INT(rules_compile_dirty(paths, 1, &rules, err, sizeof(err)), 0);
	rules_free(rules);
	rules = NULL;
	CHECK_EQ_INT(rules_compile_dirty(paths, 2, &rules, err, sizeof(err)), -E2BIG);
	CHECK(rules == NULL);
	CHECK_EQ_STR(err, "unix and listen: 80 names in the policies together (u0,u1), at most "
			  "64 (MAX_UNIX_PATHS)");
}

/* Two files of 50,001 addresses: each within MAX_ALLOW_ENTRIES, the union beyond it. */
static void test_rules_allowlist_too_big(void)
{
	struct rules *rules = NULL;
	char err[POLICY_ERR_LEN + 256], *paths[2];
	size_t cap = 50001 * 32 + 64, used;
	char *json = malloc(cap);

	CHECK(json != NULL);
	if (!json)
		return;
	for (int f = 0; f < 2; f++) {
		used = (size_t)snprintf(json, cap, "{\"name\": \"big%d\", \"allow\": [", f);
		for (int i = 0; i < 50001; i++)
			used += (size_t)snprintf(json + used, cap - used,
						 "%s{\"cidr\": \"10.%d.%d.%d\"}", i ? "," : "", f,
						 i / 256, i % 256);
		snprintf(json + used, cap - used, "]}");
		paths[f] = (char *)rules_write(f ? "big1.json" : "big0.json", json);
	}
	free(json);
	CHECK_EQ_INT(rules_compile_dirty(paths, 2, &rules, err, sizeof(err)), -E2BIG);
	CHECK(rules == NULL);
	CHECK_CONTAINS(err, "more than 100000 addresses and prefixes (MAX_ALLOW_ENTRIES)");
}

/* A file that cannot be read names itself, whatever was in errbuf before. */
static void test_rules_missing_file(void)
{
	struct rules *rules = NULL;
	char err[POLICY_ERR_LEN + 256], path[300], *paths[1] = { path };

	snprintf(path, sizeof(path), "%s/no-such.json", rules_dir);
	CHECK(rules_compile_dirty(paths, 1, &rules, err, sizeof(err)) < 0);
	CHECK(rules == NULL);
	CHECK_CONTAINS(err, "no-such.json: cannot read: No such file or directory");
	CHECK(!strchr(err, RULES_GARBAGE));
}

static void rules_cleanup(void)
{
	for (int i = 0; i < rules_npaths && i < (int)ARRAY_SIZE(rules_paths); i++)
		unlink(rules_paths[i]);
	if (rmdir(rules_dir) < 0)
		printf("  cannot remove %s: %s\n", rules_dir, strerror(errno));
}

int main(void)
{
	if (!mkdtemp(rules_dir)) {
		printf("FAIL test_rules: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_rules_compiles);
	RUN(test_rules_out_of_memory);
	RUN(test_rules_unix_too_many);
	RUN(test_rules_allowlist_too_big);
	RUN(test_rules_missing_file);
	rules_cleanup();
	return test_failures != 0;
}
