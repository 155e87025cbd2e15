# SPDX-License-Identifier: LGPL-2.1-or-later
# Containment: one test per class of ways out of the sandbox. Each first shows the attempt
# works outside the sandbox (or, where nothing here can answer, what it gives without the
# sandbox), then that it is refused inside, with exactly one deny line where the launcher can
# see the attempt.
#
# The attempts are tables of rows "EXPECTED|PROGRAM ARGS...", as bubblewrap's try-syscall
# tests: PROGRAM is probe (tests/helpers/probe.c: one operation, its errno by name), another
# helper beside it (iouring_connect, flood), a path, or a command in PATH. `probe each` runs
# the rows in order, each in a process of its own and without a shell, outside in the test
# and inside as the job, and prints one line per row: the program's output on one line,
# "EXITn" after it when it failed, "NONE" when it printed nothing. An argument "<FILE" is
# FILE's first line, read when the row runs.

listeners tcp:127.0.0.2:8181 udp:127.0.0.2:8181 tcp:127.0.0.3:8181 udp:127.0.0.3:8181 \
	tcp:127.0.0.1:8181 udp:127.0.0.1:8181 tcp:127.77.0.1:8181 'tcp:[::1]:8181' 'udp:[::1]:8181' \
	'tcp:[2001:db8::1]:8181' 'udp:[2001:db8::1]:8181' 'tcp:[2001:db8::2]:8181' \
	'udp:[2001:db8::2]:8181'
for ((c_i = 1; c_i <= 50; c_i++)); do
	listeners "tcp:127.0.1.$c_i:8080"
done
unset c_i

# Splits rows into their expected results (C_EXPECT) and programs with arguments (C_ROWS).
c_rows() {
	local row

	C_EXPECT=()
	C_ROWS=()
	for row in "$@"; do
		C_EXPECT+=("${row%%|*}")
		C_ROWS+=("${row#*|}")
	done
}

# Compares the result lines in file $2 with C_EXPECT; $1 says where they ran.
c_compare() {
	local where=$1 i bad="" results=()

	mapfile -t results <"$2"
	for i in "${!C_ROWS[@]}"; do
		echo "$where: ${C_ROWS[$i]} -> ${results[$i]:-nothing}"
		[ "${results[$i]:-MISSING}" = "${C_EXPECT[$i]}" ] ||
			bad+="${bad:+; }${C_ROWS[$i]}: expected ${C_EXPECT[$i]}, got ${results[$i]:-nothing}"
	done
	[ -z "$bad" ] || fail "$where the sandbox: $bad"
}

# c_outside ROW...: each row, run here, outside any sandbox, prints its EXPECTED.
c_outside() {
	local C_EXPECT C_ROWS

	c_rows "$@"
	"$IT_PROBE" each "${C_ROWS[@]}" >"$T_DIR/outside.results"
	c_compare outside "$T_DIR/outside.results"
}

# c_inside LAUNCH_OPTIONS... -- ROW...: all rows in one sandbox, in order; the job itself
# must exit 0.
c_inside() {
	local opts=()

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	c_rows "$@"
	launch_job "${opts[@]}" -- "$IT_PROBE" each "${C_ROWS[@]}"
	[ "$L_RC" = 0 ] || fail "inside: launch exited $L_RC (stderr: $(brief "$L_ERR"))" || return 1
	c_compare inside "$L_OUT_FILE"
}

# c_inside_gated LAUNCH_OPTIONS... -- ROW...: as c_inside, in the background: the job says
# "ready" in $T_DIR/ready and waits for $T_DIR/go before its rows, then says "done" in
# $T_DIR/done and waits for $T_DIR/go2 before it exits. c_gate_wait waits for a word.
c_inside_gated() {
	local opts=()

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	c_rows "$@"
	rm -f "$T_DIR/ready" "$T_DIR/go" "$T_DIR/done" "$T_DIR/go2"
	launch_bg "${opts[@]}" -- /bin/sh -c 'd=$1
		shift
		echo ready >"$d/ready"
		while [ ! -e "$d/go" ]; do sleep 0.01; done
		"$0" each "$@"
		echo done >"$d/done"
		while [ ! -e "$d/go2" ]; do sleep 0.01; done' "$IT_PROBE" "$T_DIR" "${C_ROWS[@]}"
}

c_gate_wait() {
	wait_for_file "$T_DIR/$1" 15 && return 0
	kill -KILL "$L_PID" 2>/dev/null
	fail "the job never said $1 (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
}

# Bytes a listener has received (all of them count: a leak is a leak).
c_bytes() {
	local path

	path=$(listener_file "$@")
	[ -f "$path" ] || {
		echo -1
		return
	}
	stat -c %s "$path"
}

# c_expect_bytes PROTO ADDR PORT N: after a moment for stragglers, exactly N bytes received.
c_expect_bytes() {
	local got

	sleep 0.2
	got=$(c_bytes "$1" "$2" "$3")
	[ "$got" = "$4" ] || fail "listener $1 $2:$3 received $got bytes, expected $4"
}

# c_deny_ip FILE OP PROTOCOL ADDR PORT: deny lines for that destination (the address compared
# as an address, whatever its spelling; for UDP, IPv4-mapped as the IPv4 address).
c_deny_ip() {
	"$IT_PY" - "$@" <<'EOF'
import ipaddress, json, sys
path, op, proto, addr, port = sys.argv[1:]
def norm(text):
    # A UDP datagram to ::ffff:a.b.c.d leaves through the IPv4 stack and is judged there.
    a = ipaddress.ip_address(text)
    return a.ipv4_mapped if proto == "udp" and a.version == 6 and a.ipv4_mapped else a
want = norm(addr)
n = 0
for line in open(path):
    try:
        e = json.loads(line)
        if (e.get("event") == "deny" and e.get("op") == op and e.get("protocol") == proto
                and e.get("dst_port") == int(port) and norm(e["dst_ip"]) == want):
            n += 1
    except Exception:
        pass
print(n)
EOF
}

# c_expect_deny_ip N FILE OP PROTOCOL ADDR PORT
c_expect_deny_ip() {
	local want=$1 got

	shift
	got=$(c_deny_ip "$@")
	[ "$got" = "$want" ] ||
		fail "audit log: $got deny line(s) op=$2 protocol=$3 to $4 port $5, expected $want"
}

# Whether BPF programs are attached to cgroup DIR for its connect4 hook (launch attaches them
# without a link: they go only with the cgroup).
c_attached() {
	bpftool cgroup show "$1" 2>/dev/null | grep -q connect4
}

# What of sandbox NAME is left: its cgroup, anything in bpffs, its lock file, and processes
# whose command line contains MARKER (if given). Prints one word per leftover; nothing when
# clean.
c_leftovers() {
	local name=$1 marker=${2:-} d p

	[ ! -e "$IT_CG2/launch/$name" ] || echo "cgroup:$IT_CG2/launch/$name"
	for p in $(bpffs_named "$name"); do echo "pins:$p"; done
	[ ! -e "/run/launch/$name.lock" ] || echo "lock:/run/launch/$name.lock"
	[ -n "$marker" ] || return 0
	for d in $(pgrep -f -- "$marker"); do
		[ "$(proc_state "$d")" != Z ] || continue
		echo "process:$d:$(tr '\0' ' ' <"/proc/$d/cmdline" 2>/dev/null)"
	done
	return 0
}

# After its launcher was SIGKILLed, takes sandbox NAME's lock (on descriptor 8), as a live
# launcher would: every launch run on this host sweeps dead sandboxes, and this test wants to
# see what is left before its own `launch gc`. c_unlock lets go (before that gc, which must
# not inherit it).
c_lock() {
	[ -e "/run/launch/$1.lock" ] || fail "the killed launcher left no /run/launch/$1.lock" ||
		return 1
	exec 8<>"/run/launch/$1.lock"
	flock -n 8 || fail "another launch is sweeping sandbox $1 already" || return 1
}

c_unlock() {
	exec 8>&-
}

# --- 1. address tricks -----------------------------------------------------------------------

# Addresses that mean something other than they seem: IPv4-mapped IPv6 (judged as the IPv4
# address it maps), IPv4-compatible and NAT64 IPv6 (never as the IPv4 address they embed),
# 0.0.0.0 and :: (which reach local listeners), all of 127.0.0.0/8 and ::1, and the cloud
# metadata addresses, unless a rule allows them. The netns has no route beyond lo, so the
# attempts at compat, NAT64 and metadata addresses fail outside with ENETUNREACH without a
# packet leaving: inside they must fail earlier, with EPERM and a deny line; and a policy that
# allows the metadata addresses lets the attempt reach routing (ENETUNREACH) again.
test_contain_address_tricks() {
	local p pm t3 u3 t1 u1 t77 t61 u61 spec op proto addr port n=0

	t1=$(received tcp 127.0.0.1 8181)
	u1=$(received udp 127.0.0.1 8181)
	t61=$(received tcp ::1 8181)
	u61=$(received udp ::1 8181)
	p=$(policy tricks '{"name": "tricks", "allow": [
		{"cidr": "127.0.0.2", "ports": [8181], "protocol": "any"},
		{"cidr": "2001:db8::1", "ports": [8181], "protocol": "any"}]}')
	c_outside 'OK|probe tcp ::ffff:127.0.0.3 8181' 'OK|probe udp ::ffff:127.0.0.3 8181' \
		'OK|probe tcp 0.0.0.0 8181' 'OK|probe udp 0.0.0.0 8181' 'OK|probe tcp :: 8181' \
		'OK|probe udp :: 8181' 'OK|probe tcp 127.0.0.1 8181' 'OK|probe tcp 127.77.0.1 8181' \
		'OK|probe tcp ::1 8181' 'OK|probe udp ::1 8181' \
		'ENETUNREACH|probe tcp ::127.0.0.2 8181' 'ENETUNREACH|probe tcp 64:ff9b::127.0.0.2 8181' \
		'ENETUNREACH|probe udp 64:ff9b::127.0.0.2 8181' \
		'ENETUNREACH|probe tcp 169.254.169.254 80' 'ENETUNREACH|probe udp 169.254.169.254 80' \
		'ENETUNREACH|probe tcp fd00:ec2::254 80' 'ENETUNREACH|probe tcp ::ffff:169.254.169.254 80' ||
		return 1
	# 0.0.0.0 reached 127.0.0.1 and :: reached ::1: the listeners there got them.
	expect_received tcp 127.0.0.1 8181 $((t1 + 2)) || return 1
	expect_received udp 127.0.0.1 8181 $((u1 + 1)) || return 1
	expect_received tcp ::1 8181 $((t61 + 2)) || return 1
	expect_received udp ::1 8181 $((u61 + 2)) || return 1
	t3=$(c_bytes tcp 127.0.0.3 8181)
	u3=$(c_bytes udp 127.0.0.3 8181)
	t1=$(c_bytes tcp 127.0.0.1 8181)
	u1=$(c_bytes udp 127.0.0.1 8181)
	t77=$(c_bytes tcp 127.77.0.1 8181)
	t61=$(c_bytes tcp ::1 8181)
	u61=$(c_bytes udp ::1 8181)

	local refused=('tcp ::ffff:127.0.0.3 8181' 'udp ::ffff:127.0.0.3 8181'
		'tcp 0.0.0.0 8181' 'udp 0.0.0.0 8181' 'tcp :: 8181' 'udp :: 8181'
		'tcp 127.0.0.1 8181' 'udp 127.0.0.1 8181' 'tcp 127.77.0.1 8181' 'tcp ::1 8181'
		'udp ::1 8181' 'tcp ::127.0.0.2 8181' 'tcp 64:ff9b::127.0.0.2 8181'
		'udp 64:ff9b::127.0.0.2 8181' 'tcp 169.254.169.254 80' 'udp 169.254.169.254 80'
		'tcp fd00:ec2::254 80' 'udp fd00:ec2::254 80' 'tcp ::ffff:169.254.169.254 80')
	local specs=('OK|probe tcp 127.0.0.2 8181' 'OK|probe tcp ::ffff:127.0.0.2 8181'
		'OK|probe udp ::ffff:127.0.0.2 8181' 'OK|probe tcp 2001:db8::1 8181')
	for spec in "${refused[@]}"; do
		specs+=("EPERM|probe $spec")
	done
	c_inside --policy "$p" -- "${specs[@]}" || return 1
	audit_check || return 1
	for spec in "${refused[@]}"; do
		read -r proto addr port <<<"$spec"
		op=connect
		[ "$proto" = tcp ] || op=sendmsg
		c_expect_deny_ip 1 "$L_AUDIT" "$op" "$proto" "$addr" "$port" || return 1
		n=$((n + 1))
	done
	expect_audit "$n" "$L_AUDIT" event=deny || return 1
	c_expect_bytes tcp 127.0.0.3 8181 "$t3" || return 1
	c_expect_bytes udp 127.0.0.3 8181 "$u3" || return 1
	c_expect_bytes tcp 127.0.0.1 8181 "$t1" || return 1
	c_expect_bytes udp 127.0.0.1 8181 "$u1" || return 1
	c_expect_bytes tcp 127.77.0.1 8181 "$t77" || return 1
	c_expect_bytes tcp ::1 8181 "$t61" || return 1
	c_expect_bytes udp ::1 8181 "$u61" || return 1

	# Explicitly allowed, the metadata addresses pass the sandbox (and meet the missing route).
	pm=$(policy meta '{"name": "meta", "allow": [
		{"cidr": "169.254.169.254", "ports": [80]},
		{"cidr": "fd00:ec2::254", "ports": [80]},
		{"cidr": "127.0.0.0/8", "ports": [8181]}]}')
	c_inside --policy "$pm" -- 'ENETUNREACH|probe tcp 169.254.169.254 80' \
		'ENETUNREACH|probe tcp fd00:ec2::254 80' 'EPERM|probe tcp 169.254.169.254 81' \
		'OK|probe tcp 127.77.0.1 8181' 'EPERM|probe tcp ::1 8181' || return 1
	expect_audit 2 "$L_AUDIT" event=deny || return 1
}

# --- 2. other ways to send --------------------------------------------------------------------

# Every way to name a destination other than connect(): sendto, sendmsg and sendmmsg on
# unconnected UDP sockets (IPv4 and IPv6), TCP Fast Open (the SYN leaves from sendto), a
# connect issued by io_uring (io_uring is refused when it is set up), and a UDP socket
# connected to an allowed peer, then connected again elsewhere or given another address.
test_contain_send_paths() {
	local p t3 u3 t62 u62 a
	local v4=127.0.0.3 v6=2001:db8::2

	p=$(policy send '{"name": "send", "allow": [
		{"cidr": "127.0.0.2", "ports": [8181], "protocol": "any"},
		{"cidr": "2001:db8::1", "ports": [8181], "protocol": "any"}]}')
	t3=$(received tcp $v4 8181)
	u3=$(received udp $v4 8181)
	t62=$(received tcp $v6 8181)
	u62=$(received udp $v6 8181)
	c_outside "OK|probe udp $v4 8181" "OK|probe udp-sendmsg $v4 8181" \
		"OK|probe udp-sendmmsg $v4 8181" "OK|probe udp $v6 8181" \
		"OK|probe udp-sendmsg $v6 8181" "OK|probe udp-sendmmsg $v6 8181" \
		"OK|probe tcp-fastopen $v4 8181" "OK|probe tcp-fastopen $v6 8181" \
		"OK|iouring_connect $v4 8181" "OK|iouring_connect $v6 8181" \
		"OK|probe reconnect 127.0.0.2 8181 $v4 8181" \
		"OK|probe reconnect 2001:db8::1 8181 $v6 8181" \
		"OK|probe udpconn-sendto 127.0.0.2 8181 $v4 8181" || return 1
	# sendmmsg sends two datagrams.
	expect_received udp $v4 8181 $((u3 + 6)) || return 1
	expect_received udp $v6 8181 $((u62 + 5)) || return 1
	expect_received tcp $v4 8181 $((t3 + 2)) || return 1
	expect_received tcp $v6 8181 $((t62 + 2)) || return 1
	t3=$(c_bytes tcp $v4 8181)
	u3=$(c_bytes udp $v4 8181)
	t62=$(c_bytes tcp $v6 8181)
	u62=$(c_bytes udp $v6 8181)

	c_inside --policy "$p" -- 'OK|probe udp 127.0.0.2 8181' 'OK|probe udp-sendmmsg 2001:db8::1 8181' \
		'OK|probe tcp-fastopen 127.0.0.2 8181' 'OK|probe reconnect 127.0.0.2 8181 127.0.0.2 8181' \
		"EPERM|probe udp $v4 8181" "EPERM|probe udp-sendmsg $v4 8181" \
		"EPERM|probe udp-sendmmsg $v4 8181" "EPERM|probe udp $v6 8181" \
		"EPERM|probe udp-sendmsg $v6 8181" "EPERM|probe udp-sendmmsg $v6 8181" \
		"EPERM|probe tcp-fastopen $v4 8181" "EPERM|probe tcp-fastopen $v6 8181" \
		"EPERM|iouring_connect $v4 8181" "EPERM|iouring_connect $v6 8181" \
		"EPERM|probe reconnect 127.0.0.2 8181 $v4 8181" \
		"EPERM|probe reconnect 2001:db8::1 8181 $v6 8181" \
		"EPERM|probe udpconn-sendto 127.0.0.2 8181 $v4 8181" || return 1
	audit_check || return 1
	# udp, udp-sendmsg, udp-sendmmsg (its first datagram fails the call), and for IPv4
	# udpconn-sendto.
	c_expect_deny_ip 4 "$L_AUDIT" sendmsg udp $v4 8181 || return 1
	c_expect_deny_ip 3 "$L_AUDIT" sendmsg udp $v6 8181 || return 1
	for a in $v4 $v6; do
		# TCP Fast Open's SYN is judged as a connect.
		c_expect_deny_ip 1 "$L_AUDIT" connect tcp "$a" 8181 || return 1
		# The second connect of reconnect.
		c_expect_deny_ip 1 "$L_AUDIT" connect udp "$a" 8181 || return 1
	done
	expect_audit 2 "$L_AUDIT" event=deny op=io_uring comm=iouring_connect || return 1
	expect_audit 13 "$L_AUDIT" event=deny || return 1
	c_expect_bytes tcp $v4 8181 "$t3" || return 1
	c_expect_bytes udp $v4 8181 "$u3" || return 1
	c_expect_bytes tcp $v6 8181 "$t62" || return 1
	c_expect_bytes udp $v6 8181 "$u62" || return 1
}

# --- 3. other socket kinds --------------------------------------------------------------------

# Sockets whose traffic no connect/sendmsg hook judges are refused when they are created:
# raw (IPv4, IPv6, IPPROTO_RAW, SOCK_PACKET), ICMP "ping" sockets (run opens
# ping_group_range in the netns, so only the sandbox stops them), TCP-like protocols other
# than TCP (MPTCP) and UDP-Lite, AF_PACKET, and every family besides unix, inet, inet6 and
# netlink: vsock and XDP (built into this kernel), TIPC, RDS, SMC, ALG and PF_KEY (which are
# not: outside they fail with EAFNOSUPPORT, inside the sandbox refuses them first). Nothing
# is ever sent on them.
test_contain_socket_kinds() {
	local p range spec fam type
	local kinds=('inet raw icmp' 'inet6 raw icmpv6' 'inet raw raw' 'inet 10 all'
		'inet dgram icmp' 'inet6 dgram icmpv6' 'inet stream 262' 'inet dgram udplite'
		'packet raw all' 'packet dgram all' '40 stream 0' '40 seqpacket 0' '44 raw 0')
	local absent=('30 rdm 0' '21 seqpacket 0' '43 stream 0' '38 seqpacket 0' '15 raw 2')
	local specs=() inside_specs=()

	range=$(sysctl -n net.ipv4.ping_group_range | tr -s '\t ' ' ')
	expect_eq "net.ipv4.ping_group_range in the test netns" "0 2147483647" "$range" || return 1
	for spec in "${kinds[@]}"; do
		specs+=("OK|probe socket $spec")
		inside_specs+=("EPERM|probe socket $spec")
	done
	for spec in "${absent[@]}"; do
		specs+=("EAFNOSUPPORT|probe socket $spec")
		inside_specs+=("EPERM|probe socket $spec")
	done
	specs+=('EOPNOTSUPP|probe socketpair inet6 dgram 0'
		'ESOCKTNOSUPPORT|probe socketpair packet seqpacket 0')
	inside_specs+=('EPERM|probe socketpair inet6 dgram 0' 'EPERM|probe socketpair packet seqpacket 0')
	c_outside "${specs[@]}" || return 1

	p=$(policy kinds '{"name": "kinds", "allow": [{"cidr": "127.0.0.2", "ports": [8181]}]}')
	c_inside --policy "$p" -- "${inside_specs[@]}" 'OK|probe socket inet stream tcp' \
		'OK|probe socket inet6 dgram udp' 'OK|probe socket netlink raw 0' \
		'OK|probe socket unix seqpacket 0' 'OK|probe socketpair unix dgram 0' \
		'OK|probe tcp 127.0.0.2 8181' || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=raw protocol=icmp || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv6 type=raw protocol=icmpv6 ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=raw protocol=raw || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=10 || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=dgram protocol=icmp ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv6 type=dgram protocol=icmpv6 ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=stream protocol=mptcp ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=dgram protocol=udplite ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=packet type=raw || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=packet type=dgram || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=vsock type=stream || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=vsock type=seqpacket || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=xdp type=raw || return 1
	for spec in "${absent[@]}"; do
		read -r fam type _ <<<"$spec"
		expect_audit 1 "$L_AUDIT" event=deny op=socket family="$fam" type="$type" || return 1
	done
	# The two socketpair calls.
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv6 type=dgram protocol=0 || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=packet type=seqpacket || return 1
	expect_audit $((${#kinds[@]} + ${#absent[@]} + 2)) "$L_AUDIT" event=deny || return 1
	expect_audit "$((${#kinds[@]} + ${#absent[@]} + 2))" "$L_AUDIT" event=deny op=socket ||
		return 1
}

# --- 4. local doors ---------------------------------------------------------------------------

# Messages a listener of fixtures/unix_listen.py received.
c_unix_count() {
	grep -c '^hello$' "$1/$2.log" 2>/dev/null || echo 0
}

# AF_UNIX connect and sendmsg: refused unless the policy names the path or abstract name, or
# the path is in the job's private /tmp. A path that only looks private (/tmp/..) is refused
# by the hook, and a symlink planted in /tmp is not followed (nosymfollow), so the private
# /tmp never leads anywhere else.
test_contain_local_doors() {
	local d=$T_DIR/s ab="launch-it-$IT_RUNID-$BASHPID" p pid sneaky
	local before_other before_odgram before_aother

	mkdir -p "$d"
	# Unix-socket listeners outside the sandbox, in the test's directory.
	"$IT_PY" "$IT_FIX/unix_listen.py" "$d" "stream:$d/allowed.sock" "stream:$d/other.sock" \
		"dgram:$d/allowed.dgram" "dgram:$d/other.dgram" "stream:@$ab-allowed" \
		"stream:@$ab-other" 2>"$T_DIR/unix_listen.err" &
	pid=$!
	track_pid "$pid"
	wait_for_file "$d/ready" 10 ||
		fail "unix listeners did not start: $(brief "$(cat "$T_DIR/unix_listen.err")")" ||
		return 1
	ln -s "$d/other.sock" "$T_DIR/link.sock"
	sneaky=/tmp/..$d/other.sock

	c_outside "OK|probe unix $d/allowed.sock" "OK|probe unix $d/other.sock" \
		"OK|probe unix @$ab-other" "OK|probe unix-dgram $d/other.dgram" \
		"OK|probe unix $T_DIR/link.sock" "OK|probe unix $sneaky" \
		"OK|probe unix-at $d other.sock" || return 1
	expect_eq "messages on other.sock outside" 4 "$(c_unix_count "$d" other.sock)" || return 1
	before_other=$(c_unix_count "$d" other.sock)
	before_odgram=$(c_unix_count "$d" other.dgram)
	before_aother=$(c_unix_count "$d" "$ab-other")

	p=$(policy doors "{\"name\": \"doors\", \"allow\": [],
		\"unix\": [\"$d/allowed.sock\", \"$d/allowed.dgram\", \"@$ab-allowed\"]}")
	c_inside --policy "$p" -- "OK|probe unix $d/allowed.sock" "OK|probe unix @$ab-allowed" \
		"OK|probe unix-dgram $d/allowed.dgram" "OK|probe unix-self /tmp/own.sock" \
		"EPERM|probe unix-self @$ab-own" \
		"EPERM|probe unix $d/other.sock" "EPERM|probe unix @$ab-other" \
		"EPERM|probe unix-dgram $d/other.dgram" "EPERM|probe unix $T_DIR/link.sock" \
		"EPERM|probe unix $sneaky" "EPERM|probe unix-at $d other.sock" \
		"ELOOP|probe unix-via-link $d/other.sock /tmp/door.sock" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix family=unix dst_path="$d/other.sock" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix dst_path="@$ab-other" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=sendmsg_unix type=dgram dst_path="$d/other.dgram" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix dst_path="$T_DIR/link.sock" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix dst_path="$sneaky" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix dst_path=other.sock || return 1
	# The abstract namespace belongs to the network namespace, shared with the host: even
	# the job's own abstract socket is judged, and refused as soon as it would listen (any
	# process of the host could connect to it: test_inbound.sh).
	expect_audit 1 "$L_AUDIT" event=deny op=listen path="@$ab-own" reason=abstract || return 1
	# The planted link passed the hook (it is under /tmp) and the mount refused to follow it.
	expect_audit 0 "$L_AUDIT" event=deny dst_path=/tmp/door.sock || return 1
	expect_audit 7 "$L_AUDIT" event=deny || return 1
	expect_eq "messages on allowed.sock" 2 "$(c_unix_count "$d" allowed.sock)" || return 1
	expect_eq "messages on @allowed" 1 "$(c_unix_count "$d" "$ab-allowed")" || return 1
	expect_eq "messages on allowed.dgram" 1 "$(c_unix_count "$d" allowed.dgram)" || return 1
	expect_eq "messages on other.sock" "$before_other" "$(c_unix_count "$d" other.sock)" ||
		return 1
	expect_eq "messages on other.dgram" "$before_odgram" "$(c_unix_count "$d" other.dgram)" ||
		return 1
	expect_eq "messages on @other" "$before_aother" "$(c_unix_count "$d" "$ab-other")"
}

# --- 5. leaving the cgroup --------------------------------------------------------------------

# The job, uid 0 without capabilities, tries to move itself into the root, parent and a
# sibling cgroup (every cgroup.procs write works outside, as measured here: the hierarchy
# has no nsdelegate), to make a child cgroup, to mount a fresh cgroup2 or make the mount
# writable, to detach its cgroup's programs (BPF_PROG_DETACH asks for no capability, only the
# cgroup's directory: the job's mount namespace has no cgroup2 mount at all), to get a handle
# on a BPF program, and to gain privilege in a new
# user namespace (unshare(1), unshare(2), clone(2); clone3 is not available at all). After
# all that it is still in its sandbox's cgroup.
test_contain_cgroup_exit() {
	local root=$IT_CG2 sib mk

	sib=$IT_CG2/launch-it-$IT_RUNID-sibling
	mk=$IT_CG2/launch-it-$IT_RUNID-mkdir
	mkdir -p "$sib" "$T_DIR/cgmnt"
	c_cgroup_exit_run "$sib" "$mk" "$root"
	local rc=$?
	rmdir "$sib" 2>/dev/null
	return $rc
}

c_cgroup_exit_run() {
	local sib=$1 mk=$2 root=$3 p pid cg mounts

	# Writable cgroup (v1 or v2) mounts and bpffs mounts in mountinfo.
	mounts=$("$IT_PROBE" cgroup-mounts)
	echo "outside: writable cgroup mounts, bpffs mounts: $mounts"
	[[ $mounts =~ ^[1-9][0-9]*\ [1-9] ]] ||
		fail "outside, expected writable cgroup mounts and a bpffs, found '$mounts'" || return 1
	c_outside "OK|probe write $root/cgroup.procs 0" "OK|probe write $sib/cgroup.procs 0" \
		"OK|probe mkdir $mk" "OK|probe mount-cgroup2 $T_DIR/cgmnt" \
		"OK|probe remount-rw $root" 'OK|probe userns-unshare' 'OK|probe userns-clone' \
		'OK|probe userns-clone3' 'NONE|/usr/bin/unshare -U /bin/true' 'OK|probe bpf-prog-next' || return 1

	p=$(policy cg '{"name": "cg", "allow": [{"cidr": "127.0.0.2", "ports": [8181]}]}')
	# The name launch_bg will draw (launch_next_names), needed in the job's commands.
	local name=it$IT_RUNID-$BASHPID-$((L_N + 1))
	# uid 0 (no capability): the owner of every cgroup file, were one in view.
	c_inside_gated --user root --policy "$p" -- \
		"ENOENT|probe write $root/cgroup.procs 0" \
		"ENOENT|probe write $root/launch/cgroup.procs 0" \
		"ENOENT|probe write $sib/cgroup.procs 0" \
		"ENOENT|probe write $root/launch/$name/cgroup.procs 0" \
		"ENOENT|probe mkdir $root/launch/$name/escape" \
		"EPERM|probe mount-cgroup2 /tmp" "ENOENT|probe remount-rw $root" \
		"ENOENT|probe bpf-detach $root/launch/$name" 'EPERM|probe bpf-prog-next' \
		'EPERM|probe userns-unshare' 'EPERM|probe userns-clone' 'ENOSYS|probe userns-clone3' \
		'EXIT1|/usr/bin/unshare -U /bin/true' '0::/|probe cgroup-v2' \
		'0 0|probe cgroup-mounts'
	[ "$L_NAME" = "$name" ] || fail "internal: sandbox name $L_NAME, expected $name" || return 1
	c_gate_wait ready || return 1
	# While the sandbox runs, its programs are attached to its cgroup.
	c_attached "$root/launch/$name" || fail "no program attached to $root/launch/$name" ||
		return 1
	: >"$T_DIR/go"
	c_gate_wait "done" || return 1
	pid=$(find_pids sh "$name/escape")
	[[ $pid =~ ^[0-9]+$ ]] || fail "cannot find the job's shell (found '$pid')" || return 1
	cg=$(cgroup_v2_path "/proc/$pid/cgroup")
	: >"$T_DIR/go2"
	launch_bg_wait 10 || return 1
	expect_rc "job" 0 || return 1
	expect_eq "the job's cgroup after its attempts" "/launch/$name" "$cg" || return 1
	c_compare inside "$L_OUT_FILE" || return 1
	[ ! -e "$mk" ] || fail "$mk exists" || return 1
	c_detach_outside || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=userns comm=unshare || return 1
	expect_audit 2 "$L_AUDIT" event=deny op=userns comm=probe || return 1
	expect_audit 3 "$L_AUDIT" event=deny || return 1
}

# Why the job may see no cgroup2 mount: outside, a process without any capability (uid 0 with
# the securebits that keep root from regaining them) detaches launch's connect4 program,
# attached without a link as launch attaches it, from a scratch cgroup it can open.
c_detach_outside() {
	local scratch=$IT_CG2/launch-it-$IT_RUNID-detach holder id got

	holder=$(find "$IT_CG2/launch" -mindepth 1 -maxdepth 1 -name '.bpf-*' | head -n1)
	id=$(bpftool cgroup show "$holder" | awk '$2 == "cgroup_inet4_connect" { print $1 }')
	[ -n "$id" ] || fail "no connect4 program on the holder '$holder'" || return 1
	mkdir "$scratch" && bpftool cgroup attach "$scratch" connect4 id "$id" ||
		fail "cannot attach program $id to $scratch" || return 1
	got=$(setpriv --securebits +noroot,+noroot_locked,+no_setuid_fixup --bounding-set -all \
		--inh-caps -all --ambient-caps -all -- "$IT_PROBE" bpf-detach "$scratch")
	echo "outside, without capabilities: bpf-detach $scratch -> $got"
	bpftool cgroup show "$scratch" | grep -q connect4 && got="$got, still attached"
	rmdir "$scratch"
	expect_eq "bpf-detach without capabilities, outside" OK "$got"
}

# --- 6. inherited power -----------------------------------------------------------------------

# No capability in any set, no_new_privs and seccomp; a setuid-root helper gains nothing
# (outside, run as nobody, it becomes root with every capability and opens a raw socket); no
# descriptor of the launcher's (it holds BPF maps; the job sees 0, 1, 2); init's memory and
# descriptors are closed to the job; and the launcher cannot be seen, signalled, traced or
# read from inside (the PID namespace: it has no PID there).
test_contain_inherited_power() {
	local p suid sleeper lpid fds out

	p=$(policy power '{"name": "power", "allow": [{"cidr": "127.0.0.2", "ports": [8181]}]}')
	suid=$T_DIR/suid/setuid_raw
	mkdir -p "$T_DIR/suid"
	cp "$IT_HELPERS/setuid_raw" "$suid" || fail "no $IT_HELPERS/setuid_raw (make helpers)" ||
		return 1
	chown 0:0 "$suid" && chmod 4755 "$suid" || fail "cannot make $suid setuid root" || return 1

	# Outside: something to lose.
	[ "$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)" != 0000000000000000 ] ||
		fail "the test itself has an empty bounding set: cannot tell" || return 1
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$suid" 2>&1)
	echo "outside, as nobody: $out"
	expect_match "setuid helper outside, as nobody" '^euid=0 capeff=[0-9a-f]*[1-9a-f][0-9a-f]* raw=OK$' \
		"$out" || return 1
	sleep 1000 &
	sleeper=$!
	track_pid "$sleeper"

	local zero=0000000000000000
	# The caller leaves a descriptor (7) open: the launcher has it, the job must not.
	c_inside_gated --user root --policy "$p" -- "$zero $zero $zero $zero $zero 1 2|probe status-caps" \
		"euid=0 capeff=$zero raw=EPERM|$suid" '0 1 2|probe fds' \
		'EACCES|probe readmem 1' 'EPERM|probe ptrace 1' 'EACCES|probe readlink /proc/1/fd/3' \
		'EACCES|probe open /proc/1/fd/3' 'EACCES|probe open /proc/1/fd/4' \
		"ESRCH|probe kill0 <$T_DIR/launcher.pid" "ESRCH|probe ptrace <$T_DIR/launcher.pid" \
		"ENOENT|probe readmem <$T_DIR/launcher.pid" \
		"ENOENT|probe pid-visible <$T_DIR/launcher.pid" \
		7>"$T_DIR/inherited"
	c_gate_wait ready || return 1
	lpid=$L_PID
	echo "$lpid" >"$T_DIR/launcher.pid"
	# Outside, the launcher can be signalled, traced (a process of the same uid is) and read,
	# and it holds BPF maps.
	c_outside "OK|probe kill0 $lpid" "OK|probe readmem $lpid" "OK|probe ptrace $sleeper" \
		"OK|probe readlink /proc/$lpid/fd/7" "OK|probe open /proc/$lpid/fd/7" || return 1
	fds=$(ls -ln "/proc/$lpid/fd" 2>/dev/null)
	[[ $fds == *anon_inode:bpf-map* ]] ||
		fail "the launcher holds no BPF map descriptor: nothing to leak" || return 1
	[[ $fds == *" 7 -> $T_DIR/inherited"* ]] ||
		fail "the launcher did not inherit descriptor 7: $(brief "$fds")" || return 1
	: >"$T_DIR/go"
	c_gate_wait "done" || return 1
	: >"$T_DIR/go2"
	launch_bg_wait 10 || return 1
	expect_rc "job" 0 || return 1
	c_compare inside "$L_OUT_FILE" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=raw comm=setuid_raw uid=0 ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1

	# As nobody, the setuid bit does not make the job root either.
	c_inside --user nobody --policy "$p" -- "euid=65534 capeff=0000000000000000 raw=EPERM|$suid" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket type=raw comm=setuid_raw uid=65534 || return 1
}

# --- 7. fail closed ---------------------------------------------------------------------------

# SIGKILL to the launcher while the job keeps trying a refused destination (TCP connects from
# fresh processes, UDP floods): nothing reaches the listeners, every process of the job is
# gone within a second, the programs stay attached to the cgroup until `launch gc`, which
# leaves nothing.
c_fail_closed_kill() {
	local p t3 u3 secs name start ms gone=0 left n

	p=$(policy fc '{"name": "fc", "allow": [{"cidr": "127.0.0.2", "ports": [8181]}]}')
	c_outside 'OK|probe tcp 127.0.0.3 8181' 'OK=1|flood udp 127.0.0.3 8181 1' || return 1
	sleep 0.2
	t3=$(c_bytes tcp 127.0.0.3 8181)
	u3=$(c_bytes udp 127.0.0.3 8181)
	secs=$((800000 + RANDOM))
	launch_bg --policy "$p" -- /bin/sh -c 'setsid sleep "$1" </dev/null >/dev/null 2>&1 &
		while :; do "$2/probe" tcp 127.0.0.3 8181; "$2/flood" udp 127.0.0.3 8181 20; done \
		>>"$3/tries"' sh "$secs" "$IT_HELPERS" "$T_DIR"
	name=$L_NAME
	for _ in $(seq 500); do
		[ "$(wc -l 2>/dev/null <"$T_DIR/tries" || echo 0)" -ge 40 ] && break
		sleep 0.02
	done
	n=$(wc -l 2>/dev/null <"$T_DIR/tries" || echo 0)
	[ "$n" -ge 40 ] || fail "the job's loop did not get going ($n results)" || return 1
	c_attached "$IT_CG2/launch/$name" || fail "no program attached to sandbox $name" || return 1

	start=$EPOCHREALTIME
	kill -KILL "$L_PID"
	wait "$L_PID" 2>/dev/null
	c_lock "$name" || return 1
	while :; do
		left=$(c_leftovers "$name" "sleep $secs" | grep '^process:'; cat "$IT_CG2/launch/$name/cgroup.procs" 2>/dev/null)
		ms=$(elapsed_ms "$start" "$EPOCHREALTIME")
		[ -n "$left" ] || {
			gone=1
			break
		}
		[ "$ms" -lt 3000 ] || break
		sleep 0.01
	done
	echo "job gone after ${ms} ms"
	[ "$gone" = 1 ] || fail "processes of the job still alive ${ms} ms after SIGKILL: $(brief "$left")" ||
		return 1
	[ "$ms" -le 1000 ] || fail "the job took ${ms} ms to die after the launcher's SIGKILL" ||
		return 1
	grep -v -E '^(EPERM|EPERM=20)$' "$T_DIR/tries" | grep . | head -n3 >"$T_DIR/tries.bad"
	[ ! -s "$T_DIR/tries.bad" ] || fail "attempts that were not refused: $(brief "$(cat "$T_DIR/tries.bad")")" ||
		return 1
	c_expect_bytes tcp 127.0.0.3 8181 "$t3" || return 1
	c_expect_bytes udp 127.0.0.3 8181 "$u3" || return 1
	# The programs stay attached to the cgroup, with no launcher and no pin, until gc.
	c_attached "$IT_CG2/launch/$name" ||
		fail "the programs of the killed sandbox are detached before launch gc" || return 1
	[ -d "$IT_CG2/launch/$name" ] || fail "the killed sandbox's cgroup is gone before gc" ||
		return 1

	c_unlock
	launch_raw gc
	expect_rc "launch gc" 0 || return 1
	left=$(c_leftovers "$name" "sleep $secs")
	[ -z "$left" ] || fail "after launch gc: $(brief "$left")"
}

# The audit log on a 64 KiB tmpfs that a burst of refusals fills: by default the job is
# stopped and launch exits 125 saying why. A read-only log is refused before the job runs.
# With --audit-failure=continue the job runs on, launch exits with its status, and
# sandbox_exit (written once the test makes room) counts the lines lost.
c_fail_closed_audit() {
	local small=$T_DIR/small ro=$T_DIR/ro p log name secs left

	p=$(policy fa '{"name": "fa", "allow": [{"cidr": "127.0.0.2", "ports": [8181]}]}')
	secs=$((700000 + RANDOM))
	head -c 49152 /dev/zero >"$small/filler" 2>/dev/null
	log=$small/stop.jsonl
	launch_next_names
	name=$L_NAME
	launch_raw --audit-log "$log" --name "$name" --policy "$p" -- /bin/sh -c \
		'"$2/flood" udp 127.0.0.3 8181 20000 >"$3/flood.stop"; exec sleep "$1"' sh "$secs" \
		"$IT_HELPERS" "$T_DIR"
	cp "$log" "$T_LOGS/stop.jsonl"
	expect_rc "audit log full, --audit-failure=stop" 125 || return 1
	[[ $L_ERR == *"audit log"*"No space left on device"* ]] ||
		fail "launch's message does not say the audit log is full: $(brief "$L_ERR")" ||
		return 1
	[ "$L_MS" -lt 10000 ] || fail "launch took $L_MS ms to stop the job" || return 1
	[ -s "$log" ] || fail "nothing was written to the audit log" || return 1
	left=$(c_leftovers "$name" "sleep $secs")
	[ -z "$left" ] || fail "after the audit failure: $(brief "$left")" || return 1

	launch_next_names
	launch_raw --audit-log "$ro/audit.jsonl" --name "$L_NAME" --policy "$p" -- \
		/bin/touch "$T_DIR/ran"
	expect_rc "read-only audit log" 125 || return 1
	[[ $L_ERR == *"$ro/audit.jsonl"* ]] ||
		fail "launch's message does not name the audit log: $(brief "$L_ERR")" || return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran although its audit log is read-only" || return 1

	rm -f "$log"
	head -c 49152 /dev/zero >"$small/filler" 2>/dev/null
	log=$small/continue.jsonl
	launch_bg --audit-failure=continue --audit-log "$log" --policy "$p" -- /bin/sh -c \
		'"$1/flood" udp 127.0.0.3 8181 20000 >"$2/flood.cont"
		while [ ! -e "$2/go.cont" ]; do sleep 0.01; done; exit 7' sh "$IT_HELPERS" "$T_DIR"
	wait_for_file "$T_DIR/flood.cont" 15 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never flooded (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	# Time for the launcher to meet the full disk with what is left of the burst.
	sleep 0.5
	[ "$(proc_state "$L_PID")" != Z ] && kill -0 "$L_PID" 2>/dev/null ||
		fail "launch stopped although --audit-failure=continue" || return 1
	rm -f "$small/filler"
	: >"$T_DIR/go.cont"
	launch_bg_wait 15 || return 1
	# Kept for the log: the tmpfs goes when the test ends.
	cp "$log" "$T_LOGS/continue.jsonl"
	expect_rc "audit log full, --audit-failure=continue, job exits 7" 7 || return 1
	tail -n1 "$log" >"$T_DIR/continue.last"
	"$IT_PY" -c 'import json, sys; json.loads(open(sys.argv[1]).read())' "$T_DIR/continue.last" \
		2>/dev/null ||
		fail "the last line of the audit log is not JSON (a line torn by the full disk, then the rest?): $(brief "$(tail -c 400 "$T_DIR/continue.last")")" ||
		return 1
	expect_audit 1 "$T_DIR/continue.last" event=sandbox_exit exit_code=7 sandbox="$L_NAME" \
		log_failed:int || return 1
	[ "$(audit_get "$T_DIR/continue.last" event=sandbox_exit -- log_failed)" -gt 0 ] ||
		fail "sandbox_exit log_failed is 0 although the disk was full" || return 1
}

test_contain_fail_closed() {
	local rc

	c_fail_closed_kill || return 1
	mkdir -p "$T_DIR/small" "$T_DIR/ro"
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$T_DIR/small" ||
		fail "cannot mount a 64 KiB tmpfs" || return 1
	mount -t tmpfs -o ro,size=64k tmpfs "$T_DIR/ro" || {
		umount "$T_DIR/small"
		fail "cannot mount a read-only tmpfs"
		return 1
	}
	c_fail_closed_audit
	rc=$?
	umount -l "$T_DIR/small" "$T_DIR/ro"
	return $rc
}

# --- 8. no residue ----------------------------------------------------------------------------

# c_expect_clean WHAT NAME MARKER: nothing of sandbox NAME is left (cgroup, pins, lock file,
# processes whose command line has MARKER).
c_expect_clean() {
	local left

	left=$(c_leftovers "$2" "$3")
	[ -z "$left" ] || fail "$1: left behind: $(brief "$left")"
}

# Each way a sandbox can end leaves no cgroup, pin, lock or process (the job leaves a daemon
# behind where it runs at all): normal exit, death by signal, timeout, launcher SIGKILLed (then
# launch gc), a bad policy, an unusable audit log, a command that cannot be executed.
# A BPF file system mounted outside /sys/fs/cgroup while a sandbox starts, after launch read
# its mountinfo and before init's copy of the mounts went private, is hidden from the job all
# the same. Where launch sees no cgroup or BPF mount outside /sys/fs/cgroup's tree, init skips
# its own walk of mountinfo unless a poll of the launcher's mountinfo says the mounts changed
# since: here they do, through mount_at_clone.so, and the job must not see the new mount.
test_contain_mount_while_starting() {
	local p out name1 name2

	mkdir -p "$T_DIR/late"
	p=$(policy late '{"name": "late", "allow": []}')
	launch_next_names
	name1=$L_NAME
	launch_next_names
	name2=$L_NAME
	cat >"$T_DIR/late.sh" <<'SCRIPT'
probe=$1 late=$2 preload=$3 name1=$4 name2=$5
shift 5
# The run mounted a bpffs for its tests: none outside /sys/fs/cgroup in this namespace.
awk '{ for (i = 7; i <= NF; i++) if ($i == "-") {
	t = $(i + 1)
	if ((t == "bpf" || t ~ /^cgroup/) && $5 !~ "^/sys/fs/cgroup(/|$)") print $5
	break } }' /proc/self/mountinfo | while read -r m; do umount -l "$m" || exit 1; done
echo "before $("$probe" cgroup-mounts)"
echo "plain $("$@" --name "$name1" -- "$probe" cgroup-mounts 2>&1)"
echo "late $(MOUNT_AT_CLONE=$late LD_PRELOAD=$preload "$@" --name "$name2" -- \
	"$probe" cgroup-mounts 2>&1)"
echo "after $("$probe" cgroup-mounts)"
SCRIPT
	out=$(unshare -m --propagation private bash "$T_DIR/late.sh" "$IT_PROBE" "$T_DIR/late" \
		"$IT_HELPERS/mount_at_clone.so" "$name1" "$name2" "$IT_LAUNCH" \
		--audit-log "$T_LOGS/late.jsonl" --policy "$p")
	echo "$out"
	# Outside: writable cgroup mounts, and no bpffs until the one mounted at the clone.
	expect_match "outside, before" $'(^|\n)before [1-9][0-9]* 0(\n|$)' "$out" || return 1
	expect_match "outside, after" $'(^|\n)after [1-9][0-9]* 1(\n|$)' "$out" || return 1
	expect_match "inside, nothing mounted meanwhile" $'(^|\n)plain 0 0(\n|$)' "$out" || return 1
	expect_match "inside, a bpffs mounted at the clone" $'(^|\n)late 0 0(\n|$)' "$out"
}

# The launcher's clone child makes the new mount namespace's "/" private, then detaches the
# cgroup file systems' home there, before init's exec. If "/" cannot be made private, nothing
# is detached (it would go from the host's mounts too, through propagation) and no job runs:
# launch says why and exits 125. A seccomp filter (tests/helpers/deny_private) makes every
# mount() to private fail; it shows first that it does, outside.
test_contain_private_before_detach() {
	local p home_before home_after

	home_before=$(findmnt -n -o TARGET /sys/fs/cgroup)
	[ "$home_before" = /sys/fs/cgroup ] || fail "no mount on /sys/fs/cgroup here" || return 1
	if unshare -m "$IT_HELPERS/deny_private" mount --make-rprivate / 2>"$T_DIR/outside.err"; then
		fail "outside: deny_private let a mount to private through" || return 1
	fi
	expect_match "outside: the refusal" "Operation not permitted|[Pp]ermission denied" \
		"$(cat "$T_DIR/outside.err")" || return 1
	p=$(policy priv '{"name": "priv", "allow": []}')
	printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$IT_HELPERS/deny_private" "$IT_LAUNCH" \
		>"$T_DIR/launch-deny"
	chmod +x "$T_DIR/launch-deny"
	IT_LAUNCH=$T_DIR/launch-deny launch_job --policy "$p" -- sh -c 'echo ran'
	expect_rc "mounts not private" 125 || return 1
	expect_eq "the job's output" "" "$L_OUT" || return 1
	expect_match "stderr" \
		"^launch: cannot make the sandbox's mounts private: Operation not permitted$" \
		"$L_ERR" || return 1
	home_after=$(findmnt -n -o TARGET /sys/fs/cgroup)
	expect_eq "the host's /sys/fs/cgroup, still mounted" /sys/fs/cgroup "$home_after" || return 1
	# The same launch without the filter runs the job.
	launch_job --policy "$p" -- sh -c 'echo ran'
	expect_rc "no filter" 0 || return 1
	expect_eq "no filter: the job's output" ran "$L_OUT"
}

# A BPF file system that the host covered with another mount is not laid bare: init hides
# cgroup and BPF mounts by their paths, where umount2 would take the cover off instead. Run
# as uid 0, the job could otherwise get the pins there (bpf() is allowed by number).
test_contain_covered_bpffs() {
	local p out d

	d=$(mktemp -d /run/it-cover.XXXXXX) || return 1
	p=$(policy cover '{"name": "cover", "allow": []}')
	cat >"$T_DIR/cover.sh" <<'SCRIPT'
d=$1
shift
mount -t bpf bpf "$d" || exit 1
echo "bare $(stat -f -c %T "$d")"
mount -t tmpfs cover "$d" || exit 1
echo "outside $(stat -f -c %T "$d")"
echo "inside $("$@" -- stat -f -c %T "$d" 2>&1)"
SCRIPT
	out=$(unshare -m --propagation private bash "$T_DIR/cover.sh" "$d" "$IT_LAUNCH" \
		--audit-log "$T_LOGS/cover.jsonl" --policy "$p" --user root)
	rmdir "$d"
	echo "$out"
	expect_match "outside, the bpffs" $'(^|\n)bare bpf_fs(\n|$)' "$out" || return 1
	expect_match "outside, the cover on top" $'(^|\n)outside tmpfs(\n|$)' "$out" || return 1
	expect_match "inside, the cover still on top" $'(^|\n)inside tmpfs(\n|$)' "$out"
}

test_contain_no_residue() {
	local p bad secs

	p=$(policy nr '{"name": "nr", "allow": [{"cidr": "127.0.0.2", "ports": [8181]}]}')
	secs=$((600000 + RANDOM))
	local daemon='setsid sleep "$0" </dev/null >/dev/null 2>&1 &'

	launch_job --policy "$p" -- /bin/sh -c "$daemon exit 0" "$secs"
	expect_rc "normal exit" 0 || return 1
	c_expect_clean "normal exit" "$L_NAME" "sleep $secs" || return 1

	launch_job --policy "$p" -- /bin/sh -c "$daemon kill -TERM \$\$" "$((secs + 1))"
	expect_rc "job killed by SIGTERM" 143 || return 1
	c_expect_clean "job killed by a signal" "$L_NAME" "sleep $((secs + 1))" || return 1

	launch_job --timeout 1 --policy "$p" -- /bin/sh -c "$daemon exec sleep 30" "$((secs + 2))"
	expect_rc "timeout" 124 || return 1
	c_expect_clean "timeout" "$L_NAME" "sleep $((secs + 2))" || return 1

	launch_bg --policy "$p" -- /bin/sh -c "$daemon"' echo ready >"$1"; exec sleep 30' \
		"$((secs + 3))" "$T_DIR/ready"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	kill -KILL "$L_PID"
	wait "$L_PID" 2>/dev/null
	c_lock "$L_NAME" || return 1
	sleep 0.5
	c_leftovers "$L_NAME" | grep -qE '^cgroup:' ||
		fail "a SIGKILLed launcher left no cgroup: nothing for gc to do?" ||
		return 1
	c_unlock
	launch_raw gc
	expect_rc "launch gc" 0 || return 1
	c_expect_clean "launcher killed, then launch gc" "$L_NAME" "sleep $((secs + 3))" || return 1

	bad=$(policy bad '{"name": "bad", "allow": [{"cidr": "127.0.0.2", "ports": [70000]}]}')
	launch_job --policy "$bad" -- /bin/sh -c "$daemon" "$((secs + 4))"
	expect_rc "bad policy" 125 || return 1
	c_expect_clean "bad policy" "$L_NAME" "sleep $((secs + 4))" || return 1

	launch_next_names
	launch_raw --audit-log "$T_DIR/no/such/dir/audit.jsonl" --name "$L_NAME" --policy "$p" -- \
		/bin/sh -c "$daemon" "$((secs + 5))"
	expect_rc "audit log in a missing folder" 125 || return 1
	c_expect_clean "audit log unwritable" "$L_NAME" "sleep $((secs + 5))" || return 1
	mkdir -p "$T_DIR/adir"
	launch_next_names
	launch_raw --audit-log "$T_DIR/adir" --name "$L_NAME" --policy "$p" -- \
		/bin/sh -c "$daemon" "$((secs + 6))"
	expect_rc "audit log is a folder" 125 || return 1
	c_expect_clean "audit log is a folder" "$L_NAME" "sleep $((secs + 6))" || return 1

	launch_job --policy "$p" -- "$T_DIR/no-such-command"
	expect_rc "command not found" 127 || return 1
	c_expect_clean "command not found" "$L_NAME" || return 1
}

# --- 9. many at once --------------------------------------------------------------------------

# 50 sandboxes at once, sandbox i allowed only 127.0.1.i:8080: each reaches its own listener
# and is refused its neighbour's, and each one's audit lines carry its own sandbox id.
test_contain_many_at_once() {
	local n=50 i j p names=() pids=() audits=() outs=() errs=() before=() live bad="" got

	for ((i = 1; i <= n; i++)); do
		c_outside "OK|probe tcp 127.0.1.$i 8080" >/dev/null || return 1
	done
	for ((i = 1; i <= n; i++)); do
		before[i]=$(received tcp 127.0.1.$i 8080)
	done
	mkfifo "$T_DIR/go.fifo"
	for ((i = 1; i <= n; i++)); do
		j=$((i % n + 1))
		p=$(policy "p$i" "{\"name\": \"p$i\", \"allow\": [{\"cidr\": \"127.0.1.$i\", \"ports\": [8080]}]}")
		# The job opens the fifo for reading, which blocks until the test opens it to write:
		# every job waits, without polling, for all of them to be up.
		launch_bg --policy "$p" -- /bin/sh -c 'echo ready >"$1/ready.$2"; : <"$1/go.fifo"
			exec "$0" each "probe tcp 127.0.1.$2 8080" "probe tcp 127.0.1.$3 8080"' \
			"$IT_PROBE" "$T_DIR" "$i" "$j"
		names[i]=$L_NAME
		errs[i]=$L_ERR_FILE
		pids[i]=$L_PID
		audits[i]=$L_AUDIT
		outs[i]=$L_OUT_FILE
	done
	for _ in $(seq 3000); do
		got=$(find "$T_DIR" -maxdepth 1 -name 'ready.*' | wc -l)
		[ "$got" -ge "$n" ] && break
		sleep 0.02
	done
	live=0
	for ((i = 1; i <= n; i++)); do
		[ -d "$IT_CG2/launch/${names[i]}" ] && live=$((live + 1))
	done
	echo "$got jobs ready, $live sandbox cgroups at once"
	# Held open until every job is done, so that no late reader can miss it.
	exec 7<>"$T_DIR/go.fifo"
	for ((i = 1; i <= n; i++)); do
		wait "${pids[i]}"
		got=$?
		[ "$got" = 0 ] ||
			bad+="${bad:+; }sandbox $i: launch exited $got ($(brief "$(cat "${errs[i]}")"))"
	done
	exec 7>&-
	[ "$live" = "$n" ] || fail "only $live of $n sandboxes existed at the same time" || return 1
	[ -z "$bad" ] || fail "$bad" || return 1
	for ((i = 1; i <= n; i++)); do
		j=$((i % n + 1))
		got=$(tr '\n' ' ' <"${outs[i]}")
		[ "$got" = "OK EPERM " ] || bad+="${bad:+; }sandbox $i: '$got'"
		got=$(($(audit_count "${audits[i]}") - $(audit_count "${audits[i]}" sandbox="${names[i]}")))
		[ "$got" = 0 ] || bad+="${bad:+; }sandbox $i: $got audit line(s) of another sandbox id"
		got=$(audit_count "${audits[i]}" event=deny op=connect dst_ip=127.0.1.$j dst_port=8080 \
			policy="p$i")
		[ "$got" = 1 ] || bad+="${bad:+; }sandbox $i: $got deny line(s) for 127.0.1.$j"
		got=$(audit_count "${audits[i]}" event=deny)
		[ "$got" = 1 ] || bad+="${bad:+; }sandbox $i: $got deny lines"
		got=$(audit_count "${audits[i]}" event=sandbox_start)
		[ "$got" = 1 ] || bad+="${bad:+; }sandbox $i: $got sandbox_start lines"
	done
	[ -z "$bad" ] || fail "$bad" || return 1
	for ((i = 1; i <= n; i++)); do
		expect_received tcp 127.0.1.$i 8080 $((before[i] + 1)) || return 1
	done
}
