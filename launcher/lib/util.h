/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cleanup attributes and small helpers shared by the launcher's modules (longer ones: util.c). */
#ifndef LAUNCH_UTIL_H
#define LAUNCH_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_	_cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Hand ownership on: returns the pointer and leaves NULL behind so cleanup skips it. */
#define TAKE_PTR(p)                        \
	({                                 \
		__typeof__(p) _ptr_ = (p); \
		(p) = NULL;                \
		_ptr_;                     \
	})

#define TAKE_FD(fd)              \
	({                       \
		int _fd_ = (fd); \
		(fd) = -1;       \
		_fd_;            \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A macro's value as a string literal: STRINGIFY(3) is "3". */
#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

/* Declares a cleanup function for a type whose destructor accepts NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
	static inline void func##p(type *p)     \
	{                                       \
		func(*p);                       \
	}

/*
 * Makes room for need elements of size bytes in the growable array *array of *cap elements
 * (doubling from 8). Returns 0 or -ENOMEM, the array untouched then.
 */
static inline int array_grow(void **array, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = reallocarray(*array, n, size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

/* Milliseconds on CLOCK_MONOTONIC: deadlines and durations that a clock change cannot move. */
static inline long long monotonic_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Microseconds on CLOCK_MONOTONIC: the timing of launch's own stages. */
static inline long long monotonic_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/*
 * A line written into a fixed buffer of cap bytes, one byte kept for a final NUL. A write
 * that does not fit sets overflow and every later one does nothing, so that the caller
 * checks once, at the end, instead of after each write.
 */
struct line_buf {
	char *buf;
	size_t len;
	size_t cap;
	bool overflow;
};

void line_buf_append(struct line_buf *b, const char *s, size_t n);
void line_buf_printf(struct line_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Whether word is one of the items of the len bytes at list, split at any of separators
 * (a cgroup file's controller list, a mount's options).
 */
bool word_list_has(const char *list, size_t len, const char *word, const char *separators);

/*
 * Starts a thread that takes no signal but allowed (0: none): the launcher's signals stay for
 * its signalfd, whatever thread the kernel would pick. -errno.
 */
int thread_start_masked(pthread_t *ret_thread, void *(*fn)(void *), void *arg, int allowed);

/*
 * Reads fd to its end into a NUL-terminated string of at most max bytes (in *ret_text, to
 * free). 0, -EFBIG when there is more, or -errno.
 */
int read_fd_text(int fd, size_t max, char **ret_text);

#endif /* LAUNCH_UTIL_H */
