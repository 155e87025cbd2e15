// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The loader's slots: which sandbox holds which (a lock on a byte of the slots file), the maps
 * each slot keeps for the next sandbox, and the changes to the maps-of-maps that put them in
 * and take them out (docs/design.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/launch.h"
#include "cgroup.h"
#include "gc.h"
#include "loader_internal.h"
#include "lib/util.h"

/*
 * Makes a slot whose lock we hold fit for a new sandbox. If it is still owned, its launcher
 * died before giving it up; the programs judge a call by the slot in its cgroup's storage
 * alone, so nothing may be left running in that cgroup before the slot's maps change hands:
 * it is emptied (cgroup.kill) first. Then the slot is disowned. -errno when the old cgroup
 * could not be emptied: the slot must not be used.
 */
_Static_assert(IMAGE_NMAPS == SLOT_MAP_KINDS, "slot_owner records one map id per kind");
/* Room for any map's key, on the stack: the largest is the SNI map's. */
#define LOADER_MAX_KEY_SIZE sizeof(struct sni_key)
_Static_assert(sizeof(struct sni_key) >= sizeof(struct unix_path_key), "the largest key");

int loader_slot_record(const struct loader_shared *shared, uint32_t slot,
		       struct slot_owner_value *ret)
{
	if (bpf_map_lookup_elem(shared->map_fd[LOADER_MAP_SLOT_OWNER], &slot, ret) < 0)
		return -errno;
	return 0;
}

static int slot_record_set(const struct loader_shared *shared, uint32_t slot,
			   const struct slot_owner_value *value)
{
	if (bpf_map_update_elem(shared->map_fd[LOADER_MAP_SLOT_OWNER], &slot, value, BPF_ANY) < 0)
		return -errno;
	return 0;
}

int loader_slot_owner_set(const struct loader_shared *shared, uint32_t slot, __u64 cgroup_id)
{
	struct slot_owner_value value;
	int r = loader_slot_record(shared, slot, &value);

	if (r < 0)
		return r;
	value.cgroup_id = cgroup_id;
	return slot_record_set(shared, slot, &value);
}

static int slot_reclaim(const struct loader_shared *shared, uint32_t slot)
{
	struct slot_owner_value prev;
	int r = loader_slot_record(shared, slot, &prev);

	if (r < 0)
		return r;
	if (!prev.cgroup_id)
		return 0; /* given up properly: the usual case */
	r = cgroup_empty_by_id(prev.cgroup_id, 5000);
	if (r < 0)
		return r;
	return loader_slot_owner_set(shared, slot, 0);
}

/*
 * The slots file: a write lock on byte N (an open file description's lock, which goes when
 * the launcher dies, whatever) holds slot N.
 */
static int slots_open(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", GC_LOCK_DIR, LOADER_SLOTS_FILE);
	if (mkdir(GC_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

/* Takes (F_WRLCK) or lets go of (F_UNLCK) slot's byte, without waiting. */
static int slot_lock(int fd, uint32_t slot, short type)
{
	struct flock lock = { .l_type = type, .l_whence = SEEK_SET, .l_start = slot, .l_len = 1 };

	return fcntl(fd, F_OFD_SETLK, &lock) < 0 ? -errno : 0;
}

/*
 * How long a launch looks for a free slot when every one is busy: `launch gc` holds a batch
 * of idle slots for one round of map deletions (about one RCU grace period), never longer.
 */
#define SLOT_TAKE_PATIENCE_MS 3000
#define SLOT_TAKE_RETRY_US    5000

int loader_slot_take(struct loader_sandbox *sb, uint32_t *ret_slot)
{
	int reclaim_error = 0;

	if (sb->slots_fd < 0)
		sb->slots_fd = slots_open();
	if (sb->slots_fd < 0)
		return sb->slots_fd;
	for (int waited_us = 0;; waited_us += SLOT_TAKE_RETRY_US) {
		for (uint32_t slot = 1; slot < MAX_SANDBOXES; slot++) {
			int r;

			/*
			 * A lock of our own file description is granted again: the slot the
			 * sandbox holds (a second one is taken by an update) is no free slot,
			 * and its reclaim would empty the sandbox's own cgroup.
			 */
			if (slot == sb->slot)
				continue;
			r = slot_lock(sb->slots_fd, slot, F_WRLCK);

			if (r == -EAGAIN || r == -EACCES)
				continue;
			if (r < 0)
				return r;
			r = slot_reclaim(sb->shared, slot);
			if (r < 0) {
				reclaim_error = r;
				slot_lock(sb->slots_fd, slot, F_UNLCK);
				continue;
			}
			*ret_slot = slot;
			return 0;
		}
		if (reclaim_error)
			return reclaim_error;
		if (waited_us >= SLOT_TAKE_PATIENCE_MS * 1000)
			return -EUSERS;
		usleep(SLOT_TAKE_RETRY_US);
	}
}

int loader_slot_disown(const struct loader_shared *shared, uint32_t slot)
{
	return loader_slot_owner_set(shared, slot, 0);
}

/* Removes every entry of a hash map (a slot's map of an earlier sandbox). */
static int hash_clear(int fd, __u32 key_size, __u32 value_size)
{
	enum { BATCH = 256 };
	_cleanup_free_ char *keys = NULL, *values = NULL;
	char first[LOADER_MAX_KEY_SIZE];
	__u64 batch = 0;

	if (bpf_map_get_next_key(fd, NULL, first) < 0)
		return errno == ENOENT ? 0 : -errno; /* empty already: the usual case */
	keys = malloc((size_t)BATCH * key_size);
	values = malloc((size_t)BATCH * value_size);
	if (!keys || !values)
		return -ENOMEM;
	for (bool more = true; more;) {
		__u32 count = BATCH;
		int r = bpf_map_lookup_and_delete_batch(fd, batch ? &batch : NULL, &batch, keys,
							values, &count, NULL);

		if (r < 0 && errno != ENOENT)
			return -errno;
		more = r == 0;
	}
	return 0;
}

/* Whether a map has no entry; a trie is emptied by replacing it (no batch delete). */
static bool map_is_empty(int fd)
{
	char key[LOADER_MAX_KEY_SIZE];

	return bpf_map_get_next_key(fd, NULL, key) < 0 && errno == ENOENT;
}

int loader_slot_map(struct loader_sandbox *sb, enum image_map kind, __u32 max_entries)
{
	const struct image_map_spec *spec = &image_map_specs[kind];
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = spec->flags);
	struct slot_owner_value record;
	int fd = -1, r;
	__u32 id;

	/* The slot's record, not the map-of-maps: a lookup there costs a grace period (< 6.8). */
	r = loader_slot_record(sb->shared, sb->slot, &record);
	if (r < 0)
		return r;
	id = record.map_ids[kind];
	if (id) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		fd = bpf_map_get_fd_by_id(id);
		/* The id names the map put there (the record never outlives it), of this kind. */
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    info.type == spec->type && info.max_entries >= max_entries) {
			if (spec->type == BPF_MAP_TYPE_HASH)
				r = hash_clear(fd, spec->key_size, spec->value_size);
			else if (spec->type == BPF_MAP_TYPE_LPM_TRIE)
				r = map_is_empty(fd) ? 0 : -ENOTEMPTY;
			else
				r = 0; /* arrays are overwritten where used; ring buffers drained */
			if (r == 0) {
				sb->inner_fd[kind] = fd;
				return 0;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	fd = bpf_map_create(spec->type, spec->name, spec->key_size, spec->value_size, max_entries,
			    &opts);
	if (fd < 0)
		return -errno;
	/* Put into the slot by loader_slot_install, with the other new ones, once filled. */
	sb->inner_fd[kind] = fd;
	sb->inner_new[kind] = true;
	return 0;
}

struct slot_op_worker {
	pthread_t thread;
	struct loader_slot_op *ops;
	size_t n, first, step;
};

static void *slot_op_run(void *data)
{
	struct slot_op_worker *w = data;

	for (size_t i = w->first; i < w->n; i += w->step) {
		struct loader_slot_op *op = &w->ops[i];
		int r = op->inner_fd >= 0 ? bpf_map_update_elem(op->outer_fd, &op->slot,
								&op->inner_fd, BPF_ANY)
					  : bpf_map_delete_elem(op->outer_fd, &op->slot);

		if (r < 0 && !(op->inner_fd < 0 && errno == ENOENT))
			op->error = errno;
	}
	return NULL;
}

/* Writes what the ops that took changed into their slots' records. */
static int slot_ops_record(const struct loader_shared *shared, const struct loader_slot_op *ops,
			   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct slot_owner_value value;
		bool seen = false;
		int r;

		/* Each slot once, at its first op. */
		for (size_t j = 0; j < i && !seen; j++)
			seen = ops[j].slot == ops[i].slot;
		if (seen)
			continue;
		r = loader_slot_record(shared, ops[i].slot, &value);
		if (r < 0)
			return r;
		for (size_t j = i; j < n; j++) {
			struct bpf_map_info info = { 0 };
			__u32 len = sizeof(info);

			if (ops[j].slot != ops[i].slot || ops[j].error)
				continue;
			if (ops[j].inner_fd < 0)
				value.map_ids[ops[j].kind] = 0;
			else if (bpf_obj_get_info_by_fd(ops[j].inner_fd, &info, &len) == 0)
				value.map_ids[ops[j].kind] = info.id;
			else
				return -errno;
		}
		r = slot_record_set(shared, ops[i].slot, &value);
		if (r < 0)
			return r;
	}
	return 0;
}

int loader_slot_ops_apply(const struct loader_shared *shared, struct loader_slot_op *ops, size_t n)
{
	enum { SLOT_OP_THREADS = 32 };
	struct slot_op_worker workers[SLOT_OP_THREADS];
	bool started[SLOT_OP_THREADS] = { false };
	size_t nworkers = n < SLOT_OP_THREADS ? n : SLOT_OP_THREADS;
	int r;

	/* All but the first on threads of their own, the first on this one. */
	for (size_t t = 0; t < nworkers; t++) {
		workers[t] =
			(struct slot_op_worker){ .ops = ops, .n = n, .first = t, .step = nworkers };
		started[t] = t > 0 && pthread_create(&workers[t].thread, NULL, slot_op_run,
						     &workers[t]) == 0;
	}
	for (size_t t = 0; t < nworkers; t++)
		if (!started[t])
			slot_op_run(&workers[t]);
	for (size_t t = 0; t < nworkers; t++)
		if (started[t])
			pthread_join(workers[t].thread, NULL);
	r = slot_ops_record(shared, ops, n);
	for (size_t i = 0; i < n; i++)
		if (ops[i].error)
			return -ops[i].error;
	return r;
}

int loader_slot_install(struct loader_sandbox *sb)
{
	struct loader_slot_op ops[IMAGE_NMAPS];
	size_t n = 0;

	for (int m = 0; m < IMAGE_NMAPS; m++)
		if (sb->inner_new[m])
			ops[n++] =
				(struct loader_slot_op){ .outer_fd = loader_outer_fd(sb->shared, m),
							 .kind = m,
							 .slot = sb->slot,
							 .inner_fd = sb->inner_fd[m] };
	for (int m = 0; m < IMAGE_NMAPS; m++)
		sb->inner_new[m] = false;
	return loader_slot_ops_apply(sb->shared, ops, n);
}

int loader_slot_release(struct loader_sandbox *sb, uint32_t slot)
{
	struct loader_slot_op ops[IMAGE_NMAPS];
	size_t n = 0;
	int r;

	for (int m = 0; m < IMAGE_NMAPS; m++)
		if (image_map_specs[m].runtime && sb->inner_fd[m] >= 0)
			ops[n++] =
				(struct loader_slot_op){ .outer_fd = loader_outer_fd(sb->shared, m),
							 .kind = m,
							 .slot = slot,
							 .inner_fd = -1 };
	r = loader_slot_ops_apply(sb->shared, ops, n);
	if (r < 0)
		return r;
	loader_slot_disown(sb->shared, slot);
	slot_lock(sb->slots_fd, slot, F_UNLCK);
	return 0;
}

/*
 * Slots `launch gc` holds at once while it frees their maps: one round of deletions from
 * loader_slot_ops_apply's threads, after which they are free again. Launches meanwhile take others.
 */
#define TRIM_BATCH_SLOTS 32

/* Frees the maps of the held slots (loader_slot_ops_apply); returns how many had a ring buffer. */
static int trim_slots(const struct loader_shared *shared, const __u32 *slots, size_t nslots)
{
	struct loader_slot_op ops[TRIM_BATCH_SLOTS * IMAGE_NMAPS];
	size_t n = 0;
	int r, trimmed = 0;

	for (size_t i = 0; i < nslots; i++) {
		struct slot_owner_value record;

		r = loader_slot_record(shared, slots[i], &record);
		if (r < 0)
			return r;
		for (int m = 0; m < IMAGE_NMAPS; m++) {
			if (loader_outer_fd(shared, m) < 0 || !record.map_ids[m])
				continue;
			ops[n++] = (struct loader_slot_op){ .outer_fd = loader_outer_fd(shared, m),
							    .kind = m,
							    .slot = slots[i],
							    .inner_fd = -1 };
			/* Every slot ever used has a ring buffer: those are counted. */
			trimmed += m == IMAGE_MAP_EVENTS;
		}
	}
	r = loader_slot_ops_apply(shared, ops, n);
	return r < 0 ? r : trimmed;
}

int loader_trim_idle_slots(const struct loader_shared *shared)
{
	_cleanup_close_ int fd = slots_open();
	__u32 held[TRIM_BATCH_SLOTS];
	int trimmed = 0, first_error = 0;
	uint32_t slot = 1;

	if (fd < 0)
		return fd;
	/*
	 * A batch of idle slots at a time, each held (locked) by us while its maps go, so that
	 * none is taken under us; a launch meanwhile takes another slot, or waits briefly.
	 */
	while (slot < MAX_SANDBOXES) {
		size_t nheld = 0;
		int r;

		for (; slot < MAX_SANDBOXES && nheld < TRIM_BATCH_SLOTS; slot++) {
			if (slot_lock(fd, slot, F_WRLCK) < 0)
				continue;
			if (slot_reclaim(shared, slot) == 0)
				held[nheld++] = slot;
			else
				slot_lock(fd, slot, F_UNLCK);
		}
		r = trim_slots(shared, held, nheld);
		if (r < 0 && !first_error)
			first_error = r;
		trimmed += r > 0 ? r : 0;
		for (size_t i = 0; i < nheld; i++)
			slot_lock(fd, held[i], F_UNLCK);
	}
	return first_error ? first_error : trimmed;
}
