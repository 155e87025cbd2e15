// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reading /proc/self/mountinfo: where the cgroup and BPF file systems are mounted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mountinfo.h"
#include "util.h"

/* Undoes the octal escapes (\040 for a space) that mountinfo uses in paths. */
static void mountinfo_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int mountinfo_foreach(int (*fn)(const struct mount_entry *mount, void *userdata), void *userdata)
{
	_cleanup_free_ char *line = NULL;
	struct mount_entry mount;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		const char *sep = strstr(line, " - ");

		/* Fields: id parent major:minor root mount-point options ... - fstype source */
		if (!sep ||
		    sscanf(line, "%*s %*s %*s %*s %4095s %255s", mount.mount_point,
			   mount.options) != 2 ||
		    sscanf(sep + 3, "%63s", mount.fstype) != 1)
			continue;
		mount.super_options[0] = '\0';
		sscanf(sep + 3, "%*s %*s %255s", mount.super_options);
		mountinfo_unescape(mount.mount_point);
		r = fn(&mount, userdata);
	}
	fclose(f);
	return r;
}

struct mountinfo_search {
	const char *fstype;
	char *path;
	size_t len;
};

static int mountinfo_match(const struct mount_entry *mount, void *userdata)
{
	struct mountinfo_search *search = userdata;

	if (strcmp(mount->fstype, search->fstype) != 0)
		return 0;
	if (strlen(mount->mount_point) >= search->len)
		return -ENAMETOOLONG;
	strcpy(search->path, mount->mount_point);
	return 1;
}

int mountinfo_find(const char *fstype, char *ret_path, size_t len)
{
	struct mountinfo_search search = { .fstype = fstype, .path = ret_path, .len = len };
	int r = mountinfo_foreach(mountinfo_match, &search);

	if (r < 0)
		return r;
	return r == 1 ? 0 : -ENOENT;
}
