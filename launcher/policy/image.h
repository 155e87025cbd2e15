/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy's kernel image: from compiled rules to one sandbox's settings and the entries of
 * every map it holds at its slot, with every map's spec from one table, and the programs'
 * decisions over that image. Pure: loader.c makes and fills the kernel objects it describes.
 */
#ifndef LAUNCH_IMAGE_H
#define LAUNCH_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <netinet/in.h>

#include "bpf/launch.h"
#include "lib/util.h"

struct rules;

/*
 * The maps a sandbox has of its own, each at its slot of the map-of-maps of the same kind.
 * The order is the order the loader makes them in: the ring buffer first.
 */
enum image_map {
	IMAGE_MAP_EVENTS,	     /* its ring buffer of refusals */
	IMAGE_MAP_ALLOW_EXACT,	     /* exact addresses, beyond MAX_INLINE_EXACT */
	IMAGE_MAP_ALLOW_PREFIX,	     /* prefixes of too many lengths: the LPM trie */
	IMAGE_MAP_ALLOW_PREFIX_HASH, /* prefixes of few lengths: one hash lookup per length */
	IMAGE_MAP_PORT_SETS,	     /* the port sets the entries above point at */
	IMAGE_MAP_DNS_ALLOW,	     /* addresses the DNS proxy's answers opened */
	IMAGE_MAP_DNS_PORT_SETS,     /* their port sets */
	IMAGE_MAP_UNIX_ALLOW,	     /* AF_UNIX paths and abstract names */
	IMAGE_MAP_SNI,		     /* SNI-checked addresses and ports, and their names */
	IMAGE_MAP_DNS_SNI,	     /* the same, for names the DNS proxy's answers opened */
	IMAGE_NMAPS,
};

/*
 * How one kind of map is made. The BPF side's inner template (allowlist.bpf.h, dns.bpf.h,
 * unix.bpf.c, common.bpf.h) must agree in type, sizes and flags: the kernel refuses to put
 * a map of another spec into the map-of-maps.
 */
struct image_map_spec {
	const char *outer_name; /* the map-of-maps in the BPF object, as the kernel names it */
	const char *name;	/* the sandbox's own map (the kernel keeps 15 characters) */
	enum bpf_map_type type;
	__u32 key_size;
	__u32 value_size;
	__u32 flags;
	__u32 fixed_entries; /* max_entries when fixed; 0: sized to the policy */
	/*
	 * The running sandbox's, not the policy's (its ring buffer, the addresses its DNS
	 * answers opened): a policy update keeps the map it has.
	 */
	bool runtime;
};

extern const struct image_map_spec image_map_specs[IMAGE_NMAPS];

/*
 * One map of the sandbox: whether it has one, the room to make it with, and the entries,
 * keys and values in two arrays of the spec's sizes. Keys of hash and trie maps are in
 * memcmp order and distinct; an array's keys are 0..n-1.
 */
struct image_entries {
	bool present;
	__u32 max_entries;
	size_t n;
	void *keys;
	void *values;
};

/*
 * Everything a sandbox's policy puts into the kernel. cfg is whole but for what only the
 * running sandbox knows: its cgroup id and slot (loader.c), and where its DNS proxy listens
 * with CFG_DNS_PROXY (dnsbpf.c).
 */
struct image {
	struct sandbox_cfg cfg;
	struct image_entries maps[IMAGE_NMAPS];
};

/*
 * Prefix expansion may make up to this many times the policy's prefixes, and at least
 * IMAGE_EXPAND_MIN_ENTRIES, to save lengths (allowlist_expand_prefixes).
 */
#define IMAGE_EXPAND_FACTOR	 4
#define IMAGE_EXPAND_MIN_ENTRIES 4096
/* Hash and trie maps are made at least this big, in powers of two, for the slot's reuse. */
#define IMAGE_MIN_HASH_ENTRIES 64

/*
 * Lays out the compiled rules (rules->list, unix_allows, listen); with dns_proxy the sandbox
 * gets the DNS proxy's (empty) maps. Returns 0, -ENOMEM, or -E2BIG when the rules exceed a
 * limit of launch.h (rules_compile checks them all first).
 */
int image_build(const struct rules *rules, bool dns_proxy, struct image **ret_image);
void image_free(struct image *image);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct image *, image_free)

/* The value of key in one map of the image, as bpf_map_lookup_elem finds it; NULL if none. */
const void *image_lookup(const struct image *image, enum image_map kind, const void *key);

/*
 * The programs' decisions over the image, read the way they read the settings and the maps.
 * image_decide is allowlist.bpf.h's allowlist_allows (connect, sendmsg and the packet
 * backstop), for dst in the IPv4-mapped form and proto PROTO_TCP or PROTO_UDP; the DNS
 * proxy's addresses come on top of it at run time.
 */
bool image_decide(const struct image *image, const struct in6_addr *dst, uint16_t port,
		  unsigned int proto);
/* unix.bpf.c: whether the job may connect or send to an AF_UNIX address, keyed as there. */
bool image_decide_unix(const struct image *image, const struct unix_path_key *key);
/*
 * tls.bpf.c: the SNI marker of an address and TCP port (SNI_MARK, SNI_MARK_UDP; 0: not
 * SNI-checked), and whether a server name (lower case, no trailing dot) is allowed there.
 * The DNS proxy's names come on top of them at run time.
 */
unsigned int image_sni_mark(const struct image *image, const struct in6_addr *dst, uint16_t port);
bool image_sni_allows(const struct image *image, const struct in6_addr *dst, uint16_t port,
		      const char *name);
/* The SNI map's key of an address, port and name (NULL: the marker's). */
void image_sni_key(struct sni_key *key, const struct in6_addr *dst, uint16_t port,
		   const char *name);
/* inbound.bpf.c: whether a port is a "listen" one, open to peers outside the sandbox. */
bool image_decide_listen(const struct image *image, uint16_t port, unsigned int proto);

#endif /* LAUNCH_IMAGE_H */
