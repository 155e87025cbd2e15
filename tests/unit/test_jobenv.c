// SPDX-License-Identifier: LGPL-2.1-or-later
/* The job's environment: --clearenv, --setenv and --pass-env over launch's own. */
#include <errno.h>
#include <stdlib.h>

#include "sandbox/jobenv.h"
#include "test.h"

static char *FROM[] = { "PATH=/usr/bin", "HOME=/root", "SECRET=s3cr3t", "EMPTY=", "PATH=/second",
			"NOEQUALS",	 NULL };

/* The built environment, joined with '|'. */
static const char *joined(const struct jobenv *env)
{
	static char buf[1024];
	char **envp = NULL;
	size_t used = 0;

	buf[0] = '\0';
	CHECK_EQ_INT(jobenv_build(env, FROM, &envp), 0);
	for (char **e = envp; e && *e; e++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? "|" : "",
					 *e);
	free(envp);
	return buf;
}

static void test_jobenv_default_keeps_all(void)
{
	struct jobenv env = { 0 };

	/* As getenv: the first PATH counts; entries without '=' are no variables. */
	CHECK_EQ_STR(joined(&env), "PATH=/usr/bin|HOME=/root|SECRET=s3cr3t|EMPTY=");
}

static void test_jobenv_clear(void)
{
	struct jobenv env = { .clear = true };

	CHECK_EQ_STR(joined(&env), "");
	CHECK_EQ_INT(jobenv_add_set(&env, "A=1"), 0);
	CHECK_EQ_INT(jobenv_add_set(&env, "B=x=y"), 0);
	CHECK_EQ_INT(jobenv_add_set(&env, "A=2"), 0);
	CHECK_EQ_STR(joined(&env), "A=2|B=x=y");
}

static void test_jobenv_pass_only_named(void)
{
	struct jobenv env = { 0 };

	CHECK_EQ_INT(jobenv_add_pass(&env, "HOME"), 0);
	CHECK_EQ_INT(jobenv_add_pass(&env, "EMPTY"), 0);
	CHECK_EQ_INT(jobenv_add_pass(&env, "UNSET"), 0);
	CHECK_EQ_STR(joined(&env), "HOME=/root|EMPTY=");
	/* --setenv wins over a passed variable of the same name. */
	CHECK_EQ_INT(jobenv_add_set(&env, "HOME=/tmp"), 0);
	CHECK_EQ_STR(joined(&env), "HOME=/tmp|EMPTY=");
	/* A passed name matches whole names only. */
	env = (struct jobenv){ 0 };
	CHECK_EQ_INT(jobenv_add_pass(&env, "PAT"), 0);
	CHECK_EQ_STR(joined(&env), "");
}

static void test_jobenv_set_without_clear(void)
{
	struct jobenv env = { 0 };

	CHECK_EQ_INT(jobenv_add_set(&env, "SECRET=replaced"), 0);
	CHECK_EQ_INT(jobenv_add_set(&env, "NEW=1"), 0);
	CHECK_EQ_STR(joined(&env), "PATH=/usr/bin|HOME=/root|SECRET=replaced|EMPTY=|NEW=1");
}

static void test_jobenv_bad_input(void)
{
	struct jobenv env = { 0 };

	CHECK_EQ_INT(jobenv_add_set(&env, "NOVALUE"), -EINVAL);
	CHECK_EQ_INT(jobenv_add_set(&env, "=x"), -EINVAL);
	CHECK_EQ_INT(jobenv_add_set(&env, ""), -EINVAL);
	CHECK_EQ_INT(jobenv_add_pass(&env, ""), -EINVAL);
	CHECK_EQ_INT(jobenv_add_pass(&env, "A=B"), -EINVAL);
	for (int i = 0; i < JOBENV_MAX; i++)
		CHECK_EQ_INT(jobenv_add_pass(&env, "X"), 0);
	CHECK_EQ_INT(jobenv_add_pass(&env, "X"), -E2BIG);
}

int main(void)
{
	RUN(test_jobenv_default_keeps_all);
	RUN(test_jobenv_clear);
	RUN(test_jobenv_pass_only_named);
	RUN(test_jobenv_set_without_clear);
	RUN(test_jobenv_bad_input);
	return test_failures != 0;
}
