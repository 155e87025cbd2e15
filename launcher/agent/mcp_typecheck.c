// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp's type-check before a call runs: whether it is offered, and the errors it found. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "mcp_typecheck.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

bool mcp_typecheck_available(const char *modules)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/typescript/package.json", modules);

	return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

/* One error as the runner wrote it, copied with only its four fields; NULL when malformed. */
static cJSON *mcp_typecheck_error(const cJSON *item)
{
	const cJSON *line = cJSON_GetObjectItemCaseSensitive(item, "line");
	const cJSON *column = cJSON_GetObjectItemCaseSensitive(item, "column");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(item, "code");
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(item, "message");
	char text[MCP_TYPECHECK_MESSAGE_MAX + 1];
	cJSON *error;

	if (!cJSON_IsNumber(line) || !cJSON_IsNumber(column) || !cJSON_IsString(code) ||
	    !cJSON_IsString(message) || line->valuedouble < 1 || line->valuedouble > INT_MAX ||
	    column->valuedouble < 1 || column->valuedouble > INT_MAX ||
	    strlen(code->valuestring) > 16)
		return NULL;
	error = cJSON_CreateObject();
	if (!error)
		return NULL;
	snprintf(text, sizeof(text), "%s", message->valuestring);
	cJSON_AddNumberToObject(error, "line", (double)(int)line->valuedouble);
	cJSON_AddNumberToObject(error, "column", (double)(int)column->valuedouble);
	cJSON_AddStringToObject(error, "code", code->valuestring);
	cJSON_AddStringToObject(error, "message", text);
	return error;
}

int mcp_typecheck_read(const char *dir, cJSON **ret_errors)
{
	_cleanup_(cJSON_Deletep) cJSON *parsed = NULL, *errors = NULL;
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	char path[PATH_MAX];
	const cJSON *item;
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s" MCP_TYPECHECK_FILE, dir);
	/* Not through a link, and not a FIFO that would hold the server: a regular file. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADMSG;
	r = read_fd_text(fd, MCP_TYPECHECK_FILE_MAX_BYTES, &text);
	if (r < 0)
		return r == -EFBIG ? -EBADMSG : r;
	parsed = cJSON_ParseWithLength(text, strlen(text));
	errors = cJSON_CreateArray();
	if (!errors)
		return -ENOMEM;
	if (!cJSON_IsArray(parsed) || cJSON_GetArraySize(parsed) < 1 ||
	    cJSON_GetArraySize(parsed) > MCP_TYPECHECK_ERRORS_MAX)
		return -EBADMSG;
	cJSON_ArrayForEach (item, parsed) {
		cJSON *error = mcp_typecheck_error(item);

		if (!error)
			return -EBADMSG;
		cJSON_AddItemToArray(errors, error);
	}
	*ret_errors = TAKE_PTR(errors);
	return 0;
}
