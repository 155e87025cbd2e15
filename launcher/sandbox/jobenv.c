// SPDX-License-Identifier: LGPL-2.1-or-later
/* The job's environment: launch's own, or only what --pass-env and --setenv name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobenv.h"

int jobenv_add_set(struct jobenv *env, const char *assignment)
{
	const char *eq = strchr(assignment, '=');

	if (!eq || eq == assignment)
		return -EINVAL;
	if (env->nset == JOBENV_MAX)
		return -E2BIG;
	env->set[env->nset++] = assignment;
	return 0;
}

int jobenv_add_pass(struct jobenv *env, const char *name)
{
	if (!*name || strchr(name, '='))
		return -EINVAL;
	if (env->npass == JOBENV_MAX)
		return -E2BIG;
	env->pass[env->npass++] = name;
	return 0;
}

/* Length of the NAME part of "NAME=VALUE" (the whole string when it has no '='). */
static size_t name_len(const char *entry)
{
	return strcspn(entry, "=");
}

static bool same_name(const char *a, const char *b)
{
	size_t n = name_len(a);

	return n == name_len(b) && strncmp(a, b, n) == 0;
}

static bool passed(const struct jobenv *env, const char *entry)
{
	for (size_t i = 0; i < env->npass; i++)
		if (same_name(env->pass[i], entry))
			return true;
	return false;
}

int jobenv_build(const struct jobenv *env, char *const *from, char ***ret_envp)
{
	bool keep_all = !env->clear && env->npass == 0;
	size_t nfrom = 0, n = 0;
	char **envp;

	while (from && from[nfrom])
		nfrom++;
	envp = calloc(nfrom + env->nset + 1, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	for (size_t i = 0; i < nfrom; i++) {
		bool dup = false;

		if (!strchr(from[i], '=') || (!keep_all && !passed(env, from[i])))
			continue;
		/* As getenv: the first of two entries with one name is the one that counts. */
		for (size_t j = 0; j < n && !dup; j++)
			dup = same_name(envp[j], from[i]);
		if (!dup)
			envp[n++] = from[i];
	}
	for (size_t i = 0; i < env->nset; i++) {
		size_t j = 0;

		while (j < n && !same_name(envp[j], env->set[i]))
			j++;
		envp[j] = (char *)env->set[i];
		if (j == n)
			n++;
	}
	envp[n] = NULL;
	*ret_envp = envp;
	return 0;
}
