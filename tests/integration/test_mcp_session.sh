# SPDX-License-Identifier: LGPL-2.1-or-later
# launch mcp --sessions end to end with the official MCP TypeScript SDK's client
# (tests/mcp/session.mjs): a session's handle, what it keeps across calls, its end on request
# and after --session-idle with nothing of its sandbox left, an unknown handle, a session beside
# a call of its own, sessions refused without --sessions. No network: the calls only compute.

# As test_mcp.sh does: the modules where the calls' user (nobody) can read them.
MCP_MODULES=$IT_TMP/mcp/node_modules
if [ ! -d "$MCP_MODULES" ] && [ -f "$IT_ROOT/tests/mcp/node_modules/.package-lock.json" ]; then
	mkdir -p "$IT_TMP/mcp" && chmod 755 "$IT_TMP/mcp" &&
		cp -a "$IT_ROOT/tests/mcp/node_modules" "$MCP_MODULES.$$" &&
		chmod -R a+rX "$MCP_MODULES.$$" && mv "$MCP_MODULES.$$" "$MCP_MODULES"
fi

# tests/mcp/session.mjs over the transport $1 (stdio, http: tests/mcp/connect.mjs).
mcp_sessions() {
	local rc

	[ -f "$MCP_MODULES/.package-lock.json" ] ||
		fail "tests/mcp/node_modules is not installed: make test runs npm ci in tests/mcp" ||
		return 1
	launch_next_names
	echo "+ MCP_TRANSPORT=$1 node tests/mcp/session.mjs launch mcp ..."
	MCP_TRANSPORT=$1 timeout -k 5 100 node "$IT_ROOT/tests/mcp/session.mjs" "$IT_LAUNCH" mcp \
		--policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" --timeout 60 \
		--audit-log "$L_AUDIT" >"$T_DIR/session.out" 2>&1
	rc=$?
	cat "$T_DIR/session.out"
	[ "$rc" = 0 ] ||
		fail "session.mjs exited $rc: $(grep '^not ok' "$T_DIR/session.out" | head -5)" ||
		return 1
	grep -q '^ok calls still run' "$T_DIR/session.out" || fail "session.mjs stopped early"
}

test_mcp_sessions() {
	mcp_sessions stdio
}

test_mcp_sessions_http() {
	mcp_sessions http
}

test_mcp_session_options() {
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" \
		--session-idle 5
	expect_rc "--session-idle without --sessions" 125 || return 1
	expect_match "message" '^launch: --session-idle: needs --sessions' "$L_ERR" || return 1
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" \
		--sessions --session-idle 0
	expect_rc "--session-idle 0" 125 || return 1
	expect_match "message" '^launch: --session-idle: "0" is not 1-86400 seconds' "$L_ERR"
}
