# SPDX-License-Identifier: LGPL-2.1-or-later
# launch mcp --http end to end with the official MCP TypeScript SDK's Streamable HTTP client
# (tests/mcp/http.mjs) in the test's network namespace: sessions (2025-11-25), stateless
# requests (2026-07-28), the token, Origin, two clients at once, cancellation.

MCP_HTTP_PORT=8931
# As test_mcp.sh: calls run as nobody, so the modules are copied where every user can read them.
MCP_HTTP_MODULES=$IT_TMP/mcp/node_modules
if [ ! -d "$MCP_HTTP_MODULES" ] && [ -f "$IT_ROOT/tests/mcp/node_modules/.package-lock.json" ]; then
	mkdir -p "$IT_TMP/mcp" && chmod 755 "$IT_TMP/mcp" &&
		cp -a "$IT_ROOT/tests/mcp/node_modules" "$MCP_HTTP_MODULES.$$" &&
		chmod -R a+rX "$MCP_HTTP_MODULES.$$" && mv "$MCP_HTTP_MODULES.$$" "$MCP_HTTP_MODULES"
fi

# Starts the server on ${1:-$MCP_HTTP_PORT} (127.0.0.1 when only a port) with a fresh token;
# waits for its start line.
mcp_http_start() {
	[ -f "$MCP_HTTP_MODULES/.package-lock.json" ] ||
		fail "tests/mcp/node_modules is not installed: make test runs npm ci in tests/mcp" ||
		return 1
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T_DIR/token" && chmod 600 "$T_DIR/token"
	"$IT_LAUNCH" mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_HTTP_MODULES" \
		--max-calls 4 --audit-log "$T_DIR/audit.jsonl" \
		--http "${1:-$MCP_HTTP_PORT}" --token-file "$T_DIR/token" 2>"$T_DIR/server.err" &
	MCP_HTTP_PID=$!
	track_pid "$MCP_HTTP_PID"
	for _ in $(seq 200); do
		grep -q 'serving MCP over HTTP' "$T_DIR/server.err" && return 0
		kill -0 "$MCP_HTTP_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "the server did not start: $(brief "$(cat "$T_DIR/server.err")")"
}

test_mcp_http_e2e() {
	local marker=mcp-http-$BASHPID rc server_rc dir

	mcp_http_start "$MCP_HTTP_PORT" || return 1
	echo "+ node tests/mcp/http.mjs http://127.0.0.1:$MCP_HTTP_PORT/mcp ..."
	timeout -k 5 100 node "$IT_ROOT/tests/mcp/http.mjs" \
		"http://127.0.0.1:$MCP_HTTP_PORT/mcp" "$T_DIR/token" "$marker" >"$T_DIR/http.out" 2>&1
	rc=$?
	cat "$T_DIR/http.out"
	# SIGTERM ends the server, whatever the client saw: exit 0, its state folder removed.
	kill -TERM "$MCP_HTTP_PID"
	wait "$MCP_HTTP_PID"
	server_rc=$?
	[ "$rc" = 0 ] || fail "http.mjs exited $rc: $(grep '^not ok' "$T_DIR/http.out" | head -5)" ||
		return 1
	grep -q '^ok closing the stream cancels the call' "$T_DIR/http.out" ||
		fail "http.mjs stopped early" || return 1
	grep -q "at http://127.0.0.1:$MCP_HTTP_PORT/mcp" "$T_DIR/server.err" ||
		fail "the start line does not name 127.0.0.1: $(cat "$T_DIR/server.err")" || return 1
	[ "$server_rc" = 0 ] ||
		fail "the server exited $server_rc after SIGTERM: $(tail -3 "$T_DIR/server.err")" ||
		return 1
	[ -z "$(find_pids sh "$marker")" ] || fail "processes left: $(find_pids sh "$marker")" ||
		return 1
	# The server's folder (its node_modules links to this run's modules) is gone.
	for dir in /run/launch-mcp.*; do
		[ "$(readlink "$dir/node_modules" 2>/dev/null)" != "$MCP_HTTP_MODULES" ] ||
			fail "the server left $dir" || return 1
	done
}

# Bad --http and --token-file: one line naming the option or the file, exit 125.
test_mcp_http_bad_options() {
	local p=$IT_ROOT/policies/stripe.json

	launch_raw mcp --policy "$p" --modules "$MCP_HTTP_MODULES" --http 8931
	expect_rc "--http without --token-file" 125 || return 1
	expect_match "message" '^launch: --http: needs --token-file' "$L_ERR" || return 1
	launch_raw mcp --policy "$p" --modules "$MCP_HTTP_MODULES" --http 8931 \
		--token-file "$T_DIR/none"
	expect_rc "an unreadable token file" 125 || return 1
	expect_match "message" "^launch: --token-file: $T_DIR/none: No such file" "$L_ERR" || return 1
	: >"$T_DIR/empty"
	launch_raw mcp --policy "$p" --modules "$MCP_HTTP_MODULES" --http 8931 \
		--token-file "$T_DIR/empty"
	expect_rc "an empty token file" 125 || return 1
	expect_match "message" "^launch: --token-file: $T_DIR/empty is empty" "$L_ERR" || return 1
	echo short >"$T_DIR/short"
	launch_raw mcp --policy "$p" --modules "$MCP_HTTP_MODULES" --http 8931 \
		--token-file "$T_DIR/short"
	expect_rc "a short token" 125 || return 1
	expect_match "message" "^launch: --token-file: $T_DIR/short: the token must be" "$L_ERR" ||
		return 1
	for bad in 'x' '1.2.3:80' '127.0.0.1:99999' '[::1' 'localhost:80'; do
		launch_raw mcp --policy "$p" --modules "$MCP_HTTP_MODULES" --http "$bad" \
			--token-file "$T_DIR/short"
		expect_rc "--http $bad" 125 || return 1
		expect_match "message" "^launch: --http: \"" "$L_ERR" || return 1
	done
	launch_raw mcp --policy "$p" --modules "$MCP_HTTP_MODULES" --token-file "$T_DIR/short"
	expect_rc "--token-file without --http" 125 || return 1
	expect_match "message" '^launch: --token-file: only with --http' "$L_ERR"
}

# [::1]:PORT listens on IPv6 loopback alone: a ping with the token is answered there, and
# 127.0.0.1's port is not served.
test_mcp_http_ipv6() {
	local out

	mcp_http_start "[::1]:$MCP_HTTP_PORT" || return 1
	grep -q "at http://\[::1\]:$MCP_HTTP_PORT/mcp" "$T_DIR/server.err" ||
		fail "the start line: $(cat "$T_DIR/server.err")" || return 1
	out=$(node --input-type=module -e '
		const [port, token] = process.argv.slice(1);
		const ping = (host) => fetch(`http://${host}:${port}/mcp`, { method: "POST",
			headers: { Authorization: `Bearer ${token}`, "MCP-Protocol-Version": "2026-07-28",
				   "Mcp-Method": "ping", "Content-Type": "application/json" },
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { _meta: {
				"io.modelcontextprotocol/protocolVersion": "2026-07-28" } } }) })
			.then((r) => r.status, (e) => e.cause?.code ?? e.message);
		console.log(await ping("[::1]"), await ping("127.0.0.1"));' \
		"$MCP_HTTP_PORT" "$(cat "$T_DIR/token")" 2>&1)
	kill -TERM "$MCP_HTTP_PID"
	wait "$MCP_HTTP_PID"
	[ "$out" = "200 ECONNREFUSED" ] || fail "[::1] and 127.0.0.1 answered: $out"
}

# Sessions under pressure (tests/integration/fixtures/mcp_http_sessions.py, from 127.0.0.1-5):
# a wrong session id of the right length is 404; an address's 65th initialize ends that
# address's own longest idle session (404 for it), not its busy one, while another address's
# sessions work; with the table full (4 x 64), an initialize
# evicts the longest idle session, not the older one whose call is running, and the evicted
# one's client gets 404 (then it initializes again, as 2025-11-25 says).
test_mcp_http_sessions_limit() {
	local L_OUT

	mcp_http_start "$MCP_HTTP_PORT" || return 1
	L_OUT=$(timeout -k 5 120 "$IT_PY" "$IT_DIR/fixtures/mcp_http_sessions.py" "$MCP_HTTP_PORT" \
		"$T_DIR/token" 2>&1)
	printf '  %s\n' "${L_OUT//$'\n'/$'\n'  }"
	kill -TERM "$MCP_HTTP_PID"
	wait "$MCP_HTTP_PID" || fail "the server exited $?: $(tail -3 "$T_DIR/server.err")" ||
		return 1
	expect_lines "sessions" 'init 200 session' 'ping 200 ' 'wrong-first 404 -32600' \
		'wrong-last 404 -32600' 'call 200 text/event-stream' 'fill 200 127.0.0.1 64' \
		'over 200 session' 'own-evicted 404 -32600' 'busy-kept-own 200 ' \
		'other 200 ping 200' 'table 200 256' \
		'evict 200 call-running yes' 'busy-kept 200 ' 'idle-evicted 404 -32600' \
		'newest 200 ' 'call-result slow [0-9.]+s'
}
