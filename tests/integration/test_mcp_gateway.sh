# SPDX-License-Identifier: LGPL-2.1-or-later
# launch mcp --secret: the server's one HTTPS gateway serves every call's sandbox (docs/mcp.md,
# docs/gateway.md). Through the official MCP TypeScript client (tests/mcp/gateway.mjs), against
# the HTTPS stand-in for api.stripe.com (127.0.7.2:443, a throwaway CA given as --upstream-ca)
# found through a local dnsmasq.

MG_DNS=127.0.0.53
MG_DNS_PORT=5357
MG_ADDR=127.0.7.2
MG_KEY=sk_test_mcp_gateway_real_$$
MG_POLICY='{"name": "mcpgw", "allow": [{"host": "api.stripe.com", "ports": [443],
  "http": {"allow": [{"method": "GET", "path": "/v1/customers*"},
                     {"method": "POST", "path": "/v1/customers"},
                     {"method": "GET", "path": "/gw/echo"}]}}],
  "secrets": [{"name": "STRIPE_API_KEY", "hosts": ["api.stripe.com"],
               "header": "Authorization", "format": "Bearer {}"}]}'
MG_MODULES=$IT_TMP/mcp/node_modules
if [ ! -d "$MG_MODULES" ] && [ -f "$IT_ROOT/tests/mcp/node_modules/.package-lock.json" ]; then
	mkdir -p "$IT_TMP/mcp" && chmod 755 "$IT_TMP/mcp" &&
		cp -a "$IT_ROOT/tests/mcp/node_modules" "$MG_MODULES.$$" &&
		chmod -R a+rX "$MG_MODULES.$$" && mv "$MG_MODULES.$$" "$MG_MODULES"
fi

mg_providers() {
	[ -f "$MG_MODULES/.package-lock.json" ] ||
		fail "tests/mcp/node_modules is not installed: make test runs npm ci in tests/mcp" ||
		return 1
	"$IT_ROOT/tests/standin/make-ca.sh" "$T_DIR/ca" || fail "cannot make the test CA" || return 1
	STANDIN_AUTH_LOG=$T_DIR/auth.log node "$IT_ROOT/tests/standin/server.mjs" \
		"$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" \
		"$MG_ADDR" 443 "$T_DIR/standin.ready" >"$T_DIR/standin.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$MG_DNS" "$MG_DNS_PORT" "$T_DIR/dns.log" \
		--address=/stripe.com/"$MG_ADDR" || return 1
	wait_for_file "$T_DIR/standin.ready" 10 ||
		fail "the stand-in did not start: $(brief "$(cat "$T_DIR/standin.log")")"
}

# gateway.mjs MODE against launch mcp with the gateway's options; its output in $T_DIR/MODE.out.
mg_client() {
	local mode=$1 rc

	shift
	launch_next_names
	echo "+ node tests/mcp/gateway.mjs $mode launch mcp --secret STRIPE_API_KEY ..."
	STRIPE_API_KEY=$MG_KEY GW_REAL_KEY=$MG_KEY timeout -k 5 150 node \
		"$IT_ROOT/tests/mcp/gateway.mjs" "$mode" "$IT_LAUNCH" mcp \
		--policy "$(policy mcpgw "$MG_POLICY")" --resolver "$MG_DNS:$MG_DNS_PORT" \
		--modules "$MG_MODULES" --upstream-ca "$T_DIR/ca/ca.pem" --secret STRIPE_API_KEY \
		--timeout 60 --audit-log "$L_AUDIT" "$@" >"$T_DIR/$mode.out" 2>"$T_DIR/$mode.err"
	rc=$?
	cat "$T_DIR/$mode.out"
	[ "$rc" = 0 ] || fail "gateway.mjs $mode exited $rc: $(grep '^not ok' "$T_DIR/$mode.out" |
		head -3) $(brief "$(tail -5 "$T_DIR/$mode.err")")"
}

test_mcp_gateway() {
	local f

	mg_providers || return 1
	# Outside the sandbox, the attacker's own key reaches the allowed provider: the move
	# that the gateway must refuse inside.
	curl -sS -o /dev/null --cacert "$T_DIR/ca/ca.pem" --resolve "api.stripe.com:443:$MG_ADDR" \
		-H "Authorization: Bearer sk_attacker_outside" -d stolen=1 \
		https://api.stripe.com/v1/customers || fail "outside: curl failed" || return 1
	grep -q 'authorization=Bearer sk_attacker_outside' "$T_DIR/auth.log" ||
		fail "outside: the attacker's key did not reach the stand-in" || return 1
	mg_client test --max-calls 2 || return 1
	grep -q '^ok the key in no result' "$T_DIR/test.out" ||
		fail "gateway.mjs stopped early" || return 1
	# The stand-in got the real key from the gateway, never the placeholder.
	grep -qF "GET api.stripe.com /v1/customers?limit=2 authorization=Bearer $MG_KEY " \
		"$T_DIR/auth.log" ||
		fail "the stand-in did not get the real key: $(brief "$(cat "$T_DIR/auth.log")")" ||
		return 1
	grep -q 'launch-placeholder-' "$T_DIR/auth.log" &&
		fail "a placeholder reached the stand-in" && return 1
	grep -q 'sk_attacker_own' "$T_DIR/auth.log" &&
		fail "the attacker's key reached the stand-in" && return 1
	# Each request is logged as its own call's, the refusal too.
	[ "$(audit_count "$L_AUDIT" event=http method=GET host=api.stripe.com \
		path=/v1/customers status=200 decision=allow secret=STRIPE_API_KEY pid:int)" -ge 2 ] ||
		fail "no http lines with the process for the calls' GETs" || return 1
	expect_audit 1 "$L_AUDIT" event=http method=POST decision=deny reason=credential \
		status=403 || return 1
	[ "$(audit_count "$L_AUDIT" event=http path=/v1/customers/cus_alpha0)" = 1 ] ||
		fail "no http line for cus_alpha0" || return 1
	# Under a sandbox of their own beside the call's (the server numbers them): each such
	# stream's seq runs 1, 2, 3 without a repeat, and no (sandbox, seq) names two lines.
	python3 - "$L_AUDIT" 2>"$T_DIR/seq.err" <<-'PY' || fail "the http lines' (sandbox, seq): $(cat "$T_DIR/seq.err")" ||
		import json, sys
		seen, streams = set(), {}
		for line in open(sys.argv[1]):
		    e = json.loads(line)
		    key = (e["sandbox"], e["seq"])
		    if key in seen:
		        sys.exit("two lines are %s" % (key,))
		    seen.add(key)
		    if e["event"] == "http":
		        if not e["sandbox"].endswith(".gateway"):
		            sys.exit("an http line of sandbox %s" % e["sandbox"])
		        streams.setdefault(e["sandbox"], []).append(e["seq"])
		for name, seqs in streams.items():
		    if sorted(seqs) != list(range(1, len(seqs) + 1)):
		        sys.exit("%s: seq %s" % (name, seqs))
		if len(streams) < 5:
		    sys.exit("only %d calls' http lines" % len(streams))
		PY
		return 1
	# The value is in no output, log line or file the run left.
	for f in "$L_AUDIT" "$T_DIR/test.out" "$T_DIR/test.err" /run/launch-gateway/*; do
		[ -e "$f" ] || continue
		grep -qF "$MG_KEY" "$f" && fail "the secret's value is in $f" && return 1
	done
	# This server's folder (named in its calls' sandbox_start lines) and CA files are gone;
	# other tests' servers may run meanwhile on this machine.
	grep -q '/run/launch-mcp\.' "$L_AUDIT" || fail "no server folder in the log" || return 1
	for f in $(grep -o '/run/launch-mcp\.[A-Za-z0-9]*' "$L_AUDIT" | sort -u) \
		$(grep -o '"sandbox":"mcp-[0-9]*-' "$L_AUDIT" | sort -u | sed 's/.*"\(mcp-[0-9]*\)-/\1/' |
			sed 's|^|/run/launch-gateway/|; s|$|.ca.pem|'); do
		[ ! -e "$f" ] || fail "state left behind: $f" || return 1
	done
}

# --secret's errors are launch run's: one line naming it, exit 125.
test_mcp_gateway_bad_secret() {
	local p

	p=$(policy mcpgw "$MG_POLICY")
	env -u STRIPE_API_KEY "$IT_LAUNCH" mcp --policy "$p" --modules "$MG_MODULES" \
		--secret STRIPE_API_KEY </dev/null >"$T_DIR/bad.out" 2>"$T_DIR/bad.err"
	expect_eq "an unset --secret" 125 "$?" || return 1
	expect_match "its message" 'STRIPE_API_KEY' "$(cat "$T_DIR/bad.err")" || return 1
	"$IT_LAUNCH" mcp --policy "$p" --modules "$MG_MODULES" \
		--secret STRIPE_API_KEY=@"$T_DIR/none" </dev/null >"$T_DIR/bad.out" 2>"$T_DIR/bad.err"
	expect_eq "a --secret file that is not there" 125 "$?" || return 1
	expect_match "its message" 'none' "$(cat "$T_DIR/bad.err")" || return 1
	"$IT_LAUNCH" mcp --policy "$p" --modules "$MG_MODULES" </dev/null >"$T_DIR/bad.out" \
		2>"$T_DIR/bad.err"
	expect_eq "no --secret for the policy's secret" 125 "$?" || return 1
	STRIPE_API_KEY=x "$IT_LAUNCH" mcp --policy "$p" --modules "$MG_MODULES" \
		--secret STRIPE_API_KEY --upstream-ca "$T_DIR/none" </dev/null >"$T_DIR/bad.out" \
		2>"$T_DIR/bad.err"
	expect_eq "an --upstream-ca that is not there" 125 "$?" || return 1
	expect_match "its message" '^launch: --upstream-ca' "$(cat "$T_DIR/bad.err")" || return 1
	# A call's launch served by the server's gateway holds no value of its own.
	STRIPE_API_KEY=x "$IT_LAUNCH" --policy "$p" --gateway-client 1,0 \
		--secret STRIPE_API_KEY -- true </dev/null >"$T_DIR/bad.out" 2>"$T_DIR/bad.err"
	expect_eq "--gateway-client with --secret" 125 "$?" || return 1
	grep -q '^launch: --gateway-client: --secret' "$T_DIR/bad.err" ||
		fail "its message: $(brief "$(cat "$T_DIR/bad.err")")" || return 1
	"$IT_LAUNCH" --policy "$p" --gateway-client 0,0 -- true </dev/null \
		>"$T_DIR/bad.out" 2>"$T_DIR/bad.err"
	expect_eq "--gateway-client 0,0" 125 "$?" || return 1
	expect_match "its message" '^launch: --gateway-client: "0,0" is not' "$(cat "$T_DIR/bad.err")"
}

# The same calls on cold sandboxes (--pool 0: each call's launch started with its code), whose
# client of the gateway is removed before the call's log is read. Unchecked (--no-typecheck):
# a call to be type-checked would start a prepared runner instead.
test_mcp_gateway_cold() {
	mg_providers || return 1
	mg_client test --pool 0 --max-calls 2 --no-typecheck || return 1
	grep -q '^ok the key in no result' "$T_DIR/test.out" ||
		fail "gateway.mjs stopped early" || return 1
	expect_audit 1 "$L_AUDIT" event=http method=POST decision=deny reason=credential \
		status=403
}

# A session's sandbox keeps its gateway client for its calls: each lists its own requests.
test_mcp_gateway_session() {
	mg_providers || return 1
	mg_client session --sessions || return 1
	grep -q "^ok a session's second call lists only its own" "$T_DIR/session.out" ||
		fail "gateway.mjs stopped early"
}
