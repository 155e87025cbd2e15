// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the launcher and the sandbox's init (launch-init) say to each other: the messages of
 * the status socket, the descriptors they carry, and the job's configuration as it travels.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "childmsg.h"
#include "seccomp.h"
#include "lib/util.h"

int child_send_fds(int fd, const struct child_msg *msg, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CHILD_JOIN_FDS_MAX)];
		struct cmsghdr align;
	} control = { 0 };
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds < 0 || nfds > CHILD_JOIN_FDS_MAX)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *cmsg;

		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * (size_t)nfds);
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

ssize_t child_recv_fds(int fd, struct child_msg *msg, int *fds, int max, int *ret_nfds,
		       bool *ret_truncated)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CHILD_JOIN_FDS_MAX)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)max),
	};
	struct cmsghdr *cmsg;
	ssize_t n;

	*ret_nfds = 0;
	*ret_truncated = false;
	if (max < 1 || max > CHILD_JOIN_FDS_MAX)
		return -EINVAL;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
		size_t len = cmsg->cmsg_len - CMSG_LEN(0);

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < len / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
			if (*ret_nfds < max)
				fds[(*ret_nfds)++] = got;
			else
				close(got);
		}
	}
	*ret_truncated = mh.msg_flags & MSG_CTRUNC;
	return n;
}

#define CHILD_CONFIG_MAGIC 0x4c434647u /* "LCFG" */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
/* Bumped with any change to what the two say: a launch-init of another build refuses. */
#define CHILD_PROTOCOL_VERSION 1

#define CHILD_CONFIG_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
/* A list that is NULL, not empty: fs_write without "read_only". */
#define CHILD_CONFIG_NO_LIST UINT32_MAX

/* The blob: this header, then every string NUL-terminated, in the header's order. */
struct child_config_wire {
	uint32_t magic;
	uint32_t set_user, uid, gid, fs_write_cwd;
	int32_t landlock_abi, ngroups;
	uint32_t seccomp_flags;
	uint64_t tmp_size_bytes;
	uint64_t size; /* of the whole blob */
	uint32_t nargv, nenvp, nfs_write;
	uint32_t has_user_name, has_audit_path;
	uint32_t groups[CHILD_MAX_GROUPS];
};

static uint32_t child_list_len(const char *const *list)
{
	uint32_t n = 0;

	if (!list)
		return CHILD_CONFIG_NO_LIST;
	while (list[n])
		n++;
	return n;
}

/* Appends the strings of list (n of them) at *at; returns the bytes they take. */
static size_t child_put_list(char *at, const char *const *list, uint32_t n)
{
	size_t used = 0;

	for (uint32_t i = 0; n != CHILD_CONFIG_NO_LIST && i < n; i++) {
		size_t len = strlen(list[i]) + 1;

		if (at)
			memcpy(at + used, list[i], len);
		used += len;
	}
	return used;
}

/* The strings, sized (at NULL) or written. */
static size_t child_put_strings(char *at, const struct child_config *config,
				const struct child_config_wire *wire)
{
	char *const *envp = config->envp ? config->envp : environ;
	size_t used = 0;

	used += child_put_list(at ? at + used : NULL, (const char *const *)config->argv,
			       wire->nargv);
	used += child_put_list(at ? at + used : NULL, (const char *const *)envp, wire->nenvp);
	used += child_put_list(at ? at + used : NULL, config->fs_write, wire->nfs_write);
	if (config->user_name)
		used += child_put_list(at ? at + used : NULL, &config->user_name, 1);
	if (config->audit_path)
		used += child_put_list(at ? at + used : NULL, &config->audit_path, 1);
	return used;
}

int child_config_write(const struct child_config *config, int *ret_fd)
{
	struct child_config_wire wire = {
		.magic = CHILD_CONFIG_MAGIC,
		.set_user = config->set_user,
		.uid = config->uid,
		.gid = config->gid,
		.fs_write_cwd = config->fs_write_cwd,
		.landlock_abi = config->landlock_abi,
		.seccomp_flags = config->seccomp_flags,
		.ngroups = config->ngroups,
		.tmp_size_bytes = config->tmp_size_bytes,
		.nargv = child_list_len((const char *const *)config->argv),
		.nenvp = child_list_len(
			(const char *const *)(config->envp ? config->envp : environ)),
		.nfs_write = child_list_len(config->fs_write),
		.has_user_name = config->user_name != NULL,
		.has_audit_path = config->audit_path != NULL,
	};
	_cleanup_free_ char *blob = NULL;
	_cleanup_close_ int fd = -1;
	size_t size;

	if (config->ngroups < 0 || config->ngroups > CHILD_MAX_GROUPS ||
	    wire.nargv == CHILD_CONFIG_NO_LIST || wire.nargv == 0)
		return -EINVAL;
	for (int i = 0; i < config->ngroups; i++)
		wire.groups[i] = config->groups[i];
	size = sizeof(wire) + child_put_strings(NULL, config, &wire);
	wire.size = size;
	blob = malloc(size);
	if (!blob)
		return -ENOMEM;
	memcpy(blob, &wire, sizeof(wire));
	child_put_strings(blob + sizeof(wire), config, &wire);
	/* Data, never code (MFD_NOEXEC_SEAL, 6.3): without it, the kernel warns. */
	fd = memfd_create("launch-config", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create("launch-config", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, blob + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	/* Init reads what was written, and nothing can change it since. */
	if (fcntl(fd, F_ADD_SEALS, CHILD_CONFIG_SEALS) < 0)
		return -errno;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* Points n entries of *ret_list (NULL-terminated) at the strings from *at; false past end. */
static bool child_get_list(char **at, const char *end, uint32_t n, char ***ret_list)
{
	char **list;

	*ret_list = NULL;
	if (n == CHILD_CONFIG_NO_LIST)
		return true;
	list = calloc((size_t)n + 1, sizeof(*list));
	if (!list)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		char *nul = memchr(*at, '\0', (size_t)(end - *at));

		if (!nul) {
			free(list);
			return false;
		}
		list[i] = *at;
		*at = nul + 1;
	}
	*ret_list = list;
	return true;
}

int child_config_read(int fd, struct child_config *ret)
{
	const struct child_config_wire *wire;
	char **argv = NULL, **envp = NULL, **fs_write = NULL, **name = NULL, **audit = NULL;
	char *at, *end;
	struct stat st;
	bool whole;
	void *map;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size < sizeof(*wire))
		return -EBADMSG;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	wire = map;
	at = (char *)map + sizeof(*wire);
	end = (char *)map + st.st_size;
	/* Only the launcher writes it, sealed; checked all the same, to the last byte. */
	whole = !((fcntl(fd, F_GET_SEALS) & CHILD_CONFIG_SEALS) != CHILD_CONFIG_SEALS ||
		  wire->magic != CHILD_CONFIG_MAGIC || wire->size != (uint64_t)st.st_size ||
		  wire->set_user > 1 || wire->fs_write_cwd > 1 || wire->has_user_name > 1 ||
		  wire->has_audit_path > 1 || wire->ngroups < 0 ||
		  (wire->seccomp_flags & ~(SECCOMP_REFUSE_UNIX | SECCOMP_REFUSE_FASTOPEN)) ||
		  wire->ngroups > CHILD_MAX_GROUPS || wire->nargv == 0 ||
		  wire->nargv == CHILD_CONFIG_NO_LIST || wire->nenvp == CHILD_CONFIG_NO_LIST ||
		  (wire->fs_write_cwd &&
		   (wire->nfs_write == 0 || wire->nfs_write == CHILD_CONFIG_NO_LIST)) ||
		  !child_get_list(&at, end, wire->nargv, &argv) ||
		  !child_get_list(&at, end, wire->nenvp, &envp) ||
		  !child_get_list(&at, end, wire->nfs_write, &fs_write) ||
		  !child_get_list(&at, end, wire->has_user_name, &name) ||
		  !child_get_list(&at, end, wire->has_audit_path, &audit) || !argv || !envp ||
		  at != end);
	if (!whole) {
		free(argv);
		free(envp);
		free(fs_write);
		free(name);
		free(audit);
		munmap(map, (size_t)st.st_size);
		return -EBADMSG;
	}
	*ret = (struct child_config){
		.argv = argv,
		.envp = envp,
		.set_user = wire->set_user,
		.uid = wire->uid,
		.gid = wire->gid,
		.user_name = wire->has_user_name ? name[0] : NULL,
		.audit_path = wire->has_audit_path ? audit[0] : NULL,
		.fs_write = (const char *const *)fs_write,
		.fs_write_cwd = wire->fs_write_cwd,
		.landlock_abi = wire->landlock_abi,
		.seccomp_flags = wire->seccomp_flags,
		.tmp_size_bytes = wire->tmp_size_bytes,
		.cgroup_fd = -1,
		.mounts_fd = -1,
		.ngroups = wire->ngroups,
	};
	for (int i = 0; i < wire->ngroups; i++)
		ret->groups[i] = wire->groups[i];
	/* The strings stay where they are, in the mapping: only the two lists of one go. */
	free(name);
	free(audit);
	return 0;
}

void child_config_free(struct child_config *config)
{
	free((void *)config->argv);
	free((void *)config->envp);
	free((void *)config->fs_write);
	config->argv = config->envp = NULL;
	config->fs_write = NULL;
}

const char *child_protocol(void)
{
	static char text[64];

	if (!text[0])
		snprintf(text, sizeof(text), "%d.%zu.%zu", CHILD_PROTOCOL_VERSION,
			 sizeof(struct child_msg), sizeof(struct child_config_wire));
	return text;
}
