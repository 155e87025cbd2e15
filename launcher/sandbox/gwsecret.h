/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policies' "secrets" and their values from --secret: what the gateway injects. */
#ifndef LAUNCH_GWSECRET_H
#define LAUNCH_GWSECRET_H

#include <stddef.h>

#include "gateway/gateway.h"
#include "policy/policy.h"

/* The longest value a secret may have (a file's content, a variable's value). */
#define GWSECRET_VALUE_MAX 8192

/*
 * Pairs each secret the policies name with its --secret (specs: "NAME", launch's variable
 * NAME in env, or "NAME=@FILE"), reads the values and draws the placeholders. A secret with
 * no --secret, a --secret no policy names, a name two policies use, an unset variable, an
 * unreadable file, an empty value or one with a control byte (a line break would split the
 * header it goes into): a negative errno, with one line in errbuf naming it, never the value.
 */
int gwsecret_plan(struct policy *const *policies, size_t npolicies, const char *const *specs,
		  size_t nspecs, char *const *env, struct gateway_secret **ret_secrets,
		  size_t *ret_n, char *errbuf, size_t errlen);
/* Wipes the values and frees the array; accepts NULL. */
void gwsecret_free(struct gateway_secret *secrets, size_t n);

/* Whether a policy has a host rule with "http": the sandbox then needs the gateway. */
bool gwsecret_gateway_wanted(struct policy *const *policies, size_t npolicies);

#endif /* LAUNCH_GWSECRET_H */
