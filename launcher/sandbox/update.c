// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * launch update: a running sandbox's launcher replaces its policy when asked on its control
 * socket, and the command that asks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit/audit.h"
#include "dns/dnsproxy.h"
#include "gc.h"
#include "policy/image.h"
#include "loader.h"
#include "policy/rules.h"
#include "gwsecret.h"
#include "update.h"

/* A request: "update", then each policy path, each ending with a NUL. */
#define UPDATE_VERB	   "update"
#define UPDATE_REQUEST_MAX (64 * 1024)
/* An answer: the status (0 or -errno, host order), then one line of text. */
#define UPDATE_ANSWER_MAX 2048
/* A requester has this long to send its request once connected. */
#define UPDATE_REQUEST_TIMEOUT_S 2
/*
 * A compile has this long to end, below the requester's own wait for the answer: past it,
 * the requester is told ETIMEDOUT and the result, when it comes, is dropped.
 */
#define UPDATE_COMPILE_TIMEOUT_S (UPDATE_ANSWER_TIMEOUT_S - 5)

/*
 * The supervisor's loop has one thread: nothing here may wait. Its descriptor is an epoll set
 * of the listening socket, the one connection being served and that connection's deadline;
 * while a connection is served, the listening socket is not watched and the others wait in
 * its backlog.
 */
/*
 * A request's policies, compiled by a thread of its own: rules_compile looks the policies'
 * hosts up, which may take the resolver's timeouts. The thread touches nothing but this (a
 * copy of all it needs), and writes done_fd when it is over; the loop joins it and installs
 * the result. At teardown the loop does not wait for it: it lets go (detaches), and of the
 * thread and the loop the second to set let_go frees this.
 */
struct update_compile {
	pthread_t thread;
	atomic_bool let_go;
	char *req; /* the request, which paths point into */
	char *paths[256];
	size_t npaths;
	struct resolver resolver;
	bool has_resolver;
	bool dns_proxy;
	int done_fd; /* a copy of the server's, the thread's own */
	/* The thread's result. */
	int r;
	struct rules *rules;
	struct image *image;
	char errbuf[POLICY_ERR_LEN + 256];
};

struct update_server {
	int fd;
	int epoll_fd, timer_fd;
	int conn; /* the requester being served; -1: none */
	struct ucred cred;
	struct update_compile *compile; /* the one under way; NULL: none */
	int done_fd;			/* written by a compile that ends */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	/* The policies taken since launch: the DNS proxy and the audit log point into them. */
	struct rules **kept;
	size_t nkept;
};

static int socket_path(const char *id, struct sockaddr_un *ret_addr)
{
	memset(ret_addr, 0, sizeof(*ret_addr));
	ret_addr->sun_family = AF_UNIX;
	if (!id[0] || strchr(id, '/') || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return -EINVAL;
	if ((size_t)snprintf(ret_addr->sun_path, sizeof(ret_addr->sun_path), "%s/%s%s", GC_LOCK_DIR,
			     id, GC_CONTROL_SUFFIX) >= sizeof(ret_addr->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

/* -1 with errno on failure. */
static int watch(int epoll_fd, int op, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epoll_fd, op, fd, &ev);
}

int update_listen(const char *id, struct update_server **ret_server)
{
	_cleanup_free_ struct update_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un addr;
	int r;

	if (!s)
		return -ENOMEM;
	s->fd = s->epoll_fd = s->timer_fd = s->conn = s->done_fd = -1;
	r = socket_path(id, &addr);
	if (r < 0)
		return r;
	if (mkdir(GC_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0)
		return -errno;
	/* The id's lock is ours (gc_lock): a socket left at this path is a dead launcher's. */
	unlink(addr.sun_path);
	if (bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(addr.sun_path, 0600) < 0 || listen(s->fd, 4) < 0) {
		r = -errno;
		close(s->fd);
		unlink(addr.sun_path);
		return r;
	}
	memcpy(s->path, addr.sun_path, sizeof(s->path));
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->timer_fd < 0 || s->done_fd < 0 ||
	    watch(s->epoll_fd, EPOLL_CTL_ADD, s->fd, EPOLLIN) ||
	    watch(s->epoll_fd, EPOLL_CTL_ADD, s->timer_fd, EPOLLIN) ||
	    watch(s->epoll_fd, EPOLL_CTL_ADD, s->done_fd, EPOLLIN)) {
		r = -errno;
		update_server_free(TAKE_PTR(s));
		return r;
	}
	*ret_server = TAKE_PTR(s);
	return 0;
}

int update_fd(const struct update_server *server)
{
	return server ? server->epoll_fd : -1;
}

static void compile_free(struct update_compile *c)
{
	rules_free(c->rules);
	image_free(c->image);
	free(c->req);
	if (c->done_fd >= 0)
		close(c->done_fd);
	free(c);
}

void update_server_stop(struct update_server *server)
{
	struct update_compile *c;

	if (!server)
		return;
	if (server->fd >= 0) {
		unlink(server->path);
		close(server->fd);
		server->fd = -1;
	}
	/*
	 * A compile under way may be in the resolver for its timeouts: not waited for. Its
	 * result is dropped, by whichever of it and us lets go second.
	 */
	c = TAKE_PTR(server->compile);
	if (c) {
		pthread_detach(c->thread);
		if (atomic_exchange(&c->let_go, true))
			compile_free(c);
	}
	if (server->conn >= 0) {
		close(server->conn);
		server->conn = -1;
	}
}

void update_server_free(struct update_server *server)
{
	if (!server)
		return;
	update_server_stop(server);
	if (server->done_fd >= 0)
		close(server->done_fd);
	if (server->timer_fd >= 0)
		close(server->timer_fd);
	if (server->epoll_fd >= 0)
		close(server->epoll_fd);
	for (size_t i = 0; i < server->nkept; i++)
		rules_free(server->kept[i]);
	free(server->kept);
	free(server);
}

__attribute__((format(printf, 3, 4))) static void answer(int conn, int status, const char *fmt, ...)
{
	char buf[UPDATE_ANSWER_MAX];
	int32_t code = status;
	va_list ap;
	int n;

	memcpy(buf, &code, sizeof(code));
	va_start(ap, fmt);
	n = vsnprintf(buf + sizeof(code), sizeof(buf) - sizeof(code), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf) - sizeof(code))
		n = (int)(sizeof(buf) - sizeof(code) - 1);
	/* The requester may be gone: nothing to do about it. */
	(void)!send(conn, buf, sizeof(code) + (size_t)n, MSG_NOSIGNAL);
}

/*
 * Whether process pid is in the sandbox's cgroup or below it: a job must not widen its own
 * policy. Its cgroup, as /proc shows it to us (the launcher's cgroup namespace), ends with the
 * sandbox's id or has it as a component. Unknown counts as inside.
 */
static bool peer_inside(int pid, const char *id)
{
	char path[64], line[PATH_MAX + 8], tail[NAME_MAX + 4];
	_cleanup_free_ char *cgroup = NULL;
	size_t len, tlen;
	FILE *f;

	if (pid <= 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			cgroup = strdup(line + 3);
			break;
		}
	fclose(f);
	if (!cgroup)
		return true;
	snprintf(tail, sizeof(tail), "/%s", id);
	len = strlen(cgroup);
	tlen = strlen(tail);
	if (len >= tlen && strcmp(cgroup + len - tlen, tail) == 0)
		return true;
	snprintf(tail, sizeof(tail), "/%s/", id);
	return strstr(cgroup, tail) != NULL;
}

/*
 * The request's policy paths, in place: a NUL-separated list after the verb. Returns how many,
 * or -EINVAL for a malformed request.
 */
static int parse_request(char *req, size_t len, char **paths, size_t max)
{
	size_t n = 0, off;

	if (len < sizeof(UPDATE_VERB) || memcmp(req, UPDATE_VERB, sizeof(UPDATE_VERB)) != 0 ||
	    req[len - 1] != '\0')
		return -EINVAL;
	for (off = sizeof(UPDATE_VERB); off < len; off += strlen(req + off) + 1) {
		if (!req[off] || n == max)
			return -EINVAL;
		paths[n++] = req + off;
	}
	return n ? (int)n : -EINVAL;
}

static int keep_rules(struct update_server *s, struct rules *rules)
{
	struct rules **kept = reallocarray(s->kept, s->nkept + 1, sizeof(*kept));

	if (!kept)
		return -ENOMEM;
	s->kept = kept;
	s->kept[s->nkept++] = rules;
	return 0;
}

/* The policy_update line, with the log now naming the new policies. */
static void log_update(struct audit_log *log, const struct rules *rules, int pid, unsigned int uid)
{
	struct audit_update update = {
		.old_policies = log->policies,
		.nold = log->npolicies,
		.rules = rules->list->nexact + rules->list->nprefixes,
		.requester_pid = pid,
		.requester_uid = uid,
	};
	char old_names[sizeof(log->policy)], line[AUDIT_LINE_MAX];
	int n;

	memcpy(old_names, log->policy, sizeof(old_names));
	update.old_names = old_names;
	snprintf(log->policy, sizeof(log->policy), "%s", rules->names);
	log->policies = rules->policies;
	log->npolicies = rules->npolicies;
	n = audit_format_policy_update(log, &update, line, sizeof(line));
	/* A line that failed to be written shows in the log's counts, as every line's does. */
	audit_append_formatted(log, AUDIT_KIND_OTHER, line, n);
}

struct update_install {
	struct loader_sandbox *bpf;
	const struct image *image;
	uint32_t old_slot;
	bool tried;
};

/* The new settings in force (0), or the old ones still (< 0). */
static int install_image(void *ctx)
{
	struct update_install *install = ctx;
	int r;

	install->tried = true;
	r = loader_sandbox_update(install->bpf, install->image);
	/* Past the swap, a failure to let the old slot go leaves the new policy in force. */
	return r < 0 && install->bpf->slot == install->old_slot ? r : 0;
}

static void *compile_run(void *arg)
{
	struct update_compile *c = arg;
	uint64_t one = 1;

	c->r = rules_compile(c->paths, c->npaths, c->has_resolver ? &c->resolver : NULL,
			     c->dns_proxy, &c->rules, c->errbuf, sizeof(c->errbuf));
	if (c->r == 0) {
		c->r = image_build(c->rules, c->dns_proxy, &c->image);
		if (c->r < 0)
			snprintf(c->errbuf, sizeof(c->errbuf), "cannot lay out the policy: %s",
				 strerror(-c->r));
	}
	(void)!write(c->done_fd, &one, sizeof(one));
	/* Let go of by the loop (teardown) first: nobody will join us, the result is ours. */
	if (atomic_exchange(&c->let_go, true))
		compile_free(c);
	return NULL;
}

/*
 * The request in req[0..len), which this takes: malformed, or no thread to be had, it is
 * answered at once; else its compile begins in its own thread (s->compile), with
 * UPDATE_COMPILE_TIMEOUT_S to end.
 */
static void compile_start(struct update_server *s, const struct update_target *t, char *req,
			  ssize_t len)
{
	struct itimerspec deadline = { .it_value.tv_sec = UPDATE_COMPILE_TIMEOUT_S };
	struct update_compile *c = calloc(1, sizeof(*c));
	int npaths, r;

	if (!c) {
		free(req);
		answer(s->conn, -ENOMEM, "%s", strerror(ENOMEM));
		return;
	}
	c->req = req;
	c->done_fd = -1;
	npaths =
		len > 0 ? parse_request(req, (size_t)len, c->paths, ARRAY_SIZE(c->paths)) : -EINVAL;
	if (npaths < 0) {
		compile_free(c);
		answer(s->conn, -EINVAL, "malformed request");
		return;
	}
	c->npaths = (size_t)npaths;
	if (t->resolver) {
		c->resolver = *t->resolver;
		c->has_resolver = true;
	}
	c->dns_proxy = t->dns_proxy;
	c->done_fd = fcntl(s->done_fd, F_DUPFD_CLOEXEC, 3);
	if (c->done_fd < 0 || timerfd_settime(s->timer_fd, 0, &deadline, NULL) < 0) {
		r = -errno;
		compile_free(c);
		answer(s->conn, r, "cannot compile the policy: %s", strerror(-r));
		return;
	}
	/*
	 * The thread takes no signal: the launcher's stay for its signalfd, and one that came
	 * once the mask is restored at teardown must reach the launcher's own thread.
	 */
	r = thread_start_masked(&c->thread, compile_run, c, 0);
	if (r < 0) {
		compile_free(c);
		answer(s->conn, r, "cannot compile the policy: %s", strerror(-r));
		return;
	}
	s->compile = c;
}

/* Whether the requester hung up (gave up waiting for the answer): then nothing is installed. */
static bool requester_gone(int conn)
{
	struct pollfd p = { .fd = conn, .events = POLLRDHUP };

	return conn < 0 || (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

/* The compiled policy in force and answered, or the old one still. */
static int install_compiled(struct update_server *s, const struct update_target *t,
			    struct update_compile *c)
{
	_cleanup_(rules_freep) struct rules *rules = TAKE_PTR(c->rules);
	_cleanup_(image_freep) struct image *image = TAKE_PTR(c->image);
	const struct rules *now;
	struct ucred cred = s->cred;
	int conn = s->conn;
	struct update_install install = { .bpf = t->bpf, .old_slot = t->bpf->slot };
	bool installed = false;
	int r = c->r;

	if (r < 0) {
		answer(conn, r, "%s", c->errbuf[0] ? c->errbuf : strerror(-r));
		return 0;
	}
	/*
	 * The gateway judges by the policies it was started with, and a sandbox without one
	 * would let a new "http" rule's host be reached directly: neither may change here.
	 */
	if (t->gateway || gwsecret_gateway_wanted(rules->policies, rules->npolicies)) {
		answer(conn, -EOPNOTSUPP,
		       "launch update cannot change a sandbox's HTTPS gateway rules (\"http\"): "
		       "start a new sandbox with the new policy");
		return 0;
	}
	/*
	 * Kept before anything changes: once the new policy is in force, the log and the DNS
	 * proxy point into it, whatever fails after.
	 */
	r = keep_rules(s, rules);
	if (r < 0) {
		answer(conn, r, "%s", strerror(-r));
		return 0;
	}
	/*
	 * The proxy closes what answers opened before the settings change, and judges names by
	 * the new policy after; if the kernel cannot forget an address, one the new policy may
	 * refuse stays open: the sandbox stops.
	 */
	install.image = image;
	r = t->dns ? dnsproxy_swap_rules(t->dns, rules, install_image, &install, &installed)
		   : install_image(&install);
	if (!t->dns)
		installed = r == 0;
	if (r < 0 && !installed && install.tried) {
		/* Nothing changed: the old policy is still the one in force. */
		s->nkept--;
		answer(conn, r, "cannot install the new policy: %s", strerror(-r));
		return 0;
	}
	/* Kept: s owns them from here on. */
	now = TAKE_PTR(rules);
	/* In force: on the record, even when the proxy then fails and the sandbox stops. */
	if (installed)
		log_update(t->log, now, cred.pid, cred.uid);
	if (r < 0) {
		answer(conn, r, "the DNS proxy could not take the new policy: %s", strerror(-r));
		return r;
	}
	if (t->listen) {
		t->listen->ports = &now->listen;
		t->listen->unix_allows = now->unix_allows;
		t->listen->nunix = now->nunix;
	}
	answer(conn, 0, "%s", "");
	return 0;
}

/* Done with the connection: the deadline disarmed, the next requester taken from the backlog. */
static void conn_close(struct update_server *s)
{
	struct itimerspec off = { 0 };

	if (s->conn >= 0)
		close(s->conn);
	s->conn = -1;
	timerfd_settime(s->timer_fd, 0, &off, NULL);
	watch(s->epoll_fd, EPOLL_CTL_MOD, s->fd, EPOLLIN);
}

/* A requester from the backlog, if one waits: checked, then served once its request is in. */
static void conn_accept(struct update_server *s, const struct update_target *t)
{
	struct itimerspec deadline = { .it_value.tv_sec = UPDATE_REQUEST_TIMEOUT_S };
	socklen_t clen = sizeof(s->cred);
	int conn = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	/* A requester that went away, or none: nothing to serve. */
	if (conn < 0)
		return;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &s->cred, &clen) < 0 || s->cred.uid != 0) {
		answer(conn, -EPERM, "only root may change a sandbox's policy");
		close(conn);
		return;
	}
	if (peer_inside(s->cred.pid, t->id)) {
		answer(conn, -EPERM, "a process of the sandbox may not change its policy");
		close(conn);
		return;
	}
	if (timerfd_settime(s->timer_fd, 0, &deadline, NULL) < 0 ||
	    watch(s->epoll_fd, EPOLL_CTL_ADD, conn, EPOLLIN) < 0 ||
	    watch(s->epoll_fd, EPOLL_CTL_MOD, s->fd, 0) < 0) {
		answer(conn, -errno, "%s", strerror(errno));
		close(conn);
		return;
	}
	s->conn = conn;
}

int update_serve(struct update_server *s, const struct update_target *t)
{
	_cleanup_free_ char *req = NULL;
	struct epoll_event evs[4];
	uint64_t ticks;
	ssize_t len;
	int r;

	/* Only to reset the set's readiness: what is ready is asked of each descriptor below. */
	(void)!epoll_wait(s->epoll_fd, evs, ARRAY_SIZE(evs), 0);
	if (s->compile) {
		struct update_compile *c = s->compile;

		if (read(s->done_fd, &ticks, sizeof(ticks)) != sizeof(ticks)) {
			/* Answered already (timed out): the result is dropped when it comes. */
			if (s->conn < 0 ||
			    read(s->timer_fd, &ticks, sizeof(ticks)) != sizeof(ticks))
				return 0;
			/* Answered now, and the result dropped when it comes. */
			answer(s->conn, -ETIMEDOUT, "the policy's compile took over %d s",
			       UPDATE_COMPILE_TIMEOUT_S);
			close(s->conn);
			s->conn = -1;
			return 0;
		}
		/* Joined before the next requester is taken from the backlog. */
		pthread_join(c->thread, NULL);
		s->compile = NULL;
		/* A requester that gave up was told nothing took effect: nothing does. */
		r = requester_gone(s->conn) ? 0 : install_compiled(s, t, c);
		compile_free(c);
		conn_close(s);
		return r;
	}
	if (s->conn < 0)
		conn_accept(s, t);
	if (s->conn < 0) {
		/* A deadline left armed by a failed accept must not keep the loop awake. */
		(void)!read(s->timer_fd, &ticks, sizeof(ticks));
		return 0;
	}
	req = malloc(UPDATE_REQUEST_MAX);
	if (!req) {
		answer(s->conn, -ENOMEM, "%s", strerror(ENOMEM));
		conn_close(s);
		return 0;
	}
	/* SOCK_SEQPACKET: the request is one message, whole. */
	len = recv(s->conn, req, UPDATE_REQUEST_MAX, MSG_DONTWAIT);
	if (len < 0 && (errno == EAGAIN || errno == EINTR)) {
		if (read(s->timer_fd, &ticks, sizeof(ticks)) != sizeof(ticks))
			return 0;
		answer(s->conn, -ETIMEDOUT, "no request within %d s", UPDATE_REQUEST_TIMEOUT_S);
		conn_close(s);
		return 0;
	}
	/* The deadline was for the request; compile_start sets the compile's. */
	compile_start(s, t, TAKE_PTR(req), len);
	if (!s->compile) {
		conn_close(s);
		return 0;
	}
	/* Nothing more to read from the requester: it waits for the answer. */
	watch(s->epoll_fd, EPOLL_CTL_DEL, s->conn, 0);
	return 0;
}

int update_request(const char *id, char *const *paths, size_t npaths, char *errbuf, size_t errlen)
{
	_cleanup_free_ char *req = malloc(UPDATE_REQUEST_MAX);
	_cleanup_close_ int fd = -1;
	struct timeval tv = { .tv_sec = UPDATE_ANSWER_TIMEOUT_S };
	char buf[UPDATE_ANSWER_MAX + 1];
	struct sockaddr_un addr;
	size_t len = sizeof(UPDATE_VERB);
	int32_t status;
	ssize_t n;
	int r;

	r = socket_path(id, &addr);
	if (r < 0) {
		snprintf(errbuf, errlen, "\"%s\" is not a sandbox id", id);
		return r;
	}
	if (!req)
		return -ENOMEM;
	memcpy(req, UPDATE_VERB, sizeof(UPDATE_VERB));
	for (size_t i = 0; i < npaths; i++) {
		char real[PATH_MAX];
		/* The launcher reads the files from its own directory: absolute paths. */
		const char *path = realpath(paths[i], real) ? real : paths[i];
		size_t plen = strlen(path) + 1;

		if (len + plen > UPDATE_REQUEST_MAX) {
			snprintf(errbuf, errlen, "--policy: too many or too long paths");
			return -E2BIG;
		}
		memcpy(req + len, path, plen);
		len += plen;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = -errno;
		if (r == -ENOENT || r == -ECONNREFUSED)
			snprintf(errbuf, errlen, "no running sandbox \"%s\" (%s: %s)", id,
				 addr.sun_path, strerror(-r));
		else
			snprintf(errbuf, errlen, "%s: %s", addr.sun_path, strerror(-r));
		return r;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, req, len, MSG_NOSIGNAL) < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "%s: %s", addr.sun_path, strerror(-r));
		return r;
	}
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n < (ssize_t)sizeof(status)) {
		r = n < 0 ? -errno : -EPROTO;
		snprintf(errbuf, errlen, "the launcher of \"%s\" gave no answer: %s", id,
			 strerror(-r));
		return r;
	}
	buf[n] = '\0';
	memcpy(&status, buf, sizeof(status));
	if (status < 0)
		snprintf(errbuf, errlen, "%s", buf + sizeof(status));
	return status > 0 ? -EPROTO : status;
}
