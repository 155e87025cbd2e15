// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An LD_PRELOAD library that breaks the hand-off of the job's Landlock ruleset from launch to
 * the sandbox's init, as $LANDLOCK_FAULT says: "create", the launcher's landlock_create_ruleset
 * (not its ABI probe) fails with ENOMEM; "drop", the joined message reaches init without the
 * ruleset and without the flag that announces it. Everything else goes to the kernel.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "preload.h"

/* launcher/sandbox/child.h's struct child_msg and the values this library looks for. */
struct handoff_msg {
	int type, stage, error, status, flags;
};
#define HANDOFF_MSG_JOINED     6
#define HANDOFF_JOINED_RULESET 1

static const char *handoff_fault(void)
{
	const char *fault = getenv("LANDLOCK_FAULT");

	return fault ? fault : "";
}

long syscall(long number, ...)
{
	long arg[6];

	PRELOAD_SYSCALL_ARGS(number, arg);
	if (number == SYS_landlock_create_ruleset && arg[0] != 0 &&
	    strcmp(handoff_fault(), "create") == 0) {
		errno = ENOMEM;
		return -1;
	}
	return preload_syscall_next()(number, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}

ssize_t sendmsg(int fd, const struct msghdr *mh, int flags)
{
	static ssize_t (*next)(int, const struct msghdr *, int);
	struct handoff_msg *msg = mh->msg_iovlen == 1 ? mh->msg_iov[0].iov_base : NULL;
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(mh);

	if (!next)
		next = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	if (strcmp(handoff_fault(), "drop") == 0 && msg && mh->msg_iov[0].iov_len == sizeof(*msg) &&
	    msg->type == HANDOFF_MSG_JOINED && (msg->flags & HANDOFF_JOINED_RULESET) && cmsg &&
	    cmsg->cmsg_type == SCM_RIGHTS) {
		struct msghdr copy = *mh;
		struct handoff_msg changed = *msg;
		struct iovec iov = { .iov_base = &changed, .iov_len = sizeof(changed) };
		size_t nfds = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		changed.flags &= ~HANDOFF_JOINED_RULESET;
		copy.msg_iov = &iov;
		/* The ruleset is the last descriptor: the others go as they were. */
		cmsg->cmsg_len = CMSG_LEN((nfds - 1) * sizeof(int));
		copy.msg_controllen = nfds > 1 ? CMSG_SPACE((nfds - 1) * sizeof(int)) : 0;
		if (nfds == 1)
			copy.msg_control = NULL;
		return next(fd, &copy, flags);
	}
	return next(fd, mh, flags);
}
