// SPDX-License-Identifier: LGPL-2.1-or-later
/* The audit log's timestamps: RFC 3339 UTC text from CLOCK_REALTIME nanoseconds. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "audit.h"

/*
 * The proleptic Gregorian date of a day counted from 1970-01-01 (H. Hinnant's civil_from_days,
 * the inverse of audit_schema.c's days_from_civil). glibc's gmtime_r reads the time zone file
 * at its first call, six system calls on the way to the start line, for a UTC time.
 */
static void civil_from_days(long long days, long long *ret_y, unsigned int *ret_m,
			    unsigned int *ret_d)
{
	long long z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned int doe = (unsigned int)(z - era * 146097);
	unsigned int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned int mp = (5 * doy + 2) / 153;

	*ret_d = doy - (153 * mp + 2) / 5 + 1;
	*ret_m = mp < 10 ? mp + 3 : mp - 9;
	*ret_y = (long long)yoe + era * 400 + (*ret_m <= 2);
}

int audit_format_time(int64_t real_ns, char *buf, size_t len)
{
	int64_t secs = real_ns / 1000000000, nsecs = real_ns % 1000000000;
	long long days, y;
	unsigned int m, d, sod;
	int n;

	if (nsecs < 0) {
		nsecs += 1000000000;
		secs--;
	}
	days = secs / 86400;
	if (secs % 86400 < 0)
		days--;
	sod = (unsigned int)(secs - days * 86400);
	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		return -EINVAL;
	n = snprintf(buf, len, "%04lld-%02u-%02uT%02u:%02u:%02u.%06ldZ", y, m, d, sod / 3600,
		     sod / 60 % 60, sod % 60, (long)(nsecs / 1000));
	if (n < 0 || (size_t)n >= len)
		return -ENOBUFS;
	return n;
}
