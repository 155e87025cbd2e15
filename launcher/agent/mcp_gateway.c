// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch mcp's HTTPS gateway: one gateway for the server, its calls' sandboxes its clients. The
 * upstream keep-alive pool is the server's, so a call's first request to the provider pays a
 * handshake with the gateway on the host, not one with the provider.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "lib/util.h"
#include "mcp_gateway.h"

struct mcp_gateway {
	struct mcp_gateway_config config;
	/*
	 * Formats every call's http lines: used on the gateway's one thread only, its sandbox
	 * name set for each line. Large (its queue is never used): made once.
	 */
	struct audit_log *format;
};

struct mcp_gwcall {
	struct mcp_gateway *mg;
	struct gateway_client *client;
	char name[64];
	char arg[64];
	int audit_fd;  /* the call's log, where its launch writes too (O_APPEND, whole lines) */
	int cgroup_fd; /* opened at its first request: the cgroup is its launch's to make */
	unsigned long long seq;
	pthread_mutex_t lock; /* requests: the gateway's thread adds, the call's thread takes */
	struct mcp_http_request *requests;
	size_t nrequests;
	unsigned long long lost;
};

int mcp_gateway_new(const struct mcp_gateway_config *config, struct mcp_gateway **ret)
{
	struct mcp_gateway *mg = calloc(1, sizeof(*mg));

	if (!mg || !(mg->format = calloc(1, sizeof(*mg->format)))) {
		free(mg);
		return -ENOMEM;
	}
	mg->config = *config;
	snprintf(mg->format->policy, sizeof(mg->format->policy), "%s", config->policy_names);
	if (gethostname(mg->format->host, sizeof(mg->format->host) - 1) < 0)
		mg->format->host[0] = '\0';
	*ret = mg;
	return 0;
}

void mcp_gateway_free(struct mcp_gateway *mg)
{
	if (!mg)
		return;
	free(mg->format);
	free(mg);
}

size_t mcp_gateway_env_args(const struct mcp_gateway *mg, const char **argv, size_t max)
{
	size_t n = 0;

	for (; mg && n < mg->config.nenv && n < max; n++)
		argv[n] = mg->config.env[n];
	return n;
}

/*
 * The job's process on the connection (its source port), its comm and exe, for the http
 * line: looked up while the job still holds the connection, as launch run's gateway does.
 */
static void mcp_gwcall_find_peer(struct mcp_gwcall *call, const struct gateway_request_log *log,
				 struct audit_http *http, char *comm, size_t comm_len, char *exe,
				 size_t exe_len)
{
	const struct mcp_gateway_config *config = &call->mg->config;
	char path[PATH_MAX];
	ssize_t n;
	int pid;

	if (call->cgroup_fd < 0 && config->cgroup_parent) {
		snprintf(path, sizeof(path), "%s/%s", config->cgroup_parent, call->name);
		call->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (!log->peer_port || call->cgroup_fd < 0 || !config->peer_pid)
		return;
	pid = config->peer_pid(call->cgroup_fd, log->peer_port, log->peer_v6);
	if (pid <= 0)
		return;
	http->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	{
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

		n = fd >= 0 ? read(fd, comm, comm_len - 1) : -1;
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, exe_len - 1);
	exe[n > 0 ? n : 0] = '\0';
	http->comm = comm[0] ? comm : NULL;
	http->exe = exe[0] ? exe : NULL;
}

/* At accept: a process of the call's sandbox holds the other end (gateway.h, peer_ok). */
static bool mcp_gwcall_peer_ok(void *ctx, uint16_t port, bool v6)
{
	struct mcp_gwcall *call = ctx;
	const struct mcp_gateway_config *config = &call->mg->config;
	char path[PATH_MAX];

	if (call->cgroup_fd < 0 && config->cgroup_parent) {
		snprintf(path, sizeof(path), "%s/%s", config->cgroup_parent, call->name);
		call->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return port && call->cgroup_fd >= 0 && config->peer_pid &&
	       config->peer_pid(call->cgroup_fd, port, v6) > 0;
}

/* The http line, into the call's log: the server copies it with the call's own lines. */
static void mcp_gwcall_log(struct mcp_gwcall *call, const struct gateway_request_log *log)
{
	struct audit_log *format = call->mg->format;
	struct audit_http http = {
		.method = log->method,
		.host = log->host,
		.path = log->path,
		.status = log->status,
		.bytes_out = log->bytes_out,
		.bytes_in = log->bytes_in,
		.duration_ms = log->duration_ms,
		.allowed = log->allowed,
		.reason = log->reason,
		.secret = log->secret,
	};
	char line[AUDIT_LINE_MAX], comm[32] = "", exe[PATH_MAX] = "";
	int n;

	if (call->audit_fd < 0)
		return;
	mcp_gwcall_find_peer(call, log, &http, comm, sizeof(comm), exe, sizeof(exe));
	/*
	 * A stream of the call's own beside its launch's lines: (sandbox, seq) names a line, and
	 * the server's seq could not be the launch's.
	 */
	snprintf(format->sandbox, sizeof(format->sandbox), "%s" MCP_GATEWAY_SANDBOX_SUFFIX,
		 call->name);
	format->seq = call->seq++;
	n = audit_format_http(format, &http, line, sizeof(line));
	if (n > 0)
		(void)!write(call->audit_fd, line, (size_t)n);
}

/* On the gateway's thread, for each of the call's requests: never blocks on the call. */
static void mcp_gwcall_on_request(void *ctx, const struct gateway_request_log *log)
{
	struct mcp_gwcall *call = ctx;
	struct mcp_http_request *req;

	mcp_gwcall_log(call, log);
	pthread_mutex_lock(&call->lock);
	if (call->nrequests == MCP_GATEWAY_CALL_REQUESTS_MAX) {
		call->lost++;
		pthread_mutex_unlock(&call->lock);
		return;
	}
	req = &call->requests[call->nrequests++];
	snprintf(req->method, sizeof(req->method), "%s", log->method ?: "");
	snprintf(req->host, sizeof(req->host), "%s", log->host ?: "");
	snprintf(req->path, sizeof(req->path), "%s", log->path ?: "");
	snprintf(req->reason, sizeof(req->reason), "%s", log->reason ?: "");
	req->status = log->status;
	req->allowed = log->allowed;
	pthread_mutex_unlock(&call->lock);
}

int mcp_gwcall_add(struct mcp_gateway *mg, const char *name, const char *audit_path,
		   struct mcp_gwcall **ret)
{
	struct gateway_client_config cc = {
		.policies = mg->config.policies,
		.npolicies = mg->config.npolicies,
		.secrets = mg->config.secrets,
		.nsecrets = mg->config.nsecrets,
		.on_request = mcp_gwcall_on_request,
		.peer_ok = mcp_gwcall_peer_ok,
	};
	struct mcp_gwcall *call = calloc(1, sizeof(*call));
	char why[512];
	uint16_t port4 = 0, port6 = 0;
	int r;

	if (!call)
		return -ENOMEM;
	call->mg = mg;
	call->cgroup_fd = -1;
	pthread_mutex_init(&call->lock, NULL);
	snprintf(call->name, sizeof(call->name), "%s", name);
	call->requests = calloc(MCP_GATEWAY_CALL_REQUESTS_MAX, sizeof(*call->requests));
	/* Made here, before its launch opens it: 0640, as launch makes its own. */
	call->audit_fd =
		open(audit_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (!call->requests || call->audit_fd < 0) {
		r = call->requests ? -errno : -ENOMEM;
		goto fail;
	}
	cc.ctx = call;
	r = gateway_client_add(mg->config.gw, &cc, &call->client, why, sizeof(why));
	if (r < 0)
		goto fail;
	gateway_client_ports(call->client, &port4, &port6);
	snprintf(call->arg, sizeof(call->arg), "--gateway-client=%u,%u", port4, port6);
	*ret = call;
	return 0;
fail:
	mcp_gwcall_free(call);
	return r;
}

const char *mcp_gwcall_arg(const struct mcp_gwcall *call)
{
	return call->arg;
}

int mcp_gwcall_take(struct mcp_gwcall *call, struct mcp_http_request **ret_requests, size_t *ret_n,
		    unsigned long long *ret_lost)
{
	struct mcp_http_request *copy;

	if (!call)
		return 0;
	pthread_mutex_lock(&call->lock);
	copy = call->nrequests ? malloc(call->nrequests * sizeof(*copy)) : NULL;
	if (call->nrequests && !copy) {
		pthread_mutex_unlock(&call->lock);
		return -ENOMEM;
	}
	if (copy)
		memcpy(copy, call->requests, call->nrequests * sizeof(*copy));
	free(*ret_requests);
	*ret_requests = copy;
	*ret_n = call->nrequests;
	*ret_lost = call->lost;
	/* Taken: a sandbox that serves more calls (a session's) lists each call's own. */
	call->nrequests = 0;
	call->lost = 0;
	pthread_mutex_unlock(&call->lock);
	return 0;
}

void mcp_gwcall_stop(struct mcp_gwcall *call)
{
	/* Returns once on_request is no more called for it. */
	if (call && call->client)
		gateway_client_remove(call->client);
	if (call)
		call->client = NULL;
}

void mcp_gwcall_free(struct mcp_gwcall *call)
{
	if (!call)
		return;
	mcp_gwcall_stop(call);
	if (call->audit_fd >= 0)
		close(call->audit_fd);
	if (call->cgroup_fd >= 0)
		close(call->cgroup_fd);
	pthread_mutex_destroy(&call->lock);
	free(call->requests);
	free(call);
}
