# SPDX-License-Identifier: LGPL-2.1-or-later
# The HTTPS gateway on its own (tests/helpers/gateway_run): an HTTPS stand-in for the providers
# (127.0.6.2:443, a throwaway CA the gateway is told to trust), a second one whose CA it does
# not trust (127.0.6.3:443, files.stripe.com), names from a local dnsmasq. Each refusal is first
# shown to work when the client talks to the stand-in directly.

GW_DNS=127.0.0.53
GW_DNS_PORT=5356
GW_REAL_KEY=sk-real-gateway-test-4f1c9e
GW_ATTACKER_KEY=sk-attacker-own-77aa
GW_STRIPE_KEY=sk-stripe-real-90ab

gw_policy() {
	policy gw '{
  "name": "gw",
  "allow": [
    { "host": "api.openai.com", "ports": [443],
      "http": { "allow": [ { "method": "POST", "path": "/v1/*" },
                           { "method": "GET", "path": "/gw/*" },
                           { "method": "POST", "path": "/gw/*" } ],
                "deny": [ { "path": "/gw/denied*" } ] } },
    { "host": "api.stripe.com", "ports": [443], "http": { "max_body_bytes": 100000 } },
    { "host": "files.stripe.com", "ports": [443], "http": {} },
    { "host": "connect.stripe.com", "ports": [443], "http": {} }
  ],
  "secrets": [ { "name": "OPENAI_API_KEY", "hosts": ["api.openai.com"],
                 "header": "Authorization", "format": "Bearer {}" },
               { "name": "STRIPE_API_KEY", "hosts": ["api.stripe.com"],
                 "header": "x-api-key", "format": "{}" } ]
}'
}

# The stand-ins, dnsmasq and the gateway: GW_PORT, GW_PH (the job's placeholder), GW_CA.
gw_setup() {
	local pol i

	command -v node >/dev/null || fail "node not found (make deps installs nodejs)" || return 1
	[ -x "$IT_HELPERS/gateway_run" ] || fail "gateway_run not built (make helpers)" || return 1
	"$IT_ROOT/tests/standin/make-ca.sh" "$T_DIR/ca" >/dev/null || fail "cannot make the CA" ||
		return 1
	"$IT_ROOT/tests/standin/make-ca.sh" "$T_DIR/ca2" >/dev/null ||
		fail "cannot make the second CA" || return 1
	STANDIN_AUTH_LOG=$T_DIR/auth.log node "$IT_ROOT/tests/standin/server.mjs" \
		"$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" 127.0.6.2 443 "$T_DIR/standin.ready" \
		>"$T_DIR/standin.log" 2>&1 &
	track_pid $!
	node "$IT_ROOT/tests/standin/server.mjs" "$T_DIR/ca2/server.pem" "$T_DIR/ca2/server.key" \
		127.0.6.3 443 "$T_DIR/standin2.ready" >"$T_DIR/standin2.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$GW_DNS" "$GW_DNS_PORT" "$T_DIR/dns.log" \
		--address=/api.openai.com/127.0.6.2 --address=/api.stripe.com/127.0.6.2 \
		--address=/files.stripe.com/127.0.6.3 --address=/connect.stripe.com/127.0.6.4 ||
		return 1
	wait_for_file "$T_DIR/standin.ready" 10 && wait_for_file "$T_DIR/standin2.ready" 10 ||
		fail "the stand-ins did not start: $(brief "$(cat "$T_DIR"/standin*.log)")" ||
		return 1
	pol=$(gw_policy)
	OPENAI_API_KEY=$GW_REAL_KEY STRIPE_API_KEY=$GW_STRIPE_KEY "$IT_HELPERS/gateway_run" --upstream-ca "$T_DIR/ca/ca.pem" \
		--resolver "$GW_DNS:$GW_DNS_PORT" --ca-out "$T_DIR/gwca.pem" "$pol" \
		>"$T_DIR/gw.out" 2>"$T_DIR/gw.err" &
	GW_PID=$!
	track_pid "$GW_PID"
	for ((i = 0; i < 250; i++)); do
		grep -q '^ready$' "$T_DIR/gw.out" && break
		kill -0 "$GW_PID" 2>/dev/null || break
		sleep 0.02
	done
	grep -q '^ready$' "$T_DIR/gw.out" ||
		fail "gateway_run did not start: $(brief "$(cat "$T_DIR/gw.err")")" || return 1
	GW_PORT=$(awk '$1 == "ports" { print $2 }' "$T_DIR/gw.out")
	GW_PH=$(awk '$1 == "placeholder" && $2 == "OPENAI_API_KEY" { print $3 }' "$T_DIR/gw.out")
	GW_STRIPE_PH=$(awk '$1 == "placeholder" && $2 == "STRIPE_API_KEY" { print $3 }' \
		"$T_DIR/gw.out")
	GW_CA=$T_DIR/gwca.pem
	expect_match "placeholder" '^launch-placeholder-[0-9a-f]{32}$' "$GW_PH"
}

# gw_client SNI REQUEST...: through the gateway; output in GW_OUT.
gw_client() {
	local sni=$1

	shift
	GW_OUT=$("$IT_PY" "$IT_HELPERS/../fixtures/gw_client.py" "$GW_CA" 127.0.0.1 "$GW_PORT" \
		"$sni" "$@" 2>&1)
	printf '%s\n' "$GW_OUT" | sed 's/^/  gw: /'
}

# direct SNI REQUEST...: to the stand-in itself, trusting its CA.
direct() {
	local sni=$1

	shift
	GW_OUT=$("$IT_PY" "$IT_HELPERS/../fixtures/gw_client.py" "$T_DIR/ca/ca.pem" 127.0.6.2 443 \
		"$sni" "$@" 2>&1)
	printf '%s\n' "$GW_OUT" | sed 's/^/  direct: /'
}

# The gateway's log lines (JSON) that match a regex.
gw_log() {
	grep '^{' "$T_DIR/gw.out" | grep -E "$1"
}

# A secret's value must be in no log line, no error and no reply the job got.
gw_no_secret_leak() {
	! grep -qE "$GW_REAL_KEY|$GW_STRIPE_KEY" "$T_DIR/gw.out" "$T_DIR/gw.err" ||
		fail "the secret's value is in the gateway's output" || return 1
}

test_gateway_inject() {
	gw_setup || return 1
	gw_client api.openai.com "GET /gw/echo|Authorization: Bearer $GW_PH"
	expect_match "reply" "^200 - .*\"authorization\":\"Bearer $GW_REAL_KEY\"" \
		"$(head -1 <<<"$GW_OUT")" || return 1
	grep -q "GET api.openai.com /gw/echo authorization=Bearer $GW_REAL_KEY" "$T_DIR/auth.log" ||
		fail "the stand-in did not get the real key: $(brief "$(cat "$T_DIR/auth.log")")" ||
		return 1
	expect_match "log" '"decision":"allow","reason":"","secret":"OPENAI_API_KEY"' \
		"$(gw_log '/gw/echo')" || return 1
	grep -q "$GW_PH" "$T_DIR/auth.log" && fail "the placeholder went upstream" && return 1
	# Anthropic's form: the whole header is the key; only its own host gets it.
	gw_client api.stripe.com "GET /gw/echo|x-api-key: $GW_STRIPE_PH"
	expect_match "x-api-key" "^200 - .*\"x_api_key\":\"$GW_STRIPE_KEY\"" \
		"$(head -1 <<<"$GW_OUT")" || return 1
	gw_client api.stripe.com "GET /gw/echo|Authorization: Bearer $GW_PH"
	expect_match "other host's placeholder" '^403 credential ' "$(head -1 <<<"$GW_OUT")" ||
		return 1
	gw_no_secret_leak
}

test_gateway_secret_value() {
	local pol

	pol=$(gw_policy)
	# A value with a line break would write a header of its own upstream: refused at start,
	# the message naming the secret and not its value.
	OPENAI_API_KEY=$'sk-x\r\nX-Injected: 1' STRIPE_API_KEY=ok "$IT_HELPERS/gateway_run" "$pol" \
		>"$T_DIR/gw.out" 2>"$T_DIR/gw.err"
	expect_eq "exit" 125 "$?" || return 1
	expect_match "message" '^gateway_run: secret OPENAI_API_KEY: its value is empty or holds a control character' \
		"$(cat "$T_DIR/gw.err")" || return 1
	grep -q Injected "$T_DIR/gw.err" && fail "the value is in the message" && return 1
	return 0
}

test_gateway_credential() {
	gw_setup || return 1
	# Outside the gateway, the attacker's own key reaches the provider.
	direct api.openai.com "GET /gw/echo|Authorization: Bearer $GW_ATTACKER_KEY"
	grep -q "authorization=Bearer $GW_ATTACKER_KEY" "$T_DIR/auth.log" ||
		fail "the direct request did not reach the stand-in" || return 1
	: >"$T_DIR/auth.log"
	gw_client api.openai.com "GET /gw/echo|Authorization: Bearer $GW_ATTACKER_KEY" \
		"GET /gw/echo|x-api-key: $GW_ATTACKER_KEY" "GET /gw/echo|Cookie: session=1" \
		"GET /gw/echo|Authorization: Bearer $GW_PH"
	expect_lines_of "$GW_OUT" '403 credential .*' '403 credential .*' '403 credential .*' \
		'200 - .*' 'local_port [0-9]+' 'closed no' || return 1
	grep -q "$GW_ATTACKER_KEY" "$T_DIR/auth.log" &&
		fail "the attacker's key reached the stand-in" && return 1
	expect_eq "denied lines" 3 "$(gw_log '"reason":"credential"' | grep -c '"decision":"deny"')"
}

test_gateway_host() {
	gw_setup || return 1
	direct api.openai.com "GET /gw/echo|Host: api.stripe.com"
	expect_match "direct" '^200 ' "$(head -1 <<<"$GW_OUT")" || return 1
	# Another allowed host, an unknown one, inside api.openai.com's session; an SNI of no rule.
	gw_client api.openai.com "GET /gw/echo|Host: api.stripe.com" \
		"GET /gw/echo|Host: attacker.example" "GET /gw/echo|Host: API.OPENAI.COM:443"
	expect_lines_of "$GW_OUT" '403 host .*' '403 host .*' '200 - .*' 'local_port [0-9]+' \
		'closed no' || return 1
	gw_client attacker.example "GET /gw/echo"
	expect_match "unknown SNI" "^status none|certificate verify failed|CERTIFICATE" "$GW_OUT"
}

test_gateway_rule() {
	gw_setup || return 1
	direct api.openai.com "GET /gw/denied"
	expect_match "direct" '^404 ' "$(head -1 <<<"$GW_OUT")" || return 1
	gw_client api.openai.com "GET /gw/denied/x" "DELETE /gw/echo" "GET /gw/echo"
	expect_lines_of "$GW_OUT" '403 rule .*' '403 rule .*' '200 - .*' 'local_port [0-9]+' \
		'closed no' || return 1
	expect_eq "rule lines" 2 "$(gw_log '"reason":"rule"' | grep -c .)"
}

test_gateway_smuggling() {
	gw_setup || return 1
	gw_client api.openai.com \
		'raw:POST /gw/echo HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
	expect_lines_of "$GW_OUT" '400 malformed .*' 'local_port [0-9]+' 'closed yes' || return 1
	gw_client api.openai.com \
		'raw:GET /gw/echo HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'
	expect_lines_of "$GW_OUT" '400 malformed .*' 'local_port [0-9]+' 'closed yes' || return 1
	# obs-fold, a bare LF, a head over 32 KiB: each 400 and closed.
	gw_client api.openai.com \
		'raw:GET /gw/echo HTTP/1.1\r\nHost: api.openai.com\r\nX-A: 1\r\n 2\r\n\r\n'
	expect_lines_of "$GW_OUT" '400 malformed .*' 'local_port [0-9]+' 'closed yes' || return 1
	gw_client api.openai.com $'raw:GET /gw/echo HTTP/1.1\nHost: api.openai.com\r\n\r\n'
	expect_lines_of "$GW_OUT" '400 malformed .*' 'local_port [0-9]+' 'closed yes' || return 1
	gw_client api.openai.com "GET /gw/echo|X-Big: $(head -c 40000 /dev/zero | tr '\0' x)"
	expect_lines_of "$GW_OUT" '400 malformed .*' 'local_port [0-9]+' 'closed yes' || return 1
	[ ! -s "$T_DIR/auth.log" ] || fail "a malformed request went upstream" || return 1
	expect_eq "malformed lines" 5 "$(gw_log '"reason":"malformed"' | grep -c .)"
}

test_gateway_ipv6() {
	local port6

	gw_setup || return 1
	port6=$(awk '$1 == "ports" { print $3 }' "$T_DIR/gw.out")
	GW_OUT=$("$IT_PY" "$IT_HELPERS/../fixtures/gw_client.py" "$GW_CA" ::1 "$port6" \
		api.openai.com "GET /gw/echo|Authorization: Bearer $GW_PH" 2>&1)
	expect_match "through ::1" "^200 - .*\"authorization\":\"Bearer $GW_REAL_KEY\"" \
		"$(head -1 <<<"$GW_OUT")"
}

test_gateway_upstream_tls() {
	gw_setup || return 1
	# The second stand-in answers for files.stripe.com with a certificate of another CA.
	GW_OUT=$("$IT_PY" "$IT_HELPERS/../fixtures/gw_client.py" "$T_DIR/ca2/ca.pem" 127.0.6.3 443 \
		files.stripe.com "GET /gw/echo" 2>&1)
	expect_match "direct" '^200 ' "$(head -1 <<<"$GW_OUT")" || return 1
	gw_client files.stripe.com "GET /gw/echo"
	expect_match "through" '^502 upstream_tls ' "$(head -1 <<<"$GW_OUT")" || return 1
	gw_client api.stripe.com "GET /gw/echo"
	expect_match "trusted" '^200 ' "$(head -1 <<<"$GW_OUT")"
}

test_gateway_sse() {
	local first last

	gw_setup || return 1
	gw_client api.openai.com "sse:/gw/sse?n=5&ms=300"
	expect_eq "events" 5 "$(grep -c '^event ' <<<"$GW_OUT")" || return 1
	first=$(awk '$1 == "event" { print $2; exit }' <<<"$GW_OUT")
	last=$(awk '$1 == "event" { t = $2 } END { print t }' <<<"$GW_OUT")
	# 1.2 s between the first event and the last at the stand-in: streamed, not buffered.
	[ $((last - first)) -ge 1000 ] ||
		fail "events arrived together (first at $first ms, last at $last ms)" || return 1
	[ "$first" -lt 500 ] || fail "the first event took $first ms" || return 1
	# Each event reaches the job soon after the stand-in wrote it (the issue asks for 5 ms
	# from the gateway; 50 here, with the stand-in's and the client's own time in it).
	awk '$1 == "event" && $4 > 50 { bad = bad " " $4 } END { if (bad) { print bad; exit 1 } }' \
		<<<"$GW_OUT" || fail "events arrived late (ms after the stand-in wrote them)" || return 1
	# A job that leaves mid-stream: its request is logged all the same, once.
	"$IT_PY" - "$GW_CA" "$GW_PORT" <<'PY' || fail "the early leaver did not get its first event" || return 1
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[2]))),
                    server_hostname="api.openai.com")
t.sendall(b"GET /gw/sse?n=5&ms=300 HTTP/1.1\r\nHost: api.openai.com\r\n\r\n")
data = b""
while b"data:" not in data:
    data += t.recv(4096)
t.close()
PY
	sleep 0.3
	expect_eq "sse log lines" 2 "$(gw_log '"path":"/gw/sse"' | grep -c '"decision":"allow"')"
}

test_gateway_keepalive() {
	local upstream

	gw_setup || return 1
	gw_client api.openai.com "GET /gw/echo" "GET /gw/echo" "POST /gw/echo|Content-Length: 0"
	expect_lines_of "$GW_OUT" '200 - .*' '200 - .*' '200 - .*' 'local_port [0-9]+' \
		'closed no' || return 1
	upstream=$(grep -o '"client_port":[0-9]*' <<<"$GW_OUT")
	gw_client api.openai.com "GET /gw/echo"
	upstream+=$'\n'$(grep -o '"client_port":[0-9]*' <<<"$GW_OUT")
	# One job connection for the first three; one upstream connection (the pool) for all four.
	expect_eq "job ports" 1 "$(gw_log '/gw/echo' | head -3 | grep -o '"peer_port":[0-9]*' |
		sort -u | wc -l)" || return 1
	expect_eq "upstream connections" "1 4" \
		"$(sort -u <<<"$upstream" | wc -l) $(grep -c . <<<"$upstream")"
}

test_gateway_websocket() {
	gw_setup || return 1
	direct api.openai.com "ws:/gw/ws"
	expect_eq "direct" "ws 101 echo ok" "$(head -1 <<<"$GW_OUT")" || return 1
	# Allowed on /gw/ws; the same upgrade on a denied path is refused before it goes upstream.
	gw_client api.openai.com "ws:/gw/ws"
	expect_eq "through" "ws 101 echo ok" "$(head -1 <<<"$GW_OUT")" || return 1
	gw_client api.openai.com "ws:/gw/denied-ws"
	expect_eq "denied" "ws 403 rule" "$(head -1 <<<"$GW_OUT")"
}

# curl through the gateway: CURL_OUT is "STATUS BODY".
gw_curl() {
	CURL_OUT=$(curl -s --cacert "$GW_CA" --connect-to "$1:443:127.0.0.1:$GW_PORT" \
		-w ' %{http_code}' "${@:2}" 2>&1)
	echo "  curl: $(brief "$CURL_OUT")"
}

test_gateway_body() {
	local post='raw:POST /gw/echo HTTP/1.1\r\nHost: api.stripe.com\r\n'

	gw_setup || return 1
	# Head and body in one write: the body must not be moved over the head as it is rewritten.
	gw_client api.openai.com \
		'raw:POST /gw/echo HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: 5\r\n\r\nhello' \
		'raw:POST /gw/echo HTTP/1.1\r\nHost: api.openai.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'
	expect_lines_of "$GW_OUT" '200 - .*"body_len":5.*' '200 - .*"body_len":3.*' \
		'local_port [0-9]+' 'closed no' || return 1
	head -c 90000 /dev/zero | tr '\0' a >"$T_DIR/body"
	head -c 150000 /dev/zero | tr '\0' b >"$T_DIR/big"
	gw_curl api.stripe.com --data-binary "@$T_DIR/body" https://api.stripe.com/gw/echo
	expect_match "length" '"body_len":90000.* 200$' "$CURL_OUT" || return 1
	gw_curl api.stripe.com -H 'Transfer-Encoding: chunked' --data-binary "@$T_DIR/body" \
		https://api.stripe.com/gw/echo
	expect_match "chunked" '"body_len":90000.* 200$' "$CURL_OUT" || return 1
	[ "$(gw_log '"bytes_out":90000,' | grep -c '"status":200')" -ge 1 ] ||
		fail "no log line with bytes_out 90000: $(brief "$(gw_log 'POST')")" || return 1
	# curl asks for 100 Continue before a body over 1 MiB: the provider's 100 comes through.
	head -c 2000000 /dev/zero | tr '\0' c >"$T_DIR/expect"
	gw_curl api.openai.com --data-binary "@$T_DIR/expect" https://api.openai.com/gw/echo
	expect_match "100 Continue" '"body_len":2000000.* 200$' "$CURL_OUT" || return 1
	# Node.js's own client, trusting the gateway's CA as NODE_EXTRA_CA_CERTS makes it.
	CURL_OUT=$(NODE_EXTRA_CA_CERTS=$GW_CA node -e '
		const https = require("node:https");
		https.get({ host: "127.0.0.1", port: process.argv[1], servername: "api.openai.com",
			    path: "/gw/echo", headers: { host: "api.openai.com" } }, (res) => {
			let b = ""; res.on("data", (d) => { b += d; });
			res.on("end", () => console.log(res.statusCode, b));
		}).on("error", (e) => console.log("error", e.message));' "$GW_PORT" 2>&1)
	expect_match "node" '^200 .*"body_len":0' "$CURL_OUT" || return 1
	# A client that offers h2 by ALPN gets HTTP/1.1: the gateway offers nothing else.
	gw_curl api.openai.com --http2 -o /dev/null -w '%{http_version}' https://api.openai.com/gw/echo
	expect_eq "ALPN" "1.1" "$CURL_OUT" || return 1
	# Over the rule's max_body_bytes (100000): by its length at once, chunked once it is passed.
	# Exactly: the client sends no byte past the one that decides.
	# By its length: the head alone gets the 413, before any of the body is sent.
	gw_client api.stripe.com "$post"'Content-Length: 150000\r\n\r\n'
	expect_lines_of "$GW_OUT" '413 too_large .*max_body_bytes.*' 'local_port [0-9]+' \
		'closed yes' || return 1
	# Chunked: a chunk of 100000 announced, 99994 of it sent; with its size line that is
	# 100001 bytes of body, the last one is the one over the limit, and the request never ends.
	gw_client api.stripe.com "$post"'Transfer-Encoding: chunked\r\n\r\n186a0\r\n'"$(
		head -c 99994 "$T_DIR/big")"
	expect_lines_of "$GW_OUT" '413 too_large .*max_body_bytes.*' 'local_port [0-9]+' \
		'closed yes' || return 1
	# A client that sends its whole body (2 MB, over the limit by its length) before it reads
	# gets the 413: the gateway reads what still comes to nothing before it closes
	# (relay_linger), so that its close is a FIN after the answer; closing with the body
	# unread made the kernel answer with a reset, which failed the client's send.
	CURL_OUT=$("$IT_PY" - "$GW_CA" "$GW_PORT" <<'PY' 2>&1
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
for i in range(3):
    raw = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=10)
    s = ctx.wrap_socket(raw, server_hostname="api.stripe.com")
    body = b"d" * 2000000
    try:
        s.sendall(b"POST /gw/echo HTTP/1.1\r\nHost: api.stripe.com\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        head = s.recv(200).split(b"\r\n")[0].decode()
        print(head)
    except OSError as e:
        print("error", type(e).__name__)
    s.close()
PY
)
	echo "  $CURL_OUT"
	expect_eq "a whole body over the limit, sent before reading" \
		"$(printf 'HTTP/1.1 413 Content Too Large\n%.0s' 1 2 3 | head -c -1)" "$CURL_OUT" ||
		return 1
	# Only the five allowed POSTs reached the stand-in whole.
	expect_eq "requests upstream" 5 "$(grep -c '^POST ' "$T_DIR/auth.log")"
}

test_gateway_conn_limit() {
	gw_setup || return 1
	# 256 connections that never say a word take this sandbox's share; the next one is
	# closed at once, and once they are gone requests go through again.
	GW_OUT=$("$IT_PY" - "$GW_CA" "$GW_PORT" "$IT_HELPERS/../fixtures/gw_client.py" <<'PY' 2>&1
import socket, subprocess, sys, time
ca, port, client = sys.argv[1], int(sys.argv[2]), sys.argv[3]
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(256)]
time.sleep(0.3)
def one():
    out = subprocess.run([sys.executable, client, ca, "127.0.0.1", str(port), "api.openai.com",
                          "GET /gw/echo"], capture_output=True, text=True).stdout
    return out.split("\n")[0][:3] if out.startswith("200") else "refused"
print("full", one())
for s in held:
    s.close()
time.sleep(0.3)
print("after", one())
PY
)
	printf '  limit: %s\n' "$GW_OUT"
	expect_eq "limit" $'full refused\nafter 200' "$GW_OUT"
}

test_gateway_stale_pool() {
	gw_setup || return 1
	"$IT_PY" "$IT_HELPERS/../fixtures/gw_stale.py" "$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" \
		127.0.6.4 443 "$T_DIR/stale.ready" "$T_DIR/stale.log" 2>"$T_DIR/stale.err" &
	track_pid $!
	wait_for_file "$T_DIR/stale.ready" 10 || fail "gw_stale.py did not start" || return 1
	# The second GET rides the pooled connection, which dies unanswered: sent again on a new
	# one. A POST is not (the provider may have acted on it): 502.
	gw_client connect.stripe.com "GET /a" "GET /b" "POST /c|Content-Length: 0"
	expect_lines_of "$GW_OUT" '200 - .*' '200 - .*' '502 upstream .*' 'local_port [0-9]+' \
		'closed yes' || return 1
	expect_eq "server" "$(printf '%s\n' 'conn1 answered GET /a' 'conn1 closed on GET /b' \
		'conn2 answered GET /b' 'conn2 closed on POST /c')" "$(cat "$T_DIR/stale.log")"
}

# expect_lines_of TEXT REGEX...: as expect_lines, on TEXT.
expect_lines_of() {
	# shellcheck disable=SC2034 # read by expect_lines
	local L_OUT=$1

	shift
	expect_lines "gateway client" "$@"
}
