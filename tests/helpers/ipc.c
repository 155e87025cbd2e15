// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Makes, finds or removes one IPC object by its key or name, and prints the errno by name (OK
 * on success): for the tests that a sandbox's System V and POSIX IPC are its own.
 *
 * usage: ipc create|find|remove msg|shm|sem KEY
 *        ipc create|find|remove mq NAME        (NAME without the leading slash)
 *
 * KEY is a number (0x1234). A System V object is made with mode 0666 so that any user could
 * find it; POSIX message queues go through the system call, so no libc's mq_open and no
 * mqueue mount are needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define IPC_MODE     0666
#define IPC_SHM_SIZE 4096

enum ipc_action { IPC_ACTION_CREATE, IPC_ACTION_FIND, IPC_ACTION_REMOVE };

/* The object's id for its key: made (exclusively) when creating, or -errno. */
static int ipc_sysv_get(const char *kind, key_t key, enum ipc_action action)
{
	int flags = action == IPC_ACTION_CREATE ? IPC_CREAT | IPC_EXCL | IPC_MODE : 0;
	int id;

	if (strcmp(kind, "msg") == 0)
		id = msgget(key, flags);
	else if (strcmp(kind, "shm") == 0)
		id = shmget(key, action == IPC_ACTION_CREATE ? IPC_SHM_SIZE : 0, flags);
	else if (strcmp(kind, "sem") == 0)
		id = semget(key, action == IPC_ACTION_CREATE ? 1 : 0, flags);
	else
		return -EINVAL;
	return id < 0 ? -errno : id;
}

static int ipc_sysv(const char *kind, const char *key_text, enum ipc_action action)
{
	char *end;
	long key;
	int id, r;

	errno = 0;
	key = strtol(key_text, &end, 0);
	if (errno || end == key_text || *end || key == IPC_PRIVATE)
		return -EINVAL;
	id = ipc_sysv_get(kind, (key_t)key, action);
	if (id < 0 || action != IPC_ACTION_REMOVE)
		return id < 0 ? id : 0;
	if (strcmp(kind, "msg") == 0)
		r = msgctl(id, IPC_RMID, NULL);
	else if (strcmp(kind, "shm") == 0)
		r = shmctl(id, IPC_RMID, NULL);
	else
		r = semctl(id, 0, IPC_RMID);
	return r < 0 ? -errno : 0;
}

static int ipc_mq(const char *name, enum ipc_action action)
{
	long fd;

	if (action == IPC_ACTION_REMOVE)
		return syscall(SYS_mq_unlink, name) < 0 ? -errno : 0;
	if (action == IPC_ACTION_CREATE)
		fd = syscall(SYS_mq_open, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, IPC_MODE,
			     NULL);
	else
		fd = syscall(SYS_mq_open, name, O_RDWR | O_CLOEXEC, 0, NULL);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

int main(int argc, char **argv)
{
	enum ipc_action action;

	if (argc != 4)
		goto usage;
	if (strcmp(argv[1], "create") == 0)
		action = IPC_ACTION_CREATE;
	else if (strcmp(argv[1], "find") == 0)
		action = IPC_ACTION_FIND;
	else if (strcmp(argv[1], "remove") == 0)
		action = IPC_ACTION_REMOVE;
	else
		goto usage;
	helper_report(strcmp(argv[2], "mq") == 0 ? ipc_mq(argv[3], action)
						 : ipc_sysv(argv[2], argv[3], action));
	return 0;
usage:
	fprintf(stderr, "usage: ipc create|find|remove msg|shm|sem KEY | mq NAME\n");
	return 2;
}
