/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch update: a running sandbox's launcher replaces its policy when asked on its control
 * socket, and the command that asks.
 */
#ifndef LAUNCH_UPDATE_H
#define LAUNCH_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/inbound.h"
#include "lib/util.h"

/* How long the command waits for the launcher's answer: its look-ups of policy hosts. */
#define UPDATE_ANSWER_TIMEOUT_S 60

struct audit_log;
struct dnsproxy;
struct loader_sandbox;
struct resolver;
struct rules;

/* What an update changes: the running sandbox's parts, which its launcher owns. */
struct update_target {
	struct loader_sandbox *bpf;
	struct dnsproxy *dns;
	struct audit_log *log;
	/* What the seccomp listener judges listen() and abstract binds by: the new rules' too. */
	struct inbound_policy *listen;
	const struct resolver *resolver; /* for the policies' hosts; NULL: the system's */
	bool dns_proxy;
	const char *id; /* the sandbox's, its cgroup's name: requests from inside are refused */
	bool gateway;	/* the sandbox's HTTPS gateway runs: its rules are launch's, fixed */
};

struct update_server;

/* Makes the control socket of sandbox id. Returns 0 or -errno. */
int update_listen(const char *id, struct update_server **ret_server);
/* An epoll descriptor, readable when update_serve has work; -1 for NULL. */
int update_fd(const struct update_server *server);
/*
 * Does what is ready, never waiting for a requester or a resolver: takes a connection (one at
 * a time, the others wait in the backlog), drops one that sent no request within
 * UPDATE_REQUEST_TIMEOUT_S (answered ETIMEDOUT), starts the compile of the request's policies
 * in a thread, or, once it is done, swaps them in (loader_sandbox_update), tells the DNS
 * proxy, writes the policy_update line and answers. A compile not done within
 * UPDATE_ANSWER_TIMEOUT_S - 5 s is answered ETIMEDOUT and its result dropped, as is one whose
 * requester hung up before it was done. A bad request or policy is the requester's error, and
 * the old policy stays. Returns 0, or -errno when the sandbox can no longer be trusted
 * to judge by either policy (the caller stops the job then).
 */
int update_serve(struct update_server *server, const struct update_target *target);
/*
 * Removes the socket and lets a compile under way go without waiting for it (its result is
 * dropped): the first step of teardown. NULL is fine.
 */
void update_server_stop(struct update_server *server);
/* Stops (update_server_stop); frees the policies taken since launch. NULL is fine. */
void update_server_free(struct update_server *server);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct update_server *, update_server_free)

/*
 * Asks the launcher of sandbox id to take the policies at paths. Returns 0, or -errno with one
 * line in errbuf: no such sandbox, or the launcher's refusal (naming the file or key at fault).
 */
int update_request(const char *id, char *const *paths, size_t npaths, char *errbuf, size_t errlen);

#endif /* LAUNCH_UPDATE_H */
