/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The BPF skeleton's lifecycle: open, size, load, fill the allowlist, attach to the cgroup. */
#ifndef LAUNCH_LOADER_H
#define LAUNCH_LOADER_H

#include <stdbool.h>

#include "allowlist.h"

struct launch_bpf;

/*
 * Opens the skeleton, sizes the maps for `list` (and the DNS map for the proxy, when on),
 * loads (verifies) the programs; without unix_hooks, the AF_UNIX programs are left out
 * (--allow-unix-unfiltered on old kernels).
 */
int loader_load(const struct allowlist *list, bool unix_hooks, bool dns_proxy,
		struct launch_bpf **ret_skel);
/* Whether the kernel has the AF_UNIX cgroup hooks (6.7+); probed once. */
bool loader_kernel_has_unix_hooks(void);
struct rules;

/*
 * Writes the allowlist and the allowed AF_UNIX addresses into the maps. Must succeed before
 * attach: an empty map refuses all.
 */
int loader_fill(struct launch_bpf *skel, const struct rules *rules);
/*
 * Attaches every program to the cgroup with bpf_link. On failure nothing stays attached.
 * ret_failed names the program that could not be attached.
 */
int loader_attach(struct launch_bpf *skel, int cgroup_fd, const char **ret_failed);
/*
 * Finds a mounted BPF file system, mounting one at /sys/fs/bpf when there is none, and
 * writes <mount>/launch to ret_dir.
 */
int loader_bpffs_dir(char *ret_dir, size_t len);
/*
 * Pins every link under dir (created 0700), so that the programs stay attached even if the
 * launcher is killed: the job must never outlive its confinement.
 */
int loader_pin(struct launch_bpf *skel, const char *dir);
/* Removes the pins and their folder; harmless when there are none. */
int loader_unpin_dir(const char *dir);
/* Refusals counted by the kernel: all of them, and those whose event was lost. */
void loader_counters(const struct launch_bpf *skel, unsigned long long *ret_denied,
		     unsigned long long *ret_lost);
int loader_events_fd(const struct launch_bpf *skel);
/* Detaches and frees everything; accepts NULL. */
void loader_destroy(struct launch_bpf *skel);

#endif /* LAUNCH_LOADER_H */
