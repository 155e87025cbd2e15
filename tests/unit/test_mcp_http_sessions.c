// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp --http's session table: look-up, the per-address limit, eviction, references. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mcp_http_sessions.h"
#include "test.h"

/* A session of peer 127.0.0.last (as its mapped IPv6 key), idle since used_us. */
static struct mcp_http_session *session_new(unsigned int n, unsigned char last, long long used_us)
{
	struct mcp_http_session *s = calloc(1, sizeof(*s));

	if (!s)
		abort();
	snprintf(s->id, sizeof(s->id), "%064x", n);
	s->used_us = used_us;
	s->peer[10] = s->peer[11] = 0xff;
	s->peer[12] = 127;
	s->peer[15] = last;
	return s;
}

static struct mcp_http_session *lookup(struct mcp_http_sessions *t, unsigned int n)
{
	char id[2 * MCP_HTTP_SESSION_ID_BYTES + 1];
	struct mcp_http_session **link;

	snprintf(id, sizeof(id), "%064x", n);
	link = mcp_http_sessions_find(t, id);
	return link ? *link : NULL;
}

static bool has(struct mcp_http_sessions *t, unsigned int n)
{
	return lookup(t, n) != NULL;
}

/* Ids of the right length that differ in one digit, first or last, are not found. */
static void test_find(void)
{
	struct mcp_http_sessions t = { 0 };
	char id[2 * MCP_HTTP_SESSION_ID_BYTES + 1];

	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(0x1234, 1, 1)), 0);
	CHECK(has(&t, 0x1234));
	snprintf(id, sizeof(id), "%064x", 0x1234);
	id[0] = '1';
	CHECK(!mcp_http_sessions_find(&t, id));
	snprintf(id, sizeof(id), "%064x", 0x1235);
	CHECK(!mcp_http_sessions_find(&t, id));
	id[63] = '\0';
	CHECK(!mcp_http_sessions_find(&t, id));
	CHECK(!mcp_http_sessions_find(&t, ""));
	mcp_http_sessions_clear(&t);
	CHECK(t.head == NULL && t.count == 0);
}

/*
 * One address's 65th ends that address's own longest idle session, never another address's
 * nor a held one; with all of its sessions held it is refused; a freed slot is used again.
 */
static void test_per_peer(void)
{
	struct mcp_http_sessions t = { 0 };
	struct mcp_http_session *held[MCP_HTTP_SESSIONS_PER_PEER_MAX], *extra;
	size_t nheld = 0;

	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(1000, 2, 0)), 0);
	for (unsigned int i = 0; i < MCP_HTTP_SESSIONS_PER_PEER_MAX; i++)
		CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(i, 1, 1 + i)), 0);
	/* Session 0 is peer 1's oldest, and held: 1 goes, and peer 2's older one stays. */
	mcp_http_session_hold(lookup(&t, 0));
	held[nheld++] = lookup(&t, 0);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(999, 1, 999)), 0);
	CHECK(has(&t, 0) && !has(&t, 1) && has(&t, 2) && has(&t, 999) && has(&t, 1000));
	CHECK_EQ_INT((int)t.count, MCP_HTTP_SESSIONS_PER_PEER_MAX + 1);
	/* Every one of peer 1's held: its next is refused, and the caller keeps it. */
	for (struct mcp_http_session *s = t.head; s; s = s->next)
		if (s != held[0] &&
		    memcmp(s->peer, lookup(&t, 0)->peer, MCP_HTTP_PEER_BYTES) == 0) {
			mcp_http_session_hold(s);
			held[nheld++] = s;
		}
	CHECK_EQ_INT((int)nheld, MCP_HTTP_SESSIONS_PER_PEER_MAX);
	extra = session_new(998, 1, 998);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, extra), -EUSERS);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(1001, 2, 1001)), 0);
	mcp_http_sessions_unlink(&t, mcp_http_sessions_find(&t, lookup(&t, 7)->id));
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, extra), 0);
	CHECK_EQ_INT((int)t.count, MCP_HTTP_SESSIONS_PER_PEER_MAX + 2);
	mcp_http_sessions_clear(&t);
	for (size_t i = 0; i < nheld; i++)
		mcp_http_session_unref(held[i]);
}

/* A full table: the longest idle goes, never a held one; all held is -EBUSY. */
static void test_evict(void)
{
	struct mcp_http_sessions t = { 0 };
	struct mcp_http_session *busy, *held[MCP_HTTP_SESSIONS_MAX], *extra;
	size_t nheld = 0;
	unsigned int n = 0;

	/* Four addresses' 64 each, used at 0, 1, 2...; session 0 is the oldest, and held. */
	for (unsigned char peer = 1; peer <= 4; peer++)
		for (unsigned int i = 0; i < MCP_HTTP_SESSIONS_PER_PEER_MAX; i++, n++)
			CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(n, peer, n)), 0);
	CHECK_EQ_INT((int)t.count, MCP_HTTP_SESSIONS_MAX);
	busy = lookup(&t, 0);
	mcp_http_session_hold(busy);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(n++, 5, 1000)), 0);
	CHECK(has(&t, 0) && !has(&t, 1) && has(&t, 2));
	/* A touched one is idle from then: 2 is now the newest, so 3 goes next. */
	mcp_http_session_touch(lookup(&t, 2), 2000);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(n++, 5, 1001)), 0);
	CHECK(has(&t, 2) && !has(&t, 3) && has(&t, 4));
	/* Equal idle times: the first made goes. */
	for (struct mcp_http_session *s = t.head; s; s = s->next)
		mcp_http_session_touch(s, 5000);
	mcp_http_session_touch(busy, 0);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(n++, 5, 5000)), 0);
	CHECK(has(&t, 0) && !has(&t, 2) && has(&t, 4));
	/* Deleted while held: out of the table, freed by its last holder (ASan would tell). */
	mcp_http_sessions_unlink(&t, mcp_http_sessions_find(&t, busy->id));
	CHECK(!has(&t, 0));
	CHECK(strcmp(busy->id + 60, "0000") == 0);
	mcp_http_session_unref(busy);
	/* Every one held: an initialize gets -EBUSY and keeps its session. */
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(n++, 6, 6000)), 0);
	for (struct mcp_http_session *s = t.head; s; s = s->next) {
		mcp_http_session_hold(s);
		held[nheld++] = s;
	}
	extra = session_new(n++, 7, 7000);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, extra), -EBUSY);
	free(extra);
	/* One let go: it is the one that goes. */
	mcp_http_session_unref(held[0]);
	CHECK_EQ_INT(mcp_http_sessions_insert(&t, session_new(n++, 7, 7001)), 0);
	CHECK_EQ_INT((int)t.count, MCP_HTTP_SESSIONS_MAX);
	mcp_http_sessions_clear(&t);
	for (size_t i = 1; i < nheld; i++)
		mcp_http_session_unref(held[i]);
}

int main(void)
{
	RUN(test_find);
	RUN(test_per_peer);
	RUN(test_evict);
	return test_failures != 0;
}
