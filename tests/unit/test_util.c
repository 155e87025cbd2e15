// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests for util.c: the bounded line buffer, finding a word in a separated list, and
 * reading a descriptor to its end within a bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* n bytes of 'a' through a pipe (a writer child for the big ones), read with the bound max. */
static int read_n(size_t n, size_t max, char **ret_text)
{
	int fds[2], r;
	pid_t pid;

	if (pipe(fds) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		char chunk[4096];

		memset(chunk, 'a', sizeof(chunk));
		close(fds[0]);
		for (size_t off = 0; off < n;) {
			size_t k = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
			ssize_t w = write(fds[1], chunk, k);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	r = read_fd_text(fds[0], max, ret_text);
	close(fds[0]);
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}

static void test_read_fd_text_bound(void)
{
	char *text = NULL;

	CHECK_EQ_INT(read_n(0, 100, &text), 0);
	CHECK(text && text[0] == '\0');
	free(text);
	text = NULL;
	/* Exactly max bytes: all of it; one more: -EFBIG, nothing returned. */
	CHECK_EQ_INT(read_n(100, 100, &text), 0);
	CHECK(text && strlen(text) == 100);
	free(text);
	text = NULL;
	CHECK_EQ_INT(read_n(101, 100, &text), -EFBIG);
	CHECK(text == NULL);
	/* Past the first buffer's growth: 1 MiB exactly, and 1 MiB and a byte. */
	CHECK_EQ_INT(read_n(1 << 20, 1 << 20, &text), 0);
	CHECK(text && strlen(text) == 1 << 20);
	free(text);
	text = NULL;
	CHECK_EQ_INT(read_n((1 << 20) + 1, 1 << 20, &text), -EFBIG);
}

int main(void)
{
	RUN(test_line_buf_fits);
	RUN(test_line_buf_keeps_room_for_nul);
	RUN(test_line_buf_overflow_sticks);
	RUN(test_word_list_has);
	RUN(test_read_fd_text_bound);
	return test_failures != 0;
}
