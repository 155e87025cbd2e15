// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library: just before launch starts the sandbox's init (its status socket,
 * made by socketpair(3) right before the clone), mounts a BPF file system on $MOUNT_AT_CLONE,
 * as another program of the host might at that moment: after launch read its mountinfo,
 * before init's copy of the mounts is cut off from the host's. Every call then goes to libc.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>

typedef int (*socketpair_fn)(int, int, int, int[2]);

int socketpair(int domain, int type, int protocol, int sv[2])
{
	static socketpair_fn next;
	const char *dir = getenv("MOUNT_AT_CLONE");

	if (!next)
		next = (socketpair_fn)dlsym(RTLD_NEXT, "socketpair");
	if (domain == AF_UNIX && (type & 0xf) == SOCK_SEQPACKET && dir && *dir)
		mount("bpf", dir, "bpf", 0, NULL);
	return next(domain, type, protocol, sv);
}
