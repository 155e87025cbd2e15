/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the AF_UNIX programs need to know of the running kernel's BTF, found without libbpf. */
#pragma once

#include <stdint.h>

#define KBTF_VMLINUX "/sys/kernel/btf/vmlinux"

struct kbtf_unix {
	uint32_t cast_kern_ctx_id; /* BTF id of the kfunc bpf_cast_to_kern_ctx */
	uint32_t uaddr_off;	   /* offsetof(struct bpf_sock_addr_kern, uaddr) */
	uint32_t uaddrlen_off;	   /* offsetof(struct bpf_sock_addr_kern, uaddrlen) */
};

/*
 * Reads the raw BTF at path (the kernel's: /sys/kernel/btf/vmlinux), mapped where mmap serves
 * it, else through one small buffer. -ENOENT when a name is missing, -EINVAL when the file is
 * no BTF, -EPROTO when a member's type is not the one the programs read (uaddr a pointer,
 * uaddrlen a 32-bit integer; *ret_why says which, NULL otherwise), -errno on a read error.
 */
int kbtf_unix_find(const char *path, struct kbtf_unix *ret, const char **ret_why);
/* The same, always through the buffer: what kbtf_unix_find falls back to. */
int kbtf_unix_find_streamed(const char *path, struct kbtf_unix *ret, const char **ret_why);
