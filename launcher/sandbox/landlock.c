// SPDX-License-Identifier: LGPL-2.1-or-later
/* Landlock: the job writes only below the paths it is given; reading and executing stay open. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#include "landlock.h"
#include "lib/util.h"

/* Newer than the build host's headers, fixed by the kernel's ABI. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* The rights a rule on a file (not a folder) may carry; the others are refused with EINVAL. */
#define LANDLOCK_FILE_RIGHTS \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * Character devices that every program may write to. The terminal's also take ioctls (a shell
 * sets its modes); no other device does unless a policy lists it, since a device's ioctls are
 * its own attack surface (KVM, GPUs). Block devices are never writable: uid 0 owns the disks.
 */
static const struct {
	const char *path;
	enum landlock_target target;
} LANDLOCK_DEVICES[] = {
	{ "/dev/null", LANDLOCK_TARGET_DEVICE },    { "/dev/zero", LANDLOCK_TARGET_DEVICE },
	{ "/dev/full", LANDLOCK_TARGET_DEVICE },    { "/dev/random", LANDLOCK_TARGET_DEVICE },
	{ "/dev/urandom", LANDLOCK_TARGET_DEVICE }, { "/dev/tty", LANDLOCK_TARGET_TERMINAL },
	{ "/dev/ptmx", LANDLOCK_TARGET_TERMINAL },  { "/dev/pts", LANDLOCK_TARGET_TERMINAL },
};

int landlock_abi_probe(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

uint64_t landlock_write_rights(int abi)
{
	uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
			  LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
			  LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
			  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
			  LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi < 1)
		return 0;
	/* Without REFER (ABI 1) the kernel refuses every rename or link across folders. */
	if (abi >= 2)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	/* Before ABI 3 truncate(2) and O_TRUNC cannot be refused: a known gap of old kernels. */
	if (abi >= 3)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return rights;
}

uint64_t landlock_rule_rights(int abi, enum landlock_target target)
{
	uint64_t rights = landlock_write_rights(abi);

	switch (target) {
	case LANDLOCK_TARGET_DIR:
		return rights;
	case LANDLOCK_TARGET_FILE:
		return rights & LANDLOCK_FILE_RIGHTS;
	case LANDLOCK_TARGET_TERMINAL:
		/* Devices (/dev/pts too is a folder of them): nothing is made or removed there. */
		return rights & LANDLOCK_FILE_RIGHTS;
	case LANDLOCK_TARGET_DEVICE:
	default:
		return rights & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
	}
}

static int landlock_allow(int ruleset_fd, int abi, const char *path, enum landlock_target target)
{
	struct landlock_path_beneath_attr rule = { 0 };
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (target == LANDLOCK_TARGET_DIR && !S_ISDIR(st.st_mode))
		target = LANDLOCK_TARGET_FILE;
	rule.parent_fd = fd;
	rule.allowed_access = landlock_rule_rights(abi, target);
	if (syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
		return -errno;
	return 0;
}

int landlock_ruleset_new(int abi)
{
	/* Only the fields every ABI knows: the kernel takes a shorter struct as "the rest 0". */
	struct landlock_ruleset_attr attr = { .handled_access_fs = landlock_write_rights(abi) };
	int ruleset_fd;

	if (abi < 1)
		return -EOPNOTSUPP;
	ruleset_fd = (int)syscall(SYS_landlock_create_ruleset, &attr,
				  offsetof(struct landlock_ruleset_attr, handled_access_fs) +
					  sizeof(attr.handled_access_fs),
				  0);
	return ruleset_fd < 0 ? -errno : ruleset_fd;
}

int landlock_allow_cwd_and_devices(int ruleset_fd, int abi, bool cwd, const char **ret_failed)
{
	int r;

	*ret_failed = NULL;
	if (cwd) {
		r = landlock_allow(ruleset_fd, abi, ".", LANDLOCK_TARGET_DIR);
		if (r < 0) {
			*ret_failed = ".";
			return r;
		}
	}
	/* Missing on this host (no /dev/full in a minimal /dev): nothing to open there then. */
	for (size_t i = 0; i < ARRAY_SIZE(LANDLOCK_DEVICES); i++) {
		r = landlock_allow(ruleset_fd, abi, LANDLOCK_DEVICES[i].path,
				   LANDLOCK_DEVICES[i].target);
		if (r < 0 && r != -ENOENT) {
			*ret_failed = LANDLOCK_DEVICES[i].path;
			return r;
		}
	}
	return 0;
}

int landlock_allow_paths(int ruleset_fd, int abi, const char *const *paths, const char **ret_failed)
{
	*ret_failed = NULL;
	for (size_t i = 0; paths[i]; i++) {
		int r = landlock_allow(ruleset_fd, abi, paths[i], LANDLOCK_TARGET_DIR);

		if (r < 0) {
			*ret_failed = paths[i];
			return r;
		}
	}
	return 0;
}

int landlock_restrict(int ruleset_fd)
{
	return syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0 ? -errno : 0;
}
