/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container put under a policy from an OCI hook: its init moved into a cgroup v2 group of
 * launch's own, the shared programs attached there, and a supervisor, detached from the hook,
 * that owns the audit trail until poststop.
 */
#ifndef LAUNCH_CONTAINER_H
#define LAUNCH_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "dns/dnsproxy.h"
#include "policy/rules.h"

/* The supervisors' pid files: <CONTAINER_RUN_DIR>/<id>.pid. */
#define CONTAINER_RUN_DIR "/run/launch/oci"
/* The sandbox id: the container id's first characters, as `podman ps` shows it. */
#define CONTAINER_ID_LEN 12
#define CONTAINER_ID_MAX 128

/* What the engine says on stdin (the OCI runtime state), with launch's annotations. */
struct container_state {
	char id[CONTAINER_ID_MAX + 1];	    /* the sandbox id: CONTAINER_ID_LEN chars of it */
	char full_id[CONTAINER_ID_MAX + 1]; /* the engine's */
	char name[CONTAINER_ID_MAX + 1];    /* the engine's name, else full_id */
	char status[32];
	int pid; /* 0: none (poststop) */
	char bundle[4096];
	char policies[4096];  /* io.launch.policy: names or paths, "," between */
	char audit_log[4096]; /* io.launch.audit-log, or the default */
	bool audit_only;      /* io.launch.audit-only: "true" */
	char resolver[256];   /* io.launch.resolver: ADDR[:PORT], or "" */
};

#define CONTAINER_AUDIT_LOG_DEFAULT "/var/log/launch/audit.jsonl"

/*
 * Parses the OCI state JSON. Returns 0, or a negative errno with one line in errbuf (no
 * "id", a malformed pid, no io.launch.policy, a value too long).
 */
int container_state_parse(const char *json, struct container_state *ret, char *errbuf,
			  size_t errlen);

struct container_options {
	const struct container_state *state;
	const char *cgroup_parent; /* the folder under which <id> is made */
	const struct rules *rules;
	long long audit_stall_ms;
	/*
	 * The DNS proxy: its listeners in the container's network namespace, where the
	 * programs send port 53, its upstream sockets in the supervisor's.
	 */
	bool dns_proxy;
	struct dnsproxy_config dns;
};

/*
 * Confines the container: a supervisor is forked (a session of its own, stdio on /dev/null)
 * that makes the cgroup, attaches the programs, moves init in, opens the log and writes
 * sandbox_start; this returns once it says it is done. Returns 0, or a negative errno with one
 * line in errbuf, when the supervisor undid everything (init back in its cgroup).
 */
int container_confine(const struct container_options *options, char *errbuf, size_t errlen);

/*
 * Poststop: tells the supervisor of container id to end (sandbox_exit, cgroup and slot
 * released) and waits for it, at most timeout_ms. A supervisor that is gone leaves its
 * cgroup to gc_sweep, which this runs then. Returns 0, or a negative errno with one line.
 */
int container_stop(const char *id, int timeout_ms, char *errbuf, size_t errlen);

#endif /* LAUNCH_CONTAINER_H */
