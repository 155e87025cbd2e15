/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy files: strict JSON parsing into allow entries. */
#ifndef LAUNCH_POLICY_H
#define LAUNCH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <netinet/in.h>

#include "bpf/launch.h"
#include "http_rules.h"
#include "limit.h"
#include "lib/sha256.h"
#include "lib/util.h"

/* Exit status for every failure of the launcher before the job runs (as env(1)). */
#define EXIT_LAUNCH_FAILED 125

#define POLICY_ERR_LEN 512

/* One element of "allow": a host name to resolve, or an address prefix. */
struct policy_entry {
	char *host;		/* lower-case name; NULL for a "cidr" entry */
	struct in6_addr addr;	/* "cidr" entries: IPv4 is stored as ::ffff:a.b.c.d */
	unsigned int prefixlen; /* in the mapped space: 96 + N for an IPv4 /N */
	struct port_range ports[MAX_PORT_RANGES]; /* "ports" omitted: one range 0-65535 */
	unsigned int nports;
	unsigned int protos; /* PROTO_TCP, PROTO_UDP or PROTO_ANY */
	/* "http": the host's connections go through the HTTPS gateway; NULL when absent */
	struct policy_http *http;
	/*
	 * "sni": TCP connections to the host's addresses at these ports must start with a TLS
	 * ClientHello naming it (docs/policy.md). Given, or by default on when every port is 443.
	 */
	bool sni;
};

struct policy {
	char *path;
	char *name;
	char *description; /* NULL when absent */
	struct policy_entry *entries;
	size_t nentries;
	char **unix_paths; /* "unix": paths, or "@name" for abstract sockets */
	size_t nunix;
	bool fs_set;	   /* the policy has an "fs" key */
	bool fs_read_only; /* "fs.read_only": true (the default) unless false is given */
	char **fs_write;   /* "fs.write": absolute paths the job may write below */
	size_t nfs_write;
	struct job_limits limits; /* "limits": LIMIT_UNSET where not given */
	/* "listen": ports the job may serve on any address, and abstract names it may bind */
	struct port_range listen_ports[MAX_LISTEN_PORTS];
	size_t nlisten_ports;
	char **listen_unix; /* "@name" */
	size_t nlisten_unix;
	/* "secrets": what the gateway injects, each for host rules with "http" */
	struct policy_secret *secrets;
	size_t nsecrets;
	char sha256[SHA256_HEX_BYTES]; /* of the file as read; "" when parsed from a string */
};

/* Paths one policy's "fs.write" may list. */
#define POLICY_MAX_FS_WRITE 64

/*
 * Reads and validates one policy file. On failure returns a negative errno and writes one
 * line to errbuf naming the file and the offending key or entry, for example
 * "policies/x.json: allow[2].ports[0]: 70000 is not a port (1-65535)".
 */
int policy_load(const char *path, struct policy **ret_policy, char *errbuf, size_t errlen);
/* As policy_load, from a string; `path` is used only in messages. */
int policy_parse(const char *path, const char *json, struct policy **ret_policy, char *errbuf,
		 size_t errlen);
void policy_free(struct policy *policy);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct policy *, policy_free)

/*
 * Parses "a.b.c.d", "a.b.c.d/N", "x::y", "x::y/N" into the mapped form. Host bits set
 * beyond the prefix are refused to catch typos ("10.0.0.1/8" is an error). Returns 0 or
 * -EINVAL.
 */
int policy_parse_cidr(const char *text, struct in6_addr *ret_addr, unsigned int *ret_prefixlen);
/* Parses "443" or "9000-9010" into a range. Returns 0 or -EINVAL. */
int policy_parse_port_range(const char *text, struct port_range *ret_range);
/* Formats an address in the mapped form back to text: IPv4 as dotted quad. */
const char *policy_format_addr(const struct in6_addr *addr, char *buf, size_t len);
/* True when addr is ::ffff:a.b.c.d. */
bool policy_addr_is_v4(const struct in6_addr *addr);

/*
 * What is wrong with a lower-case DNS name without trailing dot as a policy host (no '*'),
 * as a phrase for an error line ("has an empty label"), or NULL when it is one.
 */
const char *policy_host_problem(const char *name);

#endif /* LAUNCH_POLICY_H */
