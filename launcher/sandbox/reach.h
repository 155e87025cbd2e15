/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the job could write of the host's files: checked before launch trusts a path. */
#ifndef LAUNCH_REACH_H
#define LAUNCH_REACH_H

#include <stdbool.h>
#include <stddef.h>

#include "child.h"

/*
 * Whether the sandbox's init hides the (resolved) folder of the audit log from the job, an
 * empty read-only tmpfs over it: unless it is "/", the job's private /tmp or /dev/shm, or
 * holds the job's working directory or a path it may write. Same answer in the launcher and
 * in init, which share the working directory.
 */
bool reach_folder_hidden(const struct child_config *config, const char *folder);
/*
 * Whether the job configured by config could write the file at path, make one there, or put
 * a folder of its own on the way to it: the path is under a path the job may write
 * (config->fs_write: its working directory, a policy's fs.write paths; NULL: everywhere, as
 * with "read_only": false) and the mode of the file, its folder or a folder above (up to that
 * path) lets the job's uid or groups write it (the job has no capability to override a mode).
 * A folder init hides (reach_folder_hidden) is out of the job's sight, but a folder above it
 * may still be renamed. The job's /tmp and /dev/shm are its own, never the host's. Returns 1
 * with the reason in why, 0 when out of reach (or when path is not a regular file and not yet
 * made), -errno when path's folder cannot be resolved.
 */
int reach_job_may_write(const struct child_config *config, const char *path, char *why,
			size_t whylen);

#endif /* LAUNCH_REACH_H */
