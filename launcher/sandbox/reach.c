// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the job could write of the host's files. The audit trail must never be one of them:
 * a job that can write the log's folder can put a file of its own where launch reopens the
 * log after a rotation, one that can rename a folder above it can put a folder of its own
 * there, and a uid-0 job can append to any file root owns that it sees.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reach.h"

/* Whether the resolved path is at or below the resolved folder top. */
static bool is_below(const char *path, const char *top)
{
	size_t len = strlen(top);

	if (strcmp(top, "/") == 0)
		return true;
	return strncmp(path, top, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* Private in the job's view: a host path there is not what the job sees. */
static bool is_private(const char *path)
{
	return strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0;
}

static uid_t job_uid(const struct child_config *config)
{
	return config->set_user ? config->uid : getuid();
}

/*
 * Whether a file of mode st, under a path the job may write, may be written by the job's uid,
 * gid and groups (no capability): its owner may, whatever the mode, since it may chmod it.
 */
static bool mode_lets_write(const struct stat *st, const struct child_config *config)
{
	gid_t gid = config->set_user ? config->gid : getgid();

	if (st->st_uid == job_uid(config))
		return true;
	if (st->st_gid == gid)
		return st->st_mode & S_IWGRP;
	for (int i = 0; config->set_user && i < config->ngroups; i++)
		if (st->st_gid == config->groups[i])
			return st->st_mode & S_IWGRP;
	return st->st_mode & S_IWOTH;
}

/* The first of config's writable paths that holds the resolved path (in top), or NULL. */
static const char *writable_root(const struct child_config *config, const char *real,
				 char top[static PATH_MAX])
{
	if (!config->fs_write) {
		strcpy(top, "/");
		return "/";
	}
	for (size_t i = 0; config->fs_write[i]; i++) {
		const char *w = config->fs_write[i];

		if (!is_private(w) && realpath(w, top) && is_below(real, top))
			return w;
	}
	return NULL;
}

bool reach_folder_hidden(const struct child_config *config, const char *folder)
{
	char cwd[PATH_MAX], real[PATH_MAX];

	if (strcmp(folder, "/") == 0 || is_private(folder))
		return false;
	/* Hiding it would hide the job's working directory or a path it may write. */
	if (!getcwd(cwd, sizeof(cwd)) || is_below(cwd, folder))
		return false;
	for (size_t i = 0; config->fs_write && config->fs_write[i]; i++)
		if (!is_private(config->fs_write[i]) && realpath(config->fs_write[i], real) &&
		    is_below(real, folder))
			return false;
	return true;
}

/*
 * Whether the job may rename entry (a folder) of the folder dir, of mode st: it may write dir,
 * and dir's sticky bit, when set, does not keep it to the entries the job's uid owns.
 */
static bool may_rename_in(const struct stat *st, const char *entry,
			  const struct child_config *config)
{
	struct stat est;

	if (!mode_lets_write(st, config))
		return false;
	if (!(st->st_mode & S_ISVTX) || st->st_uid == job_uid(config))
		return true;
	return lstat(entry, &est) != 0 || est.st_uid == job_uid(config);
}

/*
 * The resolved path of the log's folder: one that does not exist yet, which launch makes
 * when it opens the log, is its parent's resolved path and its own name, so that it is
 * judged as the folder it will be. 0 or -errno.
 */
static int log_folder(const char *dir, char ret[static PATH_MAX])
{
	char parent[PATH_MAX], name[PATH_MAX];

	if (realpath(dir, ret))
		return 0;
	if (errno != ENOENT)
		return -errno;
	strcpy(parent, dir);
	strcpy(name, dir);
	if (!realpath(dirname(parent), ret))
		return -errno;
	if ((size_t)snprintf(parent, sizeof(parent), "%s/%s", strcmp(ret, "/") ? ret : "",
			     basename(name)) >= sizeof(parent))
		return -ENAMETOOLONG;
	strcpy(ret, parent);
	return 0;
}

int reach_job_may_write(const struct child_config *config, const char *path, char *why,
			size_t whylen)
{
	char copy[PATH_MAX], folder[PATH_MAX], top[PATH_MAX], dir[PATH_MAX], entry[PATH_MAX];
	const char *root;
	struct stat st;
	bool exists, hidden;
	int r;

	if (strlen(path) >= sizeof(copy))
		return -ENAMETOOLONG;
	exists = stat(path, &st) == 0;
	/* A FIFO, a device, a socket: nothing launch makes or reopens there. */
	if (exists && !S_ISREG(st.st_mode))
		return 0;
	strcpy(copy, path);
	r = log_folder(dirname(copy), folder);
	if (r < 0)
		return r;
	root = writable_root(config, folder, top);
	if (!root)
		return 0;
	hidden = reach_folder_hidden(config, folder);
	if (!hidden) {
		/* The job sees the file launch makes after a rotation: root's, mode 0640. */
		if (job_uid(config) == geteuid() || (exists && mode_lets_write(&st, config))) {
			snprintf(why, whylen,
				 "the job may write the file launch opens there (it is under %s, "
				 "and the job's uid %u owns or may write it)",
				 root, (unsigned int)job_uid(config));
			return 1;
		}
		if (stat(folder, &st) == 0 && mode_lets_write(&st, config)) {
			snprintf(why, whylen,
				 "the job may make files in its folder %s (under %s, and its mode "
				 "lets the job's user write it): it could put its own file where "
				 "launch reopens the log after a rotation",
				 folder, root);
			return 1;
		}
	}
	/*
	 * Above the folder, up to the writable path: a folder the job may write lets it rename
	 * the entry below it on the way, and make its own in its place. A hidden folder is a
	 * mount point in the job's view, which it cannot rename: its parent may be writable.
	 */
	strcpy(entry, folder);
	strcpy(dir, folder);
	while (strcmp(dir, "/") != 0 && is_below(dir, top) && strcmp(dir, top) != 0) {
		char *slash = strrchr(dir, '/');

		strcpy(entry, dir);
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (hidden && strcmp(entry, folder) == 0)
			continue;
		if (stat(dir, &st) == 0 && may_rename_in(&st, entry, config)) {
			snprintf(
				why, whylen,
				"the job may rename %s (under %s, its folder's mode lets the job's "
				"user write it): it could put a folder of its own where launch "
				"reopens the log after a rotation",
				entry, root);
			return 1;
		}
	}
	return 0;
}
