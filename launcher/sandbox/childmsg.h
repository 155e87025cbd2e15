/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the launcher and the sandbox's init (launch-init) say to each other: the messages of
 * the status socket, the descriptors they carry, and the job's configuration as it travels.
 */
#ifndef LAUNCH_CHILDMSG_H
#define LAUNCH_CHILDMSG_H

#include <stdbool.h>
#include <sys/types.h>

#include "childproto.h"

/* Sends one message on the status socket, with nfds descriptors (SCM_RIGHTS). */
int child_send_fds(int fd, const struct child_msg *msg, const int *fds, int nfds);
/*
 * Receives one message from the status socket, with up to max (at most CHILD_JOIN_FDS_MAX)
 * descriptors (SCM_RIGHTS, close-on-exec) in fds, *ret_nfds of them; any beyond max are
 * closed. The bytes read or -errno; *ret_truncated: the kernel had more than room for.
 */
ssize_t child_recv_fds(int fd, struct child_msg *msg, int *fds, int max, int *ret_nfds,
		       bool *ret_truncated);
/*
 * The job's configuration (argv, environment, user, what it may write, its /tmp) written
 * into a sealed memfd, whose descriptor is returned in *ret_fd: init maps it. The mounts and
 * descriptors of the configuration are not in it (init has its own). 0 or -errno.
 */
int child_config_write(const struct child_config *config, int *ret_fd);
/*
 * Init's side: maps the memfd and points ret's strings into it (kept mapped for init's
 * life). -EBADMSG for a blob that is not one child_config_write made.
 */
int child_config_read(int fd, struct child_config *ret);
/* Frees what child_config_read allocated but the mapping, which holds the strings. */
void child_config_free(struct child_config *config);

/*
 * What the two speak, as text ("VERSION.SIZE.SIZE"): the launcher passes its own as
 * launch-init's first argument, which refuses any other (a launch-init of another build).
 */
const char *child_protocol(void);

#endif /* LAUNCH_CHILDMSG_H */
