// SPDX-License-Identifier: LGPL-2.1-or-later
/* The BPF skeleton's lifecycle: open, size, load, fill the allowlist, attach to the cgroup. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../bpf/launch.h" /* before the skeleton, which uses its structs */
#include "launch.skel.h"
#include "loader.h"
#include "mountinfo.h"
#include "rules.h"
#include "util.h"

/*
 * Attach types of kernel 6.7 (include/uapi/linux/bpf.h), newer than the uapi headers of
 * Debian 12 and libbpf 1.1.
 */
#define LAUNCH_BPF_CGROUP_UNIX_CONNECT 49
#define LAUNCH_BPF_CGROUP_UNIX_SENDMSG 50

static __u32 at_least_one(size_t n)
{
	/* A map of 0 entries cannot be created; an unused slot matches nothing. */
	return n ? (__u32)n : 1;
}

bool loader_kernel_has_unix_hooks(void)
{
	static int cached = -1;
	struct btf *btf;

	if (cached >= 0)
		return cached;
	/* The attach type exists in the running kernel's BTF from 6.7 on. */
	btf = btf__load_vmlinux_btf();
	cached = 0;
	if (btf) {
		const struct btf_type *t;
		__s32 id = btf__find_by_name_kind(btf, "bpf_attach_type", BTF_KIND_ENUM);

		t = id > 0 ? btf__type_by_id(btf, id) : NULL;
		for (int i = 0; t && i < btf_vlen(t); i++)
			if (strcmp(btf__name_by_offset(btf, btf_enum(t)[i].name_off),
				   "BPF_CGROUP_UNIX_CONNECT") == 0)
				cached = 1;
		btf__free(btf);
	}
	return cached;
}

int loader_load(const struct allowlist *list, bool unix_hooks, bool dns_proxy,
		struct launch_bpf **ret_skel)
{
	struct prefix_mask masks[MAX_HASHED_PREFIX_LENGTHS];
	struct launch_bpf *skel;
	bool hashed;
	int r;

	skel = launch_bpf__open();
	if (!skel)
		return -errno;
	/* Attach types libbpf 1.1 has no section names for (kernel 6.7+). */
	bpf_program__set_expected_attach_type(skel->progs.launch_connect_unix,
					      LAUNCH_BPF_CGROUP_UNIX_CONNECT);
	bpf_program__set_expected_attach_type(skel->progs.launch_sendmsg_unix,
					      LAUNCH_BPF_CGROUP_UNIX_SENDMSG);
	if (!unix_hooks) {
		bpf_program__set_autoload(skel->progs.launch_connect_unix, false);
		bpf_program__set_autoload(skel->progs.launch_sendmsg_unix, false);
	}
	hashed = allowlist_prefix_masks(list, masks, MAX_HASHED_PREFIX_LENGTHS) >= 0;
	r = bpf_map__set_max_entries(skel->maps.allow_exact, at_least_one(list->nexact));
	if (!r)
		r = bpf_map__set_max_entries(skel->maps.allow_prefix,
					     at_least_one(hashed ? 0 : list->nprefixes));
	if (!r)
		r = bpf_map__set_max_entries(skel->maps.allow_prefix_hash,
					     at_least_one(hashed ? list->nprefixes : 0));
	if (!r)
		r = bpf_map__set_max_entries(skel->maps.port_sets, at_least_one(list->nsets));
	/* Without the DNS proxy nothing is ever opened by an answer. */
	if (!r && !dns_proxy)
		r = bpf_map__set_max_entries(skel->maps.dns_allow, 1);
	if (!r)
		r = launch_bpf__load(skel);
	if (r) {
		launch_bpf__destroy(skel);
		return r < 0 ? r : -EINVAL;
	}
	*ret_skel = skel;
	return 0;
}

static int loader_fill_unix(struct launch_bpf *skel, const struct rules *rules)
{
	int fd = bpf_map__fd(skel->maps.unix_allow);
	__u8 yes = 1;

	for (size_t i = 0; i < rules->nunix; i++)
		if (bpf_map_update_elem(fd, &rules->unix_allows[i].key, &yes, BPF_ANY) < 0)
			return -errno;
	return 0;
}

/*
 * Writes n entries of a map from an array of structs holding the key at key_off and the
 * value at value_off: one bpf() call for the whole batch where the map type allows it
 * (hash maps; a 100,000-address policy then fills in one call), else one per entry.
 */
static int loader_update_all(int fd, const void *entries, size_t n, size_t stride, size_t key_off,
			     size_t key_size, size_t value_off, size_t value_size, bool batch)
{
	_cleanup_free_ char *keys = NULL, *values = NULL;
	const char *base = entries;
	__u32 count = (__u32)n;

	if (n == 0)
		return 0;
	if (batch) {
		keys = malloc(n * key_size);
		values = malloc(n * value_size);
		if (!keys || !values)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			memcpy(keys + i * key_size, base + i * stride + key_off, key_size);
			memcpy(values + i * value_size, base + i * stride + value_off, value_size);
		}
		if (bpf_map_update_batch(fd, keys, values, &count, NULL) == 0 && count == n)
			return 0;
		/* Kernels without batch updates for this map: fall back, entry by entry. */
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, base + i * stride + key_off,
					base + i * stride + value_off, BPF_ANY) < 0)
			return -errno;
	return 0;
}

int loader_fill(struct launch_bpf *skel, const struct rules *rules)
{
	const struct allowlist *list = rules->list;
	int r, nmasks, prefix_fd;

	/* Port sets first: an address entry must never point at a set not yet written. */
	for (__u32 i = 0; i < list->nsets; i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.port_sets), &i, &list->sets[i],
					BPF_ANY) < 0)
			return -errno;
	r = loader_update_all(bpf_map__fd(skel->maps.allow_exact), list->exact, list->nexact,
			      sizeof(*list->exact), offsetof(struct allow_exact, key),
			      sizeof(list->exact->key), offsetof(struct allow_exact, set),
			      sizeof(list->exact->set), true);
	if (r < 0)
		return r;
	/* Few prefix lengths: one hash lookup per length beats the trie (see launch.h). */
	nmasks = allowlist_prefix_masks(list, skel->bss->prefix_masks, MAX_HASHED_PREFIX_LENGTHS);
	prefix_fd = nmasks >= 0 ? bpf_map__fd(skel->maps.allow_prefix_hash)
				: bpf_map__fd(skel->maps.allow_prefix);
	/* The LPM trie has no batch operations. */
	r = loader_update_all(prefix_fd, list->prefixes, list->nprefixes, sizeof(*list->prefixes),
			      offsetof(struct allow_prefix, key), sizeof(list->prefixes->key),
			      offsetof(struct allow_prefix, set), sizeof(list->prefixes->set),
			      nmasks >= 0);
	if (r < 0)
		return r;
	/* Last, once the maps are full: the programs read these on every call. */
	skel->bss->nprefix_masks = nmasks > 0 ? (__u32)nmasks : 0;
	skel->bss->has_exact = list->nexact > 0;
	skel->bss->has_prefixes = list->nprefixes > 0;
	return loader_fill_unix(skel, rules);
}

int loader_attach(struct launch_bpf *skel, int cgroup_fd, const char **ret_failed)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_program *prog = *s->progs[i].prog;
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach_cgroup(prog, cgroup_fd);

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

int loader_bpffs_dir(char *ret_dir, size_t len)
{
	char mount_point[PATH_MAX] = "";

	if (mountinfo_find("bpf", mount_point, sizeof(mount_point)) < 0)
		mount_point[0] = '\0';
	if (!mount_point[0]) {
		/* What systemd does at boot; hosts without it get the same here. */
		if (mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "mode=0700") < 0)
			return -errno;
		strcpy(mount_point, "/sys/fs/bpf");
	}
	if ((size_t)snprintf(ret_dir, len, "%s/launch", mount_point) >= len)
		return -ENAMETOOLONG;
	if (mkdir(ret_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int loader_pin(struct launch_bpf *skel, const char *dir)
{
	const struct bpf_object_skeleton *s = skel->skeleton;
	char path[PATH_MAX];

	if (mkdir(dir, 0700) < 0)
		return -errno;
	for (int i = 0; i < s->prog_cnt; i++) {
		if (!*s->progs[i].link)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, s->progs[i].name) >=
		    sizeof(path))
			return -ENAMETOOLONG;
		if (bpf_link__pin(*s->progs[i].link, path) < 0)
			return -errno;
	}
	return 0;
}

int loader_unpin_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && unlinkat(dirfd(d), de->d_name, 0) < 0)
			r = -errno;
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT)
		r = -errno;
	return r;
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
