/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subcommands, one file each (cmd_*.c), and what they share. Each cmd_* takes the
 * command's own argv (argv[0] its name) and returns launch's exit status.
 */
#ifndef LAUNCH_COMMANDS_H
#define LAUNCH_COMMANDS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "policy/rules.h"
#include "sandbox/cglimit.h"

/* launch [OPTIONS] -- COMMAND [ARG...] */
int cmd_run(int argc, char **argv);
/* launch check --policy FILE... */
int cmd_check(int argc, char **argv);
/* launch gc [--unload] */
int cmd_gc(int argc, char **argv);
/* launch update ID --policy FILE... */
int cmd_update(int argc, char **argv);
/* launch mcp --policy FILE... [--modules DIR] ... */
int cmd_mcp(int argc, char **argv);
/* launch learn AUDIT.jsonl [--sandbox ID] [--name NAME] [--wildcards] */
int cmd_learn(int argc, char **argv);
/* launch report AUDIT.jsonl */
int cmd_report(int argc, char **argv);
/* launch oci-hook (the OCI state on stdin) */
int cmd_oci(int argc, char **argv);

/* The run command's --help: launch --help, and launch's synopsis of every command. */
extern const struct command_help cmd_run_help;

/* Checks the privileges and kernel features launch needs, with a hint for each. */
int check_system(void);

/*
 * --policy NAME (no '/', no ".json"): /etc/launch/policies/NAME.json, then the installed
 * <prefix>/share/launch/policies/NAME.json, then a build folder's policies/NAME.json; else the
 * file NAME itself. Rewrites arg.policies.
 */
int resolve_policy_names(void);

/* Compiles arg.policies (with --resolver) into *ret_rules and prints their warnings. */
int compile_rules(struct rules **ret_rules);

/* Fails when the job has limits a cgroup controller enforces and v1 could not be mounted. */
int fail_v1_mount(int v1_error, bool limits);

/* The default cgroup parent, <cgroup2 mount>/launch. */
int cgroup_parent_default(char *parent, size_t len);

/*
 * The folder under which sandbox cgroups are made (--cgroup-parent, else the default, mounting
 * a cgroup2 for launch alone when none is visible). *ret_v1_error: why the v1 hierarchies of
 * the limits could not be mounted again, when they had to be. known: the mounts as the caller
 * read them, or NULL; *ret_mounted (unless NULL): whether launch mounted its own.
 */
int cgroup_parent_dir_known(char *parent, size_t len, const struct cgroup_mounts *known,
			    int *ret_v1_error, bool *ret_mounted);
int cgroup_parent_dir(char *parent, size_t len, int *ret_v1_error);

/* The job's limits: the options, else the strictest policy's, else this host's defaults. */
void job_limits_of(const struct rules *rules, struct job_limits *ret, uint64_t *ret_ram);

/*
 * Feeds every line of path ("-": standard input) to take(ctx, line, len). Returns the lines
 * taken (take's 1s), or -errno; *ret_bad counts lines that are not audit lines.
 */
long read_audit_log(const char *path, int (*take)(void *ctx, const char *line, size_t len),
		    void *ctx, size_t *ret_bad);

/* A warning naming the lines of path that are not audit lines, when there are any. */
void warn_bad_audit_lines(const char *path, size_t bad);

#endif /* LAUNCH_COMMANDS_H */
