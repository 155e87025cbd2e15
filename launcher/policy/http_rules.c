// SPDX-License-Identifier: LGPL-2.1-or-later
/* A host rule's "http" decision (deny wins, then allow) and the path glob it is made with. */
#include <stdlib.h>
#include <string.h>

#include "http_rules.h"

/*
 * Iterative match with one backtrack point: on a mismatch after a '*', the star takes one
 * more character. Linear in practice and O(glob * text) at worst, with no recursion a
 * hostile path could deepen (paths are at most HTTP_MAX_PATH_BYTES, globs
 * HTTP_RULE_PATH_MAX).
 */
bool http_glob_match(const char *glob, const char *text)
{
	const char *star = NULL, *star_text = NULL;

	while (*text) {
		if (*glob == '*') {
			star = glob++;
			star_text = text;
		} else if (*glob && (*glob == '?' || *glob == *text)) {
			glob++;
			text++;
		} else if (star) {
			glob = star + 1;
			text = ++star_text;
		} else {
			return false;
		}
	}
	while (*glob == '*')
		glob++;
	return *glob == '\0';
}

static bool rule_matches(const struct http_rule *rule, const char *method, const char *path)
{
	if (strcmp(rule->method, "*") != 0 && strcmp(rule->method, method) != 0)
		return false;
	return http_glob_match(rule->path, path);
}

bool http_rules_allow(const struct policy_http *http, const char *method, const char *path)
{
	size_t i;

	if (!http || !method || !path)
		return false;
	for (i = 0; i < http->ndeny; i++)
		if (rule_matches(&http->deny[i], method, path))
			return false;
	if (!http->allow_given)
		return true;
	for (i = 0; i < http->nallow; i++)
		if (rule_matches(&http->allow[i], method, path))
			return true;
	return false;
}

static void rules_free(struct http_rule *rules, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rules[i].method);
		free(rules[i].path);
	}
	free(rules);
}

void policy_http_free(struct policy_http *http)
{
	size_t i;

	if (!http)
		return;
	rules_free(http->allow, http->nallow);
	rules_free(http->deny, http->ndeny);
	for (i = 0; i < http->npass_headers; i++)
		free(http->pass_headers[i]);
	free(http->pass_headers);
	free(http);
}

void policy_secret_clear(struct policy_secret *secret)
{
	size_t i;

	if (!secret)
		return;
	free(secret->name);
	for (i = 0; i < secret->nhosts; i++)
		free(secret->hosts[i]);
	free(secret->hosts);
	free(secret->header);
	free(secret->format);
	memset(secret, 0, sizeof(*secret));
}
