// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * connect_unix and sendmsg_unix (kernel 6.7+): an AF_UNIX peer outside the sandbox (a Docker
 * socket is root on the host) is reachable only if a policy names its address.
 */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

static __always_inline bool unix_private_path(const struct unix_path_key *key)
{
	static const char prefix[] = UNIX_PRIVATE_PREFIX;

	for (int i = 0; i < (int)sizeof(prefix) - 1; i++)
		if (key->path[i] != prefix[i])
			return false;
	/* "/tmp/../run/docker.sock" must not pass as private: no ".." component at all. */
	for (int i = sizeof(prefix) - 2; i < UNIX_PATH_LEN - 3; i++) {
		if (key->path[i] == '\0')
			break;
		if (key->path[i] == '/' && key->path[i + 1] == '.' && key->path[i + 2] == '.' &&
		    (key->path[i + 3] == '/' || key->path[i + 3] == '\0'))
			return false;
	}
	return true;
}

static __always_inline int unix_judge(struct bpf_sock_addr *ctx, __u16 op)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct unix_path_key key = {};
	struct deny_event *event;
	__u32 len = sa->uaddrlen;
	bool abstract;

	/* uaddrlen counts sun_family (2 bytes) and the path's bytes after it. */
	len = len > 2 ? len - 2 : 0;
	if (len > UNIX_PATH_LEN)
		len = UNIX_PATH_LEN;
	if (len)
		bpf_probe_read_kernel(key.path, len & 0xff, (void *)sa->uaddr + 2);
	abstract = key.path[0] == '\0';
	if (!abstract) {
		/* A path ends at its first NUL; what follows is not part of it. */
		bool end = false;

		for (int i = 0; i < UNIX_PATH_LEN; i++) {
			if (key.path[i] == '\0')
				end = true;
			if (end)
				key.path[i] = '\0';
		}
		if (unix_private_path(&key))
			return 1;
	}
	if (bpf_map_lookup_elem(&unix_allow, &key))
		return 1;

	event = audit_reserve(op, AF_UNIX);
	if (event) {
		event->sock_type = ctx->type;
		__builtin_memcpy(event->unix_path, key.path, sizeof(event->unix_path));
		bpf_ringbuf_submit(event, 0);
	}
	return 0;
}

/*
 * libbpf 1.1 predates these attach points: the sections name an inet hook of the same
 * program type, and the loader sets the unix attach type before load.
 */
SEC("cgroup/connect4")
int launch_connect_unix(struct bpf_sock_addr *ctx)
{
	return unix_judge(ctx, AUDIT_OP_CONNECT_UNIX);
}

SEC("cgroup/sendmsg4")
int launch_sendmsg_unix(struct bpf_sock_addr *ctx)
{
	return unix_judge(ctx, AUDIT_OP_SENDMSG_UNIX);
}
