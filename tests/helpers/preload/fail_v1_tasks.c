// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library for the launcher: the first cgroup v1 directory it hands the sandbox's
 * init in `joined` is swapped for "/", which has no `tasks`, so init's move into that cgroup
 * fails (ENOENT), as where a security module refuses the move; every other message goes as
 * it was. Init is a static binary of its own, which no LD_PRELOAD reaches.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* launcher/sandbox/child.h's struct child_msg and the message this library looks for. */
struct join_msg {
	int type, stage, error, status, flags;
};
#define JOIN_MSG_JOINED 6

ssize_t sendmsg(int fd, const struct msghdr *mh, int flags)
{
	static ssize_t (*next)(int, const struct msghdr *, int);
	struct join_msg *msg = mh->msg_iovlen == 1 ? mh->msg_iov[0].iov_base : NULL;
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(mh);
	int root, first;
	ssize_t n;

	if (!next)
		next = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	if (!msg || mh->msg_iov[0].iov_len != sizeof(*msg) || msg->type != JOIN_MSG_JOINED ||
	    msg->status < 1 || !cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return next(fd, mh, flags);
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return next(fd, mh, flags);
	memcpy(&first, CMSG_DATA(cmsg), sizeof(int));
	memcpy(CMSG_DATA(cmsg), &root, sizeof(int));
	n = next(fd, mh, flags);
	memcpy(CMSG_DATA(cmsg), &first, sizeof(int));
	close(root);
	return n;
}
