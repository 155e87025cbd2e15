// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The job's resource limits in force: cgroup v2 controllers where the cgroup parent can
 * enable them, else cgroup v1 hierarchies (hybrid hosts); and watching for the job to reach
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cglimit.h"
#include "lib/mountinfo.h"
#include "lib/util.h"

static int write_text(int dir_fd, const char *file, const char *text)
{
	_cleanup_close_ int fd = openat(dir_fd, file, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		return -errno;
	return 0;
}

int cglimit_mounts_add(const struct mount_entry *mount, void *userdata)
{
	struct cgroup_mounts *mounts = userdata;
	bool v1 = strcmp(mount->fstype, "cgroup") == 0;

	if (!v1 && strcmp(mount->fstype, "cgroup2") != 0)
		return 0;
	if (!v1) {
		if (!mounts->v2[0])
			strcpy(mounts->v2, mount->mount_point);
		return 0;
	}
	for (int c = 0; c < CGLIMIT_NCTRLS; c++)
		if (!mounts->v1[c][0] &&
		    word_list_has(mount->super_options, strlen(mount->super_options),
				  cgplan_ctrl_name(c), ", \n"))
			strcpy(mounts->v1[c], mount->mount_point);
	return 0;
}

void cglimit_mounts_init(struct cgroup_mounts *mounts)
{
	mounts->v2[0] = '\0';
	for (int c = 0; c < CGLIMIT_NCTRLS; c++)
		mounts->v1[c][0] = '\0';
}

static int mounts_read(struct cgroup_mounts *ret)
{
	cglimit_mounts_init(ret);
	return mountinfo_foreach(cglimit_mounts_add, ret);
}

/* The same path below ctrl's v1 mount as below the v2 one: gc finds it from the v2 path. */
static int v1_mirror_of(const struct cgroup_mounts *mounts, enum cglimit_ctrl ctrl,
			const char *v2_path, char *ret, size_t len)
{
	size_t n = strlen(mounts->v2);

	if (!mounts->v1[ctrl][0] || !mounts->v2[0])
		return -ENOENT;
	if (strncmp(v2_path, mounts->v2, n) != 0 || (v2_path[n] != '/' && v2_path[n] != '\0'))
		return -EXDEV;
	if ((size_t)snprintf(ret, len, "%s%s", mounts->v1[ctrl], v2_path + n) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int cglimit_v1_mirror(enum cglimit_ctrl ctrl, const char *v2_path, char *ret, size_t len)
{
	struct cgroup_mounts mounts;
	int r = mounts_read(&mounts);

	if (r < 0)
		return r;
	return v1_mirror_of(&mounts, ctrl, v2_path, ret, len);
}

/*
 * What the sandbox's parent offers in cgroup v2 (its cgroup.controllers). 0 or -errno: a file
 * that cannot be read is an error, not a host without controllers (defaults would then be
 * left off with only a warning).
 */
static int v2_offered(const char *parent, char *list, size_t len)
{
	_cleanup_close_ int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return cgroup_read_text(fd, "cgroup.controllers", list, len);
}

/* Enables ctrl for the children of the sandbox's parent. 0 or -errno. */
static int v2_enable(const char *parent, const char *ctrl)
{
	_cleanup_close_ int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char list[512], plus[32];
	int r;

	if (fd < 0)
		return -errno;
	r = cgroup_read_text(fd, "cgroup.subtree_control", list, sizeof(list));
	if (r == 0 && word_list_has(list, strlen(list), ctrl, ", \n"))
		return 0;
	snprintf(plus, sizeof(plus), "+%s", ctrl);
	return write_text(fd, "cgroup.subtree_control", plus);
}

/* mkdir -p of path's components below the first `keep` bytes (the v1 mount). */
static int mkdir_below(const char *path, size_t keep)
{
	char buf[PATH_MAX];

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + keep + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0755) < 0 ? -errno : 0;
}

/* Removes a v1 cgroup, retrying while its last processes are being reaped. */
static int v1_remove(const char *path, int timeout_ms)
{
	for (int waited = 0;; waited += 5) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || waited >= timeout_ms)
			return -errno;
		usleep(5000);
	}
}

/* The sandbox's v1 cgroup of ctrl, made anew. */
static int v1_create(struct cglimit *cl, const struct cgroup_mounts *mounts, enum cglimit_ctrl ctrl,
		     const char *v2_path)
{
	char *path = cl->v1[ctrl];
	int r;

	r = v1_mirror_of(mounts, ctrl, v2_path, path, PATH_MAX);
	if (r == 0)
		r = mkdir_below(path, strlen(mounts->v1[ctrl]));
	if (r == -EEXIST) {
		/* A dead sandbox's of the same name (we hold its lock): removed, then made. */
		r = v1_remove(path, 1000);
		if (r == 0)
			r = mkdir(path, 0755) < 0 ? -errno : 0;
	}
	if (r == 0) {
		/* Kept: the limits, init's move and the counters all go through it. */
		cl->v1_fd[ctrl] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = cl->v1_fd[ctrl] < 0 ? -errno
					: cgroup_mark(cl->v1_fd[ctrl], strrchr(path, '/') + 1);
	}
	if (r < 0)
		path[0] = '\0';
	return r;
}

/* Writes one control file of ctrl: in the v2 cgroup, or in the v1 one under its v1 name. */
static int ctrl_write(struct cglimit *cl, enum cglimit_ctrl ctrl, const char *v2_file,
		      const char *v1_file, const char *value, bool optional)
{
	int fd = cl->in_v2[ctrl] ? cl->v2_fd : cl->v1_fd[ctrl], r;

	if (cl->missing[ctrl])
		return 0;
	if (fd < 0)
		return -EBADF;
	r = write_text(fd, cl->in_v2[ctrl] ? v2_file : v1_file, value);
	/* Optional files: swap limits exist only with swap accounting. */
	if (optional && r == -ENOENT)
		return 0;
	return r;
}

static int setup_values(struct cglimit *cl, const struct job_limits *limits, const char **ret_file)
{
	char value[64];
	int r = 0;

	if (limits->pids_max != LIMIT_NONE) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)limits->pids_max);
		*ret_file = "pids.max";
		r = ctrl_write(cl, CGLIMIT_PIDS, "pids.max", "pids.max", value, false);
		if (r < 0)
			return r;
	}
	if (limits->memory_max != LIMIT_NONE) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)limits->memory_max);
		*ret_file = cl->in_v2[CGLIMIT_MEMORY] ? "memory.max" : "memory.limit_in_bytes";
		r = ctrl_write(cl, CGLIMIT_MEMORY, "memory.max", "memory.limit_in_bytes", value,
			       false);
		if (r < 0)
			return r;
		/*
		 * No swap beyond the limit (v2: none at all; v1: memory and swap together), so a
		 * hog meets the limit rather than paging the host to a halt. v2 kills the whole
		 * sandbox on OOM (memory.oom.group); launch does that itself on v1.
		 */
		*ret_file = cl->in_v2[CGLIMIT_MEMORY] ? "memory.swap.max"
						      : "memory.memsw.limit_in_bytes";
		r = ctrl_write(cl, CGLIMIT_MEMORY, "memory.swap.max", "memory.memsw.limit_in_bytes",
			       cl->in_v2[CGLIMIT_MEMORY] ? "0" : value, true);
		if (r == 0 && cl->in_v2[CGLIMIT_MEMORY]) {
			*ret_file = "memory.oom.group";
			r = ctrl_write(cl, CGLIMIT_MEMORY, "memory.oom.group", "", "1", true);
		}
		if (r < 0)
			return r;
	}
	if (limits->cpu_quota_us != LIMIT_NONE) {
		if (cl->in_v2[CGLIMIT_CPU]) {
			snprintf(value, sizeof(value), "%llu %llu",
				 (unsigned long long)limits->cpu_quota_us,
				 (unsigned long long)limits->cpu_period_us);
			*ret_file = "cpu.max";
			return ctrl_write(cl, CGLIMIT_CPU, "cpu.max", "", value, false);
		}
		snprintf(value, sizeof(value), "%llu", (unsigned long long)limits->cpu_period_us);
		*ret_file = "cpu.cfs_period_us";
		r = ctrl_write(cl, CGLIMIT_CPU, "", "cpu.cfs_period_us", value, false);
		if (r < 0)
			return r;
		snprintf(value, sizeof(value), "%llu", (unsigned long long)limits->cpu_quota_us);
		*ret_file = "cpu.cfs_quota_us";
		r = ctrl_write(cl, CGLIMIT_CPU, "", "cpu.cfs_quota_us", value, false);
	}
	return r;
}

/* The option that asked for ctrl's limit, with its value, for messages. */
static const char *limit_named(enum cglimit_ctrl ctrl, const struct job_limits *limits, char *buf,
			       size_t len)
{
	char size[32];

	if (ctrl == CGLIMIT_PIDS)
		snprintf(buf, len, "--pids-max %llu", (unsigned long long)limits->pids_max);
	else if (ctrl == CGLIMIT_MEMORY)
		snprintf(buf, len, "--memory-max %s",
			 limit_format_bytes(limits->memory_max, size, sizeof(size)));
	else
		snprintf(buf, len, "--cpu-max \"%llu %llu\"",
			 (unsigned long long)limits->cpu_quota_us,
			 (unsigned long long)limits->cpu_period_us);
	return buf;
}

int cglimit_setup(struct cglimit *cl, const struct job_limits *limits, int v2_fd,
		  const char *v2_path, const struct cgroup_mounts *known, char *errbuf,
		  size_t errlen)
{
	const char *slash = strrchr(v2_path, '/'), *file = "";
	char parent[PATH_MAX], named[96], offered[512];
	struct cgroup_mounts read_now;
	const struct cgroup_mounts *mounts = known;
	int r;

	cl->v2_fd = v2_fd;
	if (!slash || (size_t)(slash - v2_path) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, v2_path, (size_t)(slash - v2_path));
	parent[slash - v2_path] = '\0';
	/* Read once for the three controllers: nothing here changes them meanwhile. */
	r = v2_offered(parent, offered, sizeof(offered));
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot read %s/cgroup.controllers: %s", parent,
			 strerror(-r));
		return r;
	}
	if (!mounts) {
		r = mounts_read(&read_now);
		if (r < 0) {
			snprintf(errbuf, errlen, "cannot read /proc/self/mountinfo: %s",
				 strerror(-r));
			return r;
		}
		mounts = &read_now;
	}
	for (int c = 0; c < CGLIMIT_NCTRLS; c++) {
		bool defaulted =
			(c == CGLIMIT_PIDS && (limits->defaulted & LIMIT_DEFAULTED_PIDS)) ||
			(c == CGLIMIT_MEMORY && (limits->defaulted & LIMIT_DEFAULTED_MEMORY));
		struct cgplan_offer offer = {
			.limited = (c == CGLIMIT_PIDS && limits->pids_max != LIMIT_NONE) ||
				   (c == CGLIMIT_MEMORY && limits->memory_max != LIMIT_NONE) ||
				   (c == CGLIMIT_CPU && limits->cpu_quota_us != LIMIT_NONE),
		};

		offer.required = offer.limited && !defaulted;
		offer.v2_listed =
			word_list_has(offered, strlen(offered), cgplan_ctrl_name(c), ", \n");
		offer.v1_mounted = mounts->v1[c][0] != '\0';
		switch (cgplan_choose(c, &offer)) {
		case CGPLAN_SKIP:
			continue;
		case CGPLAN_V2:
			r = v2_enable(parent, cgplan_ctrl_name(c));
			if (r == 0) {
				cl->in_v2[c] = true;
				continue;
			}
			/* On offer but failing, a default too: an error, not a host without it. */
			snprintf(errbuf, errlen,
				 "%s cannot be enforced: cannot enable the %s controller in "
				 "%s/cgroup.subtree_control: %s",
				 limit_named(c, limits, named, sizeof(named)), cgplan_ctrl_name(c),
				 parent, strerror(-r));
			return r;
		case CGPLAN_V1:
			r = v1_create(cl, mounts, c, v2_path);
			if (r == 0)
				continue;
			snprintf(errbuf, errlen,
				 "%s cannot be enforced: cannot create its cgroup v1 %s: %s",
				 limit_named(c, limits, named, sizeof(named)),
				 cl->v1[c][0] ? cl->v1[c] : cgplan_ctrl_name(c), strerror(-r));
			return r;
		case CGPLAN_MISSING:
			break;
		case CGPLAN_REFUSE:
			snprintf(errbuf, errlen,
				 "%s cannot be enforced: cgroup v2 has no %s controller for %s "
				 "and no cgroup v1 hierarchy has it (give \"max\" to run without "
				 "this limit)",
				 limit_named(c, limits, named, sizeof(named)), cgplan_ctrl_name(c),
				 parent);
			return -EOPNOTSUPP;
		}
		/* A default the host cannot enforce: said, not fatal. */
		cl->missing[c] = true;
		if (offer.limited) {
			size_t used = strlen(cl->warning);

			snprintf(cl->warning + used, sizeof(cl->warning) - used, "%s%s",
				 used ? ", " : "", limit_named(c, limits, named, sizeof(named)));
		}
	}
	r = setup_values(cl, limits, &file);
	if (r < 0)
		snprintf(errbuf, errlen, "cannot set the job's limit in %s: %s", file,
			 strerror(-r));
	return r;
}

int cglimit_join(struct cglimit *cl, const struct job_limits *limits, pid_t pid,
		 int ret_dir_fds[CGLIMIT_NCTRLS], int *ret_ndirs, char *errbuf, size_t errlen)
{
	struct rlimit nofile = { .rlim_cur = limits->nofile, .rlim_max = limits->nofile };
	char text[32], path[64];
	int n = 0, r;

	*ret_ndirs = 0;
	for (int c = 0; c < CGLIMIT_NCTRLS; c++) {
		if (!cl->v1[c][0])
			continue;
		if (cl->v1_fd[c] < 0) {
			snprintf(errbuf, errlen, "cannot move the sandbox into %s: not open",
				 cl->v1[c]);
			return -EBADF;
		}
		ret_dir_fds[n++] = cl->v1_fd[c];
	}
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	snprintf(text, sizeof(text), "%d", CGLIMIT_JOB_OOM_SCORE_ADJ);
	r = write_text(AT_FDCWD, path, text);
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot raise the job's OOM score (%s): %s", path,
			 strerror(-r));
	} else if (prlimit(pid, RLIMIT_NOFILE, &nofile, NULL) < 0) {
		struct rlimit own = { 0 };

		r = -errno;
		getrlimit(RLIMIT_NOFILE, &own);
		if (r == -EPERM && limits->nofile > own.rlim_max)
			snprintf(errbuf, errlen,
				 "--nofile %llu cannot be enforced: it is above launch's own hard "
				 "limit %llu, which only CAP_SYS_RESOURCE may raise",
				 (unsigned long long)limits->nofile,
				 (unsigned long long)own.rlim_max);
		else
			snprintf(errbuf, errlen, "cannot set the job's RLIMIT_NOFILE: %s",
				 strerror(-r));
	}
	if (r < 0)
		return r;
	*ret_ndirs = n;
	return 0;
}

const char *cglimit_v1_joined(const struct cglimit *cl, int nth)
{
	for (int c = 0; c < CGLIMIT_NCTRLS; c++)
		if (cl->v1[c][0] && nth-- == 0)
			return cl->v1[c];
	return NULL;
}

int cglimit_watch_tmp(struct cglimit *cl, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	cl->tmp_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return cl->tmp_fd < 0 ? -errno : 0;
}

/* The number after `key` in a flat-keyed file ("max 3", "oom_kill 1"); 0 when absent. */
static unsigned long long ctrl_counter(struct cglimit *cl, enum cglimit_ctrl ctrl,
				       const char *v2_file, const char *v1_file, const char *key)
{
	int fd = cl->in_v2[ctrl] ? cl->v2_fd : cl->v1_fd[ctrl];
	char buf[1024];
	const char *p;

	if (fd < 0)
		return 0;
	if (cgroup_read_text(fd, cl->in_v2[ctrl] ? v2_file : v1_file, buf, sizeof(buf)) < 0)
		return 0;
	for (p = buf; (p = strstr(p, key)); p++)
		if ((p == buf || p[-1] == '\n') && p[strlen(key)] == ' ')
			return strtoull(p + strlen(key) + 1, NULL, 10);
	return 0;
}

unsigned int cglimit_check(struct cglimit *cl)
{
	unsigned long long n;
	unsigned int hits = 0;
	struct statfs st;

	n = ctrl_counter(cl, CGLIMIT_PIDS, "pids.events", "pids.events", "max");
	if (n > cl->pids_events) {
		cl->pids_events = n;
		hits |= CGLIMIT_HIT_PIDS;
	}
	n = ctrl_counter(cl, CGLIMIT_MEMORY, "memory.events", "memory.oom_control", "oom_kill");
	if (n > cl->oom_kills) {
		cl->oom_kills = n;
		hits |= CGLIMIT_HIT_MEMORY;
	}
	/* tmpfs keeps no reserve: no block free is full. */
	if (cl->tmp_fd >= 0 && !cl->tmp_full && fstatfs(cl->tmp_fd, &st) == 0 && st.f_blocks > 0 &&
	    st.f_bavail == 0) {
		cl->tmp_full = true;
		hits |= CGLIMIT_HIT_TMP;
	}
	return hits;
}

int cglimit_destroy(struct cglimit *cl)
{
	int r = 0;

	if (cl->tmp_fd >= 0)
		close(cl->tmp_fd);
	cl->tmp_fd = -1;
	for (int c = 0; c < CGLIMIT_NCTRLS; c++) {
		int q;

		if (cl->v1_fd[c] >= 0)
			close(cl->v1_fd[c]);
		cl->v1_fd[c] = -1;
		if (!cl->v1[c][0])
			continue;
		q = v1_remove(cl->v1[c], 1000);
		if (q < 0 && r == 0)
			r = q;
		if (q == 0)
			cl->v1[c][0] = '\0';
	}
	return r;
}

/*
 * Kills the processes listed in a v1 cgroup: each through a pidfd taken while the process was
 * still listed there, so that a PID reused meanwhile is never hit.
 */
static void v1_kill_members(const char *path)
{
	char procs[PATH_MAX];
	FILE *f;
	int pid;

	if ((size_t)snprintf(procs, sizeof(procs), "%s/cgroup.procs", path) >= sizeof(procs))
		return;
	f = fopen(procs, "re");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1) {
		int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		char line[64];
		bool listed = false;
		FILE *again;

		if (pidfd < 0)
			continue;
		again = fopen(procs, "re");
		while (again && fgets(line, sizeof(line), again))
			listed |= atoi(line) == pid;
		if (again)
			fclose(again);
		if (listed)
			syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		close(pidfd);
	}
	fclose(f);
}

int cglimit_remove_mirrors(const char *v2_path, int timeout_ms)
{
	struct cgroup_mounts mounts;
	int r = mounts_read(&mounts);

	if (r < 0)
		return r;
	for (int c = 0; c < CGLIMIT_NCTRLS; c++) {
		char path[PATH_MAX];
		int q;

		if (v1_mirror_of(&mounts, c, v2_path, path, sizeof(path)) < 0)
			continue;
		if (access(path, F_OK) < 0)
			continue;
		v1_kill_members(path);
		q = v1_remove(path, timeout_ms);
		if (q < 0 && r == 0)
			r = q;
	}
	return r;
}

/* The text of /proc/self/cgroup, which `ip netns exec` does not hide. */
static int read_proc_cgroup(char *text, size_t len)
{
	_cleanup_close_ int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, text, len - 1);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	return 0;
}

bool cglimit_host_is_hybrid(void)
{
	char text[4096], list[128];

	if (read_proc_cgroup(text, sizeof(text)) < 0)
		return false;
	for (int c = 0; c < CGLIMIT_NCTRLS; c++)
		if (cgplan_v1_controllers(text, c, list, sizeof(list)) == 0)
			return true;
	return false;
}

int cglimit_mount_private(const char *root)
{
	char text[4096], done[CGLIMIT_NCTRLS][128], dir[PATH_MAX];
	int ndone = 0, r;

	r = read_proc_cgroup(text, sizeof(text));
	if (r < 0)
		return r;
	for (int c = 0; c < CGLIMIT_NCTRLS; c++) {
		bool seen = false;

		if (cgplan_v1_controllers(text, c, done[ndone], sizeof(done[ndone])) < 0)
			continue;
		/* Two of ours in one hierarchy ("cpu,memory"): mounted once. */
		for (int i = 0; i < ndone; i++)
			seen |= strcmp(done[i], done[ndone]) == 0;
		if (seen)
			continue;
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", root, done[ndone]) >= sizeof(dir))
			return -ENAMETOOLONG;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		/* The same controller list names the host's hierarchy: this mounts it again. */
		if (mount("cgroup", dir, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, done[ndone]) <
		    0)
			return -errno;
		ndone++;
	}
	return ndone;
}
