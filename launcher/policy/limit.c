// SPDX-License-Identifier: LGPL-2.1-or-later
/* The job's resource limits: parsing, merging and defaults (pure; cglimit.c applies them). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "limit.h"

/* Digits only (no sign, no blanks, no leading "0x"), without overflow. */
static int parse_decimal(const char *text, size_t len, uint64_t *ret)
{
	uint64_t value = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -EINVAL;
		if (value > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		value = value * 10 + (uint64_t)(text[i] - '0');
	}
	*ret = value;
	return 0;
}

/*
 * "N" or "N.F" (at most 6 decimals) as a fixed-point number with 6 decimals: 1.5 ->
 * 1500000.
 */
static int parse_fixed6(const char *text, size_t len, uint64_t *ret)
{
	const char *dot = memchr(text, '.', len);
	uint64_t whole, frac = 0;
	size_t nfrac = 0;

	if (parse_decimal(text, dot ? (size_t)(dot - text) : len, &whole) < 0)
		return -EINVAL;
	if (dot) {
		nfrac = len - (size_t)(dot - text) - 1;
		if (nfrac == 0 || nfrac > 6 || parse_decimal(dot + 1, nfrac, &frac) < 0)
			return -EINVAL;
	}
	for (size_t i = nfrac; i < 6; i++)
		frac *= 10;
	if (whole > UINT64_MAX / 1000000 - 1)
		return -EINVAL;
	*ret = whole * 1000000 + frac;
	return 0;
}

int limit_parse_pids(const char *text, uint64_t *ret)
{
	uint64_t value;

	if (strcmp(text, "max") == 0) {
		*ret = LIMIT_NONE;
		return 0;
	}
	if (parse_decimal(text, strlen(text), &value) < 0 || value == 0 ||
	    value > LIMIT_PIDS_CEILING)
		return -EINVAL;
	*ret = value;
	return 0;
}

/* A number of bytes with an optional binary suffix: K, M, G, T, optionally with "iB" or "B". */
static int parse_bytes(const char *text, uint64_t *ret)
{
	static const char units[] = "KMGT";
	size_t len = strlen(text), digits = strspn(text, "0123456789");
	const char *suffix = text + digits, *unit;
	uint64_t value;
	int shift = 0;

	if (parse_decimal(text, digits, &value) < 0)
		return -EINVAL;
	if (*suffix) {
		char c = *suffix >= 'a' && *suffix <= 'z' ? (char)(*suffix - 32) : *suffix;

		unit = strchr(units, c);
		if (!c || !unit)
			return -EINVAL;
		shift = 10 * (int)(unit - units + 1);
		suffix++;
		if (strcmp(suffix, "") != 0 && strcmp(suffix, "B") != 0 &&
		    strcmp(suffix, "iB") != 0)
			return -EINVAL;
	} else if (digits != len) {
		return -EINVAL;
	}
	if (shift && value > (UINT64_MAX >> shift))
		return -EINVAL;
	*ret = value << shift;
	return 0;
}

int limit_parse_memory(const char *text, uint64_t *ret)
{
	uint64_t value;

	if (strcmp(text, "max") == 0) {
		*ret = LIMIT_NONE;
		return 0;
	}
	if (parse_bytes(text, &value) < 0 || value < LIMIT_MEMORY_MIN_BYTES || value == LIMIT_NONE)
		return -EINVAL;
	*ret = value;
	return 0;
}

int limit_parse_cpu(const char *text, uint64_t *ret_quota_us, uint64_t *ret_period_us)
{
	size_t len = strlen(text);
	const char *space = strchr(text, ' ');
	uint64_t millionths, quota, period = LIMIT_CPU_PERIOD_US;

	if (strcmp(text, "max") == 0) {
		*ret_quota_us = LIMIT_NONE;
		*ret_period_us = LIMIT_CPU_PERIOD_US;
		return 0;
	}
	if (space) {
		/* As cgroup v2's cpu.max: "QUOTA PERIOD", in microseconds. */
		if (parse_decimal(text, (size_t)(space - text), &quota) < 0 ||
		    parse_decimal(space + 1, strlen(space + 1), &period) < 0)
			return -EINVAL;
	} else if (len > 1 && text[len - 1] == '%') {
		/* A percentage of one CPU: 150% = 1.5 CPUs. */
		if (parse_fixed6(text, len - 1, &millionths) < 0)
			return -EINVAL;
		quota = millionths / 100 * period / 1000000;
	} else {
		if (parse_fixed6(text, len, &millionths) < 0 || millionths > 4096ull * 1000000)
			return -EINVAL;
		quota = millionths * period / 1000000;
	}
	/* The kernel's bounds: a period of 1 ms to 1 s, a quota of at least 1 ms. */
	if (period < 1000 || period > 1000000 || quota < 1000 || quota > 4096ull * period)
		return -EINVAL;
	*ret_quota_us = quota;
	*ret_period_us = period;
	return 0;
}

int limit_parse_tmp(const char *text, uint64_t *ret_bytes, unsigned int *ret_percent)
{
	size_t len = strlen(text);
	uint64_t value;

	if (len > 1 && text[len - 1] == '%') {
		if (parse_decimal(text, len - 1, &value) < 0 || value == 0 || value > 100)
			return -EINVAL;
		*ret_bytes = LIMIT_UNSET;
		*ret_percent = (unsigned int)value;
		return 0;
	}
	/* One page at least: tmpfs takes size=0 for no limit at all. */
	if (parse_bytes(text, &value) < 0 || value < 4096 || value == LIMIT_NONE)
		return -EINVAL;
	*ret_bytes = value;
	*ret_percent = 0;
	return 0;
}

int limit_parse_nofile(const char *text, uint64_t *ret)
{
	uint64_t value;

	/* Fewer than 3 and the job has not even its standard streams. */
	if (parse_decimal(text, strlen(text), &value) < 0 || value < 3 ||
	    value > LIMIT_NOFILE_CEILING)
		return -EINVAL;
	*ret = value;
	return 0;
}

/* The stricter of two values of one limit; LIMIT_NONE is the largest, UNSET takes the other. */
static uint64_t stricter(uint64_t a, uint64_t b)
{
	if (a == LIMIT_UNSET)
		return b;
	if (b == LIMIT_UNSET)
		return a;
	return a < b ? a : b;
}

void limit_merge_strictest(struct job_limits *dst, const struct job_limits *src)
{
	dst->pids_max = stricter(dst->pids_max, src->pids_max);
	dst->memory_max = stricter(dst->memory_max, src->memory_max);
	dst->nofile = stricter(dst->nofile, src->nofile);
	/* CPU: the smaller share (quota per period) wins, with its own period. */
	if (src->cpu_quota_us != LIMIT_UNSET &&
	    (dst->cpu_quota_us == LIMIT_UNSET || dst->cpu_quota_us == LIMIT_NONE ||
	     (src->cpu_quota_us != LIMIT_NONE &&
	      (double)src->cpu_quota_us / (double)src->cpu_period_us <
		      (double)dst->cpu_quota_us / (double)dst->cpu_period_us))) {
		dst->cpu_quota_us = src->cpu_quota_us;
		dst->cpu_period_us = src->cpu_period_us;
	}
	/* /tmp: bytes and percentages cannot be compared without the RAM; the first kind wins. */
	if (dst->tmp_bytes == LIMIT_UNSET && !dst->tmp_percent) {
		dst->tmp_bytes = src->tmp_bytes;
		dst->tmp_percent = src->tmp_percent;
	} else if (dst->tmp_bytes != LIMIT_UNSET && src->tmp_bytes != LIMIT_UNSET) {
		dst->tmp_bytes = stricter(dst->tmp_bytes, src->tmp_bytes);
	} else if (dst->tmp_percent && src->tmp_percent) {
		dst->tmp_percent =
			dst->tmp_percent < src->tmp_percent ? dst->tmp_percent : src->tmp_percent;
	}
}

void limit_override(struct job_limits *dst, const struct job_limits *src)
{
	if (src->pids_max != LIMIT_UNSET)
		dst->pids_max = src->pids_max;
	if (src->memory_max != LIMIT_UNSET)
		dst->memory_max = src->memory_max;
	if (src->nofile != LIMIT_UNSET)
		dst->nofile = src->nofile;
	if (src->cpu_quota_us != LIMIT_UNSET) {
		dst->cpu_quota_us = src->cpu_quota_us;
		dst->cpu_period_us = src->cpu_period_us;
	}
	if (src->tmp_bytes != LIMIT_UNSET || src->tmp_percent) {
		dst->tmp_bytes = src->tmp_bytes;
		dst->tmp_percent = src->tmp_percent;
	}
}

void limit_apply_defaults(struct job_limits *limits, uint64_t ram_bytes, uint64_t kernel_tasks,
			  unsigned int ncpus, uint64_t nofile_hard)
{
	if (limits->pids_max == LIMIT_UNSET) {
		uint64_t per_cpu = (uint64_t)(ncpus ? ncpus : 1) * LIMIT_DEFAULT_PIDS_PER_CPU;

		limits->defaulted |= LIMIT_DEFAULTED_PIDS;
		limits->pids_max = kernel_tasks * LIMIT_DEFAULT_PIDS_PERCENT / 100;
		if (limits->pids_max > LIMIT_DEFAULT_PIDS)
			limits->pids_max = LIMIT_DEFAULT_PIDS;
		if (limits->pids_max > per_cpu)
			limits->pids_max = per_cpu;
		if (limits->pids_max < 64)
			limits->pids_max = 64;
	}
	if (limits->memory_max == LIMIT_UNSET) {
		limits->defaulted |= LIMIT_DEFAULTED_MEMORY;
		limits->memory_max = ram_bytes / 100 * LIMIT_DEFAULT_MEMORY_PERCENT;
		if (limits->memory_max < LIMIT_MEMORY_MIN_BYTES)
			limits->memory_max = LIMIT_MEMORY_MIN_BYTES;
	}
	if (limits->cpu_quota_us == LIMIT_UNSET) {
		limits->cpu_quota_us = LIMIT_NONE;
		limits->cpu_period_us = LIMIT_CPU_PERIOD_US;
	}
	if (limits->tmp_bytes == LIMIT_UNSET && !limits->tmp_percent)
		limits->tmp_percent = LIMIT_DEFAULT_TMP_PERCENT;
	if (limits->nofile == LIMIT_UNSET)
		limits->nofile =
			nofile_hard < LIMIT_DEFAULT_NOFILE ? nofile_hard : LIMIT_DEFAULT_NOFILE;
}

bool limit_wants_cgroup(const struct job_limits *limits)
{
	bool pids = limits->pids_max != LIMIT_UNSET && limits->pids_max != LIMIT_NONE;
	bool memory = limits->memory_max != LIMIT_UNSET && limits->memory_max != LIMIT_NONE;
	bool cpu = limits->cpu_quota_us != LIMIT_UNSET && limits->cpu_quota_us != LIMIT_NONE;

	return pids || memory || cpu;
}

uint64_t limit_tmp_bytes(const struct job_limits *limits, uint64_t ram_bytes)
{
	if (limits->tmp_bytes != LIMIT_UNSET)
		return limits->tmp_bytes;
	return ram_bytes / 100 * limits->tmp_percent;
}

const char *limit_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	if (bytes == LIMIT_NONE) {
		snprintf(buf, len, "max");
		return buf;
	}
	while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes, units[u]);
	return buf;
}
