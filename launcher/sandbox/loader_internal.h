/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loader's slots, shared by the programs' and sandboxes' side (loader.c) and the slots'
 * own (loader_slots.c); nothing else includes it.
 */
#ifndef LAUNCH_LOADER_INTERNAL_H
#define LAUNCH_LOADER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "loader.h"

/* The map-of-maps holding, at each slot, the sandboxes' maps of this kind. */
static inline int loader_outer_fd(const struct loader_shared *shared, enum image_map kind)
{
	return shared->map_fd[LOADER_FIRST_OUTER + kind];
}

/* One change to a map-of-maps: put inner_fd at slot, or delete the slot's map (-1). */
struct loader_slot_op {
	int outer_fd;
	enum image_map kind; /* which map-of-maps outer_fd is */
	__u32 slot;
	int inner_fd;
	int error;
};

/*
 * The slot's record in slot_owner (bpf/launch.h): its owner's cgroup id and the ids of the
 * maps in its place of each map-of-maps, read without a lookup in those. 0 or -errno.
 */
int loader_slot_record(const struct loader_shared *shared, uint32_t slot,
		       struct slot_owner_value *ret);
/* Sets the slot's owner (0: none), keeping its maps' ids. Under the slot's lock. 0 or -errno. */
int loader_slot_owner_set(const struct loader_shared *shared, uint32_t slot, __u64 cgroup_id);

/*
 * Takes the lowest free slot. A slot whose dead owner's cgroup cannot be emptied is passed
 * over; if that leaves none, its error is returned rather than -EUSERS, which means that
 * every slot is held by a live launcher (or by gc, for longer than it ever takes).
 */
int loader_slot_take(struct loader_sandbox *sb, uint32_t *ret_slot);
/*
 * The slot's map of one kind, emptied, with room for max_entries: each slot keeps its maps
 * for the sandboxes that take it later. Putting a new map into a map-of-maps costs a full
 * RCU grace period (milliseconds) in the kernel, so that happens only the first time a slot
 * is used, or when a sandbox needs a bigger map than the slot has.
 */
int loader_slot_map(struct loader_sandbox *sb, enum image_map kind, __u32 max_entries);
/* Puts the maps this sandbox made into its slot, all at once (loader_slot_ops_apply). */
int loader_slot_install(struct loader_sandbox *sb);
/*
 * Applies ops, and records each that took in its slot's record (loader_slot_record). Each
 * change to a map-of-maps waits for an RCU grace period in the kernel (5-10 ms here); from up
 * to 32 threads at once the waits overlap, and a batch costs about one. Returns the first
 * error, as -errno.
 */
int loader_slot_ops_apply(const struct loader_shared *shared, struct loader_slot_op *ops, size_t n);
/*
 * Takes the sandbox's ring buffer and DNS maps out of a slot it held besides its own, then
 * lets that slot go: the next sandbox there must make its own, never read or empty these.
 * While one cannot be taken out, the slot stays held (until the launcher ends).
 */
int loader_slot_release(struct loader_sandbox *sb, uint32_t slot);
/* Gives up a slot's ownership, at the sandbox's end: its ring takes no more events. */
int loader_slot_disown(const struct loader_shared *shared, uint32_t slot);

#endif /* LAUNCH_LOADER_INTERNAL_H */
