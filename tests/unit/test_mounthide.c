// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which cgroup and BPF mounts init hides besides /sys/fs/cgroup's tree, from mountinfo. */
#include <errno.h>
#include <string.h>
#include <sys/mount.h>

#include "test.h"

#include "sandbox/mounthide.h"
#include "lib/util.h"

struct line {
	int id, parent_id;
	const char *mount_point, *fstype, *options;
};

/* Runs lines through a scan; the result's return value, the mounts in *ret (freed by caller). */
static int scan_lines(const struct line *lines, size_t n, struct mounthide_mount **ret,
		      size_t *ret_n)
{
	struct mounthide_scan *scan = mounthide_scan_new();
	int r = 0;

	CHECK(scan != NULL);
	for (size_t i = 0; i < n && r == 0; i++) {
		struct mount_entry m = { .id = lines[i].id, .parent_id = lines[i].parent_id };

		strcpy(m.mount_point, lines[i].mount_point);
		strcpy(m.fstype, lines[i].fstype);
		strcpy(m.options, lines[i].options ? lines[i].options : "rw");
		r = mounthide_scan_add(&m, scan);
	}
	if (r == 0)
		r = mounthide_scan_result(scan, ret, ret_n);
	mounthide_scan_free(scan);
	return r;
}

/* A hybrid host as this one: a tmpfs on /sys/fs/cgroup, v1 hierarchies and v2 below it. */
static const struct line HYBRID[] = {
	{ 20, 1, "/", "ext4", NULL },
	{ 21, 20, "/sys", "sysfs", NULL },
	{ 22, 21, "/sys/fs/cgroup", "tmpfs", "ro,nosuid,nodev,noexec" },
	{ 23, 22, "/sys/fs/cgroup/pids", "cgroup", "rw,nosuid,nodev,noexec" },
	{ 24, 22, "/sys/fs/cgroup/memory", "cgroup", "rw,nosuid,nodev,noexec" },
	{ 25, 22, "/sys/fs/cgroup/unified", "cgroup2", "rw,nosuid,nodev,noexec" },
	{ 26, 20, "/proc", "proc", NULL },
};

static void test_all_in_home(void)
{
	struct mounthide_mount *hide = NULL;
	size_t n = 99;

	CHECK_EQ_INT(scan_lines(HYBRID, ARRAY_SIZE(HYBRID), &hide, &n), 0);
	CHECK_EQ_INT(n, 0);
	mounthide_free(hide, n);
}

/* Outside the home's tree, in mountinfo's order, each with how the walk would hide it. */
static void test_outside_listed(void)
{
	struct line lines[ARRAY_SIZE(HYBRID) + 4];
	struct mounthide_mount *hide = NULL;
	size_t n = 0;

	memcpy(lines, HYBRID, sizeof(HYBRID));
	lines[ARRAY_SIZE(HYBRID)] = (struct line){ 30, 21, "/sys/fs/bpf", "bpf", "rw,nosuid" };
	lines[ARRAY_SIZE(HYBRID) + 1] =
		(struct line){ 31, 20, "/run/cg1", "cgroup", "rw,nosuid,noexec,relatime" };
	/* Mounted below the home before the tmpfs went over it: its parent is sysfs. */
	lines[ARRAY_SIZE(HYBRID) + 2] =
		(struct line){ 32, 21, "/sys/fs/cgroup/x", "cgroup2", "rw" };
	/* Its parent not listed (a mount point too long for mountinfo's reader): outside. */
	lines[ARRAY_SIZE(HYBRID) + 3] = (struct line){ 33, 99, "/mnt/deep", "bpf", "rw" };
	CHECK_EQ_INT(scan_lines(lines, ARRAY_SIZE(lines), &hide, &n), 0);
	CHECK_EQ_INT(n, 4);
	if (n == 4) {
		CHECK_EQ_STR(hide[0].mount_point, "/sys/fs/bpf");
		CHECK_EQ_INT(hide[0].how, MOUNTHIDE_DETACH);
		CHECK_EQ_STR(hide[1].mount_point, "/run/cg1");
		CHECK_EQ_INT(hide[1].how,
			     (long)(MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC));
		CHECK_EQ_STR(hide[2].mount_point, "/sys/fs/cgroup/x");
		CHECK_EQ_STR(hide[3].mount_point, "/mnt/deep");
	}
	mounthide_free(hide, n);
}

/* No mount on the home, or two stacked there: what its detach takes is not known. */
static void test_home_unknown(void)
{
	struct line none[] = {
		{ 20, 1, "/", "ext4", NULL },
		{ 21, 20, "/sys", "sysfs", NULL },
		{ 25, 21, "/sys/fs/cgroup/unified", "cgroup2", NULL },
	};
	struct line two[] = {
		{ 20, 1, "/", "ext4", NULL },
		{ 21, 20, "/sys", "sysfs", NULL },
		{ 22, 21, "/sys/fs/cgroup", "cgroup2", NULL },
		{ 23, 22, "/sys/fs/cgroup", "tmpfs", NULL },
	};
	struct mounthide_mount *hide = NULL;
	size_t n = 0;

	CHECK_EQ_INT(scan_lines(none, ARRAY_SIZE(none), &hide, &n), -ENOENT);
	CHECK_EQ_INT(scan_lines(two, ARRAY_SIZE(two), &hide, &n), -ENOENT);
}

/* Past the limits: no list. */
static void test_too_many(void)
{
	struct mounthide_scan *scan = mounthide_scan_new();
	struct mount_entry m = { .id = 1, .parent_id = 0, .fstype = "bpf", .options = "rw" };
	int r = 0, i;

	CHECK(scan != NULL);
	for (i = 0; i < 1000 && r == 0; i++) {
		m.id = i + 2;
		snprintf(m.mount_point, sizeof(m.mount_point), "/b%d", i);
		r = mounthide_scan_add(&m, scan);
	}
	CHECK_EQ_INT(r, -E2BIG);
	CHECK_EQ_INT(i, 65);
	mounthide_scan_free(scan);
}

int main(void)
{
	RUN(test_all_in_home);
	RUN(test_outside_listed);
	RUN(test_home_unknown);
	RUN(test_too_many);
	return test_failures ? 1 : 0;
}
