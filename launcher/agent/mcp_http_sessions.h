/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch mcp --http's table of 2025-11-25 sessions: look-up by id in constant time, the
 * limit per client address, eviction of the longest idle session. Pure, no lock of its own:
 * the caller serialises the table's calls; a session's references are atomic.
 */
#ifndef LAUNCH_MCP_HTTP_SESSIONS_H
#define LAUNCH_MCP_HTTP_SESSIONS_H

#include <stddef.h>

#include "mcp_http_check.h"

/* Session ids: 32 random bytes in hex, visible ASCII as the specification asks. */
#define MCP_HTTP_SESSION_ID_BYTES 32
/*
 * Sessions kept; an initialize beyond them ends the longest idle one (none serving a request
 * or a call), or gets 503 when none is idle.
 */
#define MCP_HTTP_SESSIONS_MAX 256
/*
 * Sessions one client address may hold: its next initialize ends its own longest idle one
 * (429 when every one of them is busy). A quarter of the table: one client address cannot
 * push out every other address's sessions.
 */
#define MCP_HTTP_SESSIONS_PER_PEER_MAX 64

/*
 * A session. Its references: the table's, and one per exchange serving one of its requests
 * (until that exchange's call, if any, has ended). A reference is only taken from the table
 * under the caller's lock, so one seen there with the table's alone is idle and stays so
 * while the lock is held: the only kind eviction takes. The last reference frees it, which
 * may come from a call thread, without the lock (and after the server has stopped).
 */
struct mcp_http_session {
	struct mcp_http_session *next;
	int refs; /* __atomic */
	char id[2 * MCP_HTTP_SESSION_ID_BYTES + 1];
	char protocol[16];
	unsigned long long scope;
	long long used_us;			 /* __atomic: idle since then */
	unsigned char peer[MCP_HTTP_PEER_BYTES]; /* the client address that initialized it */
};

struct mcp_http_sessions {
	struct mcp_http_session *head; /* newest first */
	size_t count;
};

/* Another reference to a session found in the table (under the caller's lock). */
void mcp_http_session_hold(struct mcp_http_session *session);

/* Drops a reference; the last frees the session. NULL is ignored. Any thread, no lock. */
void mcp_http_session_unref(struct mcp_http_session *session);

/* The session was used at now_us (monotonic): its idle time starts again. Any thread. */
void mcp_http_session_touch(struct mcp_http_session *session, long long now_us);

/*
 * The table's link to the session with this id, or NULL. Each id is compared in a time that
 * does not tell how much of it a guess got right.
 */
struct mcp_http_session **mcp_http_sessions_find(struct mcp_http_sessions *table, const char *id);

/* The session at *link leaves the table (the table's reference dropped). */
void mcp_http_sessions_unlink(struct mcp_http_sessions *table, struct mcp_http_session **link);

/*
 * Adds session (allocated with malloc, the table's reference its only one): -EUSERS when its
 * peer holds MCP_HTTP_SESSIONS_PER_PEER_MAX already, none of them idle, -EBUSY when the table
 * is full and no session is idle (the caller still owns session then); else 0, the peer's
 * longest idle session evicted first when the peer is at its limit, the table's when the
 * table is full (of equal idle times, the first made).
 */
int mcp_http_sessions_insert(struct mcp_http_sessions *table, struct mcp_http_session *session);

/* Every session leaves the table; those a running call holds are freed when it ends. */
void mcp_http_sessions_clear(struct mcp_http_sessions *table);

#endif /* LAUNCH_MCP_HTTP_SESSIONS_H */
