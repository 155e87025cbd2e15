// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp's list of a call's HTTPS requests: the result's http_requests and its text. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent/mcp_requests.h"
#include "test.h"

static const struct mcp_http_request two[] = {
	{ .method = "GET",
	  .host = "api.stripe.com",
	  .path = "/v1/customers",
	  .status = 200,
	  .allowed = true },
	{ .method = "POST",
	  .host = "api.stripe.com",
	  .path = "/v1/customers",
	  .status = 403,
	  .reason = "credential" },
};

static void test_json(void)
{
	cJSON *list = mcp_requests_json(two, 2);
	const cJSON *second = cJSON_GetArrayItem(list, 1);

	CHECK(cJSON_IsArray(list));
	CHECK_EQ_INT(cJSON_GetArraySize(list), 2);
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "decision")->valuestring,
		     "allow");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "reason")->valuestring, "");
	CHECK_EQ_STR(cJSON_GetObjectItem(second, "decision")->valuestring, "deny");
	CHECK_EQ_STR(cJSON_GetObjectItem(second, "reason")->valuestring, "credential");
	CHECK_EQ_INT(cJSON_GetObjectItem(second, "status")->valueint, 403);
	CHECK_EQ_STR(cJSON_GetObjectItem(second, "method")->valuestring, "POST");
	cJSON_Delete(list);
	/* No request: an empty list, never a missing key. */
	list = mcp_requests_json(NULL, 0);
	CHECK(cJSON_IsArray(list));
	CHECK_EQ_INT(cJSON_GetArraySize(list), 0);
	cJSON_Delete(list);
}

static void test_text(void)
{
	char *text = mcp_requests_text(two, 2, 0);

	CHECK_CONTAINS(text, "GET https://api.stripe.com/v1/customers 200\n");
	CHECK_CONTAINS(text, "POST https://api.stripe.com/v1/customers 403 refused (credential)\n");
	CHECK(!strstr(text, "more"));
	free(text);
	text = mcp_requests_text(two, 1, 7);
	CHECK_CONTAINS(text, "and 7 more\n");
	free(text);
	CHECK(mcp_requests_text(NULL, 0, 0) == NULL);
}

int main(void)
{
	RUN(test_json);
	RUN(test_text);
	return test_failures != 0;
}
