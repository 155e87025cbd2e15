/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The JSON-lines audit log: formats events (audit.c) and queues whole lines for a writer thread
 * (audit_writer.c). */
#ifndef LAUNCH_AUDIT_H
#define LAUNCH_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <linux/types.h>
#include <netinet/in.h>

#include "bpf/launch.h"
#include "audit_schema.h"
#include "policy/policy.h"

/* Addresses listed in one dns_allow line; "naddrs" always has the full count. */
#define AUDIT_DNS_ADDRS_MAX 32

/* Version of the line format, in every line as "v"; see docs/audit-log.md. */
#define AUDIT_SCHEMA_VERSION 1
#define AUDIT_DEFAULT_DIR    "/var/log/launch"
#define AUDIT_DEFAULT_PATH   AUDIT_DEFAULT_DIR "/audit.jsonl"
/*
 * Largest line. Every field a job or a policy controls has a cap on its escaped length, and
 * argv a budget of its own, so that the longest line a formatter can make fits: no line is
 * ever dropped for its size. It is also below PIPE_BUF, so one write() of whole lines to a
 * pipe or FIFO is atomic.
 */
#define AUDIT_LINE_MAX 4096
/* Escaped bytes kept of one string field (a policy name list, a DNS name, a path...). */
#define AUDIT_FIELD_MAX 512
/* Escaped bytes of sandbox_start's argv, all arguments together, and of any one of them. */
#define AUDIT_ARGV_MAX 2048
#define AUDIT_ARG_MAX  512

/*
 * Lines wait here for the writer thread. The supervisor never writes itself, so a sink that
 * blocks (a FIFO nobody reads, a full pipe, a hung file system) cannot stop the timer, the
 * signals or the reaping.
 */
#define AUDIT_QUEUE_BYTES (1024 * 1024)
/*
 * With less room than this, the supervisor takes no new events (ring buffer, seccomp, DNS)
 * until the writer catches up: what is in flight (events_lost, sandbox_exit, a DNS answer)
 * still fits, and refusals wait in the kernel's ring rather than be dropped here.
 */
#define AUDIT_QUEUE_RESERVE (64 * 1024)
/* Bytes of one write() to a regular file; pipes, FIFOs, sockets and terminals get PIPE_BUF. */
#define AUDIT_WRITE_BYTES (64 * 1024)
/* A sink that accepts nothing for this long has failed (--audit-stall-timeout). */
#define AUDIT_STALL_TIMEOUT_MS_DEFAULT 5000

/* Refusals counted per op for sandbox_exit's "denied_by_op": room for every enum audit_op. */
#define AUDIT_OPS_MAX 64

/* Where lines go (--audit-log): a file, a descriptor, or a syslog receiver. */
enum audit_sink {
	AUDIT_SINK_FILE = 0, /* a path, reopened when it is renamed or removed (rotation) */
	AUDIT_SINK_STDERR,   /* "-": shared with the job */
	AUDIT_SINK_FD,	     /* "fd:N": the caller's descriptor, never the job's */
	AUDIT_SINK_SYSLOG,   /* "syslog[:TARGET]": RFC 5424 messages, audit_syslog.c */
};

/* How syslog messages travel. */
enum audit_syslog_transport {
	AUDIT_SYSLOG_UNIX = 0, /* a datagram socket: /dev/log by default */
	AUDIT_SYSLOG_UDP,      /* RFC 5426: one message per datagram */
	AUDIT_SYSLOG_TCP,      /* RFC 6587 octet counting: "LEN SP MSG" */
};

/* What a queued line is, for the accounting: refusals are counted apart. */
enum audit_kind {
	AUDIT_KIND_OTHER = 1,
	AUDIT_KIND_DENY = 2, /* a refusal counted in sandbox_exit's "denied" */
};

/* Where every line went; a line counts in exactly one of written and unwritten. */
struct audit_counts {
	unsigned long long written_lines;
	unsigned long long written_denied; /* deny lines (AUDIT_KIND_DENY) among them */
	unsigned long long unwritten_lines;
	unsigned long long unwritten_denied;
	unsigned long long queued_lines; /* neither yet */
	unsigned long long queued_denied;
};

struct audit_log {
	int fd;
	char sandbox[128];
	char policy[1024]; /* names joined by "," */
	char host[256];	   /* gethostname() at open: "host" ("hostname" on http lines) */
	/* Lines queued or counted unwritten: the next line's "seq" is one more. */
	unsigned long long seq;
	/* Refusals formatted into deny lines (queued, written or unwritten), by op. */
	unsigned long long denied_by_op[AUDIT_OPS_MAX];
	unsigned long long denied_dns;
	/* --audit-only: the would_deny and allow lines formatted, by op (dns apart). */
	bool audit_only;
	unsigned long long would_deny_by_op[AUDIT_OPS_MAX];
	unsigned long long would_deny_dns;
	unsigned long long allowed;
	/* The policies in force, for sandbox_start's "policies" (name, path, sha256). */
	struct policy *const *policies;
	size_t npolicies;
	enum audit_sink sink;
	char path[4096]; /* AUDIT_SINK_FILE: reopened by the writer after a rotation */
	/* AUDIT_SINK_SYSLOG: where to, and this launcher's pid as PROCID. */
	enum audit_syslog_transport syslog_transport;
	char syslog_target[256]; /* a socket path, or "HOST:PORT" */
	int pid;
	int64_t boot_to_real_ns; /* CLOCK_REALTIME - CLOCK_BOOTTIME at open */
	long long stall_timeout_ms;
	bool pipe_like; /* a pipe, FIFO, socket or terminal: writes of PIPE_BUF at most */
	bool wait_room; /* appends wait (bounded by the stall timeout) for room: teardown */

	/* Shared with the writer thread, under lock once it runs. */
	pthread_mutex_t lock;
	pthread_cond_t wake;	 /* for the writer: lines queued, or stop */
	pthread_cond_t progress; /* for waiters: a write finished */
	pthread_t writer;
	bool writer_running;
	bool stop;	       /* the writer ends when the queue is empty */
	bool abandon;	       /* the writer ends now: what is queued is unwritten */
	bool abandoned;	       /* it did not end in time: its counts are no longer its to change */
	int event_fd;	       /* the writer adds 1 after each write: wakes the supervisor */
	long long progress_ms; /* CLOCK_MONOTONIC of the last write, or of the queue filling */
	size_t head, tail;     /* offsets into queue, as ever-growing counters */
	struct audit_counts counts;
	int error; /* first failure, negative errno (-ETIMEDOUT: a stall); 0 when none */
	bool torn; /* writer only: a line fragment could not be cut off the file */
	/* Sees every line as it is queued (--notify-denials); NULL: none. Supervisor only. */
	void (*observer)(const char *line, size_t len, void *ctx);
	void *observer_ctx;
	/*
	 * --audit-format: lines are turned into its documents as they are queued, or for
	 * syslog as they are sent (the structured data comes from launch's own line). Used by
	 * one thread only: the supervisor's appends, or the syslog writer.
	 */
	struct audit_schema_ctx schema;

	/*
	 * The buffers, last: audit_open zeroes only what is above them. Zeroing the queue
	 * would fault in its 256 pages at every start (and copy them again, on write, once
	 * init is forked), for contents that head and tail say are not there.
	 */
	/* Records: an enum audit_kind byte, then the line with its '\n'. */
	char queue[AUDIT_QUEUE_BYTES];
	char out[AUDIT_WRITE_BYTES]; /* writer only: the lines of one write() */
	/*
	 * Writer only, syslog: one message, framed. Its header and structured data hold at
	 * most 16 values of at most 128 bytes (256 with ']' escaped): under 5 KiB.
	 */
	char message[AUDIT_LINE_MAX + 5120];
	char document[AUDIT_LINE_MAX]; /* --audit-format: the document being made */
};

/*
 * Opens the log named by path (--audit-log): a file (created 0640; the default folder is
 * created 2750 root:adm), "-" for standard error, "fd:N" for the caller's descriptor N, or
 * "syslog[:TARGET]" (audit_syslog.c). A FIFO is opened without blocking: with no reader
 * within stall_timeout_ms, -ENXIO. -EINVAL for a malformed fd: or syslog: argument.
 */
int audit_open(struct audit_log *log, const char *path, const char *sandbox, const char *policy,
	       long long stall_timeout_ms);
/* Whether --audit-log names a file (not "-", "fd:N" or "syslog..."): the job must not see it. */
bool audit_path_is_file(const char *path);
/*
 * What the writer needs that can fail, but the thread itself: its event descriptor (for
 * audit_event_fd), its signal's handler, its lock. Idempotent; audit_start_writer calls it.
 */
int audit_prepare_writer(struct audit_log *log);
/* Starts the writer thread; until then lines only queue. Call it after forking. */
int audit_start_writer(struct audit_log *log);
/*
 * Tells the writer that nothing more will be queued: it writes what is queued and ends, while
 * the caller goes on. audit_close waits for it. Appending after this is an error.
 */
void audit_close_begin(struct audit_log *log);
/*
 * Stops the writer once the queue is written, waiting no longer than a stall allows; lines
 * it could not write are counted unwritten. Closes the file.
 */
void audit_close(struct audit_log *log);

/*
 * Whether a ring record of size bytes is a whole refusal: a deny_event, and for op tls a
 * tls_deny_event (the formatters read its name only then).
 */
static inline bool audit_event_whole(const void *data, size_t size)
{
	const struct deny_event *event = data;

	return size >= sizeof(*event) &&
	       (event->op != AUDIT_OP_TLS || size >= sizeof(struct tls_deny_event));
}

/*
 * Formatters: write one line with its '\n' into buf, return its length, or -ENOBUFS when it
 * does not fit. Pure functions, tested on their own.
 */
/* An event of op tls must be the deny_event of a tls_deny_event (audit_event_whole). */
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
	unsigned int ttl_s;	    /* dns_allow: the answer's smallest TTL */
	unsigned int open_s;	    /* dns_allow: how long its addresses stay open */
	int pid;		    /* deny: the asking process, when known; 0 when not */
	int64_t ts_ns;		    /* deny: when the first was refused (CLOCK_REALTIME); 0: now */
	unsigned long long repeats; /* deny: identical look-ups refused after it, in its window */
	bool would_deny;	    /* --audit-only: answered all the same, a "would_deny" line */
};
int audit_format_dns_deny(const struct audit_log *log, const struct audit_dns *dns, char *buf,
			  size_t len);
int audit_format_dns_allow(const struct audit_log *log, const struct audit_dns *dns, char *buf,
			   size_t len);
/*
 * A request the HTTPS gateway judged: an "http" line (docs/audit-log.md). host is the
 * request's Host, "host" in the line (whose machine's name is "hostname" instead); a refused
 * one counts in "denied" and denied_by_op's "http".
 */
struct audit_http {
	const char *method;
	const char *host;
	const char *path;
	unsigned int status;
	uint64_t bytes_out, bytes_in;
	double duration_ms;
	bool allowed;
	const char *reason; /* "" when allowed */
	const char *secret; /* the name of the secret injected; NULL: none */
	int pid;	    /* the job's process on the connection; 0 when not found */
	const char *comm, *exe;
};
int audit_format_http(const struct audit_log *log, const struct audit_http *http, char *buf,
		      size_t len);
int audit_http(struct audit_log *log, const struct audit_http *http);
/* Who the job runs as, and what it may write: the sandbox_start line's account of it. */
struct audit_job {
	unsigned int uid;
	unsigned int gid;
	int landlock_abi;      /* 0: file writes are not confined by Landlock */
	char *const *fs_write; /* what the job may write, NULL-terminated; NULL: all it may */
	/*
	 * The kernel's features as probed at start ("features" in sandbox_start): how AF_UNIX
	 * connects are judged ("bpf": the cgroup hooks; "refused": no AF_UNIX socket, as the
	 * kernel has no hooks; "unfiltered": --allow-unix-unfiltered), and the release.
	 */
	const char *unix_connect;
	const char *kernel;
};
int audit_format_start(const struct audit_log *log, char *const *argv, int pid,
		       const struct audit_job *job, size_t rules, const char *hostname, char *buf,
		       size_t len);
/* As audit_format_deny_name, with "exe" when the process's executable is known (NULL: not). */
int audit_format_deny_exe(const struct audit_log *log, const struct deny_event *event,
			  const char *dst_name, const char *exe, char *buf, size_t len);
int audit_format_lost(const struct audit_log *log, unsigned long long count, char *buf, size_t len);
/* As audit_format_lost, with the audit-only events lost ("would_deny", "allow") when not 0. */
int audit_format_lost_verdicts(const struct audit_log *log, unsigned long long count,
			       unsigned long long would_deny, unsigned long long allowed, char *buf,
			       size_t len);
/*
 * A resource limit the job reached: kind "memory", "pids" or "tmp", the limit (bytes or
 * tasks), and what launch did: "stopped" the job, or "none" (the job sees ENOSPC).
 */
int audit_format_limit(const struct audit_log *log, const char *kind, unsigned long long limit,
		       const char *action, char *buf, size_t len);
/*
 * A policy update (launch update): the policies before, and who asked. The line's "policy"
 * and "policies" are the log's, which the caller has set to the new ones.
 */
struct audit_update {
	const char *old_names; /* the old policies' names joined by "," */
	struct policy *const *old_policies;
	size_t nold;
	size_t rules; /* addresses and prefixes of the new allowlist */
	int requester_pid;
	unsigned int requester_uid;
};
int audit_format_policy_update(const struct audit_log *log, const struct audit_update *update,
			       char *buf, size_t len);
/* What sandbox_exit says. */
struct audit_exit {
	int exit_code;	   /* >= 0 for a normal exit, else -signal */
	bool exit_unknown; /* no exit_code nor signal: a container's, which its engine keeps */
	long long duration_ms;
	unsigned long long denied;	   /* every refusal, DNS look-ups included */
	unsigned long long lost;	   /* refusals the kernel's ring had no room for */
	unsigned long long unwritten;	   /* refusals whose deny line launch could not write */
	unsigned long long log_failed;	   /* lines of any kind launch could not write */
	unsigned long long packet_dropped; /* packets the egress backstop dropped */
	/* --audit-only: calls let through that the policy refuses, and calls it allows. */
	unsigned long long would_deny;	    /* every one, DNS look-ups included */
	unsigned long long would_deny_lost; /* their events the kernel's ring had no room for */
	unsigned long long allowed;
	unsigned long long allowed_lost;
};
int audit_format_exit(const struct audit_log *log, const struct audit_exit *exit, char *buf,
		      size_t len);
/* Formats an RFC 3339 UTC time with microseconds: 2026-11-29T21:30:00.123456Z. */
int audit_format_time(int64_t real_ns, char *buf, size_t len);

/*
 * Queues a line for the writer; never blocks, unless log->wait_room (then at most until a
 * stall). A line that finds no room is counted unwritten: -ENOBUFS.
 */
int audit_append(struct audit_log *log, const char *line, size_t len);
int audit_append_kind(struct audit_log *log, enum audit_kind kind, const char *line, size_t len);
/*
 * audit_append_kind for an audit_format_* result n: a line that could not be formatted
 * (n <= 0) is counted unwritten (and fails the log) as a line without room is. Returns 0 or
 * -errno.
 */
int audit_append_formatted(struct audit_log *log, enum audit_kind kind, const char *line, int n);
/*
 * Wakes the writer. Never blocks. Returns the first failure (kept in log->error): a write
 * error, a line without room, or -ETIMEDOUT when the sink has accepted nothing for the stall
 * timeout.
 */
int audit_flush(struct audit_log *log);
/* Milliseconds until queued lines would make a stall (for a poll timeout); -1: none queued. */
int audit_timeout_ms(struct audit_log *log);
/* Waits until every queued line is written or failed, at most until a stall. */
int audit_drain(struct audit_log *log);
/* Free bytes in the queue. */
size_t audit_room(struct audit_log *log);
/* Readable after each write of the writer (an eventfd); -1 before it starts. */
int audit_event_fd(const struct audit_log *log);
void audit_get_counts(struct audit_log *log, struct audit_counts *ret_counts);
/*
 * sandbox_exit's unwritten and log_failed, from the log's counts: the lines it could not
 * write and, once it failed, those it still holds (call after audit_drain).
 */
void audit_exit_unwritten(struct audit_log *log, struct audit_exit *exit);
/* What a failure of the log means, for an error message: strerror, or words for our own. */
const char *audit_strerror(int error);
/* The queued lines as text (for tests of what would be written), NUL-terminated. */
size_t audit_queued_text(struct audit_log *log, char *buf, size_t len);
/* Forgets the queued lines (for tests). */
void audit_discard(struct audit_log *log);
int audit_deny(struct audit_log *log, const struct deny_event *event);
int audit_deny_name(struct audit_log *log, const struct deny_event *event, const char *dst_name);
int audit_deny_exe(struct audit_log *log, const struct deny_event *event, const char *dst_name,
		   const char *exe);
/* Formats and queues a refused look-up, counted with the refusals. */
int audit_dns_deny(struct audit_log *log, const struct audit_dns *dns);
/* would_deny events counted by the audit_deny* calls, DNS included (--audit-only). */
unsigned long long audit_would_deny_total(const struct audit_log *log);
/* Refusals counted by the audit_deny* calls, DNS included: what deny lines account for. */
unsigned long long audit_denied_total(const struct audit_log *log);
/* The release of launch, in sandbox_start's "version". */
const char *audit_launch_version(void);

/*
 * Writes one JSON line as an RFC 5424 syslog message (without framing) into buf: the JSON
 * as MSG, key fields as structured data. Returns its length or -ENOBUFS. Pure.
 */
int audit_syslog_format(const char *line, size_t len, const char *host, int pid, char *buf,
			size_t cap);
/* As audit_syslog_format, with msg (another format's document) as MSG instead of the line. */
int audit_syslog_format_msg(const char *line, size_t len, const char *msg, size_t msg_len,
			    const char *host, int pid, char *buf, size_t cap);
/* Sets the format of the lines (--audit-format); before the first line is appended. */
void audit_set_schema(struct audit_log *log, enum audit_schema schema);
/* Parses "syslog", "syslog:PATH", "syslog:udp:HOST:PORT", "syslog:tcp:HOST:PORT". */
int audit_syslog_parse(const char *spec, enum audit_syslog_transport *ret_transport,
		       char *ret_target, size_t target_len);
/* Connects to a syslog receiver; returns the socket or -errno. */
int audit_syslog_connect(enum audit_syslog_transport transport, const char *target,
			 long long timeout_ms);

#endif /* LAUNCH_AUDIT_H */
