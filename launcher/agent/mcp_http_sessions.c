// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp --http's session table: constant-time look-up, per-address limit, eviction. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "mcp_http_sessions.h"

void mcp_http_session_hold(struct mcp_http_session *session)
{
	__atomic_add_fetch(&session->refs, 1, __ATOMIC_ACQ_REL);
}

void mcp_http_session_unref(struct mcp_http_session *session)
{
	if (session && __atomic_sub_fetch(&session->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(session);
}

void mcp_http_session_touch(struct mcp_http_session *session, long long now_us)
{
	__atomic_store_n(&session->used_us, now_us, __ATOMIC_RELAXED);
}

struct mcp_http_session **mcp_http_sessions_find(struct mcp_http_sessions *table, const char *id)
{
	for (struct mcp_http_session **s = &table->head; *s; s = &(*s)->next)
		if (mcp_session_handle_equal((*s)->id, id))
			return s;
	return NULL;
}

void mcp_http_sessions_unlink(struct mcp_http_sessions *table, struct mcp_http_session **link)
{
	struct mcp_http_session *dropped = *link;

	*link = dropped->next;
	table->count--;
	mcp_http_session_unref(dropped);
}

static bool mcp_http_session_idle(struct mcp_http_session *session)
{
	return __atomic_load_n(&session->refs, __ATOMIC_ACQUIRE) == 1;
}

static long long mcp_http_session_used(struct mcp_http_session *session)
{
	return __atomic_load_n(&session->used_us, __ATOMIC_RELAXED);
}

/*
 * The new session goes in first. A client address at its limit gives up its own longest-idle
 * session (clients that reconnect without a DELETE, as the official SDK's close does, would be
 * locked out otherwise); a full table gives up the longest-idle session of all. A session
 * serving a request is never taken: -EUSERS when all of the address's are, -EBUSY when all of
 * the table's are.
 */
int mcp_http_sessions_insert(struct mcp_http_sessions *table, struct mcp_http_session *session)
{
	struct mcp_http_session **oldest = NULL, **oldest_of_peer = NULL;
	size_t of_peer = 0;

	for (struct mcp_http_session **s = &table->head; *s; s = &(*s)->next) {
		bool idle = mcp_http_session_idle(*s);

		if (memcmp((*s)->peer, session->peer, MCP_HTTP_PEER_BYTES) == 0) {
			of_peer++;
			if (idle &&
			    (!oldest_of_peer ||
			     mcp_http_session_used(*s) <= mcp_http_session_used(*oldest_of_peer)))
				oldest_of_peer = s;
		}
		/* <=: the list runs newest first, so of equal times the first made goes. */
		if (idle &&
		    (!oldest || mcp_http_session_used(*s) <= mcp_http_session_used(*oldest)))
			oldest = s;
	}
	if (of_peer >= MCP_HTTP_SESSIONS_PER_PEER_MAX) {
		if (!oldest_of_peer)
			return -EUSERS;
		mcp_http_sessions_unlink(table, oldest_of_peer);
	} else if (table->count >= MCP_HTTP_SESSIONS_MAX) {
		if (!oldest)
			return -EBUSY;
		mcp_http_sessions_unlink(table, oldest);
	}
	session->refs = 1;
	session->next = table->head;
	table->head = session;
	table->count++;
	return 0;
}

void mcp_http_sessions_clear(struct mcp_http_sessions *table)
{
	while (table->head)
		mcp_http_sessions_unlink(table, &table->head);
}
