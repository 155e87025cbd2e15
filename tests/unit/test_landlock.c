// SPDX-License-Identifier: LGPL-2.1-or-later
/* Landlock rights by ABI version: what a ruleset handles, and what each kind of rule grants. */
#include <linux/landlock.h>

#include "test.h"

#include "sandbox/landlock.h"

#define RIGHT_TRUNCATE	(1ULL << 14)
#define RIGHT_IOCTL_DEV (1ULL << 15)

static void test_write_rights_by_abi(void)
{
	uint64_t v1 = landlock_write_rights(1);

	CHECK_EQ_INT(landlock_write_rights(0), 0);
	/* Never a read or execute right: reading stays open everywhere. */
	for (int abi = 1; abi <= 7; abi++)
		CHECK_EQ_INT(landlock_write_rights(abi) &
				     (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
				      LANDLOCK_ACCESS_FS_EXECUTE),
			     0);
	CHECK(v1 & LANDLOCK_ACCESS_FS_WRITE_FILE);
	CHECK(v1 & LANDLOCK_ACCESS_FS_MAKE_SYM);
	CHECK(v1 & LANDLOCK_ACCESS_FS_REMOVE_FILE);
	CHECK_EQ_INT(v1 & LANDLOCK_ACCESS_FS_REFER, 0);
	CHECK(landlock_write_rights(2) & LANDLOCK_ACCESS_FS_REFER);
	CHECK_EQ_INT(landlock_write_rights(2) & RIGHT_TRUNCATE, 0);
	CHECK(landlock_write_rights(3) & RIGHT_TRUNCATE);
	CHECK_EQ_INT(landlock_write_rights(4) & RIGHT_IOCTL_DEV, 0);
	CHECK(landlock_write_rights(5) & RIGHT_IOCTL_DEV);
	/* A later ABI handles nothing more for writes than 5 does. */
	CHECK_EQ_INT(landlock_write_rights(7), landlock_write_rights(5));
}

static void test_rule_rights(void)
{
	for (int abi = 1; abi <= 7; abi++) {
		uint64_t handled = landlock_write_rights(abi);
		uint64_t file = landlock_rule_rights(abi, LANDLOCK_TARGET_FILE);
		uint64_t device = landlock_rule_rights(abi, LANDLOCK_TARGET_DEVICE);
		uint64_t terminal = landlock_rule_rights(abi, LANDLOCK_TARGET_TERMINAL);

		/* A rule may only grant what the ruleset handles (else EINVAL). */
		CHECK_EQ_INT(landlock_rule_rights(abi, LANDLOCK_TARGET_DIR), handled);
		CHECK_EQ_INT(file & ~handled, 0);
		/* And on a file, only file rights (else EINVAL). */
		CHECK_EQ_INT(
			file & ~(LANDLOCK_ACCESS_FS_WRITE_FILE | RIGHT_TRUNCATE | RIGHT_IOCTL_DEV),
			0);
		CHECK(file & LANDLOCK_ACCESS_FS_WRITE_FILE);
		/* /dev/null takes writes but no ioctl; the terminal takes both. */
		CHECK(device & LANDLOCK_ACCESS_FS_WRITE_FILE);
		CHECK_EQ_INT(device & RIGHT_IOCTL_DEV, 0);
		CHECK_EQ_INT(terminal & ~file, 0);
		CHECK_EQ_INT(!!(terminal & RIGHT_IOCTL_DEV), abi >= 5);
	}
}

int main(void)
{
	RUN(test_write_rights_by_abi);
	RUN(test_rule_rights);
	return test_failures ? 1 : 0;
}
