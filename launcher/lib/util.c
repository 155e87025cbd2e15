// SPDX-License-Identifier: LGPL-2.1-or-later
/* The shared helpers of util.h that are too long to be inline. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
