/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Typed reads of a parsed JSON object's members: what the audit log's readers take from a line. */
#ifndef LAUNCH_JSON_H
#define LAUNCH_JSON_H

#include <cjson/cJSON.h>

/* The member's string, or NULL when it is missing or not a string. */
static inline const char *json_str(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* The member's number when it is a positive one (at most 2^63: a crafted log's), else 0. */
static inline unsigned long long json_u64(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);

	if (!cJSON_IsNumber(item) || !(item->valuedouble > 0))
		return 0;
	return item->valuedouble >= 9223372036854775808.0 ? 1ULL << 63
							  : (unsigned long long)item->valuedouble;
}

#endif /* LAUNCH_JSON_H */
