// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which cgroup hierarchy enforces each limit: cgroup v2, a v1 hierarchy, or none. */
#include <errno.h>

#include "sandbox/cgplan.h"
#include "test.h"

static enum cgplan_choice choose(enum cglimit_ctrl ctrl, bool v2, bool v1, bool limited,
				 bool required)
{
	struct cgplan_offer offer = {
		.v2_listed = v2, .v1_mounted = v1, .limited = limited, .required = required
	};

	return cgplan_choose(ctrl, &offer);
}

/* Every combination, against the rule written out the long way. */
static void test_cgplan_choose(void)
{
	for (int ctrl = 0; ctrl < CGLIMIT_NCTRLS; ctrl++)
		for (int bits = 0; bits < 16; bits++) {
			bool v2 = bits & 1, v1 = bits & 2, limited = bits & 4, required = bits & 8;
			enum cgplan_choice want;

			if (required && !limited)
				continue; /* a limit asked for is a limit */
			if (!limited && ctrl != CGLIMIT_CPU)
				want = CGPLAN_SKIP;
			else if (v2)
				want = CGPLAN_V2;
			else if (v1)
				want = CGPLAN_V1;
			else if (required)
				want = CGPLAN_REFUSE;
			else if (limited)
				want = CGPLAN_MISSING;
			else
				want = CGPLAN_SKIP;
			CHECK_EQ_INT(choose(ctrl, v2, v1, limited, required), want);
		}
	/* The cases that matter, by name. */
	CHECK_EQ_INT(choose(CGLIMIT_PIDS, true, false, true, true), CGPLAN_V2);	     /* pure v2 */
	CHECK_EQ_INT(choose(CGLIMIT_PIDS, false, true, true, true), CGPLAN_V1);	     /* this host */
	CHECK_EQ_INT(choose(CGLIMIT_PIDS, false, false, true, true), CGPLAN_REFUSE); /* 125 */
	CHECK_EQ_INT(choose(CGLIMIT_PIDS, false, false, true, false), CGPLAN_MISSING);
	CHECK_EQ_INT(choose(CGLIMIT_CPU, true, false, false, false), CGPLAN_V2); /* the group */
	CHECK_EQ_INT(choose(CGLIMIT_CPU, false, false, false, false), CGPLAN_SKIP);
	CHECK_EQ_INT(choose(CGLIMIT_MEMORY, true, true, false, false), CGPLAN_SKIP);
}

static void test_cgplan_v1_controllers(void)
{
	/* This host's: every controller on its own v1 hierarchy but hugetlb (v2). */
	static const char hybrid[] = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/a/b\n"
				     "2:cpuacct:/\n1:cpu:/\n0::/\n";
	/* Common elsewhere: cpu and cpuacct in one hierarchy, named "cpu,cpuacct". */
	static const char joined[] = "5:cpu,cpuacct:/user.slice\n3:memory,pids:/\n0::/x\n";
	char list[64];

	CHECK_EQ_INT(cgplan_v1_controllers(hybrid, CGLIMIT_PIDS, list, sizeof(list)), 0);
	CHECK_EQ_STR(list, "pids");
	CHECK_EQ_INT(cgplan_v1_controllers(hybrid, CGLIMIT_MEMORY, list, sizeof(list)), 0);
	CHECK_EQ_STR(list, "memory");
	/* "cpu", not "cpuacct" (listed first): whole names only. */
	CHECK_EQ_INT(cgplan_v1_controllers(hybrid, CGLIMIT_CPU, list, sizeof(list)), 0);
	CHECK_EQ_STR(list, "cpu");
	CHECK_EQ_INT(cgplan_v1_controllers(joined, CGLIMIT_CPU, list, sizeof(list)), 0);
	CHECK_EQ_STR(list, "cpu,cpuacct");
	CHECK_EQ_INT(cgplan_v1_controllers(joined, CGLIMIT_PIDS, list, sizeof(list)), 0);
	CHECK_EQ_STR(list, "memory,pids");
	/* Pure cgroup v2, a named hierarchy only, no file at all: none. */
	CHECK_EQ_INT(cgplan_v1_controllers("0::/user.slice\n", CGLIMIT_PIDS, list, sizeof(list)),
		     -ENOENT);
	CHECK_EQ_INT(
		cgplan_v1_controllers("1:name=systemd:/\n0::/", CGLIMIT_CPU, list, sizeof(list)),
		-ENOENT);
	CHECK_EQ_INT(cgplan_v1_controllers("", CGLIMIT_MEMORY, list, sizeof(list)), -ENOENT);
	/* A last line without its newline still counts; a short buffer is an error. */
	CHECK_EQ_INT(cgplan_v1_controllers("1:pids:/", CGLIMIT_PIDS, list, sizeof(list)), 0);
	CHECK_EQ_STR(list, "pids");
	CHECK_EQ_INT(cgplan_v1_controllers(joined, CGLIMIT_CPU, list, 5), -ENAMETOOLONG);
}

int main(void)
{
	RUN(test_cgplan_choose);
	RUN(test_cgplan_v1_controllers);
	return test_failures != 0;
}
