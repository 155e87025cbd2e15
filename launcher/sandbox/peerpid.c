// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which process of a sandbox owns a local socket: the pid on the DNS proxy's deny lines. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peerpid.h"
#include "lib/util.h"

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static void closedirp(DIR **dir)
{
	if (*dir)
		closedir(*dir);
}

/* Sockets bound to one port at once (SO_REUSEPORT, IPv4 and IPv6): only the first few. */
#define PEERPID_MAX_INODES 8

/* Collects the inodes of the sockets in one /proc/net table whose local port is port. */
static size_t peerpid_inodes(const char *table, unsigned int port, unsigned long *inodes, size_t n,
			     size_t cap)
{
	_cleanup_(fclosep) FILE *f = fopen(table, "re");
	char line[512];

	if (!f)
		return n;
	/* "sl local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout
	 * inode ..." with local_address as hex ADDR:PORT. */
	while (n < cap && fgets(line, sizeof(line), f)) {
		unsigned int local_port, uid;
		unsigned long inode;
		char local[64], remote[64];

		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %u %*s %lu", local, remote, &uid,
			   &inode) != 4)
			continue;
		if (!strchr(local, ':') || sscanf(strchr(local, ':') + 1, "%x", &local_port) != 1)
			continue;
		if (local_port == port && inode)
			inodes[n++] = inode;
	}
	return n;
}

/* Whether process pid has one of the sockets open. */
static bool peerpid_holds(pid_t pid, const unsigned long *inodes, size_t n)
{
	char path[64];
	_cleanup_(closedirp) DIR *dir = NULL;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		char link[64 + 256], target[64];
		unsigned long inode;
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (sscanf(target, "socket:[%lu]", &inode) != 1)
			continue;
		for (size_t i = 0; i < n; i++)
			if (inodes[i] == inode)
				return true;
	}
	return false;
}

int peerpid_find(int cgroup_fd, int net_pid, const struct sockaddr *addr, socklen_t addrlen,
		 bool tcp)
{
	unsigned long inodes[PEERPID_MAX_INODES];
	_cleanup_(fclosep) FILE *procs = NULL;
	char net[32], table[64];
	unsigned int port;
	size_t n = 0;
	int fd, pid;

	if (addr->sa_family == AF_INET && addrlen >= sizeof(struct sockaddr_in))
		port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
	else if (addr->sa_family == AF_INET6 && addrlen >= sizeof(struct sockaddr_in6))
		port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	else
		return -EAFNOSUPPORT;
	if (net_pid > 0)
		snprintf(net, sizeof(net), "/proc/%d/net", net_pid);
	else
		strcpy(net, "/proc/net");
	snprintf(table, sizeof(table), "%s/%s", net, tcp ? "tcp" : "udp");
	n = peerpid_inodes(table, port, inodes, n, PEERPID_MAX_INODES);
	snprintf(table, sizeof(table), "%s/%s", net, tcp ? "tcp6" : "udp6");
	n = peerpid_inodes(table, port, inodes, n, PEERPID_MAX_INODES);
	if (!n)
		return -ENOENT;
	fd = openat(cgroup_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	procs = fdopen(fd, "re");
	if (!procs) {
		close(fd);
		return -errno;
	}
	while (fscanf(procs, "%d", &pid) == 1)
		if (peerpid_holds(pid, inodes, n))
			return pid;
	return -ENOENT;
}
