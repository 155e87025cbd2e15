// SPDX-License-Identifier: LGPL-2.1-or-later
/* The audit log's writer: a bounded queue of whole lines, written by a thread of its own. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "lib/util.h"

/* Interrupts a write() that a stalled sink keeps blocked, so the writer can end. */
#define AUDIT_INTERRUPT_SIGNAL (SIGRTMIN)
/* How long audit_close waits for an interrupted writer before leaving it behind. */
#define AUDIT_JOIN_MS	   200
#define AUDIT_JOIN_STEP_MS 20
/* Poll interval while a FIFO has no reader yet. */
#define AUDIT_FIFO_POLL_MS 20

/* A CLOCK_MONOTONIC deadline ms from now, for the queue's condition variables. */
static struct timespec audit_deadline(long long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void audit_lock(struct audit_log *log)
{
	if (log->writer_running)
		pthread_mutex_lock(&log->lock);
}

static void audit_unlock(struct audit_log *log)
{
	if (log->writer_running)
		pthread_mutex_unlock(&log->lock);
}

static void audit_fail(struct audit_log *log, int error)
{
	if (!log->error)
		log->error = error;
}

static char queue_byte(const struct audit_log *log, size_t pos)
{
	return log->queue[pos % AUDIT_QUEUE_BYTES];
}

/* Copies len queued bytes from pos (an ever-growing offset) out of the ring. */
static void queue_copy_out(const struct audit_log *log, size_t pos, char *dst, size_t len)
{
	size_t at = pos % AUDIT_QUEUE_BYTES, first = AUDIT_QUEUE_BYTES - at;

	if (first > len)
		first = len;
	memcpy(dst, log->queue + at, first);
	memcpy(dst + first, log->queue, len - first);
}

static void queue_copy_in(struct audit_log *log, size_t pos, const char *src, size_t len)
{
	size_t at = pos % AUDIT_QUEUE_BYTES, first = AUDIT_QUEUE_BYTES - at;

	if (first > len)
		first = len;
	memcpy(log->queue + at, src, first);
	memcpy(log->queue, src + first, len - first);
}

/* Length of the line of the record at pos, its '\n' included (the kind byte not). */
static size_t queue_line_len(const struct audit_log *log, size_t pos, size_t end)
{
	size_t at = (pos + 1) % AUDIT_QUEUE_BYTES, avail = end - pos - 1, first;
	const char *nl;

	first = AUDIT_QUEUE_BYTES - at < avail ? AUDIT_QUEUE_BYTES - at : avail;
	nl = memchr(log->queue + at, '\n', first);
	if (nl)
		return (size_t)(nl - (log->queue + at)) + 1;
	nl = memchr(log->queue, '\n', avail - first);
	return nl ? first + (size_t)(nl - log->queue) + 1 : avail;
}

/* Counts the records in [pos, end) as unwritten. Under lock. */
static void queue_count_unwritten(struct audit_log *log, size_t pos, size_t end)
{
	while (pos < end) {
		size_t len = queue_line_len(log, pos, end);

		log->counts.unwritten_lines++;
		if (queue_byte(log, pos) == AUDIT_KIND_DENY)
			log->counts.unwritten_denied++;
		pos += 1 + len;
	}
}

/*
 * A line that will never be queued (it could not be formatted, or is no line): its number
 * stays a gap, it counts unwritten as a line without room does, and the log has failed, so
 * that denied = deny lines + lost + unwritten stays exact. Under lock.
 */
static void audit_count_dropped(struct audit_log *log, enum audit_kind kind, int error)
{
	log->seq++;
	log->counts.unwritten_lines++;
	if (kind == AUDIT_KIND_DENY)
		log->counts.unwritten_denied++;
	audit_fail(log, error);
}

int audit_append_formatted(struct audit_log *log, enum audit_kind kind, const char *line, int n)
{
	int r = n < 0 ? n : -EINVAL;

	if (n > 0)
		return audit_append_kind(log, kind, line, (size_t)n);
	audit_lock(log);
	audit_count_dropped(log, kind, r);
	audit_unlock(log);
	return r;
}

int audit_append_kind(struct audit_log *log, enum audit_kind kind, const char *line, size_t len)
{
	bool untranslated = false;
	char tag = (char)kind;
	int r = 0;

	if (log->observer)
		log->observer(line, len, log->observer_ctx);
	/* Syslog sends the documents, but takes its structured data from launch's line. */
	if (log->schema.schema != AUDIT_SCHEMA_JSON && log->sink != AUDIT_SINK_SYSLOG && len > 0 &&
	    len <= AUDIT_LINE_MAX) {
		int n = audit_schema_translate(&log->schema, line, len, log->document,
					       sizeof(log->document));

		if (n > 0) {
			line = log->document;
			len = (size_t)n;
		} else {
			untranslated = true;
		}
	}
	audit_lock(log);
	if (len == 0 || len > AUDIT_LINE_MAX || line[len - 1] != '\n') {
		r = -EINVAL;
		audit_count_dropped(log, kind, r);
		goto out;
	}
	/* The line carries seq + 1: written or not, the next line has the next number. */
	log->seq++;
	if (untranslated) {
		/* Counted like a line without room: its number stays a gap, and is accounted. */
		log->counts.unwritten_lines++;
		if (kind == AUDIT_KIND_DENY)
			log->counts.unwritten_denied++;
		audit_fail(log, -ENOBUFS);
		r = -ENOBUFS;
		goto out;
	}
	while (AUDIT_QUEUE_BYTES - (log->tail - log->head) < len + 1) {
		long long at = log->progress_ms + log->stall_timeout_ms;
		struct timespec deadline;

		/* At teardown the job is dead: waiting for the writer (bounded) loses nothing. */
		if (!log->wait_room || !log->writer_running || log->abandon ||
		    monotonic_now_ms() >= at) {
			log->counts.unwritten_lines++;
			if (kind == AUDIT_KIND_DENY)
				log->counts.unwritten_denied++;
			audit_fail(log,
				   log->wait_room && log->writer_running ? -ETIMEDOUT : -ENOBUFS);
			r = -ENOBUFS;
			goto out;
		}
		pthread_cond_signal(&log->wake);
		deadline = audit_deadline(at - monotonic_now_ms());
		pthread_cond_timedwait(&log->progress, &log->lock, &deadline);
	}
	/* The stall clock starts when lines wait; the writer starts writing at once. */
	if (log->tail == log->head) {
		log->progress_ms = monotonic_now_ms();
		if (log->writer_running)
			pthread_cond_signal(&log->wake);
	}
	queue_copy_in(log, log->tail, &tag, 1);
	queue_copy_in(log, log->tail + 1, line, len);
	log->tail += 1 + len;
	log->counts.queued_lines++;
	if (kind == AUDIT_KIND_DENY)
		log->counts.queued_denied++;
out:
	audit_unlock(log);
	return r;
}

int audit_append(struct audit_log *log, const char *line, size_t len)
{
	return audit_append_kind(log, AUDIT_KIND_OTHER, line, len);
}

/*
 * A write that stopped mid-line (a full disk) leaves the start of a line behind. With
 * O_APPEND our bytes end at our file offset: if nothing was appended after them, cutting the
 * fragment off leaves only whole lines. Returns false when it could not be cut.
 */
static bool audit_cut_torn_line(struct audit_log *log, size_t fragment)
{
	off_t end = lseek(log->fd, 0, SEEK_CUR);
	struct stat st;

	if (end < (off_t)fragment || fstat(log->fd, &st) < 0 || st.st_size != end)
		return false;
	return ftruncate(log->fd, end - (off_t)fragment) == 0;
}

/*
 * Opens (creating it 0640 when missing) a log file for appending. Its group is the folder's:
 * adm in the default folder, whose set-group-id bit passes it on.
 */
static int audit_open_file(const char *path, int flags)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		int fd = open(path, flags | O_CREAT | O_EXCL, 0640);

		if (fd >= 0) {
			/* The umask may have taken the group's read bit. */
			if (fchmod(fd, 0640) < 0) {
				int r = -errno;

				close(fd);
				return r;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
		fd = open(path, flags);
		/* ENOENT: rotated away between the two opens; create it then. */
		if (fd >= 0 || errno != ENOENT)
			return fd >= 0 ? fd : -errno;
	}
	return -ENOENT;
}

/*
 * A rotated log (renamed, or removed) is reopened before the next write: no signal needed, and
 * every line goes whole to one file or the other. One stat() per write of up to 64 KiB.
 */
static int audit_follow_rotation(struct audit_log *log)
{
	struct stat fd_st, path_st;
	int fd;

	if (log->sink != AUDIT_SINK_FILE || log->pipe_like || fstat(log->fd, &fd_st) < 0)
		return 0;
	if (fd_st.st_nlink > 0 && stat(log->path, &path_st) == 0 &&
	    path_st.st_dev == fd_st.st_dev && path_st.st_ino == fd_st.st_ino)
		return 0;
	fd = audit_open_file(log->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		/* Renamed: the old file still takes the lines. Removed: they would be lost. */
		return fd_st.st_nlink > 0 ? 0 : fd;
	/* Same descriptor number: nothing else needs to learn of the new file. */
	if (dup3(fd, log->fd, O_CLOEXEC) < 0) {
		int r = -errno;

		close(fd);
		return fd_st.st_nlink > 0 ? 0 : r;
	}
	close(fd);
	log->torn = false;
	return 0;
}

/* Sends all of buf on a stream, retrying what a signal or a short write left. */
static size_t audit_write_all(struct audit_log *log, const char *buf, size_t len, int *ret_error)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(log->fd, buf + off, len - off);

		if (n < 0 && errno == EINTR && !__atomic_load_n(&log->abandon, __ATOMIC_RELAXED))
			continue;
		if (n <= 0) {
			*ret_error = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	return off;
}

/*
 * Sends the lines of log->out as syslog messages, one datagram each, or octet-counted frames
 * on TCP. Returns the line bytes sent whole.
 */
static size_t audit_write_syslog(struct audit_log *log, size_t len, int *ret_error)
{
	size_t off = 0;

	while (off < len) {
		const char *line = log->out + off, *nl = memchr(line, '\n', len - off);
		size_t line_len = nl ? (size_t)(nl - line) + 1 : len - off, header = 0;
		char *msg = log->message;
		int n;

		if (log->syslog_transport == AUDIT_SYSLOG_TCP) {
			/* Room for "LEN SP" in front: the length is only known afterwards. */
			header = 8;
		}
		if (log->schema.schema != AUDIT_SCHEMA_JSON) {
			/* The structured data still comes from launch's own line. */
			n = audit_schema_translate(&log->schema, line, line_len, log->document,
						   sizeof(log->document));
			if (n < 0) {
				*ret_error = n;
				break;
			}
			n = audit_syslog_format_msg(line, line_len, log->document, (size_t)n,
						    log->host, log->pid, msg + header,
						    sizeof(log->message) - header);
		} else {
			n = audit_syslog_format(line, line_len, log->host, log->pid, msg + header,
						sizeof(log->message) - header);
		}
		if (n < 0) {
			*ret_error = n;
			break;
		}
		if (log->syslog_transport == AUDIT_SYSLOG_TCP) {
			char prefix[16];
			int plen = snprintf(prefix, sizeof(prefix), "%d ", n);

			msg += header - (size_t)plen;
			memcpy(msg, prefix, (size_t)plen);
			n += plen;
			if (audit_write_all(log, msg, (size_t)n, ret_error) != (size_t)n) {
				/* A frame cut short leaves the stream unreadable: nothing follows.
				 */
				if (!*ret_error)
					*ret_error = -EIO;
				break;
			}
		} else {
			ssize_t sent;

			do
				sent = send(log->fd, msg, (size_t)n, MSG_NOSIGNAL);
			while (sent < 0 && errno == EINTR &&
			       !__atomic_load_n(&log->abandon, __ATOMIC_RELAXED));
			/* A receiver restarted (journald, rsyslog): one new connection. */
			if (sent < 0 && (errno == ECONNREFUSED || errno == ENOTCONN) &&
			    log->syslog_transport == AUDIT_SYSLOG_UNIX) {
				int fd = audit_syslog_connect(log->syslog_transport,
							      log->syslog_target,
							      log->stall_timeout_ms);

				if (fd >= 0) {
					dup3(fd, log->fd, O_CLOEXEC);
					close(fd);
					sent = send(log->fd, msg, (size_t)n, MSG_NOSIGNAL);
				}
			}
			if (sent != n) {
				*ret_error = sent < 0 ? -errno : -EMSGSIZE;
				break;
			}
		}
		off += line_len;
	}
	return off;
}

/* Writes log->out; returns the bytes written, and the error that stopped it in *ret_error. */
static size_t audit_write_out(struct audit_log *log, size_t len, int *ret_error)
{
	size_t off = 0;

	*ret_error = 0;
	if (log->sink == AUDIT_SINK_SYSLOG)
		return audit_write_syslog(log, len, ret_error);
	*ret_error = audit_follow_rotation(log);
	if (*ret_error)
		return 0;
	/* A fragment could not be cut last time: the next line must at least start afresh. */
	if (log->torn) {
		ssize_t n = write(log->fd, "\n", 1);

		if (n != 1) {
			*ret_error = n < 0 ? -errno : -EIO;
			return 0;
		}
		log->torn = false;
	}
	while (off < len) {
		ssize_t n = write(log->fd, log->out + off, len - off);

		bool abandon = __atomic_load_n(&log->abandon, __ATOMIC_RELAXED);

		if (n < 0 && errno == EINTR && !abandon)
			continue;
		/* `-` shares stderr with a caller that may have made it non-blocking. */
		if (n < 0 && errno == EAGAIN && !abandon) {
			struct pollfd pfd = { .fd = log->fd, .events = POLLOUT };

			poll(&pfd, 1, -1);
			continue;
		}
		if (n <= 0) {
			*ret_error = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (*ret_error && off) {
		const char *last_nl = memrchr(log->out, '\n', off);
		size_t fragment = off - (last_nl ? (size_t)(last_nl - log->out) + 1 : 0);

		if (fragment && !audit_cut_torn_line(log, fragment))
			log->torn = true;
	}
	return off;
}

/*
 * Takes whole lines from [head, end) into log->out, at most one write's worth (PIPE_BUF for
 * a pipe: a write of that size is atomic there, whole or nothing, even among several
 * launchers on one FIFO). Returns the record bytes taken; *ret_len the line bytes.
 */
static size_t audit_take(struct audit_log *log, size_t head, size_t end, size_t *ret_len)
{
	size_t max = log->pipe_like ? PIPE_BUF : AUDIT_WRITE_BYTES, pos = head, len = 0;

	while (pos < end) {
		size_t line = queue_line_len(log, pos, end);

		if (len + line > max)
			break;
		queue_copy_out(log, pos + 1, log->out + len, line);
		len += line;
		pos += 1 + line;
	}
	*ret_len = len;
	return pos - head;
}

/* Moves the records of a write out of the queue, counting each line once. Under lock. */
static void audit_account(struct audit_log *log, size_t taken, size_t written, int error)
{
	size_t pos = log->head, end = log->head + taken, done = 0;

	while (pos < end) {
		size_t len = queue_line_len(log, pos, end);
		bool deny = queue_byte(log, pos) == AUDIT_KIND_DENY;

		done += len;
		if (done <= written) {
			log->counts.written_lines++;
			log->counts.written_denied += deny;
		} else {
			log->counts.unwritten_lines++;
			log->counts.unwritten_denied += deny;
		}
		log->counts.queued_lines--;
		log->counts.queued_denied -= deny;
		pos += 1 + len;
	}
	log->head = end;
	if (error)
		audit_fail(log, error);
}

static void *audit_writer(void *userdata)
{
	struct audit_log *log = userdata;
	uint64_t one = 1;

	pthread_mutex_lock(&log->lock);
	for (;;) {
		size_t head, end, taken, len, written;
		int error;

		while (log->head == log->tail && !log->stop && !log->abandon)
			pthread_cond_wait(&log->wake, &log->lock);
		if (log->abandon || log->head == log->tail)
			break;
		head = log->head;
		end = log->tail;
		pthread_mutex_unlock(&log->lock);

		/* The appender only adds after end: [head, end) holds still without the lock. */
		taken = audit_take(log, head, end, &len);
		written = audit_write_out(log, len, &error);

		pthread_mutex_lock(&log->lock);
		if (log->abandoned)
			break;
		audit_account(log, taken, written, error);
		log->progress_ms = monotonic_now_ms();
		pthread_cond_broadcast(&log->progress);
		if (write(log->event_fd, &one, sizeof(one)) < 0) {
			/* The counter cannot overflow in practice; a missed wake-up only delays. */
		}
	}
	if (!log->abandoned && log->abandon) {
		queue_count_unwritten(log, log->head, log->tail);
		log->counts.queued_lines = log->counts.queued_denied = 0;
		log->head = log->tail;
	}
	pthread_cond_broadcast(&log->progress);
	pthread_mutex_unlock(&log->lock);
	return NULL;
}

static void audit_interrupted(int sig __attribute__((unused)))
{
}

/*
 * The default folder is Debian's convention for logs that shippers read: 2750 root:adm, and
 * set-group-id so that files made in it are adm's too. A folder made 0750 root:root by an
 * older launch is brought to that; any other is the administrator's choice and kept.
 */
static int audit_make_default_dir(void)
{
	struct group *adm = getgrnam("adm");
	struct stat st;

	bool made = mkdir(AUDIT_DEFAULT_DIR, 0750) == 0;

	if (!made && errno != EEXIST)
		return -errno;
	if (stat(AUDIT_DEFAULT_DIR, &st) < 0)
		return -errno;
	if (!adm || st.st_uid != 0 || (!made && (st.st_gid != 0 || (st.st_mode & 07777) != 0750)))
		return 0;
	if (chown(AUDIT_DEFAULT_DIR, 0, adm->gr_gid) < 0 || chmod(AUDIT_DEFAULT_DIR, 02750) < 0)
		return -errno;
	return 0;
}

static int audit_open_path(struct audit_log *log, const char *path, long long stall_timeout_ms)
{
	const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	long long deadline;
	int r;

	if ((size_t)snprintf(log->path, sizeof(log->path), "%s", path) >= sizeof(log->path))
		return -ENAMETOOLONG;
	if (strcmp(path, AUDIT_DEFAULT_PATH) == 0) {
		r = audit_make_default_dir();
		if (r < 0)
			return r;
	} else {
		/* Creates the folder (one level) a path names. */
		_cleanup_free_ char *dir = strdup(path);
		char *slash;

		if (!dir)
			return -ENOMEM;
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			if (mkdir(dir, 0750) < 0 && errno != EEXIST)
				return -errno;
		}
	}
	/*
	 * O_NONBLOCK: opening a FIFO for writing would wait for a reader forever. With none,
	 * ENXIO: a reader may still come, for as long as a stall is allowed.
	 */
	deadline = monotonic_now_ms() + stall_timeout_ms;
	while ((log->fd = audit_open_file(path, flags)) == -ENXIO && monotonic_now_ms() < deadline)
		usleep(AUDIT_FIFO_POLL_MS * 1000);
	if (log->fd < 0) {
		r = log->fd;
		log->fd = -1;
		return r;
	}
	/* Our own open file description: the writer thread may block, the rest never. */
	if (fcntl(log->fd, F_SETFL, O_WRONLY | O_APPEND) < 0)
		return -errno;
	/* A log an older launch made root:root in the default folder becomes adm's. */
	if (strcmp(path, AUDIT_DEFAULT_PATH) == 0) {
		struct group *adm = getgrnam("adm");
		struct stat st;

		if (adm && fstat(log->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
		    st.st_gid == 0 && fchown(log->fd, 0, adm->gr_gid) < 0)
			return -errno;
	}
	return 0;
}

/* "fd:N": a descriptor the caller passed. Kept from the job: only launch writes to it. */
static int audit_open_fd(struct audit_log *log, const char *spec)
{
	char *end;
	long n;
	int flags;

	errno = 0;
	n = strtol(spec, &end, 10);
	/* 0-2 are the job's too: "-" says so for standard error. */
	if (errno || end == spec || *end || n < 3 || n > INT_MAX)
		return -EINVAL;
	flags = fcntl((int)n, F_GETFL);
	if (flags < 0)
		return -errno;
	if ((flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	/* Even an exec that skipped the sandbox's init would not pass it on. */
	if (fcntl((int)n, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	log->fd = fcntl((int)n, F_DUPFD_CLOEXEC, 3);
	return log->fd < 0 ? -errno : 0;
}

int audit_open(struct audit_log *log, const char *path, const char *sandbox, const char *policy,
	       long long stall_timeout_ms)
{
	struct timespec real, boot;
	struct stat st;
	int r;

	memset(log, 0, offsetof(struct audit_log, queue));
	log->fd = -1;
	log->event_fd = -1;
	log->stall_timeout_ms = stall_timeout_ms;
	log->pid = (int)getpid();
	snprintf(log->sandbox, sizeof(log->sandbox), "%s", sandbox);
	snprintf(log->policy, sizeof(log->policy), "%s", policy);
	if (gethostname(log->host, sizeof(log->host) - 1) < 0)
		log->host[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	log->boot_to_real_ns =
		(real.tv_sec - boot.tv_sec) * 1000000000LL + (real.tv_nsec - boot.tv_nsec);

	if (strcmp(path, "-") == 0) {
		log->sink = AUDIT_SINK_STDERR;
		log->fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (log->fd < 0)
			return -errno;
	} else if (strncmp(path, "fd:", 3) == 0) {
		log->sink = AUDIT_SINK_FD;
		r = audit_open_fd(log, path + 3);
		if (r < 0)
			return r;
	} else if (strcmp(path, "syslog") == 0 || strncmp(path, "syslog:", 7) == 0) {
		log->sink = AUDIT_SINK_SYSLOG;
		r = audit_syslog_parse(path, &log->syslog_transport, log->syslog_target,
				       sizeof(log->syslog_target));
		if (r < 0)
			return r;
		/* Made by launch itself, outside the sandbox's cgroup: nothing of it is refused. */
		log->fd = audit_syslog_connect(log->syslog_transport, log->syslog_target,
					       stall_timeout_ms);
		if (log->fd < 0) {
			r = log->fd;
			log->fd = -1;
			return r;
		}
	} else {
		log->sink = AUDIT_SINK_FILE;
		r = audit_open_path(log, path, stall_timeout_ms);
		if (r < 0)
			return r;
	}
	if (fstat(log->fd, &st) < 0)
		return -errno;
	log->pipe_like = !S_ISREG(st.st_mode);
	return 0;
}

void audit_set_schema(struct audit_log *log, enum audit_schema schema)
{
	log->schema = (struct audit_schema_ctx){ .schema = schema,
						 .version = audit_launch_version(),
						 .launcher_pid = log->pid };
}

bool audit_path_is_file(const char *path)
{
	return strcmp(path, "-") != 0 && strncmp(path, "fd:", 3) != 0 &&
	       strcmp(path, "syslog") != 0 && strncmp(path, "syslog:", 7) != 0;
}

int audit_prepare_writer(struct audit_log *log)
{
	struct sigaction sa = { .sa_handler = audit_interrupted };
	pthread_condattr_t attr;

	if (log->fd < 0 || log->writer_running || log->event_fd >= 0)
		return 0;
	log->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (log->event_fd < 0)
		return -errno;
	/* No SA_RESTART: the signal must end a blocked write(). */
	sigemptyset(&sa.sa_mask);
	if (sigaction(AUDIT_INTERRUPT_SIGNAL, &sa, NULL) < 0)
		return -errno;
	pthread_mutex_init(&log->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&log->wake, &attr);
	pthread_cond_init(&log->progress, &attr);
	pthread_condattr_destroy(&attr);
	return 0;
}

int audit_start_writer(struct audit_log *log)
{
	int r;

	if (log->fd < 0 || log->writer_running)
		return 0;
	r = audit_prepare_writer(log);
	if (r < 0)
		return r;
	/*
	 * The writer takes no signal but the one that interrupts it: the ones the launcher
	 * forwards stay for its signalfd, whatever thread the kernel would pick.
	 */
	/* Before the thread starts: from then on progress_ms is written under the lock only. */
	log->progress_ms = monotonic_now_ms();
	r = thread_start_masked(&log->writer, audit_writer, log, AUDIT_INTERRUPT_SIGNAL);
	if (r < 0)
		return r;
	log->writer_running = true;
	return 0;
}

int audit_flush(struct audit_log *log)
{
	if (!log->writer_running)
		return log->error;
	pthread_mutex_lock(&log->lock);
	if (log->head != log->tail) {
		pthread_cond_signal(&log->wake);
		if (monotonic_now_ms() - log->progress_ms >= log->stall_timeout_ms)
			audit_fail(log, -ETIMEDOUT);
	}
	pthread_mutex_unlock(&log->lock);
	return log->error;
}

int audit_timeout_ms(struct audit_log *log)
{
	long long left = -1;

	if (!log->writer_running)
		return -1;
	pthread_mutex_lock(&log->lock);
	if (log->head != log->tail) {
		left = log->progress_ms + log->stall_timeout_ms - monotonic_now_ms();
		if (left < 0)
			left = 0;
	}
	pthread_mutex_unlock(&log->lock);
	return left > INT_MAX ? INT_MAX : (int)left;
}

int audit_drain(struct audit_log *log)
{
	if (!log->writer_running)
		return log->error;
	pthread_mutex_lock(&log->lock);
	pthread_cond_signal(&log->wake);
	while (log->head != log->tail && !log->abandon) {
		long long at = log->progress_ms + log->stall_timeout_ms,
			  left = at - monotonic_now_ms();
		struct timespec deadline;

		if (left <= 0) {
			audit_fail(log, -ETIMEDOUT);
			break;
		}
		deadline = audit_deadline(left);
		pthread_cond_timedwait(&log->progress, &log->lock, &deadline);
	}
	pthread_mutex_unlock(&log->lock);
	return log->error;
}

size_t audit_room(struct audit_log *log)
{
	size_t room;

	audit_lock(log);
	room = AUDIT_QUEUE_BYTES - (log->tail - log->head);
	audit_unlock(log);
	return room;
}

int audit_event_fd(const struct audit_log *log)
{
	return log->event_fd;
}

void audit_get_counts(struct audit_log *log, struct audit_counts *ret_counts)
{
	audit_lock(log);
	*ret_counts = log->counts;
	audit_unlock(log);
}

void audit_exit_unwritten(struct audit_log *log, struct audit_exit *exit)
{
	struct audit_counts counts;

	audit_get_counts(log, &counts);
	exit->unwritten = counts.unwritten_denied + (log->error ? counts.queued_denied : 0);
	exit->log_failed = counts.unwritten_lines + (log->error ? counts.queued_lines : 0);
}

/*
 * Waits for the writer to end, at most ms; false when it is still running. An abandoned
 * writer is interrupted again each round: the first signal may come just before its write().
 */
static bool audit_join(struct audit_log *log, long long ms)
{
	for (long long waited = 0; waited < ms; waited += AUDIT_JOIN_STEP_MS) {
		struct timespec deadline;

		if (log->abandon)
			pthread_kill(log->writer, AUDIT_INTERRUPT_SIGNAL);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += AUDIT_JOIN_STEP_MS * 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(log->writer, NULL, &deadline) == 0)
			return true;
	}
	return false;
}

void audit_close_begin(struct audit_log *log)
{
	if (!log->writer_running)
		return;
	pthread_mutex_lock(&log->lock);
	log->stop = true;
	pthread_cond_signal(&log->wake);
	pthread_mutex_unlock(&log->lock);
}

void audit_close(struct audit_log *log)
{
	bool joined = true;

	if (log->writer_running) {
		/*
		 * Nothing more is queued: the writer ends as soon as the queue is written, so
		 * the one wake-up below writes it and ends the thread.
		 */
		pthread_mutex_lock(&log->lock);
		log->stop = true;
		pthread_mutex_unlock(&log->lock);
		audit_drain(log);
		pthread_mutex_lock(&log->lock);
		if (log->head != log->tail)
			__atomic_store_n(&log->abandon, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&log->wake);
		pthread_mutex_unlock(&log->lock);
		joined = audit_join(log, AUDIT_JOIN_MS);
		pthread_mutex_lock(&log->lock);
		if (!joined) {
			/*
			 * Stuck where no signal reaches (a hung file system): its lines are
			 * counted unwritten now, and the thread ends with the process.
			 */
			log->abandoned = true;
			queue_count_unwritten(log, log->head, log->tail);
			log->counts.queued_lines = log->counts.queued_denied = 0;
			log->head = log->tail;
		}
		pthread_mutex_unlock(&log->lock);
		log->writer_running = false;
	}
	/* Lines that never had a writer (no sink at all) were not written either. */
	if (log->head != log->tail) {
		queue_count_unwritten(log, log->head, log->tail);
		log->counts.queued_lines = log->counts.queued_denied = 0;
		log->head = log->tail;
	}
	/* A writer left behind may still hold the descriptor in a write(). */
	if (log->fd >= 0 && joined)
		close(log->fd);
	log->fd = -1;
	if (log->event_fd >= 0)
		close(log->event_fd);
	log->event_fd = -1;
}

size_t audit_queued_text(struct audit_log *log, char *buf, size_t len)
{
	size_t pos, out = 0;

	audit_lock(log);
	for (pos = log->head; pos < log->tail && len;) {
		size_t line = queue_line_len(log, pos, log->tail);

		if (out + line >= len)
			break;
		queue_copy_out(log, pos + 1, buf + out, line);
		out += line;
		pos += 1 + line;
	}
	if (len)
		buf[out] = '\0';
	audit_unlock(log);
	return out;
}

void audit_discard(struct audit_log *log)
{
	audit_lock(log);
	log->head = log->tail;
	log->counts.queued_lines = log->counts.queued_denied = 0;
	audit_unlock(log);
}

const char *audit_strerror(int error)
{
	switch (error) {
	case -ETIMEDOUT:
		return "it accepted nothing for the stall timeout (--audit-stall-timeout)";
	case -ENXIO:
		return "no process opened the FIFO for reading";
	case -ENOBUFS:
		return "launch's queue of lines was full";
	default:
		return strerror(-error);
	}
}
