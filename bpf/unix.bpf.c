// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * connect_unix and sendmsg_unix (kernel 6.7+): an AF_UNIX peer outside the sandbox (a Docker
 * socket is root on the host) is reachable only if a policy names its address.
 */
#include "common.bpf.h"

/*
 * Where struct bpf_sock_addr_kern keeps the address and its length, set by the loader from the
 * kernel's BTF (kbtf.c) before load. The verifier reads them as constants and checks each
 * access against the kernel's own layout: an offset inside no field, or a partial read of a
 * pointer, fails the load; a wrong offset landing on another whole scalar field would not,
 * which is why kbtf.c finds both fields by name in that very struct. CO-RE would have had libbpf
 * read and parse all of /sys/kernel/btf/vmlinux (5.5 MB, every page of it a fresh one) at the first
 * launch of a build, for two fields and a kfunc.
 */
const volatile __u32 unix_uaddr_off;
const volatile __u32 unix_uaddrlen_off;

/*
 * bpf_cast_to_kern_ctx(ctx), the kfunc, called by its BTF id, which the loader writes into
 * the call's imm: a libbpf __ksym would have it read the kernel's
 * whole BTF to find that id. An id not written stays 0, which the verifier refuses.
 */
static __always_inline void *unix_kern_ctx(struct bpf_sock_addr *ctx)
{
	void *sa;

	asm volatile("r1 = %[ctx]\n\t"
		     ".byte 0x85, 0x20, 0, 0, 0, 0, 0, 0\n\t"
		     "%[sa] = r0"
		     : [sa] "=r"(sa)
		     : [ctx] "r"(ctx)
		     : "r0", "r1", "r2", "r3", "r4", "r5");
	return sa;
}

static const char private_prefix[] = UNIX_PRIVATE_PREFIX;
static const char nscd_socket[] = UNIX_NSCD_SOCKET;
static const char nscd_socket_run[] = UNIX_NSCD_SOCKET_RUN;

#ifndef ENOENT
#define ENOENT 2
#endif

/* The policies' "unix" entries: each sandbox's own map, at its slot (see common.bpf.h). */
struct unix_allow_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct unix_path_key));
	__uint(value_size, sizeof(__u8));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct unix_allow_inner);
} unix_allow SEC(".maps");

struct dotdot_scan {
	const struct unix_path_key *key;
	bool found;
};

static long dotdot_at(__u32 i, void *data)
{
	struct dotdot_scan *scan = data;
	const char *p;

	if (i > UNIX_PATH_LEN - 4)
		return 1;
	p = &scan->key->path[i];
	if (p[0] == '\0')
		return 1;
	if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0')) {
		scan->found = true;
		return 1;
	}
	return 0;
}

/*
 * Paths under the job's private /tmp (mounted nosymfollow) are its own sockets; "/tmp/../x"
 * must not pass for one. bpf_strncmp and bpf_loop keep verification cheap: an open-coded
 * scan of 108 bytes cost 19 ms of verifier time per program, paid on every launch.
 */
static __always_inline bool unix_private_path(const struct unix_path_key *key)
{
	struct dotdot_scan scan = { .key = key };

	if (bpf_strncmp(key->path, sizeof(private_prefix) - 1, private_prefix) != 0)
		return false;
	bpf_loop(UNIX_PATH_LEN - 3, dotdot_at, &scan, 0);
	return !scan.found;
}

/* The exact path, its NUL included: a longer or shorter one is another path. */
static __always_inline bool unix_hidden_path(const struct unix_path_key *key)
{
	return bpf_strncmp(key->path, sizeof(nscd_socket), nscd_socket) == 0 ||
	       bpf_strncmp(key->path, sizeof(nscd_socket_run), nscd_socket_run) == 0;
}

static __always_inline int unix_judge(struct bpf_sock_addr *ctx, __u16 op)
{
	void *sa = unix_kern_ctx(ctx);
	const struct sandbox_cfg *cfg = sandbox_get();
	struct unix_path_key key = {};
	struct deny_event *event;
	__u32 len = *(__u32 *)(sa + unix_uaddrlen_off);
	const char *sun_path;
	void *allow;
	__u8 *flags;
	bool allowed;
	__u32 slot;

	if (!cfg)
		return 0;
	/* uaddrlen counts sun_family (2 bytes) and the path's bytes after it. */
	len = len > 2 ? len - 2 : 0;
	if (len > UNIX_PATH_LEN)
		len = UNIX_PATH_LEN;
	sun_path = *(const char **)(sa + unix_uaddr_off) + 2;
	if (len)
		bpf_probe_read_kernel(key.path, 1, sun_path);
	if (len && key.path[0] != '\0') {
		/* A path ends at its first NUL; the key's tail stays zero. */
		bpf_probe_read_kernel_str(key.path, len, sun_path);
		if (unix_private_path(&key))
			return 1;
	} else if (len > 1) {
		/* Abstract: every byte counts, NULs included. */
		bpf_probe_read_kernel(key.path, len, sun_path);
	}
	slot = cfg->slot;
	allow = (cfg->flags & CFG_HAS_UNIX) ? bpf_map_lookup_elem(&unix_allow, &slot) : NULL;
	flags = allow ? bpf_map_lookup_elem(allow, &key) : NULL;
	allowed = flags && (*flags & UNIX_ALLOW_CONNECT);
	/* Enforcing, an allowed call is not logged. */
	if (allowed && !(cfg->flags & CFG_AUDIT_ONLY))
		return 1;
	/* Not a path the policy allows: audit-only is never stricter than enforcing. */
	if (!allowed && unix_hidden_path(&key)) {
		/* Refused all the same (0), with the error of a path that is not there. */
		bpf_set_retval(-ENOENT);
		return 0;
	}

	event = audit_reserve_verdict(cfg, op, AF_UNIX,
				      allowed ? AUDIT_VERDICT_ALLOW : audit_refusal_verdict(cfg));
	if (event) {
		event->sock_type = ctx->type;
		__builtin_memcpy(event->unix_path, key.path, sizeof(event->unix_path));
		/* A path is shown up to its first NUL, an abstract name whole. */
		event->unix_path_len = len;
		bpf_ringbuf_submit(event, 0);
	}
	return allowed || (cfg->flags & CFG_AUDIT_ONLY);
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
