// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every map and global the hook groups share, defined once. The hook groups declare them
 * extern and are linked after this object (bpftool gen object): libbpf 1.1's linker resolves
 * an extern map only against a definition that comes before it.
 */
#define LAUNCH_DEFINE_SHARED
#define LAUNCH_DEFINE_DNS
#define LAUNCH_DEFINE_ALLOWLIST
#define LAUNCH_DEFINE_SNI
#include "common.bpf.h"
#include "allowlist.bpf.h"
#include "dns.bpf.h"
#include "sni.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
