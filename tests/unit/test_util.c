// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for util.c: the bounded line buffer, and finding a word in a separated list. */
#include <stdbool.h>
#include <string.h>

#include "test.h"
#include "lib/util.h"

static void test_line_buf_fits(void)
{
	char buf[16];
	struct line_buf b = { .buf = buf, .cap = sizeof(buf) };

	line_buf_append(&b, "{\"a\":", 5);
	line_buf_printf(&b, "%d}", 42);
	CHECK(!b.overflow);
	CHECK_EQ_INT(b.len, 8);
	buf[b.len] = '\0';
	CHECK_EQ_STR(buf, "{\"a\":42}");
}

/* One byte stays free for the NUL: cap - 1 bytes fit, cap do not. */
static void test_line_buf_keeps_room_for_nul(void)
{
	char buf[8];
	struct line_buf b = { .buf = buf, .cap = sizeof(buf) };

	line_buf_append(&b, "1234567", 7);
	CHECK(!b.overflow && b.len == 7);
	line_buf_append(&b, "8", 1);
	CHECK(b.overflow);
	CHECK_EQ_INT(b.len, 7);

	b = (struct line_buf){ .buf = buf, .cap = sizeof(buf) };
	line_buf_printf(&b, "%s", "1234567");
	CHECK(!b.overflow && b.len == 7);
	b = (struct line_buf){ .buf = buf, .cap = sizeof(buf) };
	line_buf_printf(&b, "%s", "12345678");
	CHECK(b.overflow);
}

/* After an overflow nothing more is written, even what would fit. */
static void test_line_buf_overflow_sticks(void)
{
	char buf[8] = "";
	struct line_buf b = { .buf = buf, .cap = sizeof(buf) };

	line_buf_append(&b, "ab", 2);
	line_buf_printf(&b, "%s", "too long to fit");
	CHECK(b.overflow);
	CHECK_EQ_INT(b.len, 2);
	line_buf_append(&b, "c", 1);
	line_buf_printf(&b, "d");
	CHECK_EQ_INT(b.len, 2);
	CHECK(buf[0] == 'a' && buf[1] == 'b');
}

static void test_word_list_has(void)
{
	const char *cgroup_line = "4:cpu,cpuacct:/";
	const char *controllers = "cpuset cpu io memory pids\n";

	/* Only the range given counts: "cpu,cpuacct" and not what follows. */
	CHECK(word_list_has(cgroup_line + 2, 11, "cpu", ","));
	CHECK(word_list_has(cgroup_line + 2, 11, "cpuacct", ","));
	CHECK(!word_list_has(cgroup_line + 2, 10, "cpuacct", ","));
	CHECK(!word_list_has(cgroup_line + 2, 11, "cpuac", ","));
	CHECK(!word_list_has(cgroup_line + 2, 11, "acct", ","));
	CHECK(!word_list_has(cgroup_line + 2, 11, "/", ","));
	CHECK(!word_list_has(cgroup_line, 0, "4", ","));
	/* Any of the separators splits; a word is matched whole. */
	CHECK(word_list_has(controllers, strlen(controllers), "pids", ", \n"));
	CHECK(word_list_has(controllers, strlen(controllers), "cpu", ", \n"));
	CHECK(word_list_has(controllers, strlen(controllers), "cpuset", ", \n"));
	CHECK(!word_list_has(controllers, strlen(controllers), "mem", ", \n"));
	CHECK(!word_list_has(controllers, strlen(controllers), "pids\n", ", \n"));
	CHECK(word_list_has("rw,nosuid,pids", 14, "pids", ", \n"));
	CHECK(!word_list_has("rw,nosuid,pids", 14, "nosuid,pids", ", \n"));
}

int main(void)
{
	RUN(test_line_buf_fits);
	RUN(test_line_buf_keeps_room_for_nul);
	RUN(test_line_buf_overflow_sticks);
	RUN(test_word_list_has);
	return test_failures != 0;
}
