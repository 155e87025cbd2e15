// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Installed setuid root by the tests: prints the effective uid and capabilities it ended up
 * with, and whether it could open a raw socket ("euid=0 capeff=... raw=OK").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "lib/util.h"

#define SETUID_CAP_TEXT_MAX 32

/* CapEff of /proc/self/status, as the kernel prints it (16 hex digits). */
static int setuid_read_capeff(char *ret_text, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %31s", ret_text) == 1) {
			ret_text[len - 1] = '\0';
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int main(void)
{
	char capeff[SETUID_CAP_TEXT_MAX] = "?";
	const char *raw = "OK";
	int fd;

	(void)setuid_read_capeff(capeff, sizeof(capeff));
	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (fd < 0)
		raw = strerrorname_np(errno);
	else
		close(fd);
	printf("euid=%u capeff=%s raw=%s\n", (unsigned int)geteuid(), capeff, raw ? raw : "E?");
	return 0;
}
