/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's resource limits: parsing, merging and defaults (pure; cglimit.c applies them). */
#ifndef LAUNCH_LIMIT_H
#define LAUNCH_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A limit not given (by an option or a policy): its default applies. */
#define LIMIT_UNSET 0
/* A limit given as "max": none. */
#define LIMIT_NONE UINT64_MAX

/* The kernel's own ceilings: PID_MAX_LIMIT, and fs.nr_open's largest value. */
#define LIMIT_PIDS_CEILING   (4u * 1024 * 1024)
#define LIMIT_NOFILE_CEILING (1u << 20)
/* Less memory than this cannot even start the sandbox's init and a shell. */
#define LIMIT_MEMORY_MIN_BYTES (4ull << 20)
#define LIMIT_CPU_PERIOD_US    100000ull

/*
 * Defaults (docs/policy.md says why): a fork bomb stops at 64 tasks per online CPU, at most
 * 2048 (Podman's default) and at most 15% of the kernel's task limit (systemd's
 * DefaultTasksMax); a memory hog at half the RAM, a /tmp filler at a quarter; the job's
 * descriptors at 4096 per process. The CPU has no quota by default: the job competes as one
 * group with the host's processes.
 *
 * Tasks per CPU, because what stalls the host is not the number of PIDs but a crowd of
 * runnable tasks: a fork storm's forks and exits queue on the mapping lock (i_mmap_rwsem)
 * of the shared libraries every exec on the host needs, and each of them must be scheduled
 * in turn to pass it on. On 2 CPUs, beside a bomb of 2048 tasks a host exec waited 2 to 6 s,
 * of 512 up to 1.9 s, of 256 up to 1.7 s in one run in four, of 128 never over 310 ms; CPU
 * weight, quota or idle scheduling of the job did not shorten the queue (docs/design.md).
 */
#define LIMIT_DEFAULT_PIDS	     2048
#define LIMIT_DEFAULT_PIDS_PER_CPU   64
#define LIMIT_DEFAULT_PIDS_PERCENT   15
#define LIMIT_DEFAULT_MEMORY_PERCENT 50
#define LIMIT_DEFAULT_TMP_PERCENT    25
#define LIMIT_DEFAULT_NOFILE	     4096

struct job_limits {
	uint64_t pids_max;	  /* tasks (threads count too) */
	uint64_t memory_max;	  /* bytes, swap included */
	uint64_t cpu_quota_us;	  /* run time per cpu_period_us, over all CPUs */
	uint64_t cpu_period_us;	  /* set with cpu_quota_us */
	uint64_t tmp_bytes;	  /* size of the private /tmp; or: */
	unsigned int tmp_percent; /* of the RAM, when tmp_bytes is unset */
	uint64_t nofile;	  /* RLIMIT_NOFILE, soft and hard */
	unsigned int defaulted;	  /* LIMIT_DEFAULTED_*: set by limit_apply_defaults, not asked */
};

/*
 * Limits nobody asked for: where the host has no controller for them, the job runs without
 * them (with a warning). An asked-for limit that cannot be enforced is an error.
 */
#define LIMIT_DEFAULTED_PIDS   (1u << 0)
#define LIMIT_DEFAULTED_MEMORY (1u << 1)

/* Each parser: 0, or -EINVAL when text is not a valid value of that limit; "max" = none. */
int limit_parse_pids(const char *text, uint64_t *ret);
/* "256M", "1G", "1048576", "512KiB": binary multiples; at least LIMIT_MEMORY_MIN_BYTES. */
int limit_parse_memory(const char *text, uint64_t *ret);
/* "1.5" CPUs, "150%", "QUOTA PERIOD" in microseconds (as cgroup v2's cpu.max), or "max". */
int limit_parse_cpu(const char *text, uint64_t *ret_quota_us, uint64_t *ret_period_us);
/* A size ("512M") or a share of the RAM ("10%"); never "max". */
int limit_parse_tmp(const char *text, uint64_t *ret_bytes, unsigned int *ret_percent);
int limit_parse_nofile(const char *text, uint64_t *ret);

/* Takes from src each limit dst has not, and the stricter of the two where both have one. */
void limit_merge_strictest(struct job_limits *dst, const struct job_limits *src);
/* Takes from src every limit it sets (command-line options over policy files). */
void limit_override(struct job_limits *dst, const struct job_limits *src);
/*
 * Fills what is unset with the defaults, from the RAM, the kernel's task limit
 * (min(pid_max, threads-max)), the online CPUs and the launcher's hard RLIMIT_NOFILE.
 */
void limit_apply_defaults(struct job_limits *limits, uint64_t ram_bytes, uint64_t kernel_tasks,
			  unsigned int ncpus, uint64_t nofile_hard);
/*
 * Whether a cgroup controller must enforce something: a pids, memory or CPU limit, asked for
 * or defaulted ("max" for all of them: none).
 */
bool limit_wants_cgroup(const struct job_limits *limits);
/* The /tmp size in bytes, from tmp_bytes or tmp_percent of ram_bytes. */
uint64_t limit_tmp_bytes(const struct job_limits *limits, uint64_t ram_bytes);
/* "256M", "1073741825", "max": for messages and `launch check`. */
const char *limit_format_bytes(uint64_t bytes, char *buf, size_t len);

#endif /* LAUNCH_LIMIT_H */
