// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp: each run_typescript call in a fresh sandbox, a child `launch` of its own. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "audit/audit.h"
#include "mcp.h"
#include "mcp_run.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* A launch that outlives its own --timeout by this much is killed from here. */
#define MCP_RUN_GRACE_S	 15
#define MCP_RUN_ARGS_MAX 64
/* A prepared sandbox waits at most this long for its call; then launch stops it. */
#define MCP_RUN_POOL_IDLE_S 86400
/*
 * After a prepared runner reports its code's end, launch is asked (--audit-sync-fd) to write
 * every refusal made until then; a launch that has not answered in this time (its log
 * stalled) leaves the result with what the log holds.
 */
#define MCP_RUN_SYNC_TIMEOUT_MS 2000
/* The descriptor a prepared sandbox's launch gets its sync socket on. */
#define MCP_RUN_SYNC_FD 3
/*
 * The next call's sandbox is prepared this long after a reply: its start (launch's set-up,
 * node's) would otherwise take the CPU from the client while it reads the reply.
 */
#define MCP_RUN_REFILL_DELAY_MS 100
/* Sandboxes killed after their call whose launch has not been reaped yet. */
#define MCP_RUN_DYING_MAX (2 * MCP_RUN_POOL_MAX)
/*
 * The job's shell: into the call's folder. Its parent, the server's folder, has node_modules
 * (a link to --modules), where Node finds tsx, the SDK and the warm runner's imports.
 */
static const char MCP_RUN_SCRIPT[] = "cd \"$1\" && shift && exec \"$@\"";
/* A prepared sandbox's program, MCP_RUN_WARM_RUNNER: launcher/mcp_runner.mjs. */
#include "mcp_runner.h"
/* Transformed by tsx ahead of the call, so that esbuild is started already. */
static const char MCP_RUN_WARMUP[] = "const warm: number = 1;\nexport default warm;\n";
/* Imported by a prepared sandbox before its call when they are in --modules. */
static const char *const MCP_RUN_SDKS[] = { "stripe", "openai", "@anthropic-ai/sdk" };

/* One output stream of the job, kept up to the cap. */
struct mcp_stream {
	int fd;
	char *text;
	size_t len;
	bool truncated;
};

static int64_t mcp_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t mcp_realtime_ns(void)
{
	return mcp_clock_ns(CLOCK_REALTIME);
}

static int64_t mcp_boottime_ns(void)
{
	return mcp_clock_ns(CLOCK_BOOTTIME);
}

/* One sandbox: a child launch, prepared (warm) or started with its code (cold). */
struct mcp_sandbox {
	pid_t pid; /* the child launch; 0: none */
	unsigned int n;
	bool warm;
	bool ready;  /* the runner reported that it waits for its code */
	bool synced; /* ready, and launch's log synced: the call's lines start at audit_from */
	bool done;   /* the runner reported its code's end: launch is not reaped yet */
	bool frozen; /* answered: its cgroup frozen, its kill left for after the answer */
	int done_status;
	int in_fd;   /* warm: the runner's standard input, a socket: shut for "go", then its end */
	int sync_fd; /* warm: launch's --audit-sync-fd */
	unsigned char sync_seq; /* the byte of the last sync asked: launch echoes each one */
	/*
	 * CLOCK_REALTIME less CLOCK_BOOTTIME when its launch was started, as launch fixes it when
	 * it opens its log: a kernel refusal's ts is its boot time plus that offset.
	 */
	int64_t clock_offset_ns;
	off_t audit_from; /* where the call's own lines start in its audit log */
	/*
	 * When launch did not confirm its log at ready: the call's own refusals are those from
	 * this time on (audit_format_time); "" when audit_from is exact.
	 */
	char audit_since[32];
	char report[32]; /* what the runner wrote back, up to its next newline */
	size_t report_len;
	struct mcp_stream out, err;
	char dir[96], audit[96], name[64];
};

struct mcp_runner {
	const struct mcp_run_config *config;
	char state_dir[64]; /* 0711: the job may pass through to its folder, not list */
	unsigned int calls;
	int audit_fd;	   /* the server's audit log, where each call's lines go; -1: none */
	char preload[256]; /* the SDKs a prepared sandbox imports ahead */
	struct mcp_sandbox pool[MCP_RUN_POOL_MAX];
	struct mcp_sandbox dying[MCP_RUN_DYING_MAX];
	long long refill_at; /* monotonic ms: when the pool is filled again; 0: it is */
	bool trace;	     /* LAUNCH_MCP_TRACE: the times of each call's steps on stderr */
};

/* Closes and forgets: the sandbox's descriptors are closed from several places. */
static void mcp_fd_close(int *fd)
{
	closep(fd);
	*fd = -1;
}

/* An empty sandbox slot: no launch, no descriptors. */
static void mcp_sandbox_reset(struct mcp_sandbox *sandbox)
{
	memset(sandbox, 0, sizeof(*sandbox));
	sandbox->in_fd = sandbox->sync_fd = sandbox->out.fd = sandbox->err.fd = -1;
}

/*
 * One step of a call and its wall-clock time, for tests/bench/mcp_bench (MCP_BENCH_TRACE=1),
 * which puts it beside the client's and the runner's times.
 */
static void mcp_run_trace(const struct mcp_runner *runner, const char *step)
{
	struct timespec ts;

	if (!runner->trace)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "launch-trace-server %s %.3f\n", step,
		(double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6);
}

static int remove_entry(const char *path, const struct stat *st __attribute__((unused)),
			int flag __attribute__((unused)), struct FTW *ftw __attribute__((unused)))
{
	remove(path);
	return 0;
}

/* Removes a call's folder, whatever a job running as root may have left in it. */
static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		text += n;
		len -= (size_t)n;
	}
	return fchmod(fd, mode) < 0 ? -errno : 0;
}

static int mcp_stream_read(struct mcp_stream *stream, size_t cap)
{
	char chunk[16384];
	ssize_t n = read(stream->fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n == 0) {
		close(stream->fd);
		stream->fd = -1;
		return 0;
	}
	if (stream->len + (size_t)n > cap) {
		stream->truncated = true;
		n = (ssize_t)(cap - stream->len);
	}
	if (n > 0) {
		char *grown = realloc(stream->text, stream->len + (size_t)n + 1);

		if (!grown)
			return -ENOMEM;
		stream->text = grown;
		memcpy(stream->text + stream->len, chunk, (size_t)n);
		stream->len += (size_t)n;
		stream->text[stream->len] = '\0';
	}
	return 0;
}

/*
 * Runs in the forked child: the launcher of one call, with its streams and limits. launch runs
 * in the call's own folder: the job's working directory, the one Landlock lets it write, is
 * then that folder and never the server's, which earlier and later calls would share.
 */
static _Noreturn void mcp_run_exec(char *const *argv, const char *dir, int in_fd, int out_fd,
				   int err_fd, int sync_fd)
{
	/* No core files of the job (or of launch) left behind; at most 64 MiB per file. */
	const struct rlimit core = { 0, 0 }, fsize = { 64 << 20, 64 << 20 };

	/* The server gone (its client closed it): the call goes too, launch passes it on. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (in_fd < 0)
		in_fd = open("/dev/null", O_RDONLY);
	if (in_fd < 0 || dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		_exit(125);
	/* dup2 onto itself would keep close-on-exec. */
	if (sync_fd >= 0 && (sync_fd == MCP_RUN_SYNC_FD ? fcntl(sync_fd, F_SETFD, 0)
							: dup2(sync_fd, MCP_RUN_SYNC_FD)) < 0)
		_exit(125);
	if (chdir(dir) < 0) {
		dprintf(STDERR_FILENO, "launch mcp: cannot enter %s: %s\n", dir, strerror(errno));
		_exit(125);
	}
	setrlimit(RLIMIT_CORE, &core);
	setrlimit(RLIMIT_FSIZE, &fsize);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	dprintf(STDERR_FILENO, "launch mcp: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(125);
}

/*
 * Reads the call's audit log: its refusals from byte from on (those before are the prepared
 * runner's own) and the job's own exit into result (when given); copies all of it to the
 * server's (when copy).
 */
static int mcp_run_audit(const struct mcp_runner *runner, const char *path, off_t from,
			 const char *since, struct mcp_result *result, bool copy)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t len = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* launch failed before it opened one */
	if (fstat(fd, &st) < 0)
		return -errno;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	for (char *line = text + ((size_t)from < len ? (size_t)from : len), *nl;
	     result && line < text + len; line = nl + 1) {
		struct refusal refusal;

		nl = strchr(line, '\n');
		if (!nl)
			nl = text + len;
		/* Only what was refused: an audit-only call's would_deny lines went through. */
		if (refusal_parse(line, (size_t)(nl - line), &refusal) == 1 && !refusal.would &&
		    refusal_since(&refusal, since)) {
			struct refusal *grown =
				realloc(result->refused, (result->nrefused + 1) * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			result->refused = grown;
			result->refused[result->nrefused++] = refusal;
		} else if (strstr(line, "\"event\":\"sandbox_exit\"")) {
			_cleanup_(cJSON_Deletep) cJSON *exit =
				cJSON_ParseWithLength(line, (size_t)(nl - line));
			const cJSON *sig = cJSON_GetObjectItemCaseSensitive(exit, "signal");

			/* The job's own end, not its exit status as launch passes it on (128+N). */
			if (cJSON_IsNumber(sig) && sig->valueint > 0)
				result->signal = sig->valueint;
		}
	}
	if (!copy || runner->audit_fd < 0 || len == 0)
		return 0;
	/* One write: the call's lines stay together and whole beside other writers'. */
	return write(runner->audit_fd, text, len) == (ssize_t)len ? 0 : -EIO;
}

/* The server's audit log, opened (and its folder made) once, before the first call. */
static int mcp_run_open_audit(const char *path)
{
	char dir[PATH_MAX], *slash;
	int fd;

	if (strcmp(path, "-") == 0) {
		fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0750) < 0 && errno != EEXIST)
			return -errno;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	return fd < 0 ? -errno : fd;
}

/* Writes "1" to the sandbox's cgroup.kill: everything of the job dies, launch tears down. */
static void mcp_sandbox_kill(const struct mcp_runner *runner, const struct mcp_sandbox *sandbox)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/cgroup.kill", runner->config->cgroup_parent,
		 sandbox->name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1)
		kill(sandbox->pid, SIGTERM); /* launch passes it on */
	if (fd >= 0)
		close(fd);
}

/*
 * Stops a finished call's processes at once and cheaply (cgroup.freeze), so that its kill
 * can wait until the answer is out: the exit of a killed Node (its memory freed) and
 * launch's teardown take CPU that, on a small machine, the client reading the answer would
 * wait for. True when frozen; else the sandbox was killed now.
 */
static bool mcp_sandbox_freeze(const struct mcp_runner *runner, const struct mcp_sandbox *sandbox)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "%s/%s/cgroup.freeze", runner->config->cgroup_parent,
		 sandbox->name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, "1", 1) == 1)
		return true;
	mcp_sandbox_kill(runner, sandbox);
	return false;
}

/*
 * Reads what a prepared runner writes back on its standard input: "ready\n" once it waits for
 * its code, "done CODE\n" once its code has ended. Anything else (the code may write there
 * too) ends the reading.
 */
static void mcp_sandbox_read_report(struct mcp_sandbox *sandbox)
{
	size_t room = sizeof(sandbox->report) - 1 - sandbox->report_len;
	ssize_t n = room ? read(sandbox->in_fd, sandbox->report + sandbox->report_len, room) : 0;
	char *nl, *end;
	long code;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	/* A socket error is no report: the call then ends with the job's output. */
	if (n < 0)
		n = 0;
	sandbox->report_len += (size_t)n;
	sandbox->report[sandbox->report_len] = '\0';
	while ((nl = strchr(sandbox->report, '\n')) && !sandbox->ready &&
	       strncmp(sandbox->report, "ready\n", 6) == 0) {
		sandbox->ready = true;
		sandbox->report_len -= 6;
		memmove(sandbox->report, sandbox->report + 6, sandbox->report_len + 1);
	}
	if (n > 0 && !nl)
		return;
	mcp_fd_close(&sandbox->in_fd);
	if (!nl || strncmp(sandbox->report, "done ", 5) != 0)
		return;
	errno = 0;
	code = strtol(sandbox->report + 5, &end, 10);
	if (errno || end != nl || code < 0 || code > 255)
		return;
	sandbox->done = true;
	sandbox->done_status = (int)code;
}

/* Takes what the job's output pipes hold now, without waiting for their end. */
static int mcp_sandbox_drain(const struct mcp_runner *runner, struct mcp_sandbox *sandbox)
{
	struct mcp_stream *streams[] = { &sandbox->out, &sandbox->err };
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(streams); i++)
		while (streams[i]->fd >= 0) {
			struct pollfd pfd = { .fd = streams[i]->fd, .events = POLLIN };

			if (poll(&pfd, 1, 0) != 1)
				break;
			r = mcp_stream_read(streams[i], runner->config->max_output_bytes);
			if (r < 0)
				return r;
		}
	return 0;
}

/*
 * Reads the job's output until it ends, a prepared runner reports its code's end, or the
 * deadline passes (then the job is killed); reaps launch unless the runner reported.
 */
static int mcp_sandbox_collect(const struct mcp_runner *runner, struct mcp_sandbox *sandbox,
			       long long deadline, bool *ret_killed, int *ret_wait_status)
{
	size_t cap = runner->config->max_output_bytes;
	bool killed = false, forced = false;
	int r;

	while (sandbox->out.fd >= 0 || sandbox->err.fd >= 0 || sandbox->in_fd >= 0) {
		struct pollfd fds[3] = { { .fd = sandbox->out.fd, .events = POLLIN },
					 { .fd = sandbox->err.fd, .events = POLLIN },
					 { .fd = killed ? -1 : sandbox->in_fd, .events = POLLIN } };
		long long left = deadline - monotonic_now_ms();

		if (left <= 0 && !killed) {
			mcp_sandbox_kill(runner, sandbox);
			killed = true;
			deadline = monotonic_now_ms() + MCP_RUN_GRACE_S * 1000;
			continue;
		}
		if (left <= 0 && !forced) {
			/* launch itself did not stop: it goes, its init and job with it. */
			kill(sandbox->pid, SIGKILL);
			forced = true;
			deadline = monotonic_now_ms() + 5000;
			continue;
		}
		if (left <= 0)
			break;
		/* Killed: its report no longer counts, the output's end is waited for. */
		if (killed && sandbox->out.fd < 0 && sandbox->err.fd < 0)
			break;
		r = poll(fds, 3, (int)(left > 1000 ? 1000 : left));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		if (fds[0].revents && (r = mcp_stream_read(&sandbox->out, cap)) < 0)
			return r;
		if (fds[1].revents && (r = mcp_stream_read(&sandbox->err, cap)) < 0)
			return r;
		if (fds[2].revents)
			mcp_sandbox_read_report(sandbox);
		if (sandbox->done) {
			/* Output written before the report is in the pipes already. */
			*ret_killed = false;
			return mcp_sandbox_drain(runner, sandbox);
		}
	}
	mcp_fd_close(&sandbox->in_fd);
	while (waitpid(sandbox->pid, ret_wait_status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	sandbox->pid = 0;
	*ret_killed = killed;
	return 0;
}

/*
 * Asks the sandbox's launch to write every refusal made until now to the call's audit log,
 * and waits until it has (or has exited, its log whole), at most MCP_RUN_SYNC_TIMEOUT_MS and
 * at most until deadline. Returns 0, or -ETIMEDOUT.
 */
static int mcp_sandbox_sync(struct mcp_sandbox *sandbox, long long deadline)
{
	long long sync_deadline = monotonic_now_ms() + MCP_RUN_SYNC_TIMEOUT_MS;
	unsigned char asked, answer[64];

	if (deadline > sync_deadline)
		deadline = sync_deadline;

	if (sandbox->sync_fd < 0)
		return 0;
	/*
	 * A byte of its own, 1 to 255 in turn: the answer to an earlier sync that timed out may
	 * still come, and must not pass for this one's.
	 */
	asked = sandbox->sync_seq = (unsigned char)(sandbox->sync_seq % 255 + 1);
	if (send(sandbox->sync_fd, &asked, 1, MSG_NOSIGNAL) != 1)
		return 0; /* launch is gone: its log is whole */
	for (;;) {
		struct pollfd pfd = { .fd = sandbox->sync_fd, .events = POLLIN };
		long long left = deadline - monotonic_now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		n = read(sandbox->sync_fd, answer, sizeof(answer));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		/* The end: launch is gone, its log whole. */
		if (n <= 0)
			return 0;
		/* Echoed in order: this sync's byte is the last of what came back. */
		if (memchr(answer, asked, (size_t)n))
			return 0;
	}
}

/* Removes what a sandbox left: its launch (killed if it still runs), folder, log, streams. */
static void mcp_sandbox_free(const struct mcp_runner *runner, struct mcp_sandbox *sandbox)
{
	if (sandbox->pid > 0) {
		mcp_sandbox_kill(runner, sandbox);
		mcp_fd_close(&sandbox->in_fd);
		mcp_fd_close(&sandbox->out.fd);
		mcp_fd_close(&sandbox->err.fd);
		while (waitpid(sandbox->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	mcp_fd_close(&sandbox->in_fd);
	mcp_fd_close(&sandbox->sync_fd);
	mcp_fd_close(&sandbox->out.fd);
	mcp_fd_close(&sandbox->err.fd);
	free(sandbox->out.text);
	free(sandbox->err.text);
	if (sandbox->dir[0])
		remove_tree(sandbox->dir);
	if (sandbox->audit[0])
		unlink(sandbox->audit);
	mcp_sandbox_reset(sandbox);
}

/*
 * Starts a sandbox: warm, a prepared runner waiting for its code; cold, with the code in its
 * folder already.
 */
static int mcp_sandbox_start(struct mcp_runner *runner, const char *code,
			     struct mcp_sandbox *sandbox)
{
	const struct mcp_run_config *config = runner->config;
	char file[sizeof(sandbox->dir) + 16], timeout[32], runner_path[96], preload[300];
	const char *argv[MCP_RUN_ARGS_MAX + 32];
	int in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	int sync_pair[2] = { -1, -1 };
	size_t argc = 0;
	int r = 0;

	mcp_sandbox_reset(sandbox);
	sandbox->warm = !code;
	sandbox->n = ++runner->calls;
	snprintf(sandbox->dir, sizeof(sandbox->dir), "%s/call-%u", runner->state_dir, sandbox->n);
	snprintf(sandbox->audit, sizeof(sandbox->audit), "%s/call-%u.jsonl", runner->state_dir,
		 sandbox->n);
	snprintf(sandbox->name, sizeof(sandbox->name), "mcp-%d-%u", (int)getpid(), sandbox->n);
	snprintf(file, sizeof(file), "%s/main.mts", sandbox->dir);
	snprintf(runner_path, sizeof(runner_path), "%s/runner.mjs", runner->state_dir);
	snprintf(preload, sizeof(preload), "--setenv=LAUNCH_MCP_PRELOAD=%s", runner->preload);
	/* A prepared sandbox waits for its call: the call's timeout is kept from here. */
	snprintf(timeout, sizeof(timeout), "%g",
		 sandbox->warm ? MCP_RUN_POOL_IDLE_S + config->timeout_s : config->timeout_s);

	if (mkdir(sandbox->dir, 0755) < 0)
		return -errno;
	if (code)
		r = write_file(file, code, 0644);
	if (r == 0 &&
	    ((sandbox->warm && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pipe) < 0 ||
				socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync_pair) < 0 ||
				fcntl(in_pipe[1], F_SETFL, O_NONBLOCK) < 0)) ||
	     pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0))
		r = -errno;
	if (r < 0)
		goto out;

	/* The job's environment: a PATH and a HOME, then what the server passes on. */
	argv[argc++] = config->launch_path;
	argv[argc++] = "--clearenv";
	argv[argc++] = "--setenv=PATH=/usr/local/bin:/usr/bin:/bin";
	argv[argc++] = "--setenv=HOME=/tmp";
	if (sandbox->warm) {
		argv[argc++] = preload;
		argv[argc++] = "--audit-sync-fd=" STRINGIFY(MCP_RUN_SYNC_FD);
	}
	for (size_t i = 0; i < config->nlaunch_args && i < MCP_RUN_ARGS_MAX; i++)
		argv[argc++] = config->launch_args[i];
	/* Last, so that they win over the same options among the server's. */
	argv[argc++] = "--audit-log";
	argv[argc++] = sandbox->audit;
	argv[argc++] = "--name";
	argv[argc++] = sandbox->name;
	argv[argc++] = "--timeout";
	argv[argc++] = timeout;
	argv[argc++] = "--user";
	argv[argc++] = config->user;
	argv[argc++] = "--";
	argv[argc++] = "/bin/sh";
	argv[argc++] = "-c";
	argv[argc++] = MCP_RUN_SCRIPT;
	argv[argc++] = "sh";
	argv[argc++] = sandbox->dir;
	argv[argc++] = config->runtime;
	if (sandbox->warm) {
		argv[argc++] = runner_path;
	} else {
		argv[argc++] = "--import";
		argv[argc++] = "tsx";
		argv[argc++] = "main.mts";
	}
	argv[argc] = NULL;

	sandbox->clock_offset_ns = mcp_realtime_ns() - mcp_boottime_ns();
	sandbox->pid = fork();
	if (sandbox->pid < 0) {
		r = -errno;
		sandbox->pid = 0;
		goto out;
	}
	if (sandbox->pid == 0)
		mcp_run_exec((char *const *)argv, sandbox->dir, in_pipe[0], out_pipe[1],
			     err_pipe[1], sync_pair[0]);
	sandbox->in_fd = TAKE_FD(in_pipe[1]);
	sandbox->sync_fd = TAKE_FD(sync_pair[1]);
	sandbox->out.fd = TAKE_FD(out_pipe[0]);
	sandbox->err.fd = TAKE_FD(err_pipe[0]);
out:
	for (int i = 0; i < 2; i++) {
		closep(&in_pipe[i]);
		closep(&sync_pair[i]);
		closep(&out_pipe[i]);
		closep(&err_pipe[i]);
	}
	if (r < 0)
		mcp_sandbox_free(runner, sandbox);
	return r;
}

/*
 * The prepared sandbox for the next call: a ready one, else the oldest (the nearest to ready);
 * a cold one with the code when none is left.
 */
static int mcp_sandbox_take(struct mcp_runner *runner, const char *code,
			    struct mcp_sandbox *ret_sandbox)
{
	char file[sizeof(ret_sandbox->dir) + 16];

	for (;;) {
		struct mcp_sandbox *best = NULL;

		for (size_t i = 0; i < runner->config->pool; i++) {
			struct mcp_sandbox *sandbox = &runner->pool[i];
			int status;

			if (sandbox->pid <= 0)
				continue;
			/* One that died while it waited (launch failed, the runner crashed). */
			if (waitpid(sandbox->pid, &status, WNOHANG) != 0) {
				sandbox->pid = 0;
				mcp_sandbox_free(runner, sandbox);
				continue;
			}
			if (!sandbox->ready && sandbox->in_fd >= 0)
				mcp_sandbox_read_report(sandbox);
			if (sandbox->in_fd < 0) {
				mcp_sandbox_free(runner, sandbox); /* it wrote what it should not */
				continue;
			}
			if (!best || (sandbox->ready && !best->ready) ||
			    (sandbox->ready == best->ready && sandbox->n < best->n))
				best = sandbox;
		}
		if (!best)
			return mcp_sandbox_start(runner, code, ret_sandbox);
		snprintf(file, sizeof(file), "%s/main.mts", best->dir);
		if (write_file(file, code, 0644) < 0) {
			mcp_sandbox_free(runner, best);
			continue;
		}
		*ret_sandbox = *best;
		mcp_sandbox_reset(best);
		return 0;
	}
}

/*
 * Where the call's own refusals start: after what a prepared runner was refused while it
 * prepared (glibc tries nscd's socket at its first look-up), which is not the code's. synced:
 * launch confirmed its log; else the refusals it writes later are told apart by their time.
 */
static void mcp_sandbox_mark_start(struct mcp_sandbox *sandbox, bool synced)
{
	struct stat st;

	if (stat(sandbox->audit, &st) == 0)
		sandbox->audit_from = st.st_size;
	/*
	 * A kernel refusal's ts is its boot time plus the offset launch fixed at its start, a
	 * refusal launch stamps itself (DNS) the wall clock's: the earlier of the two readings,
	 * so that a wall clock stepped or slewed while the sandbox waited leaves none of the
	 * code's refusals out (one of the runner's own may then be listed, never the reverse).
	 */
	if (!synced) {
		int64_t since = mcp_boottime_ns() + sandbox->clock_offset_ns,
			real = mcp_realtime_ns();

		if (real < since)
			since = real;
		if (audit_format_time(since, sandbox->audit_since, sizeof(sandbox->audit_since)) <
		    0)
			sandbox->audit_since[0] = '\0';
	}
}

/*
 * A ready runner's log synced (waiting at most until deadline) and its call's start marked.
 * Until its go the runner only waits, so this is done as soon as it is ready, between calls.
 */
static void mcp_sandbox_settle(struct mcp_sandbox *sandbox, long long deadline)
{
	if (!sandbox->ready || sandbox->synced)
		return;
	sandbox->synced = true;
	mcp_sandbox_mark_start(sandbox, mcp_sandbox_sync(sandbox, deadline) == 0);
}

/* Waits until a prepared runner is ready (one taken before it was), at most until deadline. */
static void mcp_sandbox_wait_ready(struct mcp_sandbox *sandbox, long long deadline)
{
	while (!sandbox->ready && sandbox->in_fd >= 0) {
		struct pollfd pfd = { .fd = sandbox->in_fd, .events = POLLIN };
		long long left = deadline - monotonic_now_ms();

		if (left <= 0 || (poll(&pfd, 1, (int)left) < 0 && errno != EINTR))
			break;
		mcp_sandbox_read_report(sandbox);
	}
	if (sandbox->ready)
		mcp_sandbox_settle(sandbox, deadline);
	else
		mcp_sandbox_mark_start(sandbox, false);
}

/* The frozen sandboxes of answered calls are killed now: their launches then exit. */
static void mcp_dying_kill(struct mcp_runner *runner)
{
	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
		if (runner->dying[i].pid > 0 && runner->dying[i].frozen) {
			mcp_sandbox_kill(runner, &runner->dying[i]);
			runner->dying[i].frozen = false;
		}
}

/*
 * Reaps the launches of sandboxes killed after their call; block: waits for all of them.
 * Returns how many are still running.
 */
static size_t mcp_dying_reap(struct mcp_runner *runner, bool block)
{
	size_t left = 0;

	/* A frozen one would never exit. */
	if (block)
		mcp_dying_kill(runner);

	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++) {
		struct mcp_sandbox *sandbox = &runner->dying[i];
		pid_t pid;

		if (sandbox->pid <= 0)
			continue;
		while ((pid = waitpid(sandbox->pid, NULL, block ? 0 : WNOHANG)) < 0 &&
		       errno == EINTR)
			;
		if (pid == 0) {
			left++;
			continue;
		}
		sandbox->pid = 0;
		/* The whole log, the lines of the teardown too, goes to the server's. */
		if (mcp_run_audit(runner, sandbox->audit, 0, NULL, NULL, true) < 0)
			fprintf(stderr, "launch mcp: audit log %s: cannot copy call %u's lines\n",
				runner->config->audit_path, sandbox->n);
		mcp_sandbox_free(runner, sandbox);
	}
	return left;
}

/*
 * A call answered on its runner's report: its sandbox is killed now, or once the answer is
 * out when it is frozen (mcp_dying_kill), and its launch reaped later, so that the answer
 * does not wait for the teardown.
 */
static void mcp_dying_add(struct mcp_runner *runner, struct mcp_sandbox *sandbox)
{
	if (!sandbox->frozen)
		mcp_sandbox_kill(runner, sandbox);
	mcp_fd_close(&sandbox->in_fd);
	mcp_fd_close(&sandbox->sync_fd);
	mcp_fd_close(&sandbox->out.fd);
	mcp_fd_close(&sandbox->err.fd);
	for (;;) {
		for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
			if (runner->dying[i].pid <= 0) {
				runner->dying[i] = *sandbox;
				mcp_sandbox_reset(sandbox);
				return;
			}
		mcp_dying_reap(runner, true);
	}
}

/* Prepares sandboxes until the pool is full; a failure leaves a slot for the next call. */
static void mcp_pool_fill(struct mcp_runner *runner)
{
	for (size_t i = 0; i < runner->config->pool; i++)
		if (runner->pool[i].pid <= 0)
			mcp_sandbox_start(runner, NULL, &runner->pool[i]);
}

static int mcp_run_call(void *ctx, const char *code, struct mcp_result *ret_result)
{
	struct mcp_runner *runner = ctx;
	const struct mcp_run_config *config = runner->config;
	struct mcp_sandbox sandbox;
	long long started, deadline;
	bool killed = false;
	int r, wait_status = 0;

	memset(ret_result, 0, sizeof(*ret_result));
	mcp_run_trace(runner, "call");
	mcp_dying_kill(runner);
	mcp_dying_reap(runner, false);
	/* A call within the refill's delay: the pool is filled now, this call takes from it. */
	if (runner->refill_at) {
		runner->refill_at = 0;
		mcp_pool_fill(runner);
	}
	r = mcp_sandbox_take(runner, code, &sandbox);
	if (r < 0)
		return r;
	mcp_run_trace(runner, "taken");
	/* The timeout is the call's: waiting for a prepared sandbox to be ready counts in it. */
	started = monotonic_now_ms();
	deadline = started + (long long)(config->timeout_s * 1000);
	if (sandbox.warm && !sandbox.synced) {
		mcp_sandbox_wait_ready(&sandbox, deadline);
		mcp_run_trace(runner, "waited");
	}
	/* The end of its input is the prepared runner's signal to import main.mts. */
	if (sandbox.in_fd >= 0 && shutdown(sandbox.in_fd, SHUT_WR) < 0)
		mcp_fd_close(&sandbox.in_fd);
	mcp_run_trace(runner, "go");
	r = mcp_sandbox_collect(runner, &sandbox, deadline, &killed, &wait_status);
	mcp_run_trace(runner, "reported");
	if (r < 0)
		goto out;
	ret_result->duration_ms = monotonic_now_ms() - started;
	if (sandbox.done) {
		/*
		 * launch writes a refusal a moment after the kernel made it: a connect refused
		 * just before the code's end may still be in its ring buffer. The sync makes it
		 * write them all; then the sandbox goes. A refusal that comes later (a process
		 * the code left behind) is in the server's log, not in the result.
		 */
		if (mcp_sandbox_sync(&sandbox, monotonic_now_ms() + MCP_RUN_SYNC_TIMEOUT_MS) < 0) {
			/* The model is told, as the server's own stderr is. */
			ret_result->refused_incomplete = true;
			fprintf(stderr,
				"launch mcp: call %u: launch did not confirm its audit log "
				"in %d ms: its refusals may be incomplete\n",
				sandbox.n, MCP_RUN_SYNC_TIMEOUT_MS);
		}
		mcp_run_trace(runner, "synced");
		sandbox.frozen = mcp_sandbox_freeze(runner, &sandbox);
		ret_result->exit_status = sandbox.done_status;
	} else if (WIFEXITED(wait_status))
		ret_result->exit_status = WEXITSTATUS(wait_status);
	else
		ret_result->exit_status = 128 + WTERMSIG(wait_status);
	/* launch's own timeout status (a cold call), or the server's kill (a prepared one). */
	ret_result->timed_out =
		killed || (ret_result->exit_status == 124 &&
			   ret_result->duration_ms >= (long long)(config->timeout_s * 1000));
	if (ret_result->timed_out)
		ret_result->exit_status = 124;
	r = mcp_run_audit(runner, sandbox.audit, sandbox.audit_from, sandbox.audit_since,
			  ret_result, !sandbox.done);
	if (r < 0) {
		fprintf(stderr, "launch mcp: audit log %s: %s\n", config->audit_path, strerror(-r));
		goto out;
	}
	mcp_run_trace(runner, "audited");
	/* Killed on purpose: the signal is the timeout's, not a crash. */
	if (ret_result->timed_out)
		ret_result->signal = 0;
	ret_result->out = TAKE_PTR(sandbox.out.text);
	ret_result->out_len = sandbox.out.len;
	ret_result->out_truncated = sandbox.out.truncated;
	ret_result->err = TAKE_PTR(sandbox.err.text);
	ret_result->err_len = sandbox.err.len;
	ret_result->err_truncated = sandbox.err.truncated;
out:
	if (r < 0)
		mcp_result_free(ret_result);
	if (sandbox.done && sandbox.pid > 0)
		mcp_dying_add(runner, &sandbox);
	mcp_sandbox_free(runner, &sandbox);
	return r;
}

/*
 * After each reply, work the answer need not wait for: the finished call's folder goes (before
 * the next call starts: calls see no other's), and the next call's sandbox is prepared while
 * the model reads this one's result (by mcp_run_wait, once the client has read it).
 */
static void mcp_run_idle(void *ctx)
{
	struct mcp_runner *runner = ctx;

	mcp_run_trace(runner, "replied");
	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
		if (runner->dying[i].pid > 0 && runner->dying[i].dir[0]) {
			remove_tree(runner->dying[i].dir);
			runner->dying[i].dir[0] = '\0';
		}
	runner->refill_at = monotonic_now_ms() + MCP_RUN_REFILL_DELAY_MS;
}

/*
 * Before each read of a request: the pool is filled when due, a prepared runner that reports
 * ready has its log synced now rather than in its call, and the launches of finished calls
 * are reaped as they exit (their logs copied). Returns once in_fd is readable, or when there
 * is nothing left to do.
 */
static void mcp_run_wait(void *ctx, int in_fd)
{
	struct mcp_runner *runner = ctx;

	for (;;) {
		struct pollfd fds[1 + MCP_RUN_POOL_MAX] = { { .fd = in_fd, .events = POLLIN } };
		struct mcp_sandbox *of[1 + MCP_RUN_POOL_MAX] = { NULL };
		size_t dying = mcp_dying_reap(runner, false), n = 1;
		int timeout = dying ? 100 : -1;

		if (runner->refill_at && monotonic_now_ms() >= runner->refill_at) {
			runner->refill_at = 0;
			/* The client has had the answer for a while: the last call's sandbox goes.
			 */
			mcp_dying_kill(runner);
			mcp_pool_fill(runner);
		}
		if (runner->refill_at) {
			long long left = runner->refill_at - monotonic_now_ms();

			/* Past refill_at already: a negative poll would block. */
			if (left < 0)
				left = 0;
			if (timeout < 0 || left < timeout)
				timeout = (int)left;
		}
		for (size_t i = 0; i < runner->config->pool; i++) {
			struct mcp_sandbox *sandbox = &runner->pool[i];

			if (sandbox->pid <= 0 || sandbox->synced || sandbox->in_fd < 0)
				continue;
			if (sandbox->ready) {
				mcp_sandbox_settle(sandbox,
						   monotonic_now_ms() + MCP_RUN_SYNC_TIMEOUT_MS);
				continue;
			}
			fds[n] = (struct pollfd){ .fd = sandbox->in_fd, .events = POLLIN };
			of[n++] = sandbox;
		}
		if (n == 1 && timeout < 0)
			return;
		/* A launch's exit is not an event here: looked for ten times a second. */
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			return;
		if (fds[0].revents) {
			/* Any request, not only a call: the last call's sandbox goes now. */
			mcp_dying_kill(runner);
			return;
		}
		for (size_t i = 1; i < n; i++)
			if (fds[i].revents)
				mcp_sandbox_read_report(of[i]);
	}
}

/* The server's folder: node_modules (a link to --modules) and the prepared runner. */
static int mcp_run_state_dir(struct mcp_runner *runner)
{
	char path[128];
	int r;

	snprintf(runner->state_dir, sizeof(runner->state_dir), "/run/launch-mcp.XXXXXX");
	if (!mkdtemp(runner->state_dir))
		return -errno;
	if (chmod(runner->state_dir, 0711) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/node_modules", runner->state_dir);
	if (symlink(runner->config->modules, path) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/runner.mjs", runner->state_dir);
	r = write_file(path, MCP_RUN_WARM_RUNNER, 0644);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/warmup.mts", runner->state_dir);
	r = write_file(path, MCP_RUN_WARMUP, 0644);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(MCP_RUN_SDKS); i++) {
		snprintf(path, sizeof(path), "%s/%s/package.json", runner->config->modules,
			 MCP_RUN_SDKS[i]);
		if (access(path, R_OK) == 0)
			snprintf(runner->preload + strlen(runner->preload),
				 sizeof(runner->preload) - strlen(runner->preload), "%s%s",
				 runner->preload[0] ? "," : "", MCP_RUN_SDKS[i]);
	}
	return 0;
}

int mcp_run_serve(const struct mcp_run_config *config, int in_fd, int out_fd, char *errbuf,
		  size_t errlen)
{
	struct mcp_runner runner = { .config = config,
				     .audit_fd = -1,
				     .trace = getenv("LAUNCH_MCP_TRACE") != NULL };
	const struct mcp_ops ops = {
		.run = mcp_run_call, .idle = mcp_run_idle, .wait = mcp_run_wait, .ctx = &runner
	};
	struct mcp_server server = { .ops = &ops,
				     .policy = config->policy,
				     .timeout_s = config->timeout_s };
	int r;

	for (size_t i = 0; i < MCP_RUN_POOL_MAX; i++)
		mcp_sandbox_reset(&runner.pool[i]);
	for (size_t i = 0; i < MCP_RUN_DYING_MAX; i++)
		mcp_sandbox_reset(&runner.dying[i]);
	if (config->audit_path) {
		runner.audit_fd = mcp_run_open_audit(config->audit_path);
		if (runner.audit_fd < 0) {
			r = runner.audit_fd;
			snprintf(errbuf, errlen, "audit log %s: %s", config->audit_path,
				 strerror(-r));
			return r;
		}
	}
	r = mcp_run_state_dir(&runner);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot make a folder for the calls (%s): %s",
			 runner.state_dir, strerror(-r));
		goto out;
	}
	mcp_pool_fill(&runner);
	r = mcp_serve(&server, in_fd, out_fd);
	if (r < 0)
		snprintf(errbuf, errlen, "MCP on standard input and output: %s", strerror(-r));
out:
	for (size_t i = 0; i < MCP_RUN_POOL_MAX; i++)
		mcp_sandbox_free(&runner, &runner.pool[i]);
	mcp_dying_reap(&runner, true);
	if (runner.state_dir[0] == '/')
		remove_tree(runner.state_dir);
	closep(&runner.audit_fd);
	return r;
}
