/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which cgroup and BPF mounts a sandbox's init must hide besides /sys/fs/cgroup's tree. */
#ifndef LAUNCH_MOUNTHIDE_H
#define LAUNCH_MOUNTHIDE_H

#include <stddef.h>

#include "lib/mountinfo.h"

/* Where the cgroup file systems live: init detaches the mount there, with all below it. */
#define MOUNTHIDE_HOME "/sys/fs/cgroup"
/* how: detached (bpf, cgroup2); otherwise the flags of a read-only bind remount (cgroup v1). */
#define MOUNTHIDE_DETACH 0L

struct mounthide_mount {
	char *mount_point;
	long how;
};

/*
 * How a mount is hidden from the job: MOUNTHIDE_DETACH, the flags of a read-only bind remount
 * (which must repeat the flags the kernel locks), or -1 for a mount that is neither cgroup nor
 * BPF.
 */
long mounthide_how(const struct mount_entry *mount);

struct mounthide_scan;
struct mounthide_scan *mounthide_scan_new(void);
void mounthide_scan_free(struct mounthide_scan *scan);
/* Takes one mount of mountinfo, in order (mountinfo_foreach's fn). -E2BIG past the limits. */
int mounthide_scan_add(const struct mount_entry *mount, void *scan);
/*
 * The cgroup and BPF mounts outside the tree of the one mount on MOUNTHIDE_HOME (parents
 * followed by mount id; a parent not listed is the end of the tree), in mountinfo's order: an
 * array the caller frees with mounthide_free. -ENOENT when MOUNTHIDE_HOME has no mount or
 * several: what would be detached there is not known.
 */
int mounthide_scan_result(struct mounthide_scan *scan, struct mounthide_mount **ret, size_t *ret_n);
void mounthide_free(struct mounthide_mount *mounts, size_t n);

#endif /* LAUNCH_MOUNTHIDE_H */
