// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests for childmsg.c: the job's configuration as it travels from the launcher to
 * launch-init, whole and sealed, and refused when it is not what child_config_write made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "sandbox/childmsg.h"

static const struct child_config *sample(void)
{
	static char *argv[] = { "/bin/sh", "-c", "echo \"a b\"", NULL };
	static char *envp[] = { "PATH=/usr/bin:/bin", "EMPTY=", NULL };
	static const char *fs_write[] = { "/work", "/tmp", "/dev/shm", NULL };
	static struct child_config config;

	config = (struct child_config){
		.argv = argv,
		.envp = envp,
		.set_user = true,
		.uid = 65534,
		.gid = 65534,
		.user_name = "nobody",
		.audit_path = "/var/log/launch/audit.jsonl",
		.fs_write = fs_write,
		.fs_write_cwd = true,
		.landlock_abi = 6,
		.tmp_size_bytes = 123456789ULL,
		.cgroup_fd = 7,
		.mounts_fd = 9,
		.ngroups = 2,
	};
	config.groups[0] = 65534;
	config.groups[1] = 27;
	return &config;
}

static void check_list(char *const *got, char *const *want)
{
	size_t i = 0;

	CHECK(got != NULL);
	if (!got)
		return;
	for (; want[i]; i++)
		CHECK(got[i] && strcmp(got[i], want[i]) == 0);
	CHECK(got[i] == NULL);
}

/* Everything init needs comes back as it went; the launcher's descriptors do not. */
static void test_round_trip(void)
{
	const struct child_config *in = sample();
	struct child_config out;
	int fd = -1;

	CHECK_EQ_INT(child_config_write(in, &fd), 0);
	CHECK(fd >= 0);
	CHECK_EQ_INT(child_config_read(fd, &out), 0);
	check_list(out.argv, in->argv);
	check_list(out.envp, in->envp);
	check_list((char *const *)out.fs_write, (char *const *)in->fs_write);
	CHECK(out.set_user && out.uid == 65534 && out.gid == 65534);
	CHECK_EQ_STR(out.user_name, "nobody");
	CHECK_EQ_STR(out.audit_path, "/var/log/launch/audit.jsonl");
	CHECK(out.fs_write_cwd);
	CHECK_EQ_INT(out.landlock_abi, 6);
	CHECK(out.tmp_size_bytes == 123456789ULL);
	CHECK_EQ_INT(out.ngroups, 2);
	CHECK(out.groups[0] == 65534 && out.groups[1] == 27);
	CHECK_EQ_INT(out.cgroup_fd, -1);
	CHECK_EQ_INT(out.mounts_fd, -1);
	/* Sealed: nothing can change it after the launcher wrote it. */
	CHECK(write(fd, "x", 1) < 0);
	child_config_free(&out);
	close(fd);
}

/* No fs list ("read_only" false) stays no list, not an empty one; NULL strings stay NULL. */
static void test_no_list_no_strings(void)
{
	struct child_config in = *sample(), out;
	int fd = -1;

	in.fs_write = NULL;
	in.fs_write_cwd = false;
	in.user_name = NULL;
	in.audit_path = NULL;
	in.ngroups = 0;
	CHECK_EQ_INT(child_config_write(&in, &fd), 0);
	CHECK_EQ_INT(child_config_read(fd, &out), 0);
	CHECK(out.fs_write == NULL);
	CHECK(out.user_name == NULL && out.audit_path == NULL);
	CHECK_EQ_INT(out.ngroups, 0);
	child_config_free(&out);
	close(fd);
}

/* A memfd the launcher did not make: unsealed, or one byte more, or one less. */
static void test_refused(void)
{
	const struct child_config *in = sample();
	struct child_config out;
	char buf[65536];
	ssize_t n;
	int fd = -1, copy;

	CHECK_EQ_INT(child_config_write(in, &fd), 0);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	CHECK(n > 0);
	close(fd);

	/* The same bytes, unsealed. */
	copy = memfd_create("copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(copy >= 0 && write(copy, buf, (size_t)n) == n);
	CHECK_EQ_INT(child_config_read(copy, &out), -EBADMSG);
	close(copy);

	/* Sealed, but a byte short, or with a byte after the last string. */
	for (int extra = -1; extra <= 1; extra += 2) {
		copy = memfd_create("copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		buf[n] = 'x';
		CHECK(copy >= 0 && write(copy, buf, (size_t)(n + extra)) == n + extra);
		CHECK(fcntl(copy, F_ADD_SEALS,
			    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0);
		CHECK_EQ_INT(child_config_read(copy, &out), -EBADMSG);
		close(copy);
	}
}

/* What launch-init checks its first argument against: the same in both, and not empty. */
static void test_protocol(void)
{
	CHECK(child_protocol()[0] != '\0');
	CHECK(strchr(child_protocol(), '.') != NULL);
	CHECK(strcmp(child_protocol(), child_protocol()) == 0);
}

int main(void)
{
	RUN(test_round_trip);
	RUN(test_no_list_no_strings);
	RUN(test_refused);
	RUN(test_protocol);
	return test_failures != 0;
}
