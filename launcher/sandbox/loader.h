/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BPF programs: verified once per host and shared by every sandbox, and each sandbox's
 * own maps, slot and attachment (docs/design.md).
 */
#ifndef LAUNCH_LOADER_H
#define LAUNCH_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/launch.h"
#include "policy/image.h"

/* Where the BPF file system is mounted when the host has none, and sni_socks's pin there. */
#define LOADER_BPFFS	      "/sys/fs/bpf"
#define LOADER_SNI_PIN_PREFIX "launch-sni-socks-"

/* The shared programs, by the hook each is attached to. */
enum loader_prog {
	LOADER_CONNECT4,
	LOADER_CONNECT6,
	LOADER_SENDMSG4,
	LOADER_SENDMSG6,
	LOADER_RECVMSG4,
	LOADER_RECVMSG6,
	LOADER_GETPEERNAME4,
	LOADER_GETPEERNAME6,
	LOADER_CONNECT_UNIX, /* kernel 6.7+ */
	LOADER_SENDMSG_UNIX, /* kernel 6.7+ */
	LOADER_EGRESS,	     /* the packet-level backstop */
	LOADER_BIND4,
	LOADER_BIND6,
	LOADER_INGRESS,
	LOADER_SOCKOPS, /* the SNI check: marks connections, puts them in sni_socks */
	/* The SNI check's sk_msg: attached to the sni_socks map, not to a cgroup. */
	LOADER_TLS_MSG,
	LOADER_NPROGS,
};

/*
 * The shared maps the launcher writes: two of its own, then the maps-of-maps, indexed by
 * slot, one per kind of map a sandbox has (enum image_map, in image.h's order).
 */
enum loader_map {
	LOADER_MAP_CFGS,   /* cgroup storage: struct sandbox_cfg */
	LOADER_MAP_STATES, /* per-CPU cgroup storage: struct sandbox_counters */
	LOADER_MAP_SLOT_OWNER,
	LOADER_MAP_SNI_SOCKS,	 /* sockhash: connections whose first TLS record is awaited */
	LOADER_MAP_SNI_COUNTERS, /* per-CPU array by slot: struct sni_counters */
	LOADER_FIRST_OUTER,
	LOADER_NMAPS = LOADER_FIRST_OUTER + IMAGE_NMAPS,
};

struct loader_shared {
	int prog_fd[LOADER_NPROGS]; /* -1: not loaded (the unix ones before kernel 6.7) */
	int map_fd[LOADER_NMAPS];
	bool loaded_now; /* this launch loaded and verified them: the first since boot/upgrade */
	bool unix_hooks; /* the kernel has the AF_UNIX hooks */
};

/* Version of the BPF object, from its hash: programs of another build are never reused. */
const char *loader_version(void);

/*
 * Finds the shared programs attached to the holder cgroup <cgroup_parent>/.bpf-<version>;
 * the first launch after boot or upgrade loads (verifies) them and attaches them there, under
 * a lock that other launchers wait on. Nothing is pinned: the holder's attachment keeps the
 * programs alive, and rmdir of the holder (launch gc --unload) frees them. A failure the
 * loader can explain better than its errno (the kernel's BTF) leaves its reason, a whole
 * line without "launch: ", in errbuf (which may be NULL with errlen 0).
 */
int loader_shared_get(const char *cgroup_parent, struct loader_shared *ret, char *errbuf,
		      size_t errlen);
/* Sets every fd to -1, as loader_shared_close leaves it. */
void loader_shared_init(struct loader_shared *shared);
void loader_shared_close(struct loader_shared *shared);

struct rules;

/* What one sandbox holds: its slot, its maps, its configuration. */
struct loader_sandbox {
	const struct loader_shared *shared;
	uint32_t slot;		     /* 0: none held */
	int slots_fd;		     /* its lock on byte `slot` of the slots file holds the slot */
	uint64_t cgroup_id;	     /* 0: not attached */
	int inner_fd[IMAGE_NMAPS];   /* the sandbox's own maps; -1 for kinds it has none of */
	bool inner_new[IMAGE_NMAPS]; /* made by this sandbox: not in the slot yet */
	struct sandbox_cfg cfg;
	bool ingress_attached; /* loader_sandbox_attach_ingress has run */
};

#define LOADER_SANDBOX_INIT    \
	{                      \
		.slots_fd = -1 \
	}

/*
 * Takes a free slot and makes the sandbox's maps as the policy's image lays them out
 * (image_build over rules), filled. Call loader_sandbox_close whatever it returns.
 */
int loader_sandbox_new(const struct loader_shared *shared, const struct rules *rules,
		       bool dns_proxy, struct loader_sandbox *sb);
/*
 * Attaches the shared programs but launch_ingress to the (empty) cgroup, puts the sandbox's
 * maps at its slot and writes its configuration; from then on the cgroup is confined.
 * ret_failed names the hook that could not be attached.
 */
int loader_sandbox_attach(struct loader_sandbox *sb, int cgroup_fd, uint64_t cgroup_id,
			  const char **ret_failed);
/*
 * Attaches launch_ingress to the sandbox's cgroup, once; loader_sandbox_attach leaves it out.
 * It judges only packets to a listening TCP socket of the sandbox, and such a socket
 * listens only through the launcher (seccomp.c), which calls this first: a job that never
 * listens pays for no ingress program on any packet it receives.
 */
int loader_sandbox_attach_ingress(struct loader_sandbox *sb, int cgroup_fd);
/*
 * Replaces the policy of the attached sandbox with image's, atomically: its maps go to another
 * slot, then one write of the settings (a pointer swap in the kernel) moves every program over,
 * so that each call is judged by the old policy or by the new, never a mix. Returns once no
 * program can still be judging by the old one. On error the old policy stays in force, but
 * when only letting the old slot go failed (the update is in force then).
 */
int loader_sandbox_update(struct loader_sandbox *sb, const struct image *image);
/*
 * Every counter of the sandbox's kernel side, summed over the CPUs (one read of the per-CPU
 * map); zeros when unreadable. A caller that wants several counters reads them here once.
 */
void loader_sandbox_sum_counters(const struct loader_sandbox *sb,
				 struct sandbox_counters *ret_counters);
int loader_sandbox_events_fd(const struct loader_sandbox *sb);
/*
 * Closes the sandbox (its cgroup refuses everything from now on), empties its slot and
 * lets it go. Call before the cgroup is removed.
 */
int loader_sandbox_close(struct loader_sandbox *sb);

/*
 * Frees the maps of every slot no sandbox holds (slots keep theirs for the next sandbox; a
 * host that once ran many at once keeps all of them), after reclaiming those of killed
 * launchers. Returns how many slots had maps, or -errno.
 */
int loader_trim_idle_slots(const struct loader_shared *shared);

/*
 * Removes the holder cgroups of the shared programs under cgroup_parent (docs/design.md),
 * but the one of version `keep` (NULL: all of them). Returns how many.
 */
int loader_remove_holders(const char *cgroup_parent, const char *keep);

/* Whether the kernel has the AF_UNIX cgroup hooks (6.7+). */
bool loader_kernel_has_unix_hooks(void);

/* Lock files of the loader, in GC_LOCK_DIR; dot names, which the sweep passes over. */
#define LOADER_LOAD_LOCK  ".bpf-load.lock"
#define LOADER_SLOTS_FILE ".slots"
/* The holder cgroup's name: LOADER_HOLDER_PREFIX<version>. */
#define LOADER_HOLDER_PREFIX ".bpf-"

#endif /* LAUNCH_LOADER_H */
