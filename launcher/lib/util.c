// SPDX-License-Identifier: LGPL-2.1-or-later
/* The shared helpers of util.h that are too long to be inline. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

void line_buf_append(struct line_buf *b, const char *s, size_t n)
{
	if (b->overflow || b->len + n >= b->cap) {
		b->overflow = true;
		return;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

void line_buf_printf(struct line_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len)
		b->overflow = true;
	else
		b->len += (size_t)n;
}

bool word_list_has(const char *list, size_t len, const char *word, const char *separators)
{
	const char *end = list + len;
	size_t n = strlen(word);

	for (const char *p = list; p < end;) {
		const char *item_end = p;

		while (item_end < end && !(*item_end && strchr(separators, *item_end)))
			item_end++;
		if ((size_t)(item_end - p) == n && memcmp(p, word, n) == 0)
			return true;
		p = item_end + 1;
	}
	return false;
}

int thread_start_masked(pthread_t *ret_thread, void *(*fn)(void *), void *arg, int allowed)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	if (allowed)
		sigdelset(&all, allowed);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(ret_thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int read_fd_text(int fd, size_t max, char **ret_text)
{
	size_t len = 0, cap = max + 1 < 4096 ? max + 1 : 4096;
	char *text = malloc(cap);

	while (text) {
		ssize_t n;

		if (len + 1 == cap) {
			size_t bigger = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char one, *grown;

			if (bigger == cap) {
				/* Full at max: one byte more says whether it was all. */
				do
					n = read(fd, &one, 1);
				while (n < 0 && errno == EINTR);
				if (n == 0)
					break;
				free(text);
				return n < 0 ? -errno : -EFBIG;
			}
			grown = realloc(text, bigger);
			if (!grown) {
				free(text);
				return -ENOMEM;
			}
			text = grown;
			cap = bigger;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			free(text);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (!text)
		return -ENOMEM;
	text[len] = '\0';
	*ret_text = text;
	return 0;
}
