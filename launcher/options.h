/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command line: one table row per option (its names, its value, its help, what it sets),
 * from which getopt's tables and every command's --help are made, and the settings it fills.
 */
#ifndef LAUNCH_OPTIONS_H
#define LAUNCH_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "audit/audit.h"
#include "dns/dnsproxy.h"
#include "policy/http_rules.h"
#include "policy/limit.h"
#include "sandbox/jobenv.h"

#define MAX_POLICIES 64
/* --upstream-ca files one launch takes. */
#define MAX_UPSTREAM_CAS 16
#define SANDBOX_NAME_MAX 64

/* Whose --help lists a row of the common table. */
enum {
	CMD_RUN = 1 << 0,
	CMD_CHECK = 1 << 1,
	CMD_GC = 1 << 2,
	CMD_UPDATE = 1 << 3,
	CMD_MCP = 1 << 4,
};

/*
 * One option. It sets *flag to true, or *string to its value, or gives its value to parse
 * (0, or -1 after one line on stderr naming the option). value names the argument in --help
 * (NULL: it takes none; "=A|B": shown attached, --name=A|B); help is its text, one '\n' per
 * line break; heading, when set, is printed before it (a section's title).
 */
struct opt {
	const char *name;
	char short_name;
	const char *value;
	const char *help;
	bool *flag;
	const char **string;
	int (*parse)(const char *value);
	unsigned int commands;
	const char *heading;
	const char *help_mcp; /* its help in launch mcp --help, when that differs */
};

/* A command's --help: its synopsis, its own rows, the common rows it lists, the text after. */
struct command_help {
	const char *synopsis;
	const struct opt *own;
	size_t nown;
	unsigned int command;
	const char *epilogue;
	bool own_only; /* the common rows do not apply; operands and options may mix */
};

/* What the options set, read by every command. */
struct launch_args {
	char *policies[MAX_POLICIES];
	size_t npolicies;
	const char *audit_path;
	int audit_sync_fd; /* --audit-sync-fd; -1: none */
	const char *resolver;
	const char *cgroup_parent;
	const char *user;
	const char *name;
	double timeout_s;
	double audit_stall_s;
	bool audit_continue;
	enum audit_schema audit_format; /* --audit-format */
	bool allow_unix_unfiltered;
	bool allow_no_landlock;
	bool allow_degraded;
	bool verbose;
	bool no_dns_proxy;
	struct dnsproxy_config dns; /* defaults set by options_init */
	struct jobenv env;	    /* --clearenv, --setenv, --pass-env */
	bool notify_denials;
	struct job_limits limits; /* --pids-max and the others; LIMIT_UNSET when not given */
	/* --secret NAME or NAME=@FILE, as given: the values are read once the policies are */
	const char *secrets[POLICY_SECRETS_MAX];
	size_t nsecrets;
	const char *upstream_cas[MAX_UPSTREAM_CAS]; /* --upstream-ca, each readable */
	size_t nupstream_cas;
	bool audit_http_query; /* --audit-http-query: http lines keep the path's query */
	/* --gateway-client PORT4,PORT6: launch mcp's gateway serves the job there; 0: none */
	uint16_t gateway_port4, gateway_port6;
};

extern struct launch_args arg;
extern const struct opt options_common[];
extern const size_t options_ncommon;

/* The defaults the table's help names. */
void options_init(void);

/*
 * Parses the common options and, for a command that has any, its own (help->own), stopping at
 * the first operand. --help prints help's text and exits 0. Returns the index of the first
 * operand, or -1 after one line on stderr.
 */
int options_parse(int argc, char **argv, const struct command_help *help, bool need_policy);

/* A row's parse for --help: prints the command's help and exits 0. */
int options_show_help(const char *value);

/* Prints a command's --help: synopsis, its own rows, the common rows it lists, epilogue. */
void options_print_help(FILE *out, const struct command_help *help);

/* The rows of a table as --help lists them. */
void options_print_rows(FILE *out, const struct opt *rows, size_t n, unsigned int command);

/* A row of rows[] named name (long, without "--"), or NULL. */
const struct opt *options_find(const struct opt *rows, size_t n, const char *name);

/* One line on stderr, "launch: ...", that waits at most a second for a stalled stderr. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Replaces fail()'s "launch: " (a static string): "launch oci-hook: " for the engine's log. */
void fail_set_prefix(const char *prefix);

/* A decimal number 0..max. */
int parse_uint(const char *text, unsigned int max, unsigned int *ret_value);

#endif /* LAUNCH_OPTIONS_H */
