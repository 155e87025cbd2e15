// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch oci-hook: an OCI hook (oci-hooks(5)) that puts a container under the policies its
 * io.launch.policy annotation names, at createRuntime, and releases it at poststop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "lib/util.h"
#include "sandbox/container.h"
#include "sandbox/gc.h"

/* The OCI state is a few KiB; more is not an engine's. */
#define OCI_STATE_MAX (1 << 20)
/* poststop waits this long for the supervisor's last lines. */
#define OCI_STOP_TIMEOUT_MS 10000

static const struct command_help oci_help = {
	.synopsis = "Usage: launch oci-hook   (run by a container engine, the OCI state on "
		    "standard input)\n"
		    "\n"
		    "At createRuntime, puts the container's processes under the policies of its\n"
		    "annotation io.launch.policy (names or paths, \",\" between; audit log\n"
		    "io.launch.audit-log, default " CONTAINER_AUDIT_LOG_DEFAULT
		    "; io.launch.audit-only=true logs\n"
		    "without refusing; io.launch.resolver=ADDR[:PORT], the DNS proxy's upstream,\n"
		    "default the host's /etc/resolv.conf); at poststop, releases it. Any failure "
		    "at createRuntime\n"
		    "exits 1 with one line on stderr, and the engine does not start the container\n"
		    "(docs/containers.md).\n",
	.own_only = true,
};

static int read_state(char **ret_text)
{
	return read_fd_text(STDIN_FILENO, OCI_STATE_MAX, ret_text);
}

/* io.launch.policy's names into arg.policies, as --policy NAME would put them. */
static int split_policies(char *list)
{
	for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
		while (*name == ' ')
			name++;
		if (!*name)
			continue;
		if (arg.npolicies == MAX_POLICIES) {
			fail("io.launch.policy: more than %d policies", MAX_POLICIES);
			return -E2BIG;
		}
		arg.policies[arg.npolicies++] = name;
	}
	if (arg.npolicies == 0) {
		fail("io.launch.policy names no policy");
		return -EINVAL;
	}
	return 0;
}

/*
 * The policies, compiled as launch's own. Host rules are resolved with the resolver of
 * io.launch.resolver, else the host's first nameserver (--resolver's semantics), which the
 * container's DNS proxy also asks.
 */
static int oci_compile(struct container_state *state, struct rules **ret_rules)
{
	int r = split_policies(state->policies);

	if (r < 0)
		return r;
	if (state->resolver[0])
		arg.resolver = state->resolver;
	arg.dns.audit_only = state->audit_only;
	if (resolve_policy_names() < 0 || compile_rules(ret_rules) < 0)
		return -EINVAL;
	return 0;
}

static int oci_create(struct container_state *state)
{
	_cleanup_(rules_freep) struct rules *rules = NULL;
	char parent[PATH_MAX], errbuf[2048];
	struct container_options options = { .state = state };
	int v1_error = 0, r;

	if (state->pid <= 0) {
		fail("the OCI state has no \"pid\" (run at createRuntime)");
		return EXIT_FAILURE;
	}
	if (oci_compile(state, &rules) < 0)
		return EXIT_FAILURE;
	if (check_system() < 0 || cgroup_parent_dir(parent, sizeof(parent), &v1_error) < 0)
		return EXIT_FAILURE;
	/* What a killed supervisor left behind goes first; a failure here harms no one. */
	gc_sweep();
	options.cgroup_parent = parent;
	options.rules = rules;
	options.audit_stall_ms = (long long)(arg.audit_stall_s * 1000.0 + 0.5);
	/* As launch run: names outside the policies are refused and logged, hosts or not. */
	options.dns_proxy = !arg.no_dns_proxy;
	options.dns = arg.dns;
	r = container_confine(&options, errbuf, sizeof(errbuf));
	if (r < 0) {
		fail("%s", errbuf);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int cmd_oci(int argc, char **argv)
{
	_cleanup_free_ char *text = NULL;
	struct container_state state;
	char errbuf[512];
	int first, r;

	fail_set_prefix("launch oci-hook: ");
	first = options_parse(argc, argv, &oci_help, false);
	if (first < 0)
		return EXIT_FAILURE;
	if (first < argc) {
		fail("\"%s\" is not an option", argv[first]);
		return EXIT_FAILURE;
	}
	r = read_state(&text);
	if (r < 0) {
		fail("cannot read the OCI state on standard input: %s", strerror(-r));
		return EXIT_FAILURE;
	}
	if (container_state_parse(text, &state, errbuf, sizeof(errbuf)) < 0) {
		fail("%s", errbuf);
		return EXIT_FAILURE;
	}
	if (strcmp(state.status, "stopped") == 0 || state.pid <= 0) {
		r = container_stop(state.id, OCI_STOP_TIMEOUT_MS, errbuf, sizeof(errbuf));
		if (r < 0) {
			fail("%s", errbuf);
			return EXIT_FAILURE;
		}
		return EXIT_SUCCESS;
	}
	return oci_create(&state);
}
