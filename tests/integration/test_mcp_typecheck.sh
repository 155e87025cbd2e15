# SPDX-License-Identifier: LGPL-2.1-or-later
# launch mcp's type-check before a call runs, end to end with the official MCP TypeScript SDK's
# client (tests/mcp/typecheck.mjs): type errors with their place and the code not run, lenient
# code run, "typecheck": false, cold calls (--pool 0) checked too, and a server whose
# --modules has no typescript. No network.

# As test_mcp.sh does: the modules where the calls' user (nobody) can read them.
MCP_MODULES=$IT_TMP/mcp/node_modules
if [ ! -d "$MCP_MODULES" ] && [ -f "$IT_ROOT/tests/mcp/node_modules/.package-lock.json" ]; then
	mkdir -p "$IT_TMP/mcp" && chmod 755 "$IT_TMP/mcp" &&
		cp -a "$IT_ROOT/tests/mcp/node_modules" "$MCP_MODULES.$$" &&
		chmod -R a+rX "$MCP_MODULES.$$" && mv "$MCP_MODULES.$$" "$MCP_MODULES"
fi

# tests/mcp/typecheck.mjs over the transport $1 (stdio, http: tests/mcp/connect.mjs).
mcp_typecheck() {
	local rc m untyped=$T_DIR/untyped/node_modules

	[ -d "$MCP_MODULES/typescript" ] ||
		fail "tests/mcp/node_modules has no typescript: make test runs npm ci in tests/mcp" ||
		return 1
	# The same modules but typescript.
	mkdir -p "$untyped" || return 1
	for m in "$MCP_MODULES"/* "$MCP_MODULES"/.package-lock.json; do
		[ "${m##*/}" = typescript ] || ln -s "$m" "$untyped/${m##*/}"
	done
	chmod -R a+rX "$T_DIR/untyped"
	launch_next_names
	echo "+ MCP_TRANSPORT=$1 node tests/mcp/typecheck.mjs launch mcp ..."
	MCP_TRANSPORT=$1 timeout -k 5 150 node "$IT_ROOT/tests/mcp/typecheck.mjs" "$untyped" "$IT_LAUNCH" mcp \
		--policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" --timeout 60 \
		--audit-log "$L_AUDIT" >"$T_DIR/typecheck.out" 2>&1
	rc=$?
	grep -v 'launch: warning' "$T_DIR/typecheck.out"
	[ "$rc" = 0 ] ||
		fail "typecheck.mjs exited $rc: $(grep '^not ok' "$T_DIR/typecheck.out" | head -5)" ||
		return 1
	grep -q '^ok unchecked without typescript' "$T_DIR/typecheck.out" ||
		fail "typecheck.mjs stopped early"
}

test_mcp_typecheck() {
	mcp_typecheck stdio
}

test_mcp_typecheck_http() {
	mcp_typecheck http
}
