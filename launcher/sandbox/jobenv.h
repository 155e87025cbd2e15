/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's environment: launch's own, or only what --pass-env and --setenv name. */
#ifndef LAUNCH_JOBENV_H
#define LAUNCH_JOBENV_H

#include <stdbool.h>
#include <stddef.h>

#define JOBENV_MAX 256

struct jobenv {
	bool clear;		     /* --clearenv */
	const char *set[JOBENV_MAX]; /* --setenv NAME=VALUE, in order: the last one wins */
	size_t nset;
	const char *pass[JOBENV_MAX]; /* --pass-env NAME */
	size_t npass;
};

/* -EINVAL when the text is not NAME=VALUE (NAME = one or more bytes, none of them '='). */
int jobenv_add_set(struct jobenv *env, const char *assignment);
/* -EINVAL when name is empty or has a '='. */
int jobenv_add_pass(struct jobenv *env, const char *name);

/*
 * The job's environment from launch's (a NULL-terminated "NAME=VALUE" array): all of it
 * unless --clearenv or --pass-env was given, then only the passed names that are set; then
 * every --setenv, replacing a variable of that name. The array is one allocation (free it);
 * its strings point into `from` and env. -ENOMEM.
 */
int jobenv_build(const struct jobenv *env, char *const *from, char ***ret_envp);

#endif /* LAUNCH_JOBENV_H */
