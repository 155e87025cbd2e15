/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* From policy files to the sandbox's allowlist: load, resolve host names, merge. */
#ifndef LAUNCH_RULES_H
#define LAUNCH_RULES_H

#include <stdio.h>

#include "allowlist.h"
#include "policy.h"
#include "resolve.h"

/* A policy host and the addresses it resolved to at launch. */
struct resolved_host {
	const struct policy *policy;
	const struct policy_entry *entry;
	struct in6_addr *addrs;
	size_t naddrs;
};

/* A policy's "unix" entry, as the kernel matches it. */
struct unix_allow {
	const char *text; /* as written: "/run/x.sock" or "@name" */
	struct unix_path_key key;
	__u8 flags; /* UNIX_ALLOW_*: "unix" entries connect, "listen" ones bind */
};

struct rules {
	struct policy **policies;
	size_t npolicies;
	char names[1024]; /* policy names joined by "," */
	struct resolved_host *hosts;
	size_t nhosts;
	struct allow_rule *rules;
	size_t nrules;
	struct allowlist *list;
	/* Lines for stderr: hosts that did not resolve at launch, when the DNS proxy is on. */
	char warnings[2048];
	struct unix_allow *unix_allows;
	size_t nunix;
	/* Landlock: true unless a policy says "fs": {"read_only": false} (policies are unioned). */
	bool fs_read_only;
	/* A policy's "fs" key asks for Landlock: no starting on a kernel without it. */
	bool fs_required;
	const char **fs_write; /* every policy's "fs.write", NULL-terminated */
	size_t nfs_write;
	/* Every policy's "listen" ports: the job may serve on them on any address. */
	struct port_set listen;
};

/*
 * Loads every policy file, resolves every host (with `resolver`, or the system's when NULL)
 * and builds the allowlist. Returns a negative errno with one line in errbuf naming the file,
 * key or host at fault. With dns_proxy, wildcard hosts are taken (the proxy resolves them at
 * run time) and a host that does not resolve is a line in rules->warnings, not an error.
 */
int rules_compile(char *const *paths, size_t npaths, const struct resolver *resolver,
		  bool dns_proxy, struct rules **ret_rules, char *errbuf, size_t errlen);
/* Prints each policy's entries with the addresses they stand for: `launch check`. */
void rules_print(const struct rules *rules, FILE *out);
void rules_free(struct rules *rules);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct rules *, rules_free)

#endif /* LAUNCH_RULES_H */
