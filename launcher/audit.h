/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The JSON-lines audit log: formats events and appends whole lines with one write() each. */
#ifndef LAUNCH_AUDIT_H
#define LAUNCH_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <netinet/in.h>

#include "../bpf/launch.h"

/* Addresses listed in one dns_allow line; "naddrs" always has the full count. */
#define AUDIT_DNS_ADDRS_MAX 32

/* Version of the line format, in every line as "v"; see docs/audit-log.md. */
#define AUDIT_SCHEMA_VERSION 1
#define AUDIT_DEFAULT_DIR    "/var/log/launch"
#define AUDIT_DEFAULT_PATH   AUDIT_DEFAULT_DIR "/audit.jsonl"
/* Largest line: a deny event with every field escaped at worst is well below this. */
#define AUDIT_LINE_MAX 4096
/* Lines are gathered and written together, whole lines only, once per poll round. */
#define AUDIT_BUFFER_BYTES (64 * 1024)

struct audit_log {
	int fd;
	char sandbox[128];
	char policy[1024];	 /* names joined by "," */
	int64_t boot_to_real_ns; /* CLOCK_REALTIME - CLOCK_BOOTTIME at open */
	char buf[AUDIT_BUFFER_BYTES];
	size_t used;
	size_t pending_lines;
	unsigned long long written_lines;
	unsigned long long failed_lines; /* lines a failed write() took with it */
	int error;			 /* first write error, negative errno; 0 when none */
	bool torn;			 /* a line fragment could not be cut off the file */
	/* For sandbox_exit: packets the egress backstop dropped (set before it is formatted). */
	unsigned long long packet_dropped;
};

/* Opens (creating 0640, and its folder 0750) the log at path; "-" is standard error. */
int audit_open(struct audit_log *log, const char *path, const char *sandbox, const char *policy);
void audit_close(struct audit_log *log);

/*
 * Formatters: write one line with its '\n' into buf, return its length, or -ENOBUFS when it
 * does not fit. Pure functions, tested on their own.
 */
int audit_format_deny(const struct audit_log *log, const struct deny_event *event, char *buf,
		      size_t len);
/* As audit_format_deny, with "dst_name" when the address is known by a name (NULL: none). */
int audit_format_deny_name(const struct audit_log *log, const struct deny_event *event,
			   const char *dst_name, char *buf, size_t len);

/* A look-up judged by the DNS proxy: a "deny" line with op "dns", or a "dns_allow" line. */
struct audit_dns {
	const char *protocol; /* "udp" or "tcp": how the job asked */
	const char *qname;
	const char *qtype;	      /* "A", "TXT", "TYPE65280", ... */
	const char *rcode;	      /* the answer the job got: "REFUSED", "NOERROR", ... */
	const char *reason;	      /* deny: "name", "qtype", "qclass" or "malformed" */
	const struct in6_addr *addrs; /* dns_allow: the addresses opened, IPv4 mapped */
	size_t naddrs;
	unsigned int ttl_s;  /* dns_allow: the answer's smallest TTL */
	unsigned int open_s; /* dns_allow: how long its addresses stay open */
	int pid;	     /* deny: the asking process, when known; 0 when not */
};
int audit_format_dns_deny(const struct audit_log *log, const struct audit_dns *dns, char *buf,
			  size_t len);
int audit_format_dns_allow(const struct audit_log *log, const struct audit_dns *dns, char *buf,
			   size_t len);
/* Who the job runs as, and what it may write: the sandbox_start line's account of it. */
struct audit_job {
	unsigned int uid;
	unsigned int gid;
	int landlock_abi;      /* 0: file writes are not confined by Landlock */
	char *const *fs_write; /* what the job may write, NULL-terminated; NULL: all it may */
};
int audit_format_start(const struct audit_log *log, char *const *argv, int pid,
		       const struct audit_job *job, size_t rules, const char *hostname, char *buf,
		       size_t len);
int audit_format_lost(const struct audit_log *log, unsigned long long count, char *buf, size_t len);
/*
 * A resource limit the job reached: kind "memory", "pids" or "tmp", the limit (bytes or
 * tasks), and what launch did: "stopped" the job, or "none" (the job sees ENOSPC).
 */
int audit_format_limit(const struct audit_log *log, const char *kind, unsigned long long limit,
		       const char *action, char *buf, size_t len);
/* exit_code >= 0 for a normal exit, else -signal. */
int audit_format_exit(const struct audit_log *log, int exit_code, long long duration_ms,
		      unsigned long long denied, unsigned long long lost, unsigned long long failed,
		      char *buf, size_t len);
/* Formats an RFC 3339 UTC time with microseconds: 2026-11-29T21:30:00.123456Z. */
int audit_format_time(int64_t real_ns, char *buf, size_t len);

/* Queues a line; writes the queue first when it would not fit. */
int audit_append(struct audit_log *log, const char *line, size_t len);
/* Writes every queued line with one write(). On failure the queued lines are counted in
 * failed_lines and dropped, and the error is returned (and kept in log->error). */
int audit_flush(struct audit_log *log);
int audit_deny(struct audit_log *log, const struct deny_event *event);
int audit_deny_name(struct audit_log *log, const struct deny_event *event, const char *dst_name);

#endif /* LAUNCH_AUDIT_H */
