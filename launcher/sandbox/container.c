// SPDX-License-Identifier: LGPL-2.1-or-later
/* A container under a policy from an OCI hook: its cgroup, its programs, its supervisor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "cgroup.h"
#include "container.h"
#include "dnsbpf.h"
#include "gc.h"
#include "gwsecret.h"
#include "lib/json.h"
#include "lib/util.h"
#include "loader.h"
#include "peerpid.h"

#define CONTAINER_KILL_TIMEOUT_MS 5000
/* The container's command, for sandbox_start, from the bundle's config.json. */
#define CONTAINER_ARGV_MAX 64
#define _cleanup_fclose_   _cleanup_(fclosep)

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* A small file's text, NUL-terminated (at most 1 MiB). */
static int read_text(const char *path, char **ret_text)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd_text(fd, 1 << 20, ret_text);
}

/* One container's supervisor: everything it holds, released in reverse order. */
struct container {
	const struct container_options *options;
	const struct container_state *state;
	int lock_fd;
	char pid_path[PATH_MAX];
	char home_cgroup[PATH_MAX]; /* init's cgroup v2 before the move, for an undo */
	bool moved;
	bool engine_cgroup; /* the programs are on the engine's cgroup, which stays its */
	struct sandbox_cgroup cgroup;
	struct loader_shared shared;
	struct loader_sandbox bpf;
	struct audit_log *log;
	bool log_open;
	struct dnsproxy *dns;
	struct ring_buffer *ringbuf;
	int epoll_fd, signal_fd;
	int events_fd; /* the cgroup's cgroup.events: its emptying ends the supervisor too */
	long long started_ms;
	char *argv[CONTAINER_ARGV_MAX + 1];
	cJSON *config; /* owns argv's strings */
	char *errbuf;
	size_t errlen;
	int error;
};

static int __attribute__((format(printf, 3, 4)))
container_fail(struct container *c, int r, const char *fmt, ...)
{
	va_list ap;

	if (c->error < 0)
		return r;
	c->error = r;
	va_start(ap, fmt);
	vsnprintf(c->errbuf, c->errlen, fmt, ap);
	va_end(ap);
	return r;
}

static int copy_field(char *dst, size_t len, const char *src)
{
	if (!src)
		return -ENOENT;
	if (strlen(src) >= len)
		return -ENAMETOOLONG;
	strcpy(dst, src);
	return 0;
}

/* The container's name: podman's annotation when it has one, else its id. */
static const char *state_name(const cJSON *annotations)
{
	static const char *const keys[] = { "io.podman.annotations.name",
					    "io.kubernetes.cri-o.ContainerName",
					    "io.kubernetes.container.name" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (json_str(annotations, keys[i]))
			return json_str(annotations, keys[i]);
	return NULL;
}

int container_state_parse(const char *json, struct container_state *ret, char *errbuf,
			  size_t errlen)
{
	_cleanup_(cJSON_Deletep) cJSON *root = cJSON_Parse(json);
	const cJSON *annotations, *pid;
	const char *only;

	memset(ret, 0, sizeof(*ret));
	if (!cJSON_IsObject(root)) {
		snprintf(errbuf, errlen, "the OCI state on standard input is not a JSON object");
		return -EINVAL;
	}
	if (copy_field(ret->full_id, sizeof(ret->full_id), json_str(root, "id")) < 0 ||
	    !ret->full_id[0] || strchr(ret->full_id, '/') || ret->full_id[0] == '.') {
		snprintf(errbuf, errlen, "the OCI state has no usable \"id\"");
		return -EINVAL;
	}
	memcpy(ret->id, ret->full_id, CONTAINER_ID_LEN);
	copy_field(ret->status, sizeof(ret->status), json_str(root, "status"));
	copy_field(ret->bundle, sizeof(ret->bundle), json_str(root, "bundle"));
	pid = cJSON_GetObjectItemCaseSensitive(root, "pid");
	if (pid && (!cJSON_IsNumber(pid) || pid->valuedouble < 0 || pid->valuedouble > INT_MAX)) {
		snprintf(errbuf, errlen, "the OCI state's \"pid\" is not a process id");
		return -EINVAL;
	}
	ret->pid = pid ? (int)pid->valuedouble : 0;
	annotations = cJSON_GetObjectItemCaseSensitive(root, "annotations");
	if (copy_field(ret->name, sizeof(ret->name), state_name(annotations)) < 0)
		strcpy(ret->name, ret->full_id);
	if (copy_field(ret->policies, sizeof(ret->policies),
		       json_str(annotations, "io.launch.policy")) < 0 ||
	    !ret->policies[0]) {
		snprintf(errbuf, errlen, "the container has no io.launch.policy annotation");
		return -ENOENT;
	}
	if (copy_field(ret->audit_log, sizeof(ret->audit_log),
		       json_str(annotations, "io.launch.audit-log")) == -ENAMETOOLONG) {
		snprintf(errbuf, errlen, "io.launch.audit-log: the path is too long");
		return -ENAMETOOLONG;
	}
	if (!ret->audit_log[0])
		strcpy(ret->audit_log, CONTAINER_AUDIT_LOG_DEFAULT);
	only = json_str(annotations, "io.launch.audit-only");
	if (only && strcmp(only, "true") != 0 && strcmp(only, "false") != 0) {
		snprintf(errbuf, errlen, "io.launch.audit-only: \"%s\" is not true or false", only);
		return -EINVAL;
	}
	ret->audit_only = only && strcmp(only, "true") == 0;
	if (copy_field(ret->resolver, sizeof(ret->resolver),
		       json_str(annotations, "io.launch.resolver")) == -ENAMETOOLONG) {
		snprintf(errbuf, errlen, "io.launch.resolver: the address is too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Where pid is in the cgroup v2 hierarchy: its "0::" line, below the mount. */
static int container_read_cgroup(int pid, const char *mount, char *ret_path, size_t len)
{
	char path[64], line[PATH_MAX + 8];
	_cleanup_fclose_ FILE *f = NULL;
	int r = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			r = (size_t)snprintf(ret_path, len, "%s%s", mount, line + 3) < len
				    ? 0
				    : -ENAMETOOLONG;
			break;
		}
	return r;
}

static int write_pid(const char *dir, int pid)
{
	char path[PATH_MAX], text[16];
	_cleanup_close_ int fd = -1;
	int n = snprintf(text, sizeof(text), "%d", pid);

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, (size_t)n) != n)
		return -errno;
	return 0;
}

/* The container's command, for the start line; its id when config.json says nothing. */
static void container_read_argv(struct container *c)
{
	char path[PATH_MAX];
	_cleanup_free_ char *text = NULL;
	const cJSON *args, *item;
	size_t n = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", c->state->bundle) <
		    sizeof(path) &&
	    read_text(path, &text) == 0)
		c->config = cJSON_Parse(text);
	args = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(c->config, "process"), "args");
	cJSON_ArrayForEach (item, args) {
		if (n < CONTAINER_ARGV_MAX && cJSON_IsString(item))
			c->argv[n++] = item->valuestring;
	}
	if (n == 0)
		c->argv[n++] = (char *)c->state->name;
	c->argv[n] = NULL;
}

static int container_on_event(void *ctx, void *data, size_t size)
{
	struct container *c = ctx;
	const struct deny_event *event = data;
	char link[64], exe[PATH_MAX];
	const char *name = NULL;
	ssize_t n;

	if (!audit_event_whole(data, size) || event->cgroup_id != c->cgroup.id)
		return 0;
	snprintf(link, sizeof(link), "/proc/%u/exe", event->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (event->op == AUDIT_OP_CONNECT || event->op == AUDIT_OP_SENDMSG ||
	    event->op == AUDIT_OP_TLS) {
		struct in6_addr addr;

		memcpy(&addr, event->addr, sizeof(addr));
		name = dnsproxy_addr_name(c->dns, &addr);
	}
	audit_deny_exe(c->log, event, name, n > 0 ? exe : NULL);
	return 0;
}

/* The lock, and the cgroup's path recorded in it before it is confined (gc.h). */
static int container_lock(struct container *c, const char *cgroup_path)
{
	const char *id = c->state->id;
	int r;

	c->lock_fd = gc_lock(id);
	if (c->lock_fd < 0)
		return container_fail(c, c->lock_fd, "cannot lock %s/%s.lock: %s%s", GC_LOCK_DIR,
				      id, strerror(-c->lock_fd),
				      c->lock_fd == -EEXIST ? " (the container is confined already)"
							    : "");
	r = gc_record(c->lock_fd, cgroup_path);
	if (r < 0)
		return container_fail(c, r, "cannot record the cgroup in %s/%s.lock: %s",
				      GC_LOCK_DIR, id, strerror(-r));
	return 0;
}

/*
 * The engine's own cgroup v2 of the container, when it made one (runc does, beside the v1
 * controllers of a hybrid host): `podman exec` puts its processes there too, so that is
 * where the programs must be. A sweep after the supervisor's death kills what is in it.
 */
static int container_open_engine_cgroup(struct container *c)
{
	struct stat st;

	strcpy(c->cgroup.path, c->home_cgroup);
	c->cgroup.dir_fd = open(c->cgroup.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->cgroup.dir_fd < 0 || fstat(c->cgroup.dir_fd, &st) < 0)
		return -errno;
	c->cgroup.id = st.st_ino;
	c->engine_cgroup = true;
	return 0;
}

/*
 * The cgroup the programs go to: the engine's cgroup v2 of the container, or, when init is
 * in the hierarchy's root (an engine that uses cgroup v1 alone), one of launch's own that
 * init joins (container_move_init).
 */
static int container_make_cgroup(struct container *c)
{
	const struct container_state *state = c->state;
	char mount[PATH_MAX], own[PATH_MAX];
	int r;

	r = cgroup_find_mount(mount, sizeof(mount));
	if (r == 0)
		r = container_read_cgroup(state->pid, mount, c->home_cgroup,
					  sizeof(c->home_cgroup));
	if (r < 0)
		return container_fail(c, r,
				      "cannot find the cgroup v2 of the container's init %d: %s",
				      state->pid, strerror(-r));
	if ((size_t)snprintf(own, sizeof(own), "%s/%s", c->options->cgroup_parent, state->id) >=
	    sizeof(own))
		return container_fail(c, -ENAMETOOLONG, "cgroup path too long");
	/* "0::/": init is in the root, which no program may confine. */
	if (strcmp(c->home_cgroup + strlen(mount), "/") != 0) {
		r = container_lock(c, c->home_cgroup);
		if (r < 0)
			return r;
		r = container_open_engine_cgroup(c);
		if (r < 0)
			return container_fail(c, r, "cannot open cgroup %s: %s", c->home_cgroup,
					      strerror(-r));
	} else {
		r = container_lock(c, own);
		if (r < 0)
			return r;
		r = cgroup_create(c->options->cgroup_parent, state->id, &c->cgroup);
		if (r < 0)
			return container_fail(c, r, "cannot create cgroup %s: %s", own,
					      strerror(-r));
	}
	r = loader_shared_get(c->options->cgroup_parent, &c->shared, c->errbuf, c->errlen);
	if (r < 0)
		return container_fail(c, r, "cannot load the BPF programs: %s", strerror(-r));
	if (!c->shared.unix_hooks)
		return container_fail(c, -EOPNOTSUPP,
				      "this kernel has no AF_UNIX cgroup hooks (6.7+), so the "
				      "container could reach any local socket");
	/* No gateway runs for a container: its "http" hosts would be reached directly. */
	if (gwsecret_gateway_wanted(c->options->rules->policies, c->options->rules->npolicies))
		return container_fail(c, -EOPNOTSUPP,
				      "a policy has \"http\" rules, and containers get no HTTPS "
				      "gateway (docs/containers.md)");
	r = loader_sandbox_new(&c->shared, c->options->rules, c->options->dns_proxy, &c->bpf);
	if (r < 0)
		return container_fail(c, r, "cannot make the container's maps: %s%s", strerror(-r),
				      r == -EUSERS ? " (every slot is taken)" : "");
	if (state->audit_only)
		c->bpf.cfg.flags |= CFG_AUDIT_ONLY;
	return 0;
}

/* After the DNS proxy's start: the settings written at attach say where it listens. */
static int container_attach(struct container *c)
{
	const char *failed = "?";
	int r = loader_sandbox_attach(&c->bpf, c->cgroup.dir_fd, c->cgroup.id, &failed);

	if (r < 0)
		return container_fail(c, r, "cannot attach %s to %s: %s", failed, c->cgroup.path,
				      strerror(-r));
	return 0;
}

static int container_open_audit(struct container *c)
{
	const struct rules *rules = c->options->rules;
	int r;

	r = audit_open(c->log, c->state->audit_log, c->state->id, rules->names,
		       c->options->audit_stall_ms);
	if (r < 0)
		return container_fail(c, r, "audit log %s: %s", c->state->audit_log,
				      audit_strerror(r));
	c->log_open = true;
	c->log->policies = rules->policies;
	c->log->npolicies = rules->npolicies;
	c->log->audit_only = c->state->audit_only;
	r = audit_prepare_writer(c->log);
	if (r == 0)
		r = audit_start_writer(c->log);
	if (r < 0)
		return container_fail(c, r, "cannot start the audit log's writer: %s",
				      strerror(-r));
	return 0;
}

static int container_watch(struct container *c, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The ring, the signals poststop sends, the writer's wake-ups: the supervisor's loop. */
static int container_open_events(struct container *c)
{
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	r = c->epoll_fd < 0 || sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
	if (r == 0) {
		c->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
		r = c->signal_fd < 0 ? -errno : container_watch(c, c->signal_fd);
	}
	if (r == 0) {
		c->ringbuf = ring_buffer__new(loader_sandbox_events_fd(&c->bpf), container_on_event,
					      c, NULL);
		r = c->ringbuf ? container_watch(c, ring_buffer__epoll_fd(c->ringbuf)) : -errno;
	}
	if (r == 0 && audit_event_fd(c->log) >= 0)
		r = container_watch(c, audit_event_fd(c->log));
	if (r < 0)
		return container_fail(c, r, "cannot open the event ring buffer: %s", strerror(-r));
	return 0;
}

/* The process of the container that sent the DNS proxy a message it refuses. */
static int container_dns_pid(void *ctx, const struct sockaddr *peer, socklen_t peerlen, bool tcp)
{
	const struct container *c = ctx;

	return peerpid_find(c->cgroup.dir_fd, c->state->pid, peer, peerlen, tcp);
}

/*
 * The proxy's listeners on the container's loopback, where the programs send its port 53: a
 * socket stays in the network namespace it was made in. The supervisor returns to its own
 * at once, where the proxy makes its upstream sockets later, from the loop: the container's
 * namespace may have no way out (--network none).
 */
static int container_listen_dns(struct container *c, struct dnsproxy_ports *ret_ports)
{
	_cleanup_close_ int home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int net_fd = -1;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", c->state->pid);
	if (home_fd < 0)
		return container_fail(c, -errno, "cannot open /proc/self/ns/net: %s",
				      strerror(errno));
	net_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (net_fd < 0)
		return container_fail(c, -errno, "cannot open %s: %s", path, strerror(errno));
	if (setns(net_fd, CLONE_NEWNET) < 0)
		return container_fail(c, -errno,
				      "cannot enter the container's network namespace %s: %s", path,
				      strerror(errno));
	r = dnsproxy_listen(c->dns, ret_ports);
	if (setns(home_fd, CLONE_NEWNET) < 0)
		return container_fail(c, -errno,
				      "cannot return to the supervisor's network namespace: %s",
				      strerror(errno));
	if (r < 0)
		return container_fail(c, r, "cannot start the DNS proxy in %s: %s", path,
				      strerror(-r));
	return 0;
}

/* Before attach: the container's first look-up must already find the proxy. */
static int container_start_dns(struct container *c)
{
	const struct container_options *options = c->options;
	struct dnsproxy_ports ports;
	int r;

	if (!options->dns_proxy)
		return 0;
	r = dnsproxy_new(&options->dns, options->rules, &dnsbpf_ops, &c->bpf, c->log, &c->dns);
	if (r < 0)
		return container_fail(c, r, "cannot start the DNS proxy: %s", strerror(-r));
	dnsproxy_set_pid_finder(c->dns, container_dns_pid, c);
	r = container_listen_dns(c, &ports);
	if (r < 0)
		return r;
	dnsbpf_configure(&c->bpf, &ports);
	r = container_watch(c, dnsproxy_fd(c->dns));
	if (r < 0)
		return container_fail(c, r, "cannot watch the DNS proxy: %s", strerror(-r));
	return 0;
}

/*
 * Init joins the confined cgroup: it waits in runc's create, so all it starts inherits it.
 * Then the cgroup's emptying is watched (kernfs signals a change of cgroup.events with
 * EPOLLPRI): a container whose start failed after this hook gets no poststop, and its
 * supervisor must not wait for one.
 */
static int container_move_init(struct container *c)
{
	struct epoll_event ev = { .events = EPOLLPRI };
	int r = c->engine_cgroup ? 0 : write_pid(c->cgroup.path, c->state->pid);

	if (r < 0)
		return container_fail(c, r, "cannot move the container's init %d into %s: %s",
				      c->state->pid, c->cgroup.path, strerror(-r));
	c->moved = true;
	c->events_fd = openat(c->cgroup.dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	ev.data.fd = c->events_fd;
	r = c->events_fd < 0 || epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->events_fd, &ev) < 0
		    ? -errno
		    : 0;
	if (r < 0)
		return container_fail(c, r, "cannot watch %s/cgroup.events: %s", c->cgroup.path,
				      strerror(-r));
	return 0;
}

static int container_log_start(struct container *c)
{
	struct audit_job job = { .unix_connect = "bpf" };
	const struct rules *rules = c->options->rules;
	char hostname[256] = "", line[AUDIT_LINE_MAX];
	struct utsname uts;
	int n;

	if (uname(&uts) == 0)
		job.kernel = uts.release;
	gethostname(hostname, sizeof(hostname) - 1);
	container_read_argv(c);
	c->started_ms = monotonic_now_ms();
	n = audit_format_start(c->log, c->argv, c->state->pid, &job,
			       rules->list->nexact + rules->list->nprefixes, hostname, line,
			       sizeof(line));
	audit_append_formatted(c->log, AUDIT_KIND_OTHER, line, n);
	if (audit_flush(c->log) < 0 || c->log->error)
		return container_fail(c, c->log->error ?: -EIO, "audit log %s: %s",
				      c->state->audit_log, audit_strerror(c->log->error));
	return 0;
}

static int container_write_pid_file(struct container *c)
{
	char text[16];
	_cleanup_close_ int fd = -1;
	int n = snprintf(text, sizeof(text), "%d\n", getpid());

	if ((mkdir(CONTAINER_RUN_DIR, 0700) < 0 && errno != EEXIST) ||
	    (size_t)snprintf(c->pid_path, sizeof(c->pid_path), "%s/%s.pid", CONTAINER_RUN_DIR,
			     c->state->id) >= sizeof(c->pid_path))
		goto fail;
	fd = open(c->pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && write(fd, text, (size_t)n) == n)
		return 0;
	unlink(c->pid_path);
fail:
	c->pid_path[0] = '\0';
	return container_fail(c, -errno, "cannot write %s/%s.pid: %s", CONTAINER_RUN_DIR,
			      c->state->id, strerror(errno));
}

/* Reading cgroup.events again is also what makes its next change wake epoll. */
static bool container_emptied(struct container *c)
{
	char events[256];
	ssize_t n = pread(c->events_fd, events, sizeof(events) - 1, 0);

	if (n <= 0)
		return false;
	events[n] = '\0';
	return strstr(events, "populated 0") != NULL;
}

/* Until poststop's signal, or the container's end: refusals from the ring into the log. */
static void container_supervise(struct container *c)
{
	/* Emptied before the watch began: epoll would not say so. */
	if (container_emptied(c))
		return;
	for (;;) {
		struct epoll_event evs[4];
		int n = epoll_wait(c->epoll_fd, evs, 4, audit_timeout_ms(c->log));

		if (n < 0 && errno != EINTR)
			return;
		for (int i = 0; i < n; i++) {
			uint64_t count;

			if (evs[i].data.fd == c->signal_fd)
				return;
			if (evs[i].data.fd == c->events_fd && container_emptied(c))
				return;
			if (evs[i].data.fd == audit_event_fd(c->log) &&
			    read(evs[i].data.fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
				return;
			/* A proxy that fails refuses no more look-ups than before: go on. */
			if (evs[i].data.fd == dnsproxy_fd(c->dns))
				(void)dnsproxy_process(c->dns);
		}
		ring_buffer__consume(c->ringbuf);
		audit_flush(c->log);
	}
}

/* sandbox_exit: every refusal the kernel counted, and what became of its line. */
static void container_log_exit(struct container *c)
{
	/* The engine, not the hook, learns how the container ended: no exit_code is made up. */
	struct audit_exit exit = { .duration_ms = monotonic_now_ms() - c->started_ms,
				   .exit_unknown = true };
	struct sandbox_counters kernel;
	char line[AUDIT_LINE_MAX];
	int n;

	if (c->ringbuf)
		ring_buffer__consume(c->ringbuf);
	loader_sandbox_sum_counters(&c->bpf, &kernel);
	if (kernel.lost || kernel.would_deny_lost || kernel.allowed_lost) {
		n = audit_format_lost_verdicts(c->log, kernel.lost, kernel.would_deny_lost,
					       kernel.allowed_lost, line, sizeof(line));
		audit_append_formatted(c->log, AUDIT_KIND_OTHER, line, n);
	}
	if (c->dns) {
		struct dnsproxy_stats dns_stats;

		/* Look-ups the proxy refused are refusals too: one per deny line. */
		(void)dnsproxy_process(c->dns);
		dnsproxy_flush_refusals(c->dns, DNSPROXY_FLUSH_ALL);
		dnsproxy_get_stats(c->dns, &dns_stats);
		exit.denied += dns_stats.deny_lines;
		exit.would_deny += dns_stats.would_deny;
	}
	c->log->wait_room = true;
	audit_drain(c->log);
	exit.denied += kernel.denied;
	exit.lost = kernel.lost;
	exit.packet_dropped = kernel.packet_dropped;
	exit.would_deny += kernel.would_deny;
	exit.would_deny_lost = kernel.would_deny_lost;
	exit.allowed = kernel.allowed;
	exit.allowed_lost = kernel.allowed_lost;
	audit_exit_unwritten(c->log, &exit);
	n = audit_format_exit(c->log, &exit, line, sizeof(line));
	audit_append_formatted(c->log, AUDIT_KIND_OTHER, line, n);
}

/*
 * Everything, in reverse order. A failed start moves init back where the engine put it
 * first: its cgroup then goes, and the engine, told of the failure, kills init itself.
 */
static void container_release(struct container *c, bool started)
{
	if (started)
		container_log_exit(c);
	if (c->log_open) {
		audit_close_begin(c->log);
		audit_close(c->log);
	}
	/* Its listeners close with it; the maps its answers wrote go with the slot. */
	dnsproxy_free(c->dns);
	c->dns = NULL;
	if (c->moved && !started && write_pid(c->home_cgroup, c->state->pid) == 0)
		c->moved = false;
	/* Whatever is still in launch's cgroup dies with it: it must not run unconfined. */
	if (!c->engine_cgroup && c->cgroup.dir_fd >= 0 && !cgroup_is_empty(&c->cgroup))
		cgroup_kill(&c->cgroup, CONTAINER_KILL_TIMEOUT_MS);
	/* From here on the cgroup refuses everything, until the engine removes it. */
	loader_sandbox_close(&c->bpf);
	loader_shared_close(&c->shared);
	if (!c->engine_cgroup)
		cgroup_destroy(&c->cgroup);
	else if (c->cgroup.dir_fd >= 0)
		close(c->cgroup.dir_fd);
	if (c->events_fd >= 0)
		close(c->events_fd);
	if (c->pid_path[0])
		unlink(c->pid_path);
	if (c->lock_fd >= 0)
		gc_unlock(c->state->id, c->lock_fd);
	cJSON_Delete(c->config);
}

/* The supervisor's life: set-up, its word to the hook on ready_fd, the loop, the end. */
static int container_supervisor(const struct container_options *options, int ready_fd)
{
	static struct audit_log log; /* 1 MiB queue: off the stack */
	static char errbuf[1024];
	struct container c = {
		.options = options,
		.state = options->state,
		.lock_fd = -1,
		.cgroup.dir_fd = -1,
		.bpf = LOADER_SANDBOX_INIT,
		.log = &log,
		.epoll_fd = -1,
		.signal_fd = -1,
		.events_fd = -1,
		.errbuf = errbuf,
		.errlen = sizeof(errbuf),
	};
	int r;

	log.fd = -1;
	log.event_fd = -1;
	loader_shared_init(&c.shared);
	r = container_make_cgroup(&c);
	if (r == 0)
		r = container_open_audit(&c);
	if (r == 0)
		r = container_open_events(&c);
	if (r == 0)
		r = container_start_dns(&c);
	if (r == 0)
		r = container_attach(&c);
	if (r == 0)
		r = container_move_init(&c);
	if (r == 0)
		r = container_write_pid_file(&c);
	if (r == 0)
		r = container_log_start(&c);
	if (r < 0) {
		container_release(&c, false);
		if (write(ready_fd, errbuf, strlen(errbuf)) < 0) {
			/* The hook is gone: the engine sees its death as the failure. */
		}
		return EXIT_FAILURE;
	}
	/* One byte: confined, the ring read. */
	if (write(ready_fd, "", 1) != 1) {
		container_release(&c, true);
		return EXIT_FAILURE;
	}
	close(ready_fd);
	container_supervise(&c);
	container_release(&c, true);
	return EXIT_SUCCESS;
}

/* Detached from the hook: a session of its own, stdio on /dev/null (the engine reads the
 * hook's output until every copy of it is closed). */
static void container_detach(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
}

int container_confine(const struct container_options *options, char *errbuf, size_t errlen)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		int r = -errno;

		snprintf(errbuf, errlen, "cannot make a pipe: %s", strerror(-r));
		return r;
	}
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		snprintf(errbuf, errlen, "cannot start the supervisor: %s", strerror(-r));
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		/* A second fork: the supervisor is no child of the engine's hook runner. */
		pid = fork();
		if (pid != 0)
			_exit(pid < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
		container_detach();
		_exit(container_supervisor(options, fds[1]));
	}
	close(fds[1]);
	waitpid(pid, &status, 0);
	do
		n = read(fds[0], errbuf, errlen - 1);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == 1 && errbuf[0] == '\0')
		return 0;
	if (n <= 0)
		snprintf(errbuf, errlen, "the supervisor died before the container was confined");
	else
		errbuf[n] = '\0';
	return -EIO;
}

int container_stop(const char *id, int timeout_ms, char *errbuf, size_t errlen)
{
	char path[PATH_MAX];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int pidfd = -1;
	struct pollfd pfd = { .events = POLLIN };
	long pid;

	snprintf(path, sizeof(path), "%s/%s.pid", CONTAINER_RUN_DIR, id);
	if (read_text(path, &text) == 0 && (pid = strtol(text, NULL, 10)) > 1)
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0) == 0) {
		pfd.fd = pidfd;
		if (poll(&pfd, 1, timeout_ms) != 1) {
			snprintf(errbuf, errlen, "the supervisor %ld did not end within %d ms", pid,
				 timeout_ms);
			return -ETIMEDOUT;
		}
	}
	/* A supervisor that died (or never wrote its pid file) left its cgroup to the sweep. */
	(void)gc_sweep();
	unlink(path);
	return 0;
}
