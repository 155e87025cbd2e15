/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One sandbox's state, shared by its lifecycle (sandbox.c), its event loop (sandbox_loop.c)
 * and its teardown (sandbox_teardown.c); nothing else includes it.
 */
#ifndef LAUNCH_SANDBOX_INTERNAL_H
#define LAUNCH_SANDBOX_INTERNAL_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "audit/audit.h"
#include "cglimit.h"
#include "cgroup.h"
#include "child.h"
#include "loader.h"
#include "policy/inbound.h"
#include "sandbox.h"
#include "sbgateway.h"
#include "update.h"

#define CGROUP_KILL_TIMEOUT_MS 5000
/* Sync requests read in one go; more wait in the socket for the next round. */
#define SANDBOX_SYNC_MAX 64

struct sandbox {
	struct sandbox_cgroup cgroup;
	struct loader_shared shared; /* the programs every sandbox shares */
	struct loader_sandbox bpf;   /* this sandbox's slot, maps and configuration */
	struct ring_buffer *ringbuf;
	struct audit_log *log;
	struct child child;
	struct dnsproxy *dns;	      /* also knows the names of addresses, for deny lines */
	struct update_server *update; /* launch update's requests */
	struct sbgateway *gateway;    /* the HTTPS gateway's client; NULL: no "http" rule */
	int epoll_fd, signal_fd, timer_fd;
	unsigned long long lost_reported;
	unsigned long long would_deny_lost_reported, allowed_lost_reported; /* --audit-only */
	unsigned long long seccomp_denied; /* refusals the seccomp listener answered */
	struct inbound_policy listen;	   /* where the job may listen beyond loopback */
	bool audit_continue;
	bool audit_failed;
	bool timed_out;
	struct cglimit limits;
	const struct sandbox_options *options;
	int limits_timer_fd;
	bool limit_stopped;	    /* a pids or memory limit was reached: the job was stopped */
	unsigned int limits_logged; /* CGLIMIT_HIT_* on record already */
	bool throttled;		    /* the audit queue is nearly full: new events wait */
	bool ring_behind; /* the last drain left events in the ring (throttled, queue full) */
	int sync_fd;	  /* --audit-sync-fd; -1: none, or its peer hung up */
	char sync_asked[SANDBOX_SYNC_MAX]; /* the bytes read from it, to be written back */
	size_t nsync_asked;
	/* The last kernel event's process and its executable, read again after EXE_CACHE_MS. */
	unsigned int exe_pid;
	long long exe_read_ms;
	char exe[PATH_MAX];
	bool exe_known;
	/* The lifecycle's own state, each step's resources above. */
	int lock_fd;		    /* held from the first step to the last */
	char cgroup_path[PATH_MAX]; /* as recorded in the lock file */
	sigset_t old_mask;	    /* restored once the signal descriptor is closed */
	long long started_ms;	    /* for the exit line's duration */
	bool started;		    /* the start line is queued, go follows: an exit line is due */
	bool reaped;		    /* init's status is in init_info */
	bool exited_known;	    /* init's CHILD_MSG_EXITED is in exited */
	bool exit_logged;	    /* the exit line is queued: nothing may follow it */
	struct child_msg exited;
	siginfo_t init_info;
	int exit_status;	   /* launch's, until the job's replaces it */
	unsigned long long denied; /* every refusal, for the exit line and main */
	unsigned long long lost;   /* refusals the kernel's ring had no room for */
	unsigned long long unread; /* refusals left in a ring that could not be mapped */
	int error;		   /* the first failure, negative errno; 0: none */
	char *errbuf;		   /* its one line, for main */
	size_t errlen;
};

/* The lifecycle (sandbox.c). */
int __attribute__((format(printf, 3, 4)))
sandbox_fail(struct sandbox *sandbox, int r, const char *fmt, ...);

/* The event loop (sandbox_loop.c). */
int sandbox_on_event(void *ctx, void *data, size_t size);
void sandbox_report_lost(struct sandbox *sandbox);
int sandbox_watch(struct sandbox *sandbox, int fd);
int sandbox_check_limits(struct sandbox *sandbox);
void sandbox_sync_read(struct sandbox *sandbox);
int sandbox_sync_answer(struct sandbox *sandbox);
bool sandbox_job_alone(const struct sandbox *sandbox);
int sandbox_run_job(struct sandbox *sandbox);

/* The teardown (sandbox_teardown.c). */
void sandbox_teardown(struct sandbox *sandbox);

#endif
