/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock: the job writes only below the paths it is given; reading and executing stay open. */
#ifndef LAUNCH_LANDLOCK_H
#define LAUNCH_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The kernel's Landlock ABI version (1 for 5.13, 2 REFER, 3 TRUNCATE, 5 IOCTL_DEV), or
 * -EOPNOTSUPP (built in but off at boot) or -ENOSYS (not built) when there is none.
 */
int landlock_abi_probe(void);
/* The write rights an ABI version can restrict: every one the ruleset handles. */
uint64_t landlock_write_rights(int abi);
/* What a rule is on. */
enum landlock_target {
	LANDLOCK_TARGET_DIR,	  /* every write right below it */
	LANDLOCK_TARGET_FILE,	  /* a file listed to write: what a file takes, ioctls too */
	LANDLOCK_TARGET_DEVICE,	  /* /dev/null and friends: write and truncate, no ioctl */
	LANDLOCK_TARGET_TERMINAL, /* /dev/tty, /dev/pts: write, and the terminal's ioctls */
};
/* The rights a rule on `target` gives, as far as the ABI can tell them apart. */
uint64_t landlock_rule_rights(int abi, enum landlock_target target);
/*
 * An empty ruleset that handles every write right the ABI knows: with no rule added, every
 * write is refused. Returns its descriptor (close-on-exec) or a negative errno.
 */
int landlock_ruleset_new(int abi);
/*
 * Adds the working directory (opened as ".", with cwd) and the character devices every
 * program writes to (/dev/null, the terminal; those this host lacks are passed over). 0, or
 * a negative errno with the path at fault in *ret_failed.
 */
int landlock_allow_cwd_and_devices(int ruleset_fd, int abi, bool cwd, const char **ret_failed);
/*
 * Adds every write right below each of `paths` (NULL-terminated; each must exist; a file
 * gets what a file can take). 0, or a negative errno with the path at fault in *ret_failed.
 */
int landlock_allow_paths(int ruleset_fd, int abi, const char *const *paths,
			 const char **ret_failed);
/* Confines the calling thread, and everything it starts, to the ruleset (no_new_privs set). */
int landlock_restrict(int ruleset_fd);

#endif /* LAUNCH_LANDLOCK_H */
