// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library for the launcher: the read-only shared mapping of a BPF map at an
 * offset, which is libbpf's mapping of a ring buffer's producer page and data
 * (ring_buffer__new), fails with ENOMEM, as where the address space is used up; every other
 * mapping goes as it was (libbpf is linked into launch statically and maps through libc).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static int is_ring_data(int prot, int flags, int fd, off_t offset)
{
	char link[64], target[32];
	ssize_t n;

	if (fd < 0 || offset <= 0 || prot != PROT_READ || !(flags & MAP_SHARED))
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return strcmp(target, "anon_inode:bpf-map") == 0;
}

static void *mapped(const char *name, void *addr, size_t len, int prot, int flags, int fd,
		    off_t offset)
{
	mmap_fn next = (mmap_fn)dlsym(RTLD_NEXT, name);

	if (is_ring_data(prot, flags, fd, offset)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return next(addr, len, prot, flags, fd, offset);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	return mapped("mmap", addr, len, prot, flags, fd, offset);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	return mapped("mmap64", addr, len, prot, flags, fd, offset);
}
