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
 * Makes a ruleset in which every write right is refused except below `write` (a
 * NULL-terminated list of paths, which must exist; with write0_is_cwd the first is the working
 * directory, opened as ".") and on the character devices every program writes to (/dev/null,
 * the terminal). Returns the ruleset's descriptor (close-on-exec), or a negative errno with
 * the path at fault in *ret_failed.
 */
int landlock_ruleset_new(int abi, const char *const *write, bool write0_is_cwd,
			 const char **ret_failed);
/* Confines the calling thread, and everything it starts, to the ruleset (no_new_privs set). */
int landlock_restrict(int ruleset_fd);

#endif /* LAUNCH_LANDLOCK_H */
