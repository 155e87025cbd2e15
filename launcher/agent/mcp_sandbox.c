/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launch mcp: one call's sandbox, a child launch prepared or started, its output and its end. */
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

#include "audit/audit.h"
#include "mcp_gateway.h"
#include "mcp_run_internal.h"
#include "lib/util.h"

/* A launch that outlives its own --timeout by this much is killed from here. */
#define MCP_RUN_GRACE_S	 15
#define MCP_RUN_ARGS_MAX 64
/* A prepared sandbox waits at most this long for its call; then launch stops it. */
#define MCP_RUN_POOL_IDLE_S 86400
/* The descriptor a prepared sandbox's launch gets its sync socket on. */
#define MCP_RUN_SYNC_FD 3
/*
 * The job's shell: into the call's folder. Its parent, the server's folder, has node_modules
 * (a link to --modules), where Node finds tsx, the SDK and the warm runner's imports.
 */
static const char MCP_RUN_SCRIPT[] = "cd \"$1\" && shift && exec \"$@\"";

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

/* Closes and forgets: the sandbox's descriptors are closed from several places. */
void mcp_fd_close(int *fd)
{
	closep(fd);
	*fd = -1;
}

/* An empty sandbox slot: no launch, no descriptors. */
void mcp_sandbox_reset(struct mcp_sandbox *sandbox)
{
	memset(sandbox, 0, sizeof(*sandbox));
	sandbox->in_fd = sandbox->sync_fd = sandbox->out.fd = sandbox->err.fd = -1;
	sandbox->cancel_fd = -1;
}

static int remove_entry(const char *path, const struct stat *st __attribute__((unused)),
			int flag __attribute__((unused)), struct FTW *ftw __attribute__((unused)))
{
	remove(path);
	return 0;
}

/* Removes a call's folder, whatever a job running as root may have left in it. */
void mcp_remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int mcp_write_file(const char *path, const char *text, mode_t mode)
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
 * in the call's own folder (mcp_sandbox_make_dir): the job's working directory, the one
 * Landlock lets it write, is then that folder and never the server's, which earlier and later
 * calls would share.
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

/* Writes "1" to the sandbox's cgroup.kill: everything of the job dies, launch tears down. */
void mcp_sandbox_kill(const struct mcp_runner *runner, const struct mcp_sandbox *sandbox)
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
bool mcp_sandbox_freeze(const struct mcp_runner *runner, const struct mcp_sandbox *sandbox)
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
void mcp_sandbox_read_report(struct mcp_sandbox *sandbox)
{
	size_t room = sizeof(sandbox->report) - 1 - sandbox->report_len;
	ssize_t n = room ? read(sandbox->in_fd, sandbox->report + sandbox->report_len, room) : 0;
	char *nl, *end;
	bool keep;
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
	/*
	 * Type errors: the code did not run (mcp_typecheck_read has them). A call's runner exits
	 * 1; a session's waits for the session's next call on the same socket.
	 */
	if (nl && sandbox->ready && strncmp(sandbox->report, "types\n", 6) == 0) {
		if (sandbox->session) {
			sandbox->report_len -= 6;
			memmove(sandbox->report, sandbox->report + 6, sandbox->report_len + 1);
		} else {
			mcp_fd_close(&sandbox->in_fd);
		}
		sandbox->done = sandbox->type_errors = true;
		sandbox->done_status = 1;
		return;
	}
	if (n > 0 && !nl)
		return;
	/* A session's runner answers each call on the same socket: "exit" is its last word. */
	keep = sandbox->session && nl && strncmp(sandbox->report, "done ", 5) == 0;
	if (!keep)
		mcp_fd_close(&sandbox->in_fd);
	if (!nl || (strncmp(sandbox->report, "done ", 5) != 0 &&
		    !(sandbox->session && strncmp(sandbox->report, "exit ", 5) == 0)))
		return;
	errno = 0;
	code = strtol(sandbox->report + 5, &end, 10);
	if (errno || end != nl || code < 0 || code > 255) {
		mcp_fd_close(&sandbox->in_fd);
		return;
	}
	sandbox->done = true;
	sandbox->done_status = (int)code;
	sandbox->ended = !keep;
	if (keep) {
		sandbox->report_len -= (size_t)(nl + 1 - sandbox->report);
		memmove(sandbox->report, nl + 1, sandbox->report_len + 1);
	}
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
int mcp_sandbox_collect(const struct mcp_runner *runner, struct mcp_sandbox *sandbox,
			long long deadline, bool *ret_killed, int *ret_wait_status)
{
	size_t cap = runner->config->max_output_bytes;
	bool killed = false, forced = false;
	int r;

	while (sandbox->out.fd >= 0 || sandbox->err.fd >= 0 || sandbox->in_fd >= 0) {
		struct pollfd fds[4] = { { .fd = sandbox->out.fd, .events = POLLIN },
					 { .fd = sandbox->err.fd, .events = POLLIN },
					 { .fd = killed ? -1 : sandbox->in_fd, .events = POLLIN },
					 { .fd = killed ? -1 : sandbox->cancel_fd,
					   .events = POLLIN } };
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
		r = poll(fds, 4, (int)(left > 1000 ? 1000 : left));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		/* Cancelled: killed as at the deadline; its output's end is waited for. */
		if (fds[3].revents) {
			mcp_sandbox_kill(runner, sandbox);
			killed = true;
			deadline = monotonic_now_ms() + MCP_RUN_GRACE_S * 1000;
			continue;
		}
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
int mcp_sandbox_sync(struct mcp_sandbox *sandbox, long long deadline)
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
void mcp_sandbox_free(const struct mcp_runner *runner, struct mcp_sandbox *sandbox)
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
		mcp_remove_tree(sandbox->dir);
	mcp_gwcall_free(sandbox->gwcall);
	if (sandbox->audit[0])
		unlink(sandbox->audit);
	mcp_sandbox_reset(sandbox);
}

/*
 * The call's folder, its code's working directory and the one folder of the host it may
 * write (launch's Landlock rule for the working directory): made fresh for this call, 0700
 * and the job's user's, under a name no other call can guess (the server's folder is 0711:
 * no call can list it). Removed when the call ends, before the next one starts.
 */
static int mcp_sandbox_make_dir(const struct mcp_runner *runner, struct mcp_sandbox *sandbox)
{
	if (!mkdtemp(sandbox->dir)) {
		sandbox->dir[0] = '\0';
		return -errno;
	}
	if (chown(sandbox->dir, runner->config->uid, runner->config->gid) < 0 ||
	    chmod(sandbox->dir, 0700) < 0)
		return -errno;
	return 0;
}

/*
 * Starts a sandbox: warm, a prepared runner waiting for its code; cold, with the code in its
 * folder already.
 */
int mcp_sandbox_start(struct mcp_runner *runner, const char *code, struct mcp_sandbox *sandbox)
{
	const struct mcp_run_config *config = runner->config;
	char file[sizeof(sandbox->dir) + 16], timeout[32], runner_path[96], preload[300];
	char typecheck[40];
	const char *argv[MCP_RUN_ARGS_MAX + MCP_GATEWAY_ENV_MAX + 32];
	int in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	int sync_pair[2] = { -1, -1 };
	size_t argc = 0;
	int r = 0;

	mcp_sandbox_reset(sandbox);
	sandbox->warm = !code;
	sandbox->n = ++runner->calls;
	snprintf(sandbox->dir, sizeof(sandbox->dir), "%s/call-%u.XXXXXX", runner->state_dir,
		 sandbox->n);
	snprintf(sandbox->audit, sizeof(sandbox->audit), "%s/call-%u.jsonl", runner->state_dir,
		 sandbox->n);
	snprintf(sandbox->name, sizeof(sandbox->name), "mcp-%d-%u", (int)getpid(), sandbox->n);
	snprintf(runner_path, sizeof(runner_path), "%s/runner.mjs", runner->state_dir);
	snprintf(preload, sizeof(preload), "--setenv=LAUNCH_MCP_PRELOAD=%s", runner->preload);
	snprintf(typecheck, sizeof(typecheck), "--setenv=LAUNCH_MCP_TYPECHECK=%d",
		 runner->typecheck);
	/* A prepared sandbox waits for its call: the call's timeout is kept from here. */
	snprintf(timeout, sizeof(timeout), "%g",
		 sandbox->warm ? MCP_RUN_POOL_IDLE_S + config->timeout_s : config->timeout_s);

	r = mcp_sandbox_make_dir(runner, sandbox);
	/* Its own ports on the server's gateway: its requests are told from other calls'. */
	if (r == 0 && config->gateway)
		r = mcp_gwcall_add(config->gateway, sandbox->name, sandbox->audit,
				   &sandbox->gwcall);
	snprintf(file, sizeof(file), "%s/main.mts", sandbox->dir);
	if (r == 0 && code)
		r = mcp_write_file(file, code, 0644);
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
		if (runner->typecheck)
			argv[argc++] = typecheck;
		argv[argc++] = "--audit-sync-fd=" STRINGIFY(MCP_RUN_SYNC_FD);
	}
	for (size_t i = 0; i < config->nlaunch_args && i < MCP_RUN_ARGS_MAX; i++)
		argv[argc++] = config->launch_args[i];
	if (sandbox->gwcall) {
		argc += mcp_gateway_env_args(config->gateway, argv + argc, MCP_GATEWAY_ENV_MAX);
		argv[argc++] = mcp_gwcall_arg(sandbox->gwcall);
	}
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
 * The prepared sandbox for the next call: a ready one, else the oldest (the nearest to ready).
 * When none is left: a cold one with the code, unless the code is to be type-checked (check):
 * then a prepared one started now, its main.mts written at once, so that its runner skips its
 * warm-up's probes (the call pays typescript's load) and checks it. code NULL (a session's): a
 * prepared one only, started now when none is left, its code written later.
 */
int mcp_sandbox_take(struct mcp_runner *runner, const char *code, bool check,
		     struct mcp_sandbox *ret_sandbox)
{
	char file[sizeof(ret_sandbox->dir) + 16];
	int r;

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
		if (!best && code && check) {
			r = mcp_sandbox_start(runner, NULL, ret_sandbox);
			if (r < 0)
				return r;
			snprintf(file, sizeof(file), "%s/main.mts", ret_sandbox->dir);
			r = mcp_write_file(file, code, 0644);
			if (r < 0)
				mcp_sandbox_free(runner, ret_sandbox);
			return r;
		}
		if (!best)
			return mcp_sandbox_start(runner, code, ret_sandbox);
		snprintf(file, sizeof(file), "%s/main.mts", best->dir);
		if (code && mcp_write_file(file, code, 0644) < 0) {
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
void mcp_sandbox_mark_start(struct mcp_sandbox *sandbox, bool synced)
{
	struct stat st;

	if (stat(sandbox->audit, &st) == 0)
		sandbox->audit_from = st.st_size;
	if (synced)
		sandbox->audit_since[0] = '\0';
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
void mcp_sandbox_settle(struct mcp_sandbox *sandbox, long long deadline)
{
	if (!sandbox->ready || sandbox->synced)
		return;
	sandbox->synced = true;
	mcp_sandbox_mark_start(sandbox, mcp_sandbox_sync(sandbox, deadline) == 0);
}

/* Waits until a prepared runner is ready (one taken before it was), at most until deadline. */
void mcp_sandbox_wait_ready(struct mcp_sandbox *sandbox, long long deadline)
{
	while (!sandbox->ready && sandbox->in_fd >= 0) {
		struct pollfd pfd[2] = { { .fd = sandbox->in_fd, .events = POLLIN },
					 { .fd = sandbox->cancel_fd, .events = POLLIN } };
		long long left = deadline - monotonic_now_ms();

		if (left <= 0 || (poll(pfd, 2, (int)left) < 0 && errno != EINTR))
			break;
		/* Cancelled: the call goes on to mcp_sandbox_collect, which kills it. */
		if (pfd[1].revents)
			break;
		if (pfd[0].revents)
			mcp_sandbox_read_report(sandbox);
	}
	if (sandbox->ready)
		mcp_sandbox_settle(sandbox, deadline);
	else
		mcp_sandbox_mark_start(sandbox, false);
}
