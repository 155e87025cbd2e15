// SPDX-License-Identifier: LGPL-2.1-or-later
/* The BPF skeleton's lifecycle: open, size, load, fill the allowlist, attach to the cgroup. */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "launch.skel.h"
#include "loader.h"

static __u32 at_least_one(size_t n)
{
	/* A map of 0 entries cannot be created; an unused slot matches nothing. */
	return n ? (__u32)n : 1;
}

int loader_load(const struct allowlist *list, struct launch_bpf **ret_skel)
{
	struct launch_bpf *skel;
	int r;

	skel = launch_bpf__open();
	if (!skel)
		return -errno;
	r = bpf_map__set_max_entries(skel->maps.allow_exact, at_least_one(list->nexact));
	if (!r)
		r = bpf_map__set_max_entries(skel->maps.allow_prefix,
					     at_least_one(list->nprefixes));
	if (!r)
		r = bpf_map__set_max_entries(skel->maps.port_sets, at_least_one(list->nsets));
	if (!r)
		r = launch_bpf__load(skel);
	if (r) {
		launch_bpf__destroy(skel);
		return r < 0 ? r : -EINVAL;
	}
	*ret_skel = skel;
	return 0;
}

int loader_fill(struct launch_bpf *skel, const struct allowlist *list)
{
	int sets_fd = bpf_map__fd(skel->maps.port_sets);
	int exact_fd = bpf_map__fd(skel->maps.allow_exact);
	int prefix_fd = bpf_map__fd(skel->maps.allow_prefix);

	/* Port sets first: an address entry must never point at a set not yet written. */
	for (__u32 i = 0; i < list->nsets; i++)
		if (bpf_map_update_elem(sets_fd, &i, &list->sets[i], BPF_ANY) < 0)
			return -errno;
	for (size_t i = 0; i < list->nexact; i++)
		if (bpf_map_update_elem(exact_fd, &list->exact[i].key, &list->exact[i].set,
					BPF_NOEXIST) < 0)
			return -errno;
	for (size_t i = 0; i < list->nprefixes; i++)
		if (bpf_map_update_elem(prefix_fd, &list->prefixes[i].key, &list->prefixes[i].set,
					BPF_NOEXIST) < 0)
			return -errno;
	return 0;
}

int loader_attach(struct launch_bpf *skel, int cgroup_fd, const char **ret_failed)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_program *prog = *s->progs[i].prog;
		struct bpf_link *link = bpf_program__attach_cgroup(prog, cgroup_fd);

		if (!link) {
			int r = -errno;

			*ret_failed = bpf_program__section_name(prog);
			launch_bpf__detach(skel);
			return r;
		}
		/* Stored in the skeleton, which detaches and frees it on destroy. */
		*s->progs[i].link = link;
	}
	return 0;
}

void loader_counters(const struct launch_bpf *skel, unsigned long long *ret_denied,
		     unsigned long long *ret_lost)
{
	*ret_denied = __atomic_load_n(&skel->bss->denied_count, __ATOMIC_RELAXED);
	*ret_lost = __atomic_load_n(&skel->bss->lost_count, __ATOMIC_RELAXED);
}

int loader_events_fd(const struct launch_bpf *skel)
{
	return bpf_map__fd(skel->maps.events);
}

void loader_destroy(struct launch_bpf *skel)
{
	if (skel)
		launch_bpf__destroy(skel);
}
