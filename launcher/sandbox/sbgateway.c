// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A sandbox's side of the HTTPS gateway: start, the job's CA files, and the request records
 * the gateway's thread queues for the supervisor's loop (an eventfd wakes it).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "peerpid.h"
#include "sbgateway.h"

/* Records waiting for the loop; beyond it a request is counted, not logged (never blocks). */
#define SBGATEWAY_QUEUE_MAX 512

/* One request, copied off the gateway's thread: its strings cut to the audit's field cap. */
struct sbgateway_record {
	char method[32];
	char host[256];
	char path[AUDIT_FIELD_MAX + 1];
	char reason[32];
	char secret[128];
	bool has_secret;
	bool allowed;
	unsigned int status;
	uint64_t bytes_out, bytes_in;
	double duration_ms;
	int pid; /* 0: not found */
	char comm[32];
	char exe[PATH_MAX];
};

/* The last connection's process, on the gateway's thread only: a keep-alive looks once. */
struct sbgateway_peer {
	uint16_t port;
	bool v6;
	int pid;
	char comm[32];
	char exe[PATH_MAX];
};

struct sbgateway {
	struct gateway *gw;
	struct gateway_client *client;
	int event_fd;
	int cgroup_fd;
	struct audit_log *log;
	char ca_path[PATH_MAX], bundle_path[PATH_MAX];
	bool files_made;
	pthread_mutex_t lock;
	struct sbgateway_record *queue; /* SBGATEWAY_QUEUE_MAX, a ring */
	size_t head, count;
	unsigned long long lost, lost_denied, denied;
	struct sbgateway_peer peer;
};

int sbgateway_ca_paths(const char *id, char *ret_ca, char *ret_bundle)
{
	if ((size_t)snprintf(ret_ca, PATH_MAX, "%s/%s%s", SBGATEWAY_CA_DIR, id,
			     SBGATEWAY_CA_SUFFIX) >= PATH_MAX ||
	    (size_t)snprintf(ret_bundle, PATH_MAX, "%s/%s%s", SBGATEWAY_CA_DIR, id,
			     SBGATEWAY_BUNDLE_SUFFIX) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

void sbgateway_remove_files(const char *id)
{
	char ca[PATH_MAX], bundle[PATH_MAX];

	if (sbgateway_ca_paths(id, ca, bundle) < 0)
		return;
	unlink(ca);
	unlink(bundle);
}

static void sbgateway_copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

/*
 * The job's process at the connection's source port, its comm and exe: looked up on the
 * gateway's thread when the request ends, while the job still holds the connection (a
 * process that exits on its answer would be gone by the time the loop wrote the line).
 * /proc is read, nothing waits on the network.
 */
static void sbgateway_find_peer(struct sbgateway *sg, uint16_t port, bool v6)
{
	struct sbgateway_peer *peer = &sg->peer;
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	char path[64];
	ssize_t n;
	int pid;

	if (peer->pid > 0 && peer->port == port && peer->v6 == v6)
		return;
	*peer = (struct sbgateway_peer){ .port = port, .v6 = v6 };
	if (!port || sg->cgroup_fd < 0)
		return;
	in6.sin6_addr = in6addr_loopback;
	in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	pid = v6 ? peerpid_find(sg->cgroup_fd, 0, (struct sockaddr *)&in6, sizeof(in6), true)
		 : peerpid_find(sg->cgroup_fd, 0, (struct sockaddr *)&in4, sizeof(in4), true);
	if (pid <= 0)
		return;
	peer->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	{
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

		n = fd >= 0 ? read(fd, peer->comm, sizeof(peer->comm) - 1) : -1;
		peer->comm[n > 0 ? n : 0] = '\0';
		peer->comm[strcspn(peer->comm, "\n")] = '\0';
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, peer->exe, sizeof(peer->exe) - 1);
	peer->exe[n > 0 ? n : 0] = '\0';
}

/* At accept: a process of the sandbox holds the connection's other end (its cache is kept). */
static bool sbgateway_peer_ok(void *ctx, uint16_t port, bool v6)
{
	struct sbgateway *sg = ctx;

	/* Looked up afresh: a source port the cache names may be another process's by now. */
	sg->peer.pid = 0;
	sbgateway_find_peer(sg, port, v6);
	return sg->peer.pid > 0;
}

/* On the gateway's thread: a copy into the ring, and a wake-up. Never blocks. */
static void sbgateway_on_request(void *ctx, const struct gateway_request_log *log)
{
	struct sbgateway *sg = ctx;
	struct sbgateway_record *rec;
	uint64_t one = 1;

	sbgateway_find_peer(sg, log->peer_port, log->peer_v6);
	pthread_mutex_lock(&sg->lock);
	if (sg->count == SBGATEWAY_QUEUE_MAX) {
		sg->lost++;
		if (!log->allowed)
			sg->lost_denied++;
		pthread_mutex_unlock(&sg->lock);
		return;
	}
	rec = &sg->queue[(sg->head + sg->count++) % SBGATEWAY_QUEUE_MAX];
	sbgateway_copy(rec->method, sizeof(rec->method), log->method);
	sbgateway_copy(rec->host, sizeof(rec->host), log->host);
	sbgateway_copy(rec->path, sizeof(rec->path), log->path);
	sbgateway_copy(rec->reason, sizeof(rec->reason), log->reason);
	sbgateway_copy(rec->secret, sizeof(rec->secret), log->secret);
	rec->has_secret = log->secret != NULL;
	rec->allowed = log->allowed;
	rec->status = log->status;
	rec->bytes_out = log->bytes_out;
	rec->bytes_in = log->bytes_in;
	rec->duration_ms = log->duration_ms;
	rec->pid = sg->peer.pid;
	memcpy(rec->comm, sg->peer.comm, sizeof(rec->comm));
	memcpy(rec->exe, sg->peer.exe, sizeof(rec->exe));
	pthread_mutex_unlock(&sg->lock);
	(void)!write(sg->event_fd, &one, sizeof(one));
}

/* Writes a whole file, mode 0644, in root's folder: no one else can have put a link there. */
static int sbgateway_write(const char *path, const char *a, size_t alen, const char *b, size_t blen)
{
	_cleanup_close_ int fd =
		open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	const char *parts[2] = { a, b };
	size_t lens[2] = { alen, blen };

	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		for (size_t off = 0; off < lens[i];) {
			ssize_t n = write(fd, parts[i] + off, lens[i] - off);

			if (n < 0)
				return -errno;
			off += (size_t)n;
		}
	}
	if (fchmod(fd, 0644) < 0)
		return -errno;
	return 0;
}

static int sbgateway_append(const char *path, const char *data, size_t len)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

	for (size_t off = 0; fd >= 0 && off < len;) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return fd < 0 ? -errno : 0;
}

/* The system store, when there is one: the bundle is the CA alone without it. */
static char *sbgateway_system_store(size_t *ret_len)
{
	_cleanup_close_ int fd = open(SBGATEWAY_SYSTEM_STORE, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;

	*ret_len = 0;
	if (fd < 0)
		return NULL;
	for (;;) {
		if (len + 65536 > cap) {
			char *grown = realloc(buf, cap + 262144);

			if (!grown)
				break;
			buf = grown;
			cap += 262144;
		}
		n = read(fd, buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	*ret_len = len;
	return buf;
}

/* The CA alone, and the system store with it, where the job's runtimes are pointed. */
int sbgateway_write_ca_files(struct gateway *gw, const char *id, char *ret_ca, char *ret_bundle,
			     bool *ret_made, char *errbuf, size_t errlen)
{
	_cleanup_free_ char *pem = NULL, *store = NULL;
	size_t pem_len = 0, store_len = 0;
	int r;

	r = sbgateway_ca_paths(id, ret_ca, ret_bundle);
	if (r == 0)
		r = gateway_ca_pem(gw, &pem, &pem_len);
	if (r < 0) {
		snprintf(errbuf, errlen, "the gateway's CA: %s", strerror(-r));
		return r;
	}
	if (mkdir(SBGATEWAY_CA_DIR, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(errbuf, errlen, "cannot make %s: %s", SBGATEWAY_CA_DIR, strerror(-r));
		return r;
	}
	store = sbgateway_system_store(&store_len);
	*ret_made = true;
	r = sbgateway_write(ret_ca, pem, pem_len, NULL, 0);
	/* The store may lack a final newline: the CA starts a line of its own. */
	if (r == 0 && store_len && store[store_len - 1] != '\n')
		r = sbgateway_write(ret_bundle, store, store_len, "\n", 1);
	else if (r == 0)
		r = sbgateway_write(ret_bundle, store ? store : "", store_len, NULL, 0);
	/* Appended: the store's certificates first, as the runtimes read them. */
	if (r == 0)
		r = sbgateway_append(ret_bundle, pem, pem_len);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot write the gateway's CA to %s: %s",
			 SBGATEWAY_CA_DIR, strerror(-r));
		return r;
	}
	return 0;
}

int sbgateway_start(const struct sbgateway_config *config, struct sbgateway **ret, char *errbuf,
		    size_t errlen)
{
	struct gateway_config gwc = {
		.resolver = config->resolver,
		.upstream_ca_files = config->upstream_cas,
		.nupstream_ca_files = config->nupstream_cas,
		.log_query = config->log_query,
	};
	struct gateway_client_config cc = {
		.policies = config->policies,
		.npolicies = config->npolicies,
		.secrets = config->secrets,
		.nsecrets = config->nsecrets,
		.on_request = sbgateway_on_request,
		.peer_ok = sbgateway_peer_ok,
	};
	struct sbgateway *sg = calloc(1, sizeof(*sg));
	char why[512] = "";
	int r;

	if (!sg)
		return -ENOMEM;
	sg->event_fd = -1;
	sg->cgroup_fd = config->cgroup_fd;
	sg->log = config->log;
	pthread_mutex_init(&sg->lock, NULL);
	sg->queue = calloc(SBGATEWAY_QUEUE_MAX, sizeof(*sg->queue));
	sg->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r = !sg->queue ? -ENOMEM : sg->event_fd < 0 ? -errno : 0;
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway: %s", strerror(-r));
		goto fail;
	}
	r = gateway_new(&gwc, &sg->gw, why, sizeof(why));
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway: %s",
			 why[0] ? why : strerror(-r));
		goto fail;
	}
	r = sbgateway_write_ca_files(sg->gw, config->id, sg->ca_path, sg->bundle_path,
				     &sg->files_made, errbuf, errlen);
	if (r < 0)
		goto fail;
	r = gateway_start(sg->gw);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway's thread: %s",
			 strerror(-r));
		goto fail;
	}
	cc.ctx = sg;
	r = gateway_client_add(sg->gw, &cc, &sg->client, why, sizeof(why));
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot start the HTTPS gateway's listeners: %s",
			 why[0] ? why : strerror(-r));
		goto fail;
	}
	*ret = sg;
	return 0;
fail:
	sbgateway_free(sg);
	return r;
}

int sbgateway_fd(const struct sbgateway *sg)
{
	return sg ? sg->event_fd : -1;
}

void sbgateway_ports(const struct sbgateway *sg, uint16_t *ret_port4, uint16_t *ret_port6)
{
	gateway_client_ports(sg->client, ret_port4, ret_port6);
}

static void sbgateway_log(struct sbgateway *sg, const struct sbgateway_record *rec)
{
	struct audit_http http = {
		.method = rec->method,
		.host = rec->host,
		.path = rec->path,
		.status = rec->status,
		.bytes_out = rec->bytes_out,
		.bytes_in = rec->bytes_in,
		.duration_ms = rec->duration_ms,
		.allowed = rec->allowed,
		.reason = rec->reason,
		.secret = rec->has_secret ? rec->secret : NULL,
	};
	http.pid = rec->pid;
	http.comm = rec->comm[0] ? rec->comm : NULL;
	http.exe = rec->exe[0] ? rec->exe : NULL;
	if (!rec->allowed)
		sg->denied++;
	audit_http(sg->log, &http);
}

void sbgateway_process(struct sbgateway *sg)
{
	uint64_t wakes;

	if (!sg)
		return;
	(void)!read(sg->event_fd, &wakes, sizeof(wakes));
	for (;;) {
		struct sbgateway_record rec;

		pthread_mutex_lock(&sg->lock);
		if (!sg->count) {
			pthread_mutex_unlock(&sg->lock);
			return;
		}
		rec = sg->queue[sg->head];
		sg->head = (sg->head + 1) % SBGATEWAY_QUEUE_MAX;
		sg->count--;
		pthread_mutex_unlock(&sg->lock);
		sbgateway_log(sg, &rec);
	}
}

void sbgateway_stop(struct sbgateway *sg)
{
	if (!sg || !sg->client)
		return;
	/* Returns once on_request is no more called: the queue is then whole. */
	gateway_client_remove(sg->client);
	sg->client = NULL;
	sbgateway_process(sg);
}

unsigned long long sbgateway_denied(const struct sbgateway *sg)
{
	return sg ? sg->denied + sg->lost_denied : 0;
}

unsigned long long sbgateway_lost(const struct sbgateway *sg)
{
	return sg ? sg->lost_denied : 0;
}

void sbgateway_free(struct sbgateway *sg)
{
	if (!sg)
		return;
	if (sg->client)
		gateway_client_remove(sg->client);
	gateway_free(sg->gw);
	if (sg->files_made) {
		unlink(sg->ca_path);
		unlink(sg->bundle_path);
	}
	if (sg->event_fd >= 0)
		close(sg->event_fd);
	pthread_mutex_destroy(&sg->lock);
	free(sg->queue);
	free(sg);
}
