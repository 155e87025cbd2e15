/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launch mcp --sessions: a session's limits, for the command's options and the server. */
#ifndef LAUNCH_MCP_SESSION_H
#define LAUNCH_MCP_SESSION_H

/* A session ends after this long without a call: --session-idle, at most the maximum. */
#define MCP_SESSION_DEFAULT_IDLE_S 300
#define MCP_SESSION_IDLE_MAX_S	   86400
/* Sessions open at once: each is a Node process kept between its calls. */
#define MCP_SESSIONS_MAX 16

#endif /* LAUNCH_MCP_SESSION_H */
