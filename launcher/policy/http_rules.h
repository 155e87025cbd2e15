/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A host rule's "http" section and the policy's "secrets": what the HTTPS gateway enforces. */
#ifndef LAUNCH_HTTP_RULES_H
#define LAUNCH_HTTP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits of one policy's "http" and "secrets", checked when the policy is read. */
#define HTTP_RULES_MAX		256 /* "allow" or "deny" entries of one host */
#define HTTP_RULE_PATH_MAX	1024
#define POLICY_SECRETS_MAX	32
#define POLICY_SECRET_HOSTS_MAX 16
/* Default of "http.max_body_bytes": a request body larger than this is refused. */
#define HTTP_MAX_BODY_BYTES_DEFAULT (64ULL << 20)

/* One element of "allow" or "deny": a method (upper case, "*" for any) and a path glob. */
struct http_rule {
	char *method; /* "GET", or "*" when the rule gives none */
	char *path;   /* glob on the decoded path, query left out; "*" when the rule gives none */
};

/* A host rule's "http": its connections go through the gateway. "{}" allows every request. */
struct policy_http {
	struct http_rule *allow; /* none given: every request passes (deny still applies) */
	size_t nallow;
	bool allow_given; /* "allow" present (an empty list then allows nothing) */
	struct http_rule *deny;
	size_t ndeny;
	/* Credential headers the job may send itself (lower case), from "pass_headers". */
	char **pass_headers;
	size_t npass_headers;
	uint64_t max_body_bytes; /* "max_body_bytes", HTTP_MAX_BODY_BYTES_DEFAULT when absent */
};

/* One element of the policy's "secrets". */
struct policy_secret {
	char *name;   /* the launcher's environment variable, and the job's placeholder's */
	char **hosts; /* lower-case names of host rules with "http" */
	size_t nhosts;
	char *header; /* "Authorization", as written */
	char *format; /* holds "{}" once: "Bearer {}" */
};

/*
 * Whether a request passes a host's rules: a deny rule that matches refuses it, then an
 * allow rule must match when "allow" was given. method is as sent (compared case-sensitively,
 * HTTP methods are), path is decoded and without its query.
 */
bool http_rules_allow(const struct policy_http *http, const char *method, const char *path);

/* Glob match: '*' matches any run of characters (slashes too), '?' one; no classes. */
bool http_glob_match(const char *glob, const char *text);

void policy_http_free(struct policy_http *http);
void policy_secret_clear(struct policy_secret *secret);

#endif /* LAUNCH_HTTP_RULES_H */
