/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One sandbox's life: cgroup, BPF programs, the job, the audit log, and the teardown. */
#ifndef LAUNCH_SANDBOX_H
#define LAUNCH_SANDBOX_H

#include <stdbool.h>

#include "cglimit.h"
#include "child.h"
#include "policy/limit.h"
#include "audit/audit_schema.h"
#include "dns/dnsproxy.h"
#include "gateway/gateway.h"
#include "policy/rules.h"

/* Exit statuses, as env(1) and timeout(1). */
#define EXIT_TIMEOUT	 124
#define EXIT_CANNOT_RUN	 126
#define EXIT_NOT_FOUND	 127
#define EXIT_SIGNAL_BASE 128
/* 128 + SIGKILL, as Docker's for an OOM kill: a pids or memory limit stopped the job. */
#define EXIT_LIMIT 137

/* Where launch's own time goes, in microseconds: printed by -v. */
struct sandbox_timing {
	long long spawn_us;    /* lock, cgroup, event loop, init cloned into it */
	long long limits_us;   /* audit log, init's configuration, limits, its moves (v1), nofile */
	long long bpf_load_us; /* finding the shared programs (or loading them) */
	long long attach_us;   /* slot, maps made and filled, DNS proxy, attach */
	long long exec_us;     /* the audit writer started, what init has left to do, the exec */
	long long job_us;      /* the job's run, from its exec to its init's exit */
	long long teardown_us; /* kill, drain, slot emptied, rmdir */
	bool bpf_loaded;       /* the programs were loaded (verified) by this launch */
};

/* How the audit log fared: main prints it when a line could not be written. */
struct sandbox_audit_result {
	bool incomplete;	      /* a line could not be written, or the log failed */
	int error;		      /* the first failure, negative errno (see audit_strerror) */
	unsigned long long denied;    /* every refusal */
	unsigned long long written;   /* refusals with their deny line in the log */
	unsigned long long lost;      /* refusals the kernel's ring had no room for */
	unsigned long long unwritten; /* refusals whose deny line launch could not write */
	unsigned long long lines_failed; /* lines of any kind launch could not write */
	bool ring_unread; /* the kernel's ring could not be mapped: its refusals are unwritten */
};

struct sandbox_options {
	const char *id;
	const char *cgroup_parent; /* the folder under which <id> is made */
	const char *audit_path;
	/* --audit-format: json, ocsf, ecs */
	enum audit_schema audit_format;
	/*
	 * --audit-sync-fd: a socket on which each byte read asks for every refusal reported so
	 * far to be in the audit log; the byte is written back once it is. -1: none.
	 */
	int audit_sync_fd;
	double timeout_s;	    /* 0: none */
	bool audit_continue;	    /* --audit-failure=continue */
	long long audit_stall_ms;   /* --audit-stall-timeout: a sink accepting nothing fails */
	bool allow_unix_unfiltered; /* --allow-unix-unfiltered: run on kernels before 6.7 */
	bool dns_proxy;		    /* the job's DNS goes to our proxy (docs/dns.md) */
	bool audit_only; /* --audit-only: log what the policy would refuse, refuse none */
	struct dnsproxy_config dns;
	/* --resolver, for the policies launch update brings; NULL: the system's. */
	const struct resolver *resolver;
	struct child_config child;
	struct job_limits limits; /* every one set: defaults filled in (limit.h) */
	/* Where the cgroup file systems are, as main read them with the mounts init hides. */
	struct cgroup_mounts cgroup_mounts;
	bool cgroup_mounts_known;		/* false: cglimit_setup reads them itself */
	struct sandbox_timing *timing_out;	/* filled in by sandbox_run */
	struct sandbox_audit_result *audit_out; /* filled in by sandbox_run */
	/*
	 * The HTTPS gateway (docs/gateway.md), when a policy has a host rule with "http": its
	 * secrets (the values; the job's environment has the placeholders), --upstream-ca and
	 * --audit-http-query. Started before the attach; a gateway that cannot start is 125.
	 */
	bool gateway;
	struct gateway_secret *secrets;
	size_t nsecrets;
	const char *const *upstream_cas;
	size_t nupstream_cas;
	bool audit_http_query;
	/*
	 * Another process's gateway serves the job (launch mcp's, shared by its calls): its
	 * ports for this sandbox; 0: none. gateway is then false, the secrets are its.
	 */
	uint16_t gateway_port4, gateway_port6;
	/* Sees every audit line as it is queued (--notify-denials); NULL: none. */
	void (*audit_observer)(const char *line, size_t len, void *ctx);
	void *audit_observer_ctx;
};

/*
 * The sandbox's start, before its policies are read: the lock, the cgroup, the event loop,
 * and the job's init cloned into the cgroup, which sets up what of the job's view depends on
 * nothing else meanwhile. Of options, id, cgroup_parent, the event loop's (timeout_s,
 * audit_sync_fd), child's mounts and timing_out are read now; options must stay valid, and
 * the rest be filled in, before sandbox_run. Returns 0, or a negative errno with one line in
 * errbuf (errlen bytes, which must stay valid too) and nothing left behind.
 */
int sandbox_begin(const struct sandbox_options *options, char *errbuf, size_t errlen);
/*
 * Runs the job to its end and sets the status launch exits with. Returns 0, or a negative
 * errno with one line in errbuf when the sandbox could not be set up (nothing is left behind
 * then: status 125), the job could not be executed (126, 127) or had to be stopped because
 * the audit log failed (125).
 */
int sandbox_run(const struct rules *rules, int *ret_exit_status);
/* Undoes sandbox_begin when sandbox_run will not be called: init killed, nothing left. */
void sandbox_abort(void);
/*
 * A signal launch forwards (SIGINT, SIGTERM...) that arrived since sandbox_begin blocked
 * them, taken off the queue; 0 when none did. Before the job exists, it means stop.
 */
int sandbox_take_stop_signal(void);

#endif /* LAUNCH_SANDBOX_H */
