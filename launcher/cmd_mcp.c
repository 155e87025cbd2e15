// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch mcp: the agent tool server. Its own options are taken out of argv; every other option
 * goes on to each call's launch, which reads it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "agent/mcp_http.h"
#include "agent/mcp_run.h"
#include "agent/mcp_session.h"
#include "lib/util.h"
#include "sandbox/child.h"

static const char *mcp_runtime, *mcp_modules, *mcp_max_output, *mcp_pool, *mcp_max_calls;
static const char *mcp_http, *mcp_token_file;
static const char *mcp_session_idle;
static bool mcp_sessions, mcp_no_typecheck;

/* The defaults the help names, checked against the ones mcp_run uses. */
_Static_assert(MCP_RUN_DEFAULT_TIMEOUT_S == 30.0, "--timeout's help says 30");
_Static_assert(MCP_RUN_DEFAULT_MAX_OUTPUT_BYTES == 65536, "--max-output's help says 65536");
_Static_assert(MCP_RUN_DEFAULT_POOL == 2 && MCP_RUN_POOL_MAX == 16, "--pool's help says 2, 16");
_Static_assert(MCP_RUN_CALLS_MAX == 64, "--max-calls' help says 64");
_Static_assert(MCP_SESSION_DEFAULT_IDLE_S == 300 && MCP_SESSION_IDLE_MAX_S == 86400,
	       "--session-idle's help says 300, 86400");

static const struct opt mcp_options[] = {
	{ "modules", 0, "DIR",
	  "a node_modules folder with tsx and the provider's SDK,\n"
	  "or the npm project folder that holds one (default: the\n"
	  "current folder's node_modules)",
	  .string = &mcp_modules },
	{ "runtime", 0, "node|PATH", "the Node.js binary (default node)", .string = &mcp_runtime },
	{ "pool", 0, "N",
	  "sandboxes kept prepared for the next calls (default 2,\n"
	  "at most 16; 0: each call starts cold)",
	  .string = &mcp_pool },
	{ "max-calls", 0, "N",
	  "run_typescript calls run at once, each in its own\n"
	  "sandbox; more wait in turn (default: the online CPUs,\n"
	  "at most 64)",
	  .string = &mcp_max_calls },
	{ "max-output", 0, "BYTES",
	  "each of a call's stdout and stderr is cut there\n"
	  "(default 65536; the result says stdout_truncated)",
	  .string = &mcp_max_output },
	{ "http", 0, "[ADDR:]PORT",
	  "serve MCP's Streamable HTTP transport there instead of\n"
	  "stdio (ADDR: 127.0.0.1 when only a port is given;\n"
	  "[ADDR6]:PORT for IPv6); needs --token-file",
	  .string = &mcp_http },
	{ "token-file", 0, "FILE",
	  "with --http: the bearer token every request must carry\n"
	  "(Authorization: Bearer TOKEN), at least 16 characters",
	  .string = &mcp_token_file },
	{ "sessions", 0, NULL,
	  "let a call ask for \"session\": \"new\" and later calls\n"
	  "run in its kept sandbox (off: a fresh one per call)",
	  .flag = &mcp_sessions },
	{ "no-typecheck", 0, NULL,
	  "run the calls unchecked even where --modules has\n"
	  "typescript (prepared sandboxes are lighter then)",
	  .flag = &mcp_no_typecheck },
	{ "session-idle", 0, "SECONDS",
	  "a session ends after this long without a call\n"
	  "(default 300, at most 86400)",
	  .string = &mcp_session_idle },
};

static const struct command_help mcp_help = {
	.synopsis =
		"Usage: launch mcp --policy FILE [--policy FILE...] [--modules DIR] [--pool N]\n"
		"                  [--max-calls N] [--timeout SECONDS] [--max-output BYTES] "
		"[--pass-env NAME...]\n"
		"                  [--http [ADDR:]PORT --token-file FILE]\n"
		"                  [--sessions [--session-idle SECONDS]]\n"
		"\n"
		"Serves a Model Context Protocol tool, run_typescript, on standard input and\n"
		"output (or over HTTP with --http): each call runs its TypeScript in a fresh\n"
		"sandbox under these policies, with a working folder of its own, and its\n"
		"result lists what was refused.\n",
	.own = mcp_options,
	.nown = ARRAY_SIZE(mcp_options),
	.command = CMD_MCP,
	.epilogue = "The common options go on to each call's launch. docs/mcp.md has the tool's\n"
		    "input and result, and how to register the server with an agent.\n",
};

/* --max-calls' default: a call per online CPU, at least one, at most MCP_RUN_CALLS_MAX. */
static unsigned int mcp_default_max_calls(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 1)
		return 1;
	return cpus > MCP_RUN_CALLS_MAX ? MCP_RUN_CALLS_MAX : (unsigned int)cpus;
}

/* Whether folder/tsx/package.json is there: folder is a node_modules with tsx. */
static bool has_tsx(const char *folder)
{
	char path[PATH_MAX + 32];
	int n = snprintf(path, sizeof(path), "%s/tsx/package.json", folder);

	return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

/*
 * --modules DIR: a node_modules folder, or the folder that holds one (an npm project: users
 * give both), that has tsx. Writes the node_modules folder's absolute path; -1 after one line.
 */
static int mcp_modules_dir(const char *given, char *path, size_t len)
{
	char dir[PATH_MAX], inner[PATH_MAX + 16];
	int n;

	if (!realpath(given ?: ".", dir)) {
		fail("--modules: %s: %s (a node_modules folder, or the npm project folder that "
		     "holds one, with tsx and the provider's SDK: npm install tsx stripe)",
		     given ?: "the current folder", strerror(errno));
		return -1;
	}
	if (has_tsx(dir) && strlen(dir) < len) {
		strcpy(path, dir);
		return 0;
	}
	n = snprintf(inner, sizeof(inner), "%s/node_modules", dir);
	if (n > 0 && (size_t)n < sizeof(inner) && has_tsx(inner) && realpath(inner, dir) &&
	    strlen(dir) < len) {
		strcpy(path, dir);
		return 0;
	}
	fail("--modules: %s has no tsx, nor a node_modules folder with it, which runs the "
	     "TypeScript: npm install tsx there",
	     dir);
	return -1;
}

/*
 * --http and --token-file: the address and the token, read now (a server that could not check
 * its clients would not start). -1 after one line naming the option or the file.
 */
static int mcp_http_options(struct mcp_http_config *config)
{
	char text[MCP_HTTP_TOKEN_MAX_BYTES + 1], errbuf[512];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int r;

	if (!mcp_http) {
		if (mcp_token_file) {
			fail("--token-file: only with --http (stdio needs no token)");
			return -1;
		}
		return 0;
	}
	if (mcp_http_parse_listen(mcp_http, &config->addr, &config->addr_len) < 0) {
		fail("--http: \"%s\" is not PORT, ADDR:PORT or [ADDR6]:PORT (numbers, port "
		     "0-65535)",
		     mcp_http);
		return -1;
	}
	if (!mcp_token_file || !*mcp_token_file) {
		fail("--http: needs --token-file FILE, the bearer token clients must send");
		return -1;
	}
	fd = open(mcp_token_file, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, text, sizeof(text));
	if (n < 0) {
		fail("--token-file: %s: %s", mcp_token_file, strerror(errno));
		return -1;
	}
	r = n > MCP_HTTP_TOKEN_MAX_BYTES
		    ? -EINVAL
		    : mcp_http_token_parse(text, (size_t)n, config->token, sizeof(config->token));
	explicit_bzero(text, sizeof(text));
	if (r == -ENODATA) {
		fail("--token-file: %s is empty: write a random token there (for example: "
		     "openssl rand -hex 32 >%s)",
		     mcp_token_file, mcp_token_file);
		return -1;
	}
	if (r < 0) {
		fail("--token-file: %s: the token must be one line of %d to %d visible ASCII "
		     "characters, without spaces",
		     mcp_token_file, MCP_HTTP_TOKEN_MIN_BYTES, MCP_HTTP_TOKEN_MAX_BYTES - 1);
		return -1;
	}
	if (mcp_http_load(errbuf, sizeof(errbuf)) < 0) {
		fail("--http: %s", errbuf);
		return -1;
	}
	if (!mcp_http_is_loopback(&config->addr))
		fprintf(stderr,
			"launch mcp: --http %s is reachable from other hosts, in clear "
			"text: put a TLS proxy in front, or bind 127.0.0.1\n",
			mcp_http);
	return 0;
}

/* Takes every "--NAME" out of argv (before a "--"); true when there was one. */
static bool take_flag(int *argc, char **argv, const char *name)
{
	bool found = false;

	for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0;) {
		if (strcmp(argv[i], name) != 0) {
			i++;
			continue;
		}
		memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof(*argv));
		(*argc)--;
		found = true;
	}
	return found;
}

/* Takes "--NAME VALUE" or "--NAME=VALUE" out of argv; NULL when absent, "" without a value. */
static const char *take_option(int *argc, char **argv, const char *name)
{
	size_t len = strlen(name);
	const char *value = NULL;

	for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0;) {
		int taken = 0;

		if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') {
			value = argv[i] + len + 1;
			taken = 1;
		} else if (strcmp(argv[i], name) == 0) {
			value = i + 1 < *argc ? argv[i + 1] : "";
			taken = i + 1 < *argc ? 2 : 1;
		}
		if (!taken) {
			i++;
			continue;
		}
		memmove(&argv[i], &argv[i + taken],
			(size_t)(*argc - i - taken + 1) * sizeof(*argv));
		*argc -= taken;
	}
	return value;
}

/*
 * Each call's launch runs in the call's own folder, so a policy the server found by a relative
 * path is passed on by the absolute path it names here: the k-th --policy (any spelling getopt
 * takes: --policy V, --policy=V, a prefix such as --pol, -p V, -pV) becomes arg.policies[k].
 */
static int mcp_absolute_policies(char **args, int nargs)
{
	static char buf[MAX_POLICIES][PATH_MAX + 16];
	char abs[PATH_MAX];
	size_t k = 0;

	for (int i = 0; i < nargs; i++) {
		const char *a = args[i], *eq = strchr(a, '=');
		size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
		bool is_long = a[0] == '-' && a[1] == '-' && name_len >= 5 &&
			       strncmp(a, "--policy", name_len) == 0;
		bool is_short = a[0] == '-' && a[1] == 'p';
		int slot;

		if (strcmp(a, "--") == 0)
			break;
		if (!is_long && !is_short)
			continue;
		if (k == arg.npolicies || !realpath(arg.policies[k], abs)) {
			fail("--policy: cannot find %s: %s",
			     k < arg.npolicies ? arg.policies[k] : a, strerror(errno));
			return -ENOENT;
		}
		slot = (is_long && !eq) || (is_short && !a[2]) ? i + 1 : i;
		if (slot >= nargs)
			return -EINVAL;
		snprintf(buf[k], sizeof(buf[k]), "%s%s",
			 slot == i ? (is_long ? "--policy=" : "-p") : "", abs);
		args[slot] = buf[k];
		i = slot;
		k++;
	}
	return 0;
}

/* --sessions and --session-idle into config; -1 after one line. */
static int mcp_session_options(struct mcp_run_config *config)
{
	unsigned int idle_s = MCP_SESSION_DEFAULT_IDLE_S;

	if (mcp_session_idle &&
	    (parse_uint(mcp_session_idle, MCP_SESSION_IDLE_MAX_S, &idle_s) < 0 || idle_s < 1)) {
		fail("--session-idle: \"%s\" is not 1-%d seconds", mcp_session_idle,
		     MCP_SESSION_IDLE_MAX_S);
		return -1;
	}
	if (mcp_session_idle && !mcp_sessions) {
		fail("--session-idle: needs --sessions, which turns sessions on");
		return -1;
	}
	config->sessions = mcp_sessions;
	config->no_typecheck = mcp_no_typecheck;
	config->session_idle_s = idle_s;
	return 0;
}

int cmd_mcp(int argc, char **argv)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	struct mcp_run_config config = { 0 };
	static struct mcp_http_config http;
	struct child_config job = { 0 };
	char modules_path[PATH_MAX], self[PATH_MAX], errbuf[PATH_MAX + 256];
	char parent[PATH_MAX];
	int v1_error = 0;
	struct job_limits limits;
	uint64_t ram;
	unsigned int max_output_bytes = MCP_RUN_DEFAULT_MAX_OUTPUT_BYTES;
	unsigned int pool_size = MCP_RUN_DEFAULT_POOL;
	unsigned int max_calls = mcp_default_max_calls();
	int first, nforward;

	/* mcp's own options, taken out: the rest goes on to each call's launch. */
	for (size_t i = 0; i < ARRAY_SIZE(mcp_options); i++) {
		char name[32];
		const char *value;

		snprintf(name, sizeof(name), "--%s", mcp_options[i].name);
		if (mcp_options[i].flag) {
			*mcp_options[i].flag |= take_flag(&argc, argv, name);
			continue;
		}
		value = take_option(&argc, argv, name);
		if (value)
			*mcp_options[i].string = value;
	}
	config.runtime = mcp_runtime ?: "node";
	first = options_parse(argc, argv, &mcp_help, true);
	if (first < 0)
		return EXIT_LAUNCH_FAILED;
	if (first < argc) {
		fail("mcp: \"%s\" is not an option (the code comes in run_typescript calls)",
		     argv[first]);
		return EXIT_LAUNCH_FAILED;
	}
	if (arg.audit_sync_fd >= 0) {
		fail("--audit-sync-fd: not for launch mcp, which sets it for each call's launch");
		return EXIT_LAUNCH_FAILED;
	}
	if (arg.audit_format != AUDIT_SCHEMA_JSON) {
		fail("--audit-format: launch mcp reads each call's refusals from launch's own "
		     "lines: "
		     "json only here");
		return EXIT_LAUNCH_FAILED;
	}
	if (mcp_runtime && !*mcp_runtime) {
		fail("--runtime: needs a value: node, or the path of a node binary");
		return EXIT_LAUNCH_FAILED;
	}
	if (mcp_max_output && parse_uint(mcp_max_output, 64 << 20, &max_output_bytes) < 0) {
		fail("--max-output: \"%s\" is not 0-%d bytes", mcp_max_output, 64 << 20);
		return EXIT_LAUNCH_FAILED;
	}
	if (mcp_pool && parse_uint(mcp_pool, MCP_RUN_POOL_MAX, &pool_size) < 0) {
		fail("--pool: \"%s\" is not 0-%d prepared sandboxes", mcp_pool, MCP_RUN_POOL_MAX);
		return EXIT_LAUNCH_FAILED;
	}
	if (mcp_max_calls &&
	    (parse_uint(mcp_max_calls, MCP_RUN_CALLS_MAX, &max_calls) < 0 || max_calls < 1)) {
		fail("--max-calls: \"%s\" is not 1-%d calls", mcp_max_calls, MCP_RUN_CALLS_MAX);
		return EXIT_LAUNCH_FAILED;
	}
	if (mcp_http_options(&http) < 0)
		return EXIT_LAUNCH_FAILED;
	if (mcp_session_options(&config) < 0)
		return EXIT_LAUNCH_FAILED;
	/* The code imports tsx's loader and the SDK from here: it must be complete now. */
	if (mcp_modules_dir(mcp_modules, modules_path, sizeof(modules_path)) < 0)
		return EXIT_LAUNCH_FAILED;
	if (check_system() < 0 || resolve_policy_names() < 0 || compile_rules(&rules) < 0)
		return EXIT_LAUNCH_FAILED;
	/* Each call's launch takes the mounts made here, and the same policies and options. */
	job_limits_of(rules, &limits, &ram);
	if (cgroup_parent_dir(parent, sizeof(parent), &v1_error) < 0 ||
	    fail_v1_mount(v1_error, limit_wants_cgroup(&limits)) < 0)
		return EXIT_LAUNCH_FAILED;
	if (!realpath("/proc/self/exe", self)) {
		fail("cannot find launch's own binary: %s", strerror(errno));
		return EXIT_LAUNCH_FAILED;
	}
	/* Every option but a final "--" goes on to each call's launch, which reads them again. */
	nforward = first - 1;
	if (nforward > 0 && strcmp(argv[first - 1], "--") == 0)
		nforward--;
	if (mcp_absolute_policies(argv + 1, nforward) < 0)
		return EXIT_LAUNCH_FAILED;
	config.launch_path = self;
	config.launch_args = argv + 1;
	config.nlaunch_args = (size_t)nforward;
	config.modules = modules_path;
	config.audit_path = arg.audit_path;
	config.user = arg.user ?: MCP_RUN_DEFAULT_USER;
	/* Each call's folder is made for this user: its code may write there and nowhere else. */
	if (child_lookup_user(config.user, &job) < 0) {
		fail("--user: no such user \"%s\"", config.user);
		return EXIT_LAUNCH_FAILED;
	}
	config.uid = job.uid;
	config.gid = job.gid;
	config.policy = rules->names;
	config.timeout_s = arg.timeout_s > 0 ? arg.timeout_s : MCP_RUN_DEFAULT_TIMEOUT_S;
	config.max_output_bytes = max_output_bytes;
	config.pool = pool_size;
	config.max_calls = max_calls;
	config.cgroup_parent = parent;
	config.http = mcp_http ? &http : NULL;
	config.memory_max = limits.memory_max;
	if (mcp_run_serve(&config, STDIN_FILENO, STDOUT_FILENO, errbuf, sizeof(errbuf)) < 0) {
		fail("mcp: %s", errbuf);
		return EXIT_LAUNCH_FAILED;
	}
	return EXIT_SUCCESS;
}
