// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The BPF programs: verified once per host and shared by every sandbox, and each sandbox's
 * own maps, slot and attachment (docs/design.md); the slots themselves are loader_slots.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/launch.h" /* before the skeleton, which uses its structs */
#include "bpf_version.h"
#include "gc.h"
#include "kbtf.h"
#include "launch.skel.h"
#include "loader_internal.h"
#include "progload.h"
#include "lib/mountinfo.h"
#include "lib/util.h"

/*
 * Attach types of kernel 6.7 (include/uapi/linux/bpf.h), newer than the uapi headers of
 * Debian 12 and libbpf 1.1.
 */
#define LAUNCH_BPF_CGROUP_UNIX_CONNECT 49
#define LAUNCH_BPF_CGROUP_UNIX_SENDMSG 50

/*
 * cost_us: what verifying each took here (strace -T of BPF_PROG_LOAD, kernel 6.18, one run),
 * by which progload shares them out over the CPUs.
 */
static const struct {
	const char *name; /* as in the skeleton */
	int attach_type;
	unsigned int cost_us;
} PROGS[LOADER_NPROGS] = {
	[LOADER_CONNECT4] = { "launch_connect4", BPF_CGROUP_INET4_CONNECT, 4500 },
	[LOADER_CONNECT6] = { "launch_connect6", BPF_CGROUP_INET6_CONNECT, 4000 },
	[LOADER_SENDMSG4] = { "launch_sendmsg4", BPF_CGROUP_UDP4_SENDMSG, 4700 },
	[LOADER_SENDMSG6] = { "launch_sendmsg6", BPF_CGROUP_UDP6_SENDMSG, 5400 },
	[LOADER_RECVMSG4] = { "launch_recvmsg4", BPF_CGROUP_UDP4_RECVMSG, 300 },
	[LOADER_RECVMSG6] = { "launch_recvmsg6", BPF_CGROUP_UDP6_RECVMSG, 300 },
	[LOADER_GETPEERNAME4] = { "launch_getpeername4", BPF_CGROUP_INET4_GETPEERNAME, 250 },
	[LOADER_GETPEERNAME6] = { "launch_getpeername6", BPF_CGROUP_INET6_GETPEERNAME, 270 },
	[LOADER_CONNECT_UNIX] = { "launch_connect_unix", LAUNCH_BPF_CGROUP_UNIX_CONNECT, 3600 },
	[LOADER_SENDMSG_UNIX] = { "launch_sendmsg_unix", LAUNCH_BPF_CGROUP_UNIX_SENDMSG, 4000 },
	[LOADER_EGRESS] = { "launch_egress", BPF_CGROUP_INET_EGRESS, 12100 },
	[LOADER_BIND4] = { "launch_bind4", BPF_CGROUP_INET4_BIND, 780 },
	[LOADER_BIND6] = { "launch_bind6", BPF_CGROUP_INET6_BIND, 940 },
	[LOADER_INGRESS] = { "launch_ingress", BPF_CGROUP_INET_INGRESS, 1430 },
	[LOADER_SOCKOPS] = { "launch_sockops", BPF_CGROUP_SOCK_OPS, 1000 },
	[LOADER_TLS_MSG] = { "launch_tls_msg", BPF_SK_MSG_VERDICT, 20000 },
};

/* The shared maps of the launcher's own; the maps-of-maps are named in image_map_specs. */
static const char *const SHARED_MAP_NAMES[LOADER_FIRST_OUTER] = {
	[LOADER_MAP_CFGS] = "sandbox_cfgs",	    [LOADER_MAP_STATES] = "sandbox_states",
	[LOADER_MAP_SLOT_OWNER] = "slot_owner",	    [LOADER_MAP_SNI_SOCKS] = "sni_socks",
	[LOADER_MAP_SNI_COUNTERS] = "sni_counters",
};

/* The kernel keeps 15 characters of a map's name. */
static const char *map_name(int m)
{
	return m < LOADER_FIRST_OUTER ? SHARED_MAP_NAMES[m]
				      : image_map_specs[m - LOADER_FIRST_OUTER].outer_name;
}

const char *loader_version(void)
{
	return LAUNCH_BPF_VERSION;
}

static bool is_unix_prog(int i)
{
	return i == LOADER_CONNECT_UNIX || i == LOADER_SENDMSG_UNIX;
}

void loader_shared_init(struct loader_shared *shared)
{
	memset(shared, 0, sizeof(*shared));
	for (int i = 0; i < LOADER_NPROGS; i++)
		shared->prog_fd[i] = -1;
	for (int i = 0; i < LOADER_NMAPS; i++)
		shared->map_fd[i] = -1;
}

void loader_shared_close(struct loader_shared *shared)
{
	for (int i = 0; i < LOADER_NPROGS; i++)
		if (shared->prog_fd[i] >= 0)
			close(shared->prog_fd[i]);
	for (int i = 0; i < LOADER_NMAPS; i++)
		if (shared->map_fd[i] >= 0)
			close(shared->map_fd[i]);
	loader_shared_init(shared);
}

/* -1 until known; then whether the kernel has the AF_UNIX address hooks (6.7). */
static int unix_hooks_cached = -1;

/*
 * A kernel before 6.7 does not know the attach type and says EINVAL before it looks at the fd:
 * asked of a cgroup, a newer one answers; asked of a netns, it finds that no cgroup (EBADF).
 */
static bool unix_hooks_probe(int fd)
{
	__u32 count = 0;

	if (unix_hooks_cached < 0)
		unix_hooks_cached = !(bpf_prog_query(fd, LAUNCH_BPF_CGROUP_UNIX_CONNECT, 0, NULL,
						     NULL, &count) < 0 &&
				      errno == EINVAL);
	return unix_hooks_cached;
}

bool loader_kernel_has_unix_hooks(void)
{
	int fd;

	if (unix_hooks_cached >= 0)
		return unix_hooks_cached;
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	unix_hooks_probe(fd);
	close(fd);
	return unix_hooks_cached;
}

/* The maps already looked at by id, so that a second program's are not fetched again. */
struct seen_maps {
	__u32 ids[64];
	unsigned int n;
};

/* Takes the map fds of the program's maps that have one of our names and are not in seen. */
static int shared_take_maps(struct loader_shared *shared, int prog_fd, struct seen_maps *seen)
{
	__u32 ids[64];
	struct bpf_prog_info info = { .nr_map_ids = ARRAY_SIZE(ids), .map_ids = (uintptr_t)ids };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) < 0)
		return -errno;
	for (__u32 i = 0; i < info.nr_map_ids && i < ARRAY_SIZE(ids); i++) {
		struct bpf_map_info map_info = { 0 };
		__u32 map_len = sizeof(map_info);
		bool known = false;
		int fd;

		for (unsigned int k = 0; k < seen->n && !known; k++)
			known = seen->ids[k] == ids[i];
		if (known)
			continue;
		if (seen->n < ARRAY_SIZE(seen->ids))
			seen->ids[seen->n++] = ids[i];
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(fd, &map_info, &map_len) < 0) {
			close(fd);
			return -errno;
		}
		for (int m = 0; m < LOADER_NMAPS; m++)
			if (shared->map_fd[m] < 0 &&
			    strncmp(map_info.name, map_name(m), BPF_OBJ_NAME_LEN - 1) == 0) {
				shared->map_fd[m] = fd;
				fd = -1;
				break;
			}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/*
 * The sk_msg program, attached to sni_socks (which the sockops program uses): its fd and maps.
 * -ENOENT when it is not there, as for a program missing from the holder.
 */
static int tls_msg_find(struct loader_shared *shared, struct seen_maps *seen)
{
	int socks = shared->map_fd[LOADER_MAP_SNI_SOCKS];
	__u32 id = 0, count = 1;

	if (socks < 0)
		return -ENOENT;
	if (bpf_prog_query(socks, BPF_SK_MSG_VERDICT, 0, NULL, &id, &count) < 0)
		return -errno;
	if (count != 1)
		return -ENOENT;
	shared->prog_fd[LOADER_TLS_MSG] = bpf_prog_get_fd_by_id(id);
	if (shared->prog_fd[LOADER_TLS_MSG] < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	return shared_take_maps(shared, shared->prog_fd[LOADER_TLS_MSG], seen);
}

/*
 * Takes the programs attached to the holder and their maps. -ENOENT when the holder is
 * missing or incomplete: the programs must be loaded.
 */
static int shared_find(const char *holder, struct loader_shared *shared)
{
	_cleanup_close_ int fd = open(holder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct seen_maps seen = { .n = 0 };
	int r;

	loader_shared_init(shared);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	shared->unix_hooks = unix_hooks_probe(fd);
	for (int i = 0; i < LOADER_NPROGS; i++) {
		__u32 id = 0, count = 1;

		if (is_unix_prog(i) && !shared->unix_hooks)
			continue;
		/* Attached to sni_socks, whose fd the sockops program's maps gave. */
		if (i == LOADER_TLS_MSG) {
			r = tls_msg_find(shared, &seen);
			if (r < 0)
				goto fail;
			continue;
		}
		if (bpf_prog_query(fd, PROGS[i].attach_type, 0, NULL, &id, &count) < 0) {
			r = -errno;
			goto fail;
		}
		if (count != 1) {
			r = -ENOENT;
			goto fail;
		}
		shared->prog_fd[i] = bpf_prog_get_fd_by_id(id);
		if (shared->prog_fd[i] < 0) {
			/* Replaced or detached under us: load again. */
			r = errno == ENOENT ? -ENOENT : -errno;
			goto fail;
		}
		/* connect4 uses every map but unix_allow, which the unix programs use. */
		if (i == LOADER_CONNECT4 || i == LOADER_CONNECT_UNIX || i == LOADER_SOCKOPS) {
			r = shared_take_maps(shared, shared->prog_fd[i], &seen);
			if (r < 0)
				goto fail;
		}
	}
	for (int m = 0; m < LOADER_NMAPS; m++)
		if (shared->map_fd[m] < 0 &&
		    (m != LOADER_FIRST_OUTER + IMAGE_MAP_UNIX_ALLOW || shared->unix_hooks)) {
			r = -ENOENT;
			goto fail;
		}
	return 0;
fail:
	loader_shared_close(shared);
	return r;
}

/*
 * Writes the BTF id of bpf_cast_to_kern_ctx into prog's kfunc calls, which the object leaves
 * at 0 (unix.bpf.c). -ENOENT when prog has none: the object is not the one this expects.
 */
static int unix_prog_patch(struct bpf_program *prog, uint32_t kfunc_id)
{
	size_t cnt = bpf_program__insn_cnt(prog);
	_cleanup_free_ struct bpf_insn *insns = NULL;
	int patched = 0;

	insns = malloc(cnt * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
	for (size_t i = 0; i < cnt; i++)
		if (insns[i].code == (BPF_JMP | BPF_CALL) &&
		    insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL && insns[i].imm == 0) {
			insns[i].imm = (__s32)kfunc_id;
			patched++;
		}
	if (!patched)
		return -ENOENT;
	return bpf_program__set_insns(prog, insns, cnt) < 0 ? -errno : 0;
}

/* What every object of a load is given before it loads (progload). */
struct load_prep {
	bool unix_hooks;
	struct kbtf_unix kbtf;
};

/*
 * Gives the AF_UNIX programs what they need of the kernel's BTF, found beforehand (kbtf.c),
 * or turns them off before kernel 6.7. The same on each object: the .rodata of the first is
 * the one every program reads.
 */
static int object_prepare(struct launch_bpf *skel, void *userdata)
{
	const struct load_prep *prep = userdata;
	int r;

	/* Attach types libbpf 1.1 has no section names for (kernel 6.7+). */
	bpf_program__set_expected_attach_type(skel->progs.launch_connect_unix,
					      LAUNCH_BPF_CGROUP_UNIX_CONNECT);
	bpf_program__set_expected_attach_type(skel->progs.launch_sendmsg_unix,
					      LAUNCH_BPF_CGROUP_UNIX_SENDMSG);
	if (!prep->unix_hooks) {
		bpf_program__set_autoload(skel->progs.launch_connect_unix, false);
		bpf_program__set_autoload(skel->progs.launch_sendmsg_unix, false);
		return 0;
	}
	skel->rodata->unix_uaddr_off = prep->kbtf.uaddr_off;
	skel->rodata->unix_uaddrlen_off = prep->kbtf.uaddrlen_off;
	r = unix_prog_patch(skel->progs.launch_connect_unix, prep->kbtf.cast_kern_ctx_id);
	if (r < 0)
		return r;
	return unix_prog_patch(skel->progs.launch_sendmsg_unix, prep->kbtf.cast_kern_ctx_id);
}

/*
 * Pins sni_socks in the BPF file system (mounting one at /sys/fs/bpf when the host has none):
 * a sockmap lets go of its programs when its last user-space reference goes
 * (map_release_uref), whatever programs use it, so without the pin the sk_msg program would
 * go with the last launcher.
 */
static int sni_socks_pin(int fd)
{
	char dir[PATH_MAX], path[PATH_MAX];

	if (mountinfo_find("bpf", dir, sizeof(dir)) < 0) {
		if (mkdir(LOADER_BPFFS, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (mount("bpf", LOADER_BPFFS, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "mode=0700") < 0)
			return -errno;
		snprintf(dir, sizeof(dir), "%s", LOADER_BPFFS);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s", dir, LOADER_SNI_PIN_PREFIX,
			     LAUNCH_BPF_VERSION) >= sizeof(path))
		return -ENAMETOOLONG;
	/* A pin of an earlier load of this version names a map no program uses any more. */
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return bpf_obj_pin(fd, path) < 0 ? -errno : 0;
}

/* Attaches the sk_msg program to sni_socks, found among the sockops program's maps. */
static int tls_msg_attach(int prog_fd, int sockops_fd)
{
	__u32 ids[16];
	struct bpf_prog_info info = { .nr_map_ids = ARRAY_SIZE(ids), .map_ids = (uintptr_t)ids };
	__u32 len = sizeof(info);

	if (sockops_fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(sockops_fd, &info, &len) < 0)
		return -errno;
	for (__u32 i = 0; i < info.nr_map_ids && i < ARRAY_SIZE(ids); i++) {
		struct bpf_map_info map_info = { 0 };
		__u32 map_len = sizeof(map_info);
		_cleanup_close_ int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(fd, &map_info, &map_len) < 0)
			return -errno;
		if (strcmp(map_info.name, SHARED_MAP_NAMES[LOADER_MAP_SNI_SOCKS]) != 0)
			continue;
		if (bpf_prog_attach(prog_fd, fd, BPF_SK_MSG_VERDICT, 0) < 0)
			return -errno;
		return sni_socks_pin(fd);
	}
	return -ENOENT;
}

/*
 * Loads (verifies) the programs, on as many CPUs as there are (progload), and attaches them
 * to the holder, replacing what is there.
 */
static int shared_load(const char *holder, bool unix_hooks, char *errbuf, size_t errlen)
{
	struct load_prep prep = { .unix_hooks = unix_hooks };
	struct progload_prog progs[LOADER_NPROGS];
	int prog_fds[LOADER_NPROGS];
	_cleanup_close_ int fd = -1;
	int r;

	if (unix_hooks) {
		/*
		 * libbpf would read and index the whole of the kernel's BTF for a kfunc or a
		 * CO-RE relocation.
		 */
		const char *why;

		r = kbtf_unix_find(KBTF_VMLINUX, &prep.kbtf, &why);
		if (r < 0 && why) {
			snprintf(errbuf, errlen,
				 "%s: %s, which the AF_UNIX programs cannot read: refusing to load "
				 "them",
				 KBTF_VMLINUX, why);
			return r;
		}
		if (r < 0) {
			snprintf(errbuf, errlen,
				 "%s: cannot find bpf_cast_to_kern_ctx and bpf_sock_addr_kern's "
				 "uaddr and uaddrlen: %s",
				 KBTF_VMLINUX, strerror(-r));
			return r;
		}
	}
	for (int i = 0; i < LOADER_NPROGS; i++)
		progs[i] = (struct progload_prog){ PROGS[i].name, PROGS[i].cost_us };
	r = progload_load(progs, LOADER_NPROGS, progload_objects(), object_prepare, &prep,
			  prog_fds);
	if (r < 0)
		return r;
	if (mkdir(holder, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		goto out;
	}
	fd = open(holder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	for (int i = 0; i < LOADER_NPROGS; i++) {
		if (prog_fds[i] < 0)
			continue;
		/*
		 * Without BPF_F_ALLOW_MULTI one program per hook: a second attach replaces. The
		 * sk_msg program goes on its map, before sockops can put a socket there.
		 */
		if (i == LOADER_TLS_MSG)
			r = tls_msg_attach(prog_fds[i], prog_fds[LOADER_SOCKOPS]);
		else
			r = bpf_prog_attach(prog_fds[i], fd, PROGS[i].attach_type, 0) < 0 ? -errno
											  : 0;
		if (r < 0) {
			/* Nothing half-made stays: removing the holder detaches what it got. */
			rmdir(holder);
			goto out;
		}
	}
out:
	/* The holder's attachments keep the programs, and through them the maps. */
	for (int i = 0; i < LOADER_NPROGS; i++)
		if (prog_fds[i] >= 0)
			close(prog_fds[i]);
	return r;
}

int loader_shared_get(const char *cgroup_parent, struct loader_shared *ret, char *errbuf,
		      size_t errlen)
{
	char holder[PATH_MAX], lock_path[PATH_MAX];
	_cleanup_close_ int lock_fd = -1;
	int r;

	if ((size_t)snprintf(holder, sizeof(holder), "%s/%s%s", cgroup_parent, LOADER_HOLDER_PREFIX,
			     LAUNCH_BPF_VERSION) >= sizeof(holder))
		return -ENAMETOOLONG;
	r = shared_find(holder, ret);
	if (r != -ENOENT)
		return r;

	/* The first launch of this build: one launcher loads, the others wait for it. */
	snprintf(lock_path, sizeof(lock_path), "%s/%s", GC_LOCK_DIR, LOADER_LOAD_LOCK);
	if (mkdir(GC_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX) < 0)
		return -errno;
	r = shared_find(holder, ret);
	if (r != -ENOENT)
		return r;
	if (mkdir(cgroup_parent, 0755) < 0 && errno != EEXIST)
		return -errno;
	r = shared_load(holder, loader_kernel_has_unix_hooks(), errbuf, errlen);
	if (r < 0)
		return r;
	r = shared_find(holder, ret);
	if (r == 0)
		ret->loaded_now = true;
	return r;
}

/*
 * Unpins the sni_socks of other versions: their sk_msg program goes once no launcher holds
 * the map. A sandbox still running on it keeps its backstop, which drops what a connection
 * not yet judged sends.
 */
static void sni_pins_remove(const char *keep)
{
	size_t plen = strlen(LOADER_SNI_PIN_PREFIX);
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (mountinfo_find("bpf", dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, LOADER_SNI_PIN_PREFIX, plen) == 0 &&
		    !(keep && strcmp(de->d_name + plen, keep) == 0))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

int loader_remove_holders(const char *cgroup_parent, const char *keep)
{
	_cleanup_close_ int lock_fd = -1;
	struct dirent *de;
	int removed = 0;
	DIR *d;

	/*
	 * Under the loader's lock: a launcher that is loading the programs finds its holder
	 * still there when it looks for what it attached.
	 */
	lock_fd = open(GC_LOCK_DIR "/" LOADER_LOAD_LOCK, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lock_fd >= 0 && flock(lock_fd, LOCK_EX) < 0)
		return -errno;
	d = opendir(cgroup_parent);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, LOADER_HOLDER_PREFIX, strlen(LOADER_HOLDER_PREFIX)) != 0 ||
		    (keep && strcmp(de->d_name + strlen(LOADER_HOLDER_PREFIX), keep) == 0))
			continue;
		/*
		 * A holder has no process. Sandboxes still running on its programs keep them:
		 * each has its own attachment.
		 */
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			removed++;
	}
	closedir(d);
	sni_pins_remove(keep);
	return removed;
}

/*
 * Writes a map's entries: one bpf() call for the whole batch where the map type allows it
 * (hash maps; a 100,000-address policy then fills in one call), else one per entry.
 */
static int map_fill(int fd, const struct image_map_spec *spec, const struct image_entries *e)
{
	__u32 count = (__u32)e->n;

	if (e->n == 0)
		return 0;
	if (spec->type == BPF_MAP_TYPE_HASH &&
	    bpf_map_update_batch(fd, e->keys, e->values, &count, NULL) == 0 && count == e->n)
		return 0;
	/* The trie and arrays, or kernels without batch updates for this map: entry by entry. */
	for (size_t i = 0; i < e->n; i++)
		if (bpf_map_update_elem(fd, (const char *)e->keys + i * spec->key_size,
					(const char *)e->values + i * spec->value_size,
					BPF_ANY) < 0)
			return -errno;
	return 0;
}

/*
 * Makes (or empties) and fills every map the image has at sb's slot, but with policy_only
 * those that a running sandbox keeps (image_map_spec.runtime).
 */
static int sandbox_load_image(struct loader_sandbox *sb, const struct image *image,
			      bool policy_only)
{
	for (int kind = 0; kind < IMAGE_NMAPS; kind++) {
		const struct image_entries *e = &image->maps[kind];
		int r;

		if (!e->present || (policy_only && image_map_specs[kind].runtime))
			continue;
		/*
		 * Only the AF_UNIX maps can be missing (before kernel 6.7, with their programs):
		 * no program reads what the image has for them.
		 */
		if (loader_outer_fd(sb->shared, kind) < 0)
			continue;
		r = loader_slot_map(sb, kind, e->max_entries);
		if (r == 0)
			r = map_fill(sb->inner_fd[kind], &image_map_specs[kind], e);
		if (r < 0)
			return r;
	}
	return 0;
}

int loader_sandbox_new(const struct loader_shared *shared, const struct rules *rules,
		       bool dns_proxy, struct loader_sandbox *sb)
{
	_cleanup_(image_freep) struct image *image = NULL;
	int r;

	memset(sb, 0, sizeof(*sb));
	sb->shared = shared;
	sb->slots_fd = -1;
	for (int m = 0; m < IMAGE_NMAPS; m++)
		sb->inner_fd[m] = -1;
	r = image_build(rules, dns_proxy, &image);
	if (r < 0)
		return r;
	/* Whoever had the slot before is gone (slot_reclaim) before its maps are emptied. */
	sb->cfg = image->cfg;
	r = loader_slot_take(sb, &sb->slot);
	if (r == 0)
		r = sandbox_load_image(sb, image, false);
	/* Filled before they go in: the slot is not in use yet, but nothing half-made goes in. */
	if (r == 0)
		r = loader_slot_install(sb);
	return r;
}

/*
 * Replaces the settings in the cgroup's storage, whole: the kernel swaps the value's pointer,
 * so a program sees these settings or the ones before, never a mix. The counters, in their
 * own per-CPU storage, start at zero with the cgroup's attachment and are never written here.
 */
static int settings_write(const struct loader_shared *shared, uint64_t cgroup_id,
			  const struct sandbox_cfg *cfg)
{
	__u64 key = cgroup_id;

	if (bpf_map_update_elem(shared->map_fd[LOADER_MAP_CFGS], &key, cfg, BPF_ANY) < 0)
		return -errno;
	return 0;
}

int loader_sandbox_attach(struct loader_sandbox *sb, int cgroup_fd, uint64_t cgroup_id,
			  const char **ret_failed)
{
	const struct loader_shared *shared = sb->shared;
	__u32 slot = sb->slot;
	int r;

	/*
	 * Attached before the job runs (it waits in the cgroup for child_start to exec),
	 * without BPF_F_ALLOW_MULTI, so nothing below can add to them, and with no link: they go
	 * only with the cgroup, whatever happens to the launcher. Its storage starts zeroed
	 * (slot 0): everything is refused until the end of this function.
	 */
	for (int i = 0; i < LOADER_NPROGS; i++) {
		/*
		 * Only a listener needs it: loader_sandbox_attach_ingress, at the first listen.
		 * The sk_msg program is its map's, for every sandbox.
		 */
		if (shared->prog_fd[i] < 0 || i == LOADER_INGRESS || i == LOADER_TLS_MSG)
			continue;
		if (bpf_prog_attach(shared->prog_fd[i], cgroup_fd, PROGS[i].attach_type, 0) < 0) {
			*ret_failed = PROGS[i].name;
			return -errno;
		}
	}
	sb->cgroup_id = cgroup_id;
	/* The slot becomes ours: its maps (of the kinds the flags name) are this sandbox's. */
	r = loader_slot_owner_set(shared, slot, cgroup_id);
	if (r < 0) {
		*ret_failed = "the sandbox's slot";
		return r;
	}
	/* Last: with its slot set, the cgroup's own allowlist applies. */
	sb->cfg.cgroup_id = cgroup_id;
	sb->cfg.slot = slot;
	r = settings_write(shared, cgroup_id, &sb->cfg);
	if (r < 0)
		*ret_failed = "the sandbox's configuration";
	return r;
}

int loader_sandbox_attach_ingress(struct loader_sandbox *sb, int cgroup_fd)
{
	const struct loader_shared *shared = sb->shared;

	if (sb->ingress_attached)
		return 0;
	if (!sb->cgroup_id || shared->prog_fd[LOADER_INGRESS] < 0)
		return -EINVAL;
	/*
	 * As the others, without BPF_F_ALLOW_MULTI and with no link. The cgroup's storages
	 * exist already, from the programs attached before the job started, and the kernel
	 * gives this program the same ones (same map, same cgroup): it reads the settings and
	 * counts in the counters that every other program of the sandbox does.
	 */
	if (bpf_prog_attach(shared->prog_fd[LOADER_INGRESS], cgroup_fd,
			    PROGS[LOADER_INGRESS].attach_type, 0) < 0)
		return -errno;
	sb->ingress_attached = true;
	return 0;
}

int loader_sandbox_update(struct loader_sandbox *sb, const struct image *image)
{
	struct loader_sandbox next = { .shared = sb->shared, .slots_fd = sb->slots_fd };
	struct loader_slot_op ops[IMAGE_NMAPS];
	struct sandbox_cfg cfg;
	uint32_t old_slot = sb->slot, new_slot = 0;
	size_t n = 0;
	int r;

	if (!sb->cgroup_id || !sb->slot)
		return -EINVAL;
	for (int m = 0; m < IMAGE_NMAPS; m++)
		next.inner_fd[m] = -1;
	/*
	 * The new policy's maps go to a second slot, filled and installed while the programs
	 * still read the first one's; then one write of the settings moves the sandbox over.
	 */
	r = loader_slot_take(sb, &new_slot);
	if (r < 0)
		return r;
	next.slot = new_slot;
	r = sandbox_load_image(&next, image, true);
	for (int m = 0; r == 0 && m < IMAGE_NMAPS; m++) {
		int inner = image_map_specs[m].runtime
				    ? sb->inner_fd[m]
				    : (next.inner_new[m] ? next.inner_fd[m] : -1);

		/* The ring buffer and the DNS maps are the same maps, at both slots. */
		if (inner >= 0)
			ops[n++] =
				(struct loader_slot_op){ .outer_fd = loader_outer_fd(sb->shared, m),
							 .kind = m,
							 .slot = new_slot,
							 .inner_fd = inner };
	}
	if (r == 0)
		r = loader_slot_ops_apply(sb->shared, ops, n);
	if (r == 0)
		r = loader_slot_owner_set(sb->shared, new_slot, sb->cgroup_id);
	cfg = image->cfg;
	cfg.cgroup_id = sb->cgroup_id;
	cfg.slot = new_slot;
	/* What the programs remembered under the old rules no longer holds. */
	cfg.generation = sb->cfg.generation + 1;
	/* Where the DNS proxy listens is the running sandbox's, as is --audit-only. */
	cfg.flags |= sb->cfg.flags & (CFG_DNS_PROXY | CFG_AUDIT_ONLY);
	cfg.dns_udp4_port = sb->cfg.dns_udp4_port;
	cfg.dns_tcp4_port = sb->cfg.dns_tcp4_port;
	cfg.dns_udp6_port = sb->cfg.dns_udp6_port;
	cfg.dns_tcp6_port = sb->cfg.dns_tcp6_port;
	/* The swap: a program sees the old settings and slot, or the new ones. */
	if (r == 0)
		r = settings_write(sb->shared, sb->cgroup_id, &cfg);
	if (r < 0) {
		for (int m = 0; m < IMAGE_NMAPS; m++)
			if (next.inner_fd[m] >= 0)
				close(next.inner_fd[m]);
		loader_slot_release(sb, new_slot);
		return r;
	}
	sb->cfg = cfg;
	sb->slot = new_slot;
	for (int m = 0; m < IMAGE_NMAPS; m++)
		if (!image_map_specs[m].runtime) {
			if (sb->inner_fd[m] >= 0)
				close(sb->inner_fd[m]);
			sb->inner_fd[m] = next.inner_fd[m];
		}
	/*
	 * The old slot keeps its policy maps for the next sandbox to empty, but not this one's
	 * ring buffer (always there) and DNS maps. Each change to a map-of-maps waits for an RCU
	 * grace period (maybe_wait_bpf_programs): once loader_slot_release returns, no program that
	 * read the old settings is still running, and every call is judged by the new policy.
	 */
	return loader_slot_release(sb, old_slot);
}

/* The sk_msg program's refusals, per CPU at the sandbox's slot, where they are its cgroup's. */
static void sni_sum_counters(const struct loader_sandbox *sb, int ncpus,
			     struct sandbox_counters *ret_counters)
{
	_cleanup_free_ struct sni_counters *per_cpu = calloc((size_t)ncpus, sizeof(*per_cpu));
	__u32 slot = sb->slot;

	if (!per_cpu || !slot ||
	    bpf_map_lookup_elem(sb->shared->map_fd[LOADER_MAP_SNI_COUNTERS], &slot, per_cpu) < 0)
		return;
	for (int i = 0; i < ncpus; i++) {
		const struct sni_counters *c = &per_cpu[i];

		if (c->cgroup_id != sb->cgroup_id)
			continue;
		ret_counters->denied += c->denied;
		ret_counters->lost += c->lost;
		ret_counters->would_deny += c->would_deny;
		ret_counters->would_deny_lost += c->would_deny_lost;
	}
}

void loader_sandbox_sum_counters(const struct loader_sandbox *sb,
				 struct sandbox_counters *ret_counters)
{
	int ncpus = libbpf_num_possible_cpus();
	_cleanup_free_ struct sandbox_counters *per_cpu = NULL;
	__u64 key = sb->cgroup_id;

	*ret_counters = (struct sandbox_counters){ 0 };
	if (!sb->cgroup_id || ncpus <= 0)
		return;
	per_cpu = calloc((size_t)ncpus, sizeof(*per_cpu));
	if (!per_cpu ||
	    bpf_map_lookup_elem(sb->shared->map_fd[LOADER_MAP_STATES], &key, per_cpu) < 0)
		return;
	for (int i = 0; i < ncpus; i++) {
		const struct sandbox_counters *c = &per_cpu[i];

		ret_counters->denied += c->denied;
		ret_counters->lost += c->lost;
		ret_counters->packet_dropped += c->packet_dropped;
		ret_counters->would_deny += c->would_deny;
		ret_counters->would_deny_lost += c->would_deny_lost;
		ret_counters->allowed += c->allowed;
		ret_counters->allowed_lost += c->allowed_lost;
	}
	sni_sum_counters(sb, ncpus, ret_counters);
}

int loader_sandbox_events_fd(const struct loader_sandbox *sb)
{
	return sb->inner_fd[IMAGE_MAP_EVENTS];
}

int loader_sandbox_close(struct loader_sandbox *sb)
{
	int r = 0;

	if (!sb->shared)
		return 0; /* loader_sandbox_new never ran: nothing is ours */
	if (sb->cgroup_id) {
		static const struct sandbox_cfg closed;

		/* The cgroup refuses everything from now on, whether or not rmdir follows. */
		r = settings_write(sb->shared, sb->cgroup_id, &closed);
		if (r == -ENOENT)
			r = 0;
	}
	/* Its maps stay in the slot, for the next sandbox to empty and fill. */
	if (sb->slot) {
		int c = loader_slot_disown(sb->shared, sb->slot);

		if (r == 0)
			r = c;
	}
	for (int m = 0; m < IMAGE_NMAPS; m++)
		if (sb->inner_fd[m] >= 0)
			close(sb->inner_fd[m]);
	/* Closing the file lets the slot go. */
	if (sb->slots_fd >= 0)
		close(sb->slots_fd);
	memset(sb, 0, sizeof(*sb));
	sb->slots_fd = -1;
	for (int m = 0; m < IMAGE_NMAPS; m++)
		sb->inner_fd[m] = -1;
	return r;
}
