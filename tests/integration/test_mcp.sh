# SPDX-License-Identifier: LGPL-2.1-or-later
# launch mcp end to end with the official MCP TypeScript SDK's client (tests/mcp/e2e.mjs):
# the tool's code calls an HTTPS stand-in for api.stripe.com (127.0.5.2:443, a throwaway CA
# trusted through NODE_EXTRA_CA_CERTS) found through a local dnsmasq, and tries evil.example
# (127.0.5.3:443) by name, by address and by a DNS exfiltration look-up.

listeners tcp:127.0.5.3:443

MCP_DNS=127.0.0.53
MCP_DNS_PORT=5355
# Calls run as nobody, who may not traverse a checkout under a 0700 home: the modules are
# copied once where every user can read them, as run copies the helpers (into a folder named
# node_modules: Node finds a package's own dependencies by that name).
MCP_MODULES=$IT_TMP/mcp/node_modules
if [ ! -d "$MCP_MODULES" ] && [ -f "$IT_ROOT/tests/mcp/node_modules/.package-lock.json" ]; then
	mkdir -p "$IT_TMP/mcp" && chmod 755 "$IT_TMP/mcp" &&
		cp -a "$IT_ROOT/tests/mcp/node_modules" "$MCP_MODULES.$$" &&
		chmod -R a+rX "$MCP_MODULES.$$" && mv "$MCP_MODULES.$$" "$MCP_MODULES"
fi

# The stand-in and dnsmasq, as the demo runs them.
mcp_providers() {
	[ -f "$MCP_MODULES/.package-lock.json" ] ||
		fail "tests/mcp/node_modules is not installed: make test runs npm ci in tests/mcp" ||
		return 1
	command -v node >/dev/null || fail "node not found (make deps installs nodejs)" || return 1
	"$IT_ROOT/tests/standin/make-ca.sh" "$T_DIR/ca" || fail "cannot make the test CA" || return 1
	node "$IT_ROOT/tests/standin/server.mjs" "$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" \
		127.0.5.2 443 "$T_DIR/standin.ready" >"$T_DIR/standin.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$MCP_DNS" "$MCP_DNS_PORT" "$T_DIR/dns.log" \
		--address=/stripe.com/127.0.5.2 --address=/evil.example/127.0.5.3 || return 1
	wait_for_file "$T_DIR/standin.ready" 10 ||
		fail "the stand-in did not start: $(brief "$(cat "$T_DIR/standin.log")")"
}

# tests/mcp/e2e.mjs over the transport $1 (stdio, http: tests/mcp/connect.mjs).
mcp_e2e() {
	local transport=$1 marker=mcp-e2e-$BASHPID rc left dir

	mcp_providers || return 1
	# What the tool's code is refused must work outside the sandbox.
	outside "OK tcp 127.0.5.3 443" || return 1
	launch_next_names
	# --no-typecheck: the check is test_mcp_typecheck's; here it would only make each prepared
	# sandbox seconds of CPU dearer, and on a loaded machine the pool's refills (a dozen calls
	# in a row) then outlast the test's time.
	echo "+ MCP_TRANSPORT=$transport node tests/mcp/e2e.mjs launch mcp ..."
	MCP_TRANSPORT=$transport STRIPE_API_KEY=sk_test_e2e NODE_EXTRA_CA_CERTS=$T_DIR/ca/ca.pem \
		E2E_NOT_PASSED=yes E2E_MARKER=$marker timeout -k 5 85 \
		node "$IT_ROOT/tests/mcp/e2e.mjs" "$IT_LAUNCH" \
		mcp --policy "$IT_ROOT/policies/stripe.json" --resolver "$MCP_DNS:$MCP_DNS_PORT" \
		--modules "$MCP_MODULES" --pass-env STRIPE_API_KEY --pass-env NODE_EXTRA_CA_CERTS \
		--timeout 60 --max-output 20000 --no-typecheck --audit-log "$L_AUDIT" \
		>"$T_DIR/e2e.out" 2>&1
	rc=$?
	cat "$T_DIR/e2e.out"
	[ "$rc" = 0 ] || fail "e2e.mjs exited $rc: $(grep '^not ok' "$T_DIR/e2e.out" | head -5)" ||
		return 1
	grep -q '^ok fresh sandbox per call' "$T_DIR/e2e.out" || fail "e2e.mjs stopped early" ||
		return 1
	# The stand-in served the SDK; evil.example never reached the DNS server.
	grep -q 'GET api.stripe.com /v1/customers' "$T_DIR/standin.log" ||
		fail "the stand-in never saw the SDK's call: $(brief "$(cat "$T_DIR/standin.log")")" ||
		return 1
	grep -q 'evil.example' "$T_DIR/dns.log" &&
		fail "dnsmasq was asked about evil.example: $(grep evil "$T_DIR/dns.log" | head -2)" &&
		return 1
	# Each call's refusals are in the server's audit log too.
	[ "$(audit_count "$L_AUDIT" event=deny op=connect dst_ip=127.0.5.3 dst_port=443)" -ge 1 ] ||
		fail "no deny line for 127.0.5.3:443 in the server's audit log" || return 1
	# Nothing of the calls survives them: no process, no folder.
	left=$(find_pids sleep "$marker")
	[ -z "$left" ] || fail "processes left by a call: $left" || return 1
	# This run's servers' folders alone (their node_modules links to this run's modules): other
	# servers of the machine, a benchmark's or another checkout's tests, may be running.
	for dir in /run/launch-mcp.*; do
		[ "$(readlink "$dir/node_modules" 2>/dev/null)" != "$MCP_MODULES" ] ||
			fail "state left behind: $dir" || return 1
	done
}

test_mcp_e2e() {
	mcp_e2e stdio
}

test_mcp_e2e_http() {
	mcp_e2e http
}

# Bad command lines: one line naming the option, exit 125.
test_mcp_bad_options() {
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$T_DIR/none"
	expect_rc "--modules missing" 125 || return 1
	expect_match "message" '^launch: --modules: .*none' "$L_ERR" || return 1
	mkdir -p "$T_DIR/empty_modules"
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$T_DIR/empty_modules"
	expect_rc "--modules without tsx" 125 || return 1
	expect_match "message" 'has no tsx' "$L_ERR" || return 1
	launch_raw mcp --modules "$MCP_MODULES"
	expect_rc "no --policy" 125 || return 1
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" -- node
	expect_rc "an operand" 125 || return 1
	expect_match "message" 'not an option' "$L_ERR" || return 1
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" \
		--audit-sync-fd 3
	expect_rc "--audit-sync-fd" 125 || return 1
	expect_match "message" '^launch: --audit-sync-fd: not for launch mcp' "$L_ERR" || return 1
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$MCP_MODULES" \
		--audit-format ocsf
	expect_rc "--audit-format ocsf" 125 || return 1
	expect_match "message" '^launch: --audit-format: launch mcp' "$L_ERR"
}

# launch mcp --help describes launch mcp: its own options and the defaults a call gets.
test_mcp_help() {
	launch_raw mcp --help
	expect_rc "mcp --help" 0 || return 1
	expect_match "synopsis" '^Usage: launch mcp ' "$L_OUT" || return 1
	for option in '--modules DIR' '--pool N' '--max-output BYTES' '--pass-env NAME' \
		'--runtime node|PATH'; do
		grep -qF -- "$option" "$L_OUT_FILE" || fail "mcp --help has no $option" || return 1
	done
	expect_match "--timeout's default" '--timeout SECONDS +end a call.*default 30' "$L_OUT" ||
		return 1
	expect_match "--pool's default" 'default 2' "$L_OUT" || return 1
	expect_match "--max-output's default" 'default 65536' "$L_OUT" || return 1
	! grep -q 'Runs COMMAND in its own cgroup' "$L_OUT_FILE" ||
		fail "mcp --help prints launch's generic help" || return 1
	launch_raw gc --help
	expect_rc "gc --help" 0 || return 1
	grep -qE '^ +--unload ' "$L_OUT_FILE" || fail "gc --help does not list --unload"
}

# --modules takes a node_modules folder or the npm project folder that holds one: a call
# imports the SDK either way.
test_mcp_modules_project_folder() {
	local project=$IT_TMP/mcp-project-$BASHPID

	mkdir -p "$project" && ln -s "$MCP_MODULES" "$project/node_modules" &&
		chmod 755 "$project" || fail "cannot make $project" || return 1
	launch_raw mcp --policy "$IT_ROOT/policies/stripe.json" --modules "$project/nothing"
	expect_rc "a folder that is not there" 125 || return 1
	for modules in "$project" "$MCP_MODULES"; do
		python3 - "$IT_LAUNCH" "$modules" "$IT_ROOT/policies/stripe.json" \
			>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
			import json, subprocess, sys
			launch, modules, policy = sys.argv[1:4]
			code = "import Stripe from 'stripe';\nconsole.log('sdk ' + typeof Stripe);\n"
			msgs = [
			    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
			        "protocolVersion": "2025-06-18", "capabilities": {},
			        "clientInfo": {"name": "t", "version": "1"}}},
			    {"jsonrpc": "2.0", "method": "notifications/initialized"},
			    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
			     "params": {"name": "run_typescript", "arguments": {"code": code}}},
			]
			p = subprocess.run([launch, "mcp", "--policy", policy, "--modules", modules,
			                    "--pool", "0", "--timeout", "60"], cwd="/",
			                   input="".join(json.dumps(m) + "\n" for m in msgs),
			                   capture_output=True, text=True, timeout=80)
			sys.stderr.write(p.stderr)
			print("rc", p.returncode)
			for line in p.stdout.splitlines():
			    msg = json.loads(line)
			    if msg.get("id") == 2:
			        print(json.dumps(msg))
		PY
		grep -q 'sdk function' "$T_DIR/call.out" ||
			fail "--modules $modules: the call did not import the SDK: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
			return 1
	done
	rm -rf "$project"
}

# A call's code runs in the call's own folder, never the server's: a server started in a
# folder its calls' user may write leaves nothing there for the next call to find. The
# server's policy is given by a path relative to that folder, which each call still finds.
test_mcp_call_folder() {
	local shared=$IT_TMP/mcp-shared-$BASHPID

	mkdir -p "$shared" && chmod 1777 "$shared" || fail "cannot make $shared" || return 1
	cp "$IT_ROOT/policies/stripe.json" "$shared/p.json"
	# Outside: the same code, as nobody, does leave a file in a folder it may write.
	(cd "$shared" && setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		sh -c 'echo x >left-outside') || fail "nobody cannot write $shared outside" || return 1
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$shared" >"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import json, subprocess, sys
		launch, modules, shared = sys.argv[1:4]
		code = ("import { writeFileSync } from 'node:fs';\n"
		        "console.log('cwd ' + process.cwd());\n"
		        "try { writeFileSync('left-by-call', 'x'); console.log('wrote'); }\n"
		        "catch (e) { console.log('write ' + e.code); }\n")
		msgs = [
		    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
		        "protocolVersion": "2025-06-18", "capabilities": {},
		        "clientInfo": {"name": "t", "version": "1"}}},
		    {"jsonrpc": "2.0", "method": "notifications/initialized"},
		    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		     "params": {"name": "run_typescript", "arguments": {"code": code}}},
		]
		p = subprocess.run([launch, "mcp", "--policy", "p.json", "--modules", modules,
		                    "--pool", "0", "--timeout", "60"], cwd=shared,
		                   input="".join(json.dumps(m) + "\n" for m in msgs),
		                   capture_output=True, text=True, timeout=80)
		sys.stderr.write(p.stderr)
		for line in p.stdout.splitlines():
		    msg = json.loads(line)
		    if msg.get("id") == 2:
		        print(json.dumps(msg))
	PY
	cat "$T_DIR/call.out" "$T_DIR/call.err" | head -c 3000
	grep -q 'cwd /run/launch-mcp\.[^ ]*/call-' "$T_DIR/call.out" ||
		fail "the call's working directory is not its own folder: $(brief "$(cat "$T_DIR/call.out")")" ||
		return 1
	[ ! -e "$shared/left-by-call" ] || fail "a call left a file in the server's folder" || return 1
	rm -rf "$shared"
}

# The call's --timeout bounds the whole call: the first call takes the prepared sandbox that
# the server started with, before its runner is ready, and waiting for it counts in the
# timeout (it used to be a whole timeout more, then the code's own).
test_mcp_timeout_bounds_ready_wait() {
	local timeout_s=2

	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$timeout_s" \
		"$IT_DIR/fixtures" >"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import json, sys, time
		launch, modules, policy, timeout, fixtures = sys.argv[1:6]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", timeout])
		server.initialize()
		start = time.monotonic()
		server.call(2, "await new Promise(r => setTimeout(r, 30000));\n")
		reply = server.recv(2)
		print("took_ms %d" % ((time.monotonic() - start) * 1000))
		print(json.dumps(reply))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	local took
	took=$(awk '/^took_ms/ { print $2 }' "$T_DIR/call.out")
	[ -n "$took" ] || fail "no answer to the call: $(brief "$(cat "$T_DIR/call.err")")" || return 1
	grep -q 'timed out after' "$T_DIR/call.out" ||
		fail "the call did not time out: $(brief "$(cat "$T_DIR/call.out")")" || return 1
	# The timeout, and the kill's teardown (tens of ms here): not two timeouts.
	[ "$took" -lt $((timeout_s * 1000 + 600)) ] ||
		fail "the call took $took ms with --timeout $timeout_s" || return 1
}

# What a prepared runner is refused while it starts is not its call's, even when the server
# cannot have launch confirm its log at ready (launch stopped here for 3 s: the sync times
# out): the call's refusals are those after the go. The start-up refusal comes from a stand-in
# "openai" SDK that the runner imports ahead, which connects to 127.0.5.3:443 as it loads.
test_mcp_startup_refusals_not_the_calls() {
	local m

	outside "OK tcp 127.0.5.3 443" || return 1
	mkdir -p "$T_DIR/modules/openai" || return 1
	for m in "$MCP_MODULES"/* "$MCP_MODULES"/.package-lock.json; do
		[ "${m##*/}" = openai ] || ln -s "$m" "$T_DIR/modules/${m##*/}"
	done
	printf '{"name": "openai", "version": "0.0.0", "main": "index.js"}\n' \
		>"$T_DIR/modules/openai/package.json"
	printf '%s\n' "require('node:net').connect(443, '127.0.5.3').on('error', () => {});" \
		"module.exports = {};" >"$T_DIR/modules/openai/index.js"
	chmod -R a+rX "$T_DIR/modules"
	python3 - "$IT_LAUNCH" "$T_DIR/modules" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import json, os, signal, sys, threading, time
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", "60"], stderr=sys.stderr)
		p = server.p
		def pool_launch():
		    for pid in filter(str.isdigit, os.listdir("/proc")):
		        try:
		            with open(f"/proc/{pid}/stat") as f:
		                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
		            with open(f"/proc/{pid}/cmdline", "rb") as f:
		                argv = f.read().decode().split("\0")
		        except OSError:
		            continue
		        if ppid == p.pid and any(a.startswith("--audit-sync-fd") for a in argv):
		            return int(pid), argv[argv.index("--audit-log") + 1]
		    return None, None
		server.initialize()
		deadline = time.monotonic() + 40
		pid = audit = None
		while time.monotonic() < deadline:
		    pid, audit = pid and (pid, audit) or pool_launch()
		    try:
		        if audit and '"dst_ip":"127.0.5.3"' in open(audit).read():
		            break
		    except OSError:
		        pass
		    time.sleep(0.05)
		else:
		    print("no start-up refusal in the prepared sandbox's log")
		    sys.exit(1)
		print("start-up refusal logged")
		time.sleep(0.5)
		os.kill(pid, signal.SIGSTOP)
		threading.Timer(3.0, os.kill, (pid, signal.SIGCONT)).start()
		server.call(2, "console.log('code ran');\n")
		print(json.dumps(server.recv(2)))
		server.close()
	PY
	head -c 3000 "$T_DIR/call.out"
	grep -q 'start-up refusal logged' "$T_DIR/call.out" ||
		fail "no start-up refusal: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
		return 1
	grep -q 'code ran' "$T_DIR/call.out" ||
		fail "the call's code did not run: $(brief "$(cat "$T_DIR/call.out")")" || return 1
	! grep -q '127\.0\.5\.3' <(sed -n '/"id": 2/p' "$T_DIR/call.out") ||
		fail "the runner's start-up refusal is listed as the call's: $(brief "$(grep '"id": 2' "$T_DIR/call.out")")"
}

# Each call's code may write its working directory: a folder made for that call alone (0700,
# the job's user's), gone when the call ends, so that the next call finds nothing of it. With
# prepared sandboxes and without.
test_mcp_call_workdir() {
	local pool

	for pool in 1 0; do
		python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$pool" \
			"$IT_DIR/fixtures" >"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
			import json, os, pwd, sys, time
			launch, modules, policy, pool, fixtures = sys.argv[1:6]
			sys.path.insert(0, fixtures)
			from mcp_client import Server
			server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", pool,
			                         "--timeout", "60"], stderr=sys.stderr)
			server.initialize()
			def result(call_id, code):
			    server.call(call_id, code)
			    reply = server.recv(call_id)
			    print(json.dumps(reply))
			    return reply["result"]["structuredContent"]
			first = result(2, "import * as fs from 'node:fs';\n"
			                  "const st = fs.statSync('.');\n"
			                  "console.log('cwd ' + process.cwd());\n"
			                  "console.log('mode ' + (st.mode & 0o777).toString(8) + ' uid ' + st.uid);\n"
			                  "fs.writeFileSync('out.json', '{\"n\": 1}');\n"
			                  "console.log('read ' + fs.readFileSync('out.json', 'utf8'));\n")
			lines = dict(l.split(" ", 1) for l in first["stdout"].splitlines())
			folder = lines.get("cwd", "")
			uid = pwd.getpwnam("nobody").pw_uid
			print("first", "ok" if first["exit_status"] == 0 and
			      lines.get("read") == '{"n": 1}' else "bad")
			print("owner", "ok" if lines.get("mode") == "700 uid %d" % uid else "bad")
			second = result(3, "import * as fs from 'node:fs';\n"
			                   "console.log('here ' + fs.existsSync('out.json'));\n"
			                   "try { fs.readFileSync(%s); console.log('other read'); }\n"
			                   "catch (e) { console.log('other ' + e.code); }\n"
			                   "console.log('cwd ' + process.cwd());\n" %
			                   json.dumps(folder + "/out.json"))
			lines2 = dict(l.split(" ", 1) for l in second["stdout"].splitlines())
			print("second", "ok" if lines2.get("here") == "false" and
			      lines2.get("other") in ("ENOENT", "EACCES") and
			      lines2.get("cwd") not in (None, folder) else "bad")
			# The first call's folder went when it ended; the second's goes with it too.
			time.sleep(0.5)
			print("gone", "ok" if folder.startswith("/run/launch-mcp.") and
			      not os.path.exists(folder) else "bad")
			server.close()
			print("closed", "ok" if not os.path.exists(lines2.get("cwd") or "/") else "bad")
		PY
		head -c 3000 "$T_DIR/call.out"
		for step in first owner second gone closed; do
			grep -qx "$step ok" "$T_DIR/call.out" ||
				fail "--pool $pool: $step: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
				return 1
		done
	done
}

# The result lists each refused (op, destination) once, with how many refusals it stands for:
# a name not in the policy looked up for every address (A and AAAA, and the resolver's
# repeats: the server's audit log has the lines to count) and a refused address connected to
# twice.
test_mcp_refused_counted() {
	outside "OK tcp 127.0.5.3 443" || return 1
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		"$T_DIR/server.jsonl" >"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import json, sys
		launch, modules, policy, fixtures, audit = sys.argv[1:6]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", "60", "--audit-log", audit], stderr=sys.stderr)
		server.initialize()
		server.call(2, "import { promises as dns } from 'node:dns';\n"
		               "import net from 'node:net';\n"
		               "try { await dns.lookup('counted.evil.example', { all: true }); }\n"
		               "catch (e: any) { console.log('lookup ' + e.code); }\n"
		               "for (let i = 0; i < 2; i++)\n"
		               "\tawait new Promise((done) => net.connect(443, '127.0.5.3')\n"
		               "\t\t.on('error', (e: any) => done(console.log('connect ' + e.code))));\n")
		reply = server.recv(2)
		server.close()
		print(json.dumps(reply))
		refused = reply["result"]["structuredContent"]["refused"]
		keys = [(r["op"], r["destination"]) for r in refused]
		print("once", "ok" if len(keys) == len(set(keys)) else "bad")
		count = {k: r["count"] for k, r in zip(keys, refused)}
		looked_up = sum(1 + line.get("repeats", 0) for line in map(json.loads, open(audit))
		                if line.get("event") == "deny" and line.get("op") == "dns" and
		                line.get("qname", "").lower() == "counted.evil.example")
		print("dns", count.get(("dns", "counted.evil.example")), "of", looked_up)
		print("dns_count", "ok" if looked_up >= 2 and
		      count.get(("dns", "counted.evil.example")) == looked_up else "bad")
		print("connect_count", "ok" if count.get(("connect", "127.0.5.3:443")) == 2 else "bad")
		text = reply["result"]["content"][0]["text"]
		print("text", "ok" if "connect 127.0.5.3:443, 2 times\n" in text else "bad")
	PY
	head -c 3000 "$T_DIR/call.out"
	for step in once dns_count connect_count text; do
		grep -qx "$step ok" "$T_DIR/call.out" ||
			fail "$step: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" || return 1
	done
}

# search_docs: the server indexes --modules' declarations and READMEs before it serves (one
# stderr line says how many), and answers from it without a sandbox.
test_mcp_search_docs() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/search.out" 2>"$T_DIR/search.err" <<-'PY'
		import json, sys
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "0"],
		                stderr=sys.stderr)
		server.initialize()
		server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
		tools = {t["name"]: t for t in server.recv(2)["result"]["tools"]}
		print("tools", "ok" if sorted(tools) == ["run_typescript", "search_docs"] else
		      "bad " + " ".join(sorted(tools)))
		print("schema", "ok" if "results" in
		      tools.get("search_docs", {}).get("outputSchema", {}).get("properties", {})
		      else "bad")
		server.call_tool(3, "search_docs", {"query": "create a customer"})
		reply = server.recv(3)["result"]
		results = reply["structuredContent"]["results"]
		print(json.dumps(results[:3]))
		names = [r["name"] for r in results[:3]]
		print("customers", "ok" if "customers.create" in names else "bad " + " ".join(names))
		hit = next((r for r in results if r["name"] == "customers.create"), {})
		print("hit", "ok" if hit.get("signature", "").startswith("create(") and
		      "customer" in hit.get("description", "").lower() and
		      ".d.ts:" in hit.get("source", "") else "bad " + json.dumps(hit))
		print("text", "ok" if json.loads(reply["content"][0]["text"]) ==
		      reply["structuredContent"] and not reply["isError"] else "bad")
		server.call_tool(4, "search_docs", {"query": "zzzqqq", "limit": 20})
		reply = server.recv(4)
		print("empty", "ok" if "result" in reply and
		      reply["result"]["structuredContent"]["results"] == [] else "bad " + json.dumps(reply))
		server.close()
	PY
	cat "$T_DIR/search.out"
	for step in tools schema customers hit text empty; do
		grep -qx "$step ok" "$T_DIR/search.out" ||
			fail "$step: $(brief "$(cat "$T_DIR/search.out" "$T_DIR/search.err")")" || return 1
	done
	grep -Eq '^launch mcp: search_docs: [1-9][0-9]* entries from [1-9][0-9]* packages in [0-9]+ ms$' \
		"$T_DIR/search.err" ||
		fail "no index line on stderr: $(brief "$(cat "$T_DIR/search.err")")" || return 1
}

# search_docs' quality on the task phrases written down in tests/mcp/search-quality/stripe.txt
# (a phrase and the method that answers it): the method is in the top 3 for at least 18 of
# the 20 (the issue's target). Prints the table.
test_mcp_search_docs_quality() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		"$IT_ROOT/tests/mcp/search-quality/stripe.txt" >"$T_DIR/quality.out" \
		2>"$T_DIR/quality.err" <<-'PY'
		import sys
		launch, modules, policy, fixtures, phrases_file = sys.argv[1:6]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		phrases = [line.rstrip("\n").split("|") for line in open(phrases_file)
		           if line.strip() and not line.startswith("#")]
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "0"],
		                stderr=sys.stderr)
		server.initialize()
		hits = 0
		for i, (phrase, want) in enumerate(phrases):
		    server.call_tool(10 + i, "search_docs", {"query": phrase, "limit": 3})
		    reply = server.recv(10 + i)["result"]["structuredContent"]["results"]
		    names = [r["name"] for r in reply]
		    hits += want in names
		    print("%-4s %-40s %-28s %s" % ("ok" if want in names else "miss", phrase, want,
		                                    " ".join(names)))
		print("top3 %d of %d" % (hits, len(phrases)))
		server.close()
	PY
	cat "$T_DIR/quality.out"
	grep -Eq '^top3 (1[89]|20) of 20$' "$T_DIR/quality.out" ||
		fail "fewer than 18 of 20 in the top 3: $(brief "$(tail -1 "$T_DIR/quality.out") $(cat "$T_DIR/quality.err")")"
}

# With --max-calls 2, two calls sent back to back run at once: the second one's code starts
# before the first one's ends (a server answering one request at a time starts it after).
test_mcp_parallel_calls() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import json, re, sys, time
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "2",
		                         "--max-calls", "2", "--timeout", "60"], stderr=sys.stderr)
		server.initialize()
		code = ("console.log('start ' + Date.now());\n"
		        "await new Promise(r => setTimeout(r, 5000));\n"
		        "console.log('end ' + Date.now());\n")
		sent = time.monotonic()
		server.call(2, code)
		server.call(3, code)
		times = {}
		while len(times) < 2:
		    msg = server.recv_any()
		    if msg is None:
		        print("the server ended")
		        sys.exit(1)
		    if msg.get("id") in (2, 3):
		        out = msg["result"]["structuredContent"]["stdout"]
		        times[msg["id"]] = [int(re.search(w + r" (\d+)", out).group(1))
		                            for w in ("start", "end")]
		print("took_ms %d" % ((time.monotonic() - sent) * 1000))
		print("times %s" % json.dumps(times))
		overlap = times[3][0] < times[2][1] and times[2][0] < times[3][1]
		print("overlap" if overlap else "no overlap")
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	grep -qx 'overlap' "$T_DIR/call.out" ||
		fail "the calls did not run at once: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")"
}

# A ping sent while a call runs is answered before the call's result.
test_mcp_ping_during_call() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import sys, time
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", "60"], stderr=sys.stderr)
		server.initialize()
		server.call(2, "await new Promise(r => setTimeout(r, 3000));\n")
		time.sleep(0.5)
		server.ping(3)
		order = []
		while len(order) < 2:
		    msg = server.recv_any()
		    if msg is None:
		        break
		    if msg.get("id") in (2, 3):
		        order.append(msg["id"])
		print("order %s" % " ".join(map(str, order)))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	grep -qx 'order 3 2' "$T_DIR/call.out" ||
		fail "the ping was not answered before the call: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")"
}

# notifications/cancelled for a running call: its sandbox (the child launch the call took) and
# its folder go, no response comes for it, and the server goes on with a ping and a call.
test_mcp_cancel() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import os, select, sys, time
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", "60"], stderr=sys.stderr)
		server.initialize()
		deadline = time.monotonic() + 20
		while not server.children() and time.monotonic() < deadline:
		    time.sleep(0.05)
		before = server.children()
		if len(before) != 1:
		    print("the pool is not one launch: %s" % before)
		    sys.exit(1)
		pid, argv = next(iter(before.items()))
		folder = argv[argv.index("-c") + 3]
		server.call(2, "await new Promise(r => setTimeout(r, 30000));\n")
		time.sleep(1.5)
		server.cancel(2)
		# No response for the cancelled call: nothing comes in 2 s.
		ready, _, _ = select.select([server.p.stdout], [], [], 2)
		if ready:
		    print("unexpected message: %s" % server.recv_any())
		    sys.exit(1)
		server.ping(3)
		msg = server.recv_any()
		print("ping %s" % (msg.get("id") if msg else None))
		server.call(4, "console.log('after ' + (1 + 1));\n")
		msg = server.recv_any()
		print("call %s %s" % (msg.get("id") if msg else None,
		                      msg and msg["result"]["structuredContent"]["stdout"].strip()))
		deadline = time.monotonic() + 10
		while pid in server.children() and time.monotonic() < deadline:
		    time.sleep(0.05)
		print("sandbox %s" % ("left" if pid in server.children() else "gone"))
		print("folder %s" % ("left" if os.path.exists(folder) else "gone"))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	local want

	for want in 'ping 3' 'call 4 after 2' 'sandbox gone' 'folder gone'; do
		grep -qx "$want" "$T_DIR/call.out" ||
			fail "the cancelled call: not \"$want\": $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
			return 1
	done
}

# A call still queued (--max-calls 1, behind a running one) is dropped when cancelled: the
# running call answers, the dropped one never does.
test_mcp_cancel_queued() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import select, sys
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--max-calls", "1", "--timeout", "60"], stderr=sys.stderr)
		server.initialize()
		server.call(2, "await new Promise(r => setTimeout(r, 2000));\n")
		server.call(3, "console.log('queued');\n")
		server.cancel(3)
		ids = []
		while 2 not in ids:
		    msg = server.recv_any()
		    if msg is None:
		        break
		    ids.append(msg.get("id"))
		ready, _, _ = select.select([server.p.stdout], [], [], 2)
		if ready:
		    ids.append(server.recv_any().get("id"))
		print("answered %s" % " ".join(map(str, ids)))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	grep -qx 'answered 2' "$T_DIR/call.out" ||
		fail "the queued call was not dropped: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")"
}

# A call whose request carries a progressToken hears notifications/progress while it runs
# (one as it starts, then every second: at least two in a 3-s call), their progress growing,
# and none once its result is out; a call without a token hears none.
test_mcp_progress() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import select, sys
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", "60"], stderr=sys.stderr)
		server.initialize()

		def run(call_id, seconds, meta):
		    params = {"name": "run_typescript", "arguments": {
		        "code": "await new Promise(r => setTimeout(r, %d));\n" % (seconds * 1000)}}
		    if meta:
		        params["_meta"] = meta
		    server.send({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
		                 "params": params})
		    progress = []
		    while True:
		        msg = server.recv_any()
		        if msg is None:
		            print("the server ended")
		            sys.exit(1)
		        if msg.get("method") == "notifications/progress":
		            progress.append(msg["params"])
		        elif msg.get("id") == call_id:
		            break
		    # Nothing more for this call once its result is out.
		    ready, _, _ = select.select([server.p.stdout], [], [], 2.5)
		    after = [server.recv_any()] if ready else []
		    return progress, after

		progress, after = run(2, 3, {"progressToken": "tok-2"})
		values = [p["progress"] for p in progress]
		print("with token: %d notifications %s" % (len(progress), values))
		print("tokens %s" % sorted({p["progressToken"] for p in progress}))
		print("messages %s" % sorted({p.get("message") for p in progress}))
		print("increasing" if all(a < b for a, b in zip(values, values[1:])) else "not increasing")
		print("after result: %d" % len(after))
		progress, after = run(3, 2, None)
		print("without token: %d notifications, after %d" % (len(progress), len(after)))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	local n

	n=$(sed -n 's/^with token: \([0-9]*\) notifications.*/\1/p' "$T_DIR/call.out")
	[ "${n:-0}" -ge 2 ] ||
		fail "fewer than 2 progress notifications in a 3-s call: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
		return 1
	for want in "tokens ['tok-2']" "messages ['running']" 'increasing' 'after result: 0' \
		'without token: 0 notifications, after 0'; do
		grep -qxF "$want" "$T_DIR/call.out" ||
			fail "progress: not \"$want\": $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
			return 1
	done
}

# run_typescript's timeout_ms stops a call sooner than the server's --timeout, with the
# result a timeout gives (timed_out, exit status 124); a timeout_ms that is no integer of at
# least 1 is invalid params (-32602) naming it.
test_mcp_timeout_ms() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import sys, time
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "1",
		                         "--timeout", "60"], stderr=sys.stderr)
		server.initialize()
		sent = time.monotonic()
		server.call_tool(2, "run_typescript", {
		    "code": "await new Promise(r => setTimeout(r, 5000));\nconsole.log('slept');\n",
		    "timeout_ms": 500})
		msg = server.recv(2)
		took = time.monotonic() - sent
		result = msg["result"]
		sc = result["structuredContent"]
		print("took %s" % ("short" if took < 3.5 else "long (%.1f s)" % took))
		print("timed_out %s exit_status %s isError %s" % (sc["timed_out"], sc["exit_status"],
		                                                   result["isError"]))
		print("text %s" % result["content"][0]["text"].split(" after ")[0])
		print("stdout %r" % sc["stdout"])
		server.call_tool(3, "run_typescript", {"code": "1", "timeout_ms": "x"})
		msg = server.recv(3)
		err = msg.get("error", {})
		print("bad %s %s" % (err.get("code"), "names it" if "timeout_ms" in err.get("message", "")
		                     else err.get("message")))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	for want in 'took short' 'timed_out True exit_status 124 isError True' 'text timed out' \
		"stdout ''" 'bad -32602 names it'; do
		grep -qxF "$want" "$T_DIR/call.out" ||
			fail "timeout_ms: not \"$want\": $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
			return 1
	done
}

# initialize answers with the revision the client asks for when the server speaks it
# (2025-11-25, 2026-07-28), else with the newest it speaks; without initialize, server/discover
# lists the revisions, and a request naming a spoken one in _meta is served (-32022 for one
# not spoken); tools/list carries each tool's title and annotations (search_docs reads only;
# run_typescript reaches the provider).
test_mcp_protocol_versions() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import json, sys
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "0"],
		                stderr=sys.stderr)
		# 2026-07-28's stateless form, before any initialize: server/discover, and requests
		# naming their revision in _meta.
		meta = "io.modelcontextprotocol/protocolVersion"
		server.send({"jsonrpc": "2.0", "id": 20, "method": "server/discover",
		             "params": {"_meta": {meta: "2026-07-28"}}})
		print("discover %s" % " ".join(server.recv(20)["result"]["supportedVersions"]))
		server.send({"jsonrpc": "2.0", "id": 21, "method": "tools/list",
		             "params": {"_meta": {meta: "2026-07-28"}}})
		print("stateless tools/list %d tools" % len(server.recv(21)["result"]["tools"]))
		server.send({"jsonrpc": "2.0", "id": 22, "method": "tools/list",
		             "params": {"_meta": {meta: "1999-01-01"}}})
		err = server.recv(22)["error"]
		print("stateless 1999-01-01 %s %s" % (err["code"], " ".join(err["data"]["supported"])))
		for n, version in enumerate(["2025-11-25", "2026-07-28", "1999-01-01"], 1):
		    server.send({"jsonrpc": "2.0", "id": n, "method": "initialize", "params": {
		        "protocolVersion": version, "capabilities": {},
		        "clientInfo": {"name": "t", "version": "1"}}})
		    print("asked %s got %s" % (version, server.recv(n)["result"]["protocolVersion"]))
		server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
		server.send({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
		for tool in server.recv(9)["result"]["tools"]:
		    print("tool %s titled %s annotations %s" % (
		        tool["name"], "yes" if tool.get("title") else "no",
		        json.dumps(tool.get("annotations"), sort_keys=True)))
		server.close()
	PY
	head -c 2000 "$T_DIR/call.out"
	for want in 'asked 2025-11-25 got 2025-11-25' 'asked 2026-07-28 got 2026-07-28' \
		'asked 1999-01-01 got 2026-07-28' \
		'discover 2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05' \
		'stateless tools/list 2 tools' \
		'stateless 1999-01-01 -32022 2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05' \
		'tool run_typescript titled yes annotations {"openWorldHint": true, "readOnlyHint": false}' \
		'tool search_docs titled yes annotations {"openWorldHint": false, "readOnlyHint": true}'; do
		grep -qxF "$want" "$T_DIR/call.out" ||
			fail "protocol: not \"$want\": $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")" ||
			return 1
	done
}

# One call cannot hurt the server or another call: each bad call (a runtime crash, an
# out-of-memory kill under a 256M limit, a fork bomb under the default task limit, 2 GiB
# written to stdout (queued by Node, and written synchronously), stdout and stderr closed
# early) runs beside a normal call, with two
# call threads and two prepared sandboxes. The normal call prints 42 and exits 0, the bad
# call gets a result, and a ping is answered after each pair.
test_mcp_call_cannot_hurt_another() {
	python3 - "$IT_LAUNCH" "$MCP_MODULES" "$IT_ROOT/policies/stripe.json" "$IT_DIR/fixtures" \
		>"$T_DIR/call.out" 2>"$T_DIR/call.err" <<-'PY'
		import sys, time
		launch, modules, policy, fixtures = sys.argv[1:5]
		sys.path.insert(0, fixtures)
		from mcp_client import Server
		bad = [
		    ("crash", "process.abort();\n"),
		    ("oom", "const a: number[][] = [];\nfor (;;) a.push(new Array(1e6).fill(1));\n"),
		    ("forkbomb", "import { spawn } from 'node:child_process';\n"
		                 "for (;;) { try { spawn('sleep', ['100']).on('error', () => {}); }\n"
		                 "catch { }\n"
		                 "await new Promise((r) => setImmediate(r)); }\n"),
		    ("stdout2g", "const b = 'x'.repeat(1 << 20);\n"
		                 "for (let i = 0; i < 2048; i++) process.stdout.write(b);\n"),
		    # Node queues the writes above and fails (ENOBUFS) before 2 GiB is out: these
		    # go through the pipe (non-blocking: EAGAIN is tried again), every byte of 2 GiB.
		    ("stdout2gsync", "import { writeSync } from 'node:fs';\n"
		                     "const b = Buffer.alloc(1 << 20, 120);\n"
		                     "let n = 0;\n"
		                     "while (n < 2 ** 31) {\n"
		                     "\ttry { n += writeSync(1, b, 0, Math.min(b.length, 2 ** 31 - n)); }\n"
		                     "\tcatch (e: any) { if (e.code !== 'EAGAIN') throw e; }\n"
		                     "}\n"
		                     "console.error('wrote ' + n);\n"),
		    ("closepipes", "import { closeSync } from 'node:fs';\n"
		                   "closeSync(1); closeSync(2);\n"
		                   "await new Promise((r) => setTimeout(r, 1000));\n"),
		]
		server = Server(launch, ["--policy", policy, "--modules", modules, "--pool", "2",
		                         "--max-calls", "2", "--timeout", "20", "--memory-max", "256M"],
		                stderr=sys.stderr)
		server.initialize()
		print("%-12s %-8s %-6s %-8s %-7s %-9s %-7s %s" % ("bad call", "isError", "exit",
		      "signal", "timeout", "stdout", "took_s", "good call"))
		failed, why = False, {}
		for n, (name, code) in enumerate(bad):
		    bad_id, good_id, ping_id = 100 + 3 * n, 101 + 3 * n, 102 + 3 * n
		    start = time.monotonic()
		    server.call_tool(bad_id, "run_typescript", {"code": code, "timeout_ms": 10000})
		    server.call(good_id, "console.log(6 * 7);\n")
		    got = {}
		    while bad_id not in got or good_id not in got:
		        msg = server.recv_any()
		        if msg is None:
		            print("%s: the server ended" % name)
		            sys.exit(1)
		        if msg.get("id") in (bad_id, good_id):
		            got[msg["id"]] = (msg, time.monotonic() - start)
		    server.ping(ping_id)
		    pong = server.recv(ping_id)
		    (b, b_took), (g, _) = got[bad_id], got[good_id]
		    br = b.get("result", {})
		    bs = br.get("structuredContent", {})
		    gs = g.get("result", {}).get("structuredContent", {})
		    good = gs.get("exit_status") == 0 and gs.get("stdout") == "42\n"
		    # A result of any kind: an error, or the code's own end (closed pipes exit 0).
		    bad_ok = "exit_status" in bs
		    print("%-12s %-8s %-6s %-8s %-7s %-9s %-7.1f %s" % (
		        name, br.get("isError"), bs.get("exit_status"), bs.get("signal"),
		        bs.get("timed_out"), len(bs.get("stdout", "")), b_took,
		        "42 exit 0" if good else repr(g)[:300]))
		    errs = [l for l in bs.get("stderr", "").splitlines()
		            if l.startswith(("Error", "wrote")) or "code:" in l]
		    why[name] = " ".join(errs)[:160]
		    if not bad_ok:
		        print("%s: no result: %r" % (name, b)[:500])
		    if not good or not bad_ok or not pong or "result" not in pong:
		        failed = True
		        print("%s: FAILED (ping %r)" % (name, pong))
		for name, line in why.items():
		    print("%-12s stderr: %s" % (name, line))
		server.close()
		print("server exit %s" % server.p.returncode)
		print("all ok" if not failed and server.p.returncode == 0 else "not ok")
	PY
	cat "$T_DIR/call.out"
	grep -qx 'all ok' "$T_DIR/call.out" ||
		fail "a bad call hurt the server or the call beside it: $(brief "$(cat "$T_DIR/call.out" "$T_DIR/call.err")")"
}

# A soak: calls of console.log(1), 4 at a time; the server's RSS and open descriptors stay
# flat after the warm-up, and nothing of the calls is left (tests/integration/fixtures/
# mcp_soak.py). make test runs 60 calls (checkpoints every 6, the first the warm-up);
# make soak 10,000 (every 1,000) with IT_MCP_SOAK_CALLS.
mcp_soak() {
	local calls=$1 step=$2

	python3 "$IT_DIR/fixtures/mcp_soak.py" "$IT_LAUNCH" "$MCP_MODULES" \
		"$IT_ROOT/policies/stripe.json" "$IT_CG2/launch" "$calls" 4 "$step" \
		>"$T_DIR/soak.out" 2>"$T_DIR/soak.err"
	cat "$T_DIR/soak.out"
	grep -qx 'soak ok' "$T_DIR/soak.out" ||
		fail "soak of $calls calls: $(brief "$(tail -n 6 "$T_DIR/soak.out" "$T_DIR/soak.err")")"
}

test_mcp_soak() {
	local calls=${IT_MCP_SOAK_CALLS:-60}

	mcp_soak "$calls" $((calls / 10))
}
