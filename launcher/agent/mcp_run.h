/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launch mcp: each run_typescript call in a fresh sandbox, a child `launch` of its own. */
#ifndef LAUNCH_MCP_RUN_H
#define LAUNCH_MCP_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MCP_RUN_DEFAULT_TIMEOUT_S	 30.0
#define MCP_RUN_DEFAULT_MAX_OUTPUT_BYTES (64 * 1024)
/* Prepared sandboxes waiting for the next calls: --pool, at most MCP_RUN_POOL_MAX. */
#define MCP_RUN_DEFAULT_POOL 2
#define MCP_RUN_POOL_MAX     16
/* run_typescript calls run at once: --max-calls, at most MCP_RUN_CALLS_MAX (default: CPUs). */
#define MCP_RUN_CALLS_MAX 64
/* The job runs as this user unless --user says otherwise: it owns nothing of root's. */
#define MCP_RUN_DEFAULT_USER "nobody"

struct mcp_http_config;

struct mcp_run_config {
	const char *launch_path;  /* this binary */
	char *const *launch_args; /* launch options every call gets (policies, --pass-env) */
	size_t nlaunch_args;
	const char *runtime;	   /* "node" (found through the job's PATH) or a path */
	const char *modules;	   /* absolute: a node_modules with tsx and the SDK */
	const char *audit_path;	   /* where each call's audit lines are appended; "-": stderr */
	const char *user;	   /* the job's user */
	const char *policy;	   /* the policies' names, for the tool description */
	const char *cgroup_parent; /* where each call's cgroup is: its cgroup.kill */
	double timeout_s;
	size_t max_output_bytes;     /* each of stdout and stderr */
	size_t pool;		     /* prepared sandboxes kept ready (0: each call starts cold) */
	size_t max_calls;	     /* calls run at once, each in a thread of its own; 1 or more */
	bool sessions;		     /* --sessions: a call may ask for a kept sandbox */
	unsigned int session_idle_s; /* a session ends after this long without a call */
	uint64_t memory_max;	     /* each sandbox's memory limit in bytes; 0: none */
	bool no_typecheck;	     /* --no-typecheck */
	uid_t uid; /* user's, as is each call's folder: the one its code may write */
	gid_t gid;
	/* --http: served over HTTP there instead of on in_fd/out_fd; NULL: stdio. */
	const struct mcp_http_config *http;
};

/*
 * Serves MCP on in_fd/out_fd until end of input (over HTTP until SIGINT or SIGTERM with
 * config->http). Returns 0, or a negative errno with one line
 * in errbuf.
 */
int mcp_run_serve(const struct mcp_run_config *config, int in_fd, int out_fd, char *errbuf,
		  size_t errlen);

#endif /* LAUNCH_MCP_RUN_H */
