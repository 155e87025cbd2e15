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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "mcp.h"
#include "mcp_run.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* A launch that outlives its own --timeout by this much is killed from here. */
#define MCP_RUN_GRACE_S	 15
#define MCP_RUN_ARGS_MAX 64
/* The job's shell: into the call's folder, whose node_modules is the server's --modules. */
static const char MCP_RUN_SCRIPT[] = "cd \"$1\" && shift && exec \"$@\"";

struct mcp_runner {
	const struct mcp_run_config *config;
	char state_dir[64]; /* 0711: the job may pass through to its folder, not list */
	unsigned int calls;
	int audit_fd; /* the server's audit log, where each call's lines go; -1: none */
};

static long long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
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

/* One output stream of the job, kept up to the cap. */
struct mcp_stream {
	int fd;
	char *text;
	size_t len;
	bool truncated;
};

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

/* Runs in the forked child: the launcher of one call, with its streams and limits. */
static _Noreturn void mcp_run_exec(char *const *argv, int out_fd, int err_fd)
{
	/* No core files of the job (or of launch) left behind; at most 64 MiB per file. */
	const struct rlimit core = { 0, 0 }, fsize = { 64 << 20, 64 << 20 };
	int null_fd = open("/dev/null", O_RDONLY);

	/* The server gone (its client closed it): the call goes too, launch passes it on. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		_exit(125);
	setrlimit(RLIMIT_CORE, &core);
	setrlimit(RLIMIT_FSIZE, &fsize);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	dprintf(STDERR_FILENO, "launch mcp: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(125);
}

/* Reads the call's audit log: its refusals, the job's own exit; copies it to the server's. */
static int mcp_run_audit(const struct mcp_runner *runner, const char *path,
			 struct mcp_result *result)
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
	for (char *line = text, *nl; line < text + len; line = nl + 1) {
		struct refusal refusal;

		nl = strchr(line, '\n');
		if (!nl)
			nl = text + len;
		if (refusal_parse(line, (size_t)(nl - line), &refusal) == 1) {
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
	if (runner->audit_fd < 0 || len == 0)
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

static int mcp_run_collect(const struct mcp_runner *runner, pid_t pid, struct mcp_stream *out,
			   struct mcp_stream *err, int *ret_wait_status)
{
	long long deadline =
		monotonic_ms() + (long long)((runner->config->timeout_s + MCP_RUN_GRACE_S) * 1000);
	bool killed = false;
	int r;

	while (out->fd >= 0 || err->fd >= 0) {
		struct pollfd fds[2] = { { .fd = out->fd, .events = POLLIN },
					 { .fd = err->fd, .events = POLLIN } };
		long long left = deadline - monotonic_ms();

		if (left <= 0 && !killed) {
			/* launch did not stop at its own timeout: it and the job go now. */
			kill(pid, SIGKILL);
			killed = true;
			deadline = monotonic_ms() + 5000;
			continue;
		}
		if (left <= 0)
			break;
		r = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		if (fds[0].revents &&
		    (r = mcp_stream_read(out, runner->config->max_output_bytes)) < 0)
			return r;
		if (fds[1].revents &&
		    (r = mcp_stream_read(err, runner->config->max_output_bytes)) < 0)
			return r;
	}
	while (waitpid(pid, ret_wait_status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int mcp_run_call(void *ctx, const char *code, struct mcp_result *ret_result)
{
	struct mcp_runner *runner = ctx;
	const struct mcp_run_config *config = runner->config;
	char dir[PATH_MAX], file[PATH_MAX + 16], link[PATH_MAX + 16], audit[PATH_MAX];
	char name[64], timeout[32];
	const char *argv[MCP_RUN_ARGS_MAX + 32];
	struct mcp_stream out = { .fd = -1 }, err = { .fd = -1 };
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	size_t argc = 0;
	long long started;
	int r, wait_status = 0;
	pid_t pid;

	memset(ret_result, 0, sizeof(*ret_result));
	runner->calls++;
	snprintf(dir, sizeof(dir), "%s/call-%u", runner->state_dir, runner->calls);
	snprintf(file, sizeof(file), "%s/main.mts", dir);
	snprintf(link, sizeof(link), "%s/node_modules", dir);
	snprintf(audit, sizeof(audit), "%s/call-%u.jsonl", runner->state_dir, runner->calls);
	snprintf(name, sizeof(name), "mcp-%d-%u", (int)getpid(), runner->calls);
	snprintf(timeout, sizeof(timeout), "%g", config->timeout_s);

	if (mkdir(dir, 0755) < 0)
		return -errno;
	r = write_file(file, code, 0644);
	if (r == 0 && symlink(config->modules, link) < 0)
		r = -errno;
	if (r == 0 && (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0))
		r = -errno;
	if (r < 0)
		goto out;

	/* The job's environment: a PATH and a HOME, then what the server passes on. */
	argv[argc++] = config->launch_path;
	argv[argc++] = "--clearenv";
	argv[argc++] = "--setenv=PATH=/usr/local/bin:/usr/bin:/bin";
	argv[argc++] = "--setenv=HOME=/tmp";
	for (size_t i = 0; i < config->nlaunch_args && i < MCP_RUN_ARGS_MAX; i++)
		argv[argc++] = config->launch_args[i];
	/* Last, so that they win over the same options among the server's. */
	argv[argc++] = "--audit-log";
	argv[argc++] = audit;
	argv[argc++] = "--name";
	argv[argc++] = name;
	argv[argc++] = "--timeout";
	argv[argc++] = timeout;
	argv[argc++] = "--user";
	argv[argc++] = config->user;
	argv[argc++] = "--";
	argv[argc++] = "/bin/sh";
	argv[argc++] = "-c";
	argv[argc++] = MCP_RUN_SCRIPT;
	argv[argc++] = "sh";
	argv[argc++] = dir;
	argv[argc++] = config->runtime;
	argv[argc++] = "--import";
	argv[argc++] = "tsx";
	argv[argc++] = "main.mts";
	argv[argc] = NULL;

	started = monotonic_ms();
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0)
		mcp_run_exec((char *const *)argv, out_pipe[1], err_pipe[1]);
	close(out_pipe[1]);
	close(err_pipe[1]);
	out_pipe[1] = err_pipe[1] = -1;
	out.fd = TAKE_FD(out_pipe[0]);
	err.fd = TAKE_FD(err_pipe[0]);
	r = mcp_run_collect(runner, pid, &out, &err, &wait_status);
	if (r < 0)
		goto out;
	ret_result->duration_ms = monotonic_ms() - started;
	if (WIFEXITED(wait_status))
		ret_result->exit_status = WEXITSTATUS(wait_status);
	else
		ret_result->exit_status = 128 + WTERMSIG(wait_status);
	/* launch's own timeout status, and not a job that happened to exit 124. */
	ret_result->timed_out = ret_result->exit_status == 124 &&
				ret_result->duration_ms >= (long long)(config->timeout_s * 1000);
	r = mcp_run_audit(runner, audit, ret_result);
	if (r < 0) {
		fprintf(stderr, "launch mcp: audit log %s: %s\n", config->audit_path, strerror(-r));
		goto out;
	}
	ret_result->out = TAKE_PTR(out.text);
	ret_result->out_len = out.len;
	ret_result->out_truncated = out.truncated;
	ret_result->err = TAKE_PTR(err.text);
	ret_result->err_len = err.len;
	ret_result->err_truncated = err.truncated;
out:
	if (r < 0)
		mcp_result_free(ret_result);
	free(out.text);
	free(err.text);
	closep(&out.fd);
	closep(&err.fd);
	for (int i = 0; i < 2; i++) {
		closep(&out_pipe[i]);
		closep(&err_pipe[i]);
	}
	remove_tree(dir);
	unlink(audit);
	return r;
}

int mcp_run_serve(const struct mcp_run_config *config, int in_fd, int out_fd, char *errbuf,
		  size_t errlen)
{
	struct mcp_runner runner = { .config = config, .audit_fd = -1 };
	const struct mcp_ops ops = { .run = mcp_run_call, .ctx = &runner };
	struct mcp_server server = { .ops = &ops,
				     .policy = config->policy,
				     .timeout_s = config->timeout_s };
	int r;

	if (config->audit_path) {
		runner.audit_fd = mcp_run_open_audit(config->audit_path);
		if (runner.audit_fd < 0) {
			r = runner.audit_fd;
			snprintf(errbuf, errlen, "audit log %s: %s", config->audit_path,
				 strerror(-r));
			return r;
		}
	}
	snprintf(runner.state_dir, sizeof(runner.state_dir), "/run/launch-mcp.XXXXXX");
	if (!mkdtemp(runner.state_dir) || chmod(runner.state_dir, 0711) < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "cannot make a folder for the calls (%s): %s",
			 runner.state_dir, strerror(-r));
		closep(&runner.audit_fd);
		return r;
	}
	r = mcp_serve(&server, in_fd, out_fd);
	if (r < 0)
		snprintf(errbuf, errlen, "MCP on standard input and output: %s", strerror(-r));
	remove_tree(runner.state_dir);
	closep(&runner.audit_fd);
	return r;
}
