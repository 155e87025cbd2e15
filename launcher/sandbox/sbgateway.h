/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sandbox's side of the HTTPS gateway: the gateway started with one client (its policies
 * and secrets), the CA files the job trusts, and the gateway thread's request records handed
 * to the supervisor's loop, which writes them as "http" lines.
 */
#ifndef LAUNCH_SBGATEWAY_H
#define LAUNCH_SBGATEWAY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "gateway/gateway.h"

/* The job's trust files: root's folder, readable by everyone, one pair per sandbox. */
#define SBGATEWAY_CA_DIR	"/run/launch-gateway"
#define SBGATEWAY_CA_SUFFIX	".ca.pem"     /* the gateway's CA alone: NODE_EXTRA_CA_CERTS */
#define SBGATEWAY_BUNDLE_SUFFIX ".bundle.pem" /* the system store and the CA */
#define SBGATEWAY_SYSTEM_STORE	"/etc/ssl/certs/ca-certificates.crt"

struct sbgateway;

struct sbgateway_config {
	const char *id; /* the sandbox's: names its CA files */
	const struct policy *const *policies;
	size_t npolicies;
	struct gateway_secret *secrets; /* borrowed: outlive the sbgateway */
	size_t nsecrets;
	const char *const *upstream_cas;
	size_t nupstream_cas;
	bool log_query;
	const struct resolver *resolver; /* NULL: the system's */
	int cgroup_fd;			 /* the sandbox's, to find a request's process */
	struct audit_log *log;
};

/*
 * Writes gw's CA, and the system store with it, as the files of id (ret_ca, ret_bundle:
 * PATH_MAX each; *ret_made once either may exist). 0, or a negative errno with one line.
 */
int sbgateway_write_ca_files(struct gateway *gw, const char *id, char *ret_ca, char *ret_bundle,
			     bool *ret_made, char *errbuf, size_t errlen);
/* Where the CA files of sandbox id go (PATH_MAX each). 0 or -ENAMETOOLONG. */
int sbgateway_ca_paths(const char *id, char *ret_ca, char *ret_bundle);

/*
 * Starts the gateway and its client, and writes the CA files. 0, or a negative errno with one
 * line in errbuf and nothing left (no thread, no file).
 */
int sbgateway_start(const struct sbgateway_config *config, struct sbgateway **ret, char *errbuf,
		    size_t errlen);
/* Readable when records wait: the supervisor calls sbgateway_process. */
int sbgateway_fd(const struct sbgateway *sg);
void sbgateway_ports(const struct sbgateway *sg, uint16_t *ret_port4, uint16_t *ret_port6);
/* Writes the waiting records as "http" lines. */
void sbgateway_process(struct sbgateway *sg);
/* No more requests: the client is removed, the last records written. */
void sbgateway_stop(struct sbgateway *sg);
/* Requests refused (the "http" deny lines, and those whose record found no room). */
unsigned long long sbgateway_denied(const struct sbgateway *sg);
/* Refused requests whose record found no room in the queue: counted, with no line. */
unsigned long long sbgateway_lost(const struct sbgateway *sg);
/* Stops it if need be, frees the gateway and removes the CA files; accepts NULL. */
void sbgateway_free(struct sbgateway *sg);
/* Removes sandbox id's CA files (launch gc, after a launcher that died). */
void sbgateway_remove_files(const char *id);

#endif /* LAUNCH_SBGATEWAY_H */
