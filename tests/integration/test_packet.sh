# SPDX-License-Identifier: LGPL-2.1-or-later
# Packets that go somewhere other than the address connect/sendmsg judged (routing headers,
# source routes), and the egress backstop that judges every packet by its real destination.
#
# The forbidden host is a tun device (fixtures/tun_capture.py) behind the first hop the job
# names: everything routed to 2001:db8:66::/64 or 192.0.2.0/24 (documentation prefixes, in this
# run's private netns only) reaches the capture, which logs each packet carrying the probe's
# payload. So "the forbidden host received the data" is checked on the bytes themselves, for
# TCP, UDP and IPv4 alike, whatever the first hop's own stack would make of them.

listeners 'udp:[2001:db8::1]:5300' 'tcp:[2001:db8::1]:8080' udp:127.0.0.2:5300 \
	tcp:127.0.0.2:8080

PK_FIRST6=2001:db8:66::66
PK_FIRST4=192.0.2.66
PK_POLICY='{"name": "pk", "allow": [
	{"cidr": "2001:db8::1", "ports": [5300], "protocol": "udp"},
	{"cidr": "2001:db8::1", "ports": [8080], "protocol": "tcp"},
	{"cidr": "127.0.0.2", "ports": [5300], "protocol": "udp"},
	{"cidr": "127.0.0.2", "ports": [8080], "protocol": "tcp"}]}'

# Starts the forbidden host (PK_LOG is its capture) and routes the first hops to it. The tun
# device goes with the capture process, which the test's end kills.
forbidden_host_up() {
	local dev=pk$BASHPID

	PK_LOG=$T_DIR/capture.log
	"$IT_PY" "$IT_FIX/tun_capture.py" "$dev" "$PK_LOG" 2>"$T_DIR/capture.err" &
	track_pid $!
	wait_for_file "$PK_LOG.ready" 10 || {
		fail "the capture did not start: $(brief "$(cat "$T_DIR/capture.err")")"
		return 1
	}
	{ ip link set "$dev" up && ip addr add 192.0.2.1/32 dev "$dev" &&
		ip route add 192.0.2.0/24 dev "$dev" && ip -6 route add 2001:db8:66::/64 dev "$dev"; } ||
		fail "cannot route the first hops to $dev"
}

# How many packets carrying the payload reached the forbidden host at ADDR.
captured() {
	grep -c " $1 hello\$" "$PK_LOG" 2>/dev/null
}

# expect_captured ADDR N: polls (at most 2 s) until N such packets, then checks exactly N.
expect_captured() {
	local got i

	for ((i = 0; i < 100; i++)); do
		got=$(captured "$1")
		[ "$got" -lt "$2" ] || break
		sleep 0.02
	done
	[ "$got" = "$2" ] || fail "the forbidden host $1 received $got packet(s) with the payload, expected $2"
}

# A SYN carries data (MSG_FASTOPEN) without a cookie only with bit 4 of tcp_fastopen: set for
# the test's duration, in this run's netns.
PK_FASTOPEN_SAVED=
fastopen_without_cookie() {
	{ PK_FASTOPEN_SAVED=$(sysctl -n net.ipv4.tcp_fastopen) &&
		sysctl -qw net.ipv4.tcp_fastopen=5; } || fail "cannot set net.ipv4.tcp_fastopen"
}

fastopen_restore() {
	[ -z "$PK_FASTOPEN_SAVED" ] || sysctl -qw net.ipv4.tcp_fastopen="$PK_FASTOPEN_SAVED"
}

# A segment routing header whose first segment is the forbidden host: connect6/sendmsg6 see
# the allowed final address, the packet goes to the first segment. TCP, UDP, connected UDP.
test_routing_header() {
	local p rc=0

	p=$(policy pk "$PK_POLICY")
	forbidden_host_up || return 1
	fastopen_without_cookie || return 1
	outside "OK rthdr udp 2001:db8::1 5300 $PK_FIRST6" \
		"OK rthdr udpconn 2001:db8::1 5300 $PK_FIRST6" \
		"OK rthdr tcp 2001:db8::1 8080 $PK_FIRST6" || rc=1
	[ $rc = 0 ] && { expect_captured "$PK_FIRST6" 3 || rc=1; }
	[ $rc = 0 ] && {
		inside --policy "$p" -- "EPERM rthdr udp 2001:db8::1 5300 $PK_FIRST6" \
			"EPERM rthdr udpconn 2001:db8::1 5300 $PK_FIRST6" \
			"EPERM rthdr tcp 2001:db8::1 8080 $PK_FIRST6" "OK udp 2001:db8::1 5300" ||
			rc=1
	}
	fastopen_restore
	[ $rc = 0 ] || return 1
	sleep 0.2
	expect_captured "$PK_FIRST6" 3 || return 1
	audit_check || return 1
	expect_audit 3 "$L_AUDIT" event=deny op=setsockopt family=ipv6 level=ipv6 optname=57 \
		optname:int option=IPV6_RTHDR pid:int comm=probe || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=setsockopt protocol=tcp type=stream || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=3 packet_dropped=0 packet_dropped:int
}

# IPv4 loose source routes: as a socket option (IP_OPTIONS), refused and logged by setsockopt;
# as ancillary data on one sendmsg (IP_RETOPTS), which no hook but the packet's sees. This
# kernel refuses a source route without CAP_NET_RAW itself (ip_options_get), before any hook,
# so that one is refused unlogged; the backstop, which drops every packet with options,
# stands behind it on kernels without that check (packet_backstop_ip_options).
test_ip_source_route() {
	local p rc=0

	p=$(policy pk "$PK_POLICY")
	forbidden_host_up || return 1
	fastopen_without_cookie || return 1
	outside "OK ipopts udp 127.0.0.2 5300 $PK_FIRST4" "OK ipopts tcp 127.0.0.2 8080 $PK_FIRST4" \
		"OK retopts udp 127.0.0.2 5300 lsrr=$PK_FIRST4" || rc=1
	fastopen_restore
	[ $rc = 0 ] || return 1
	expect_captured "$PK_FIRST4" 3 || return 1

	inside --policy "$p" -- "EPERM ipopts udp 127.0.0.2 5300 $PK_FIRST4" \
		"EPERM ipopts tcp 127.0.0.2 8080 $PK_FIRST4" \
		"EPERM retopts udp 127.0.0.2 5300 lsrr=$PK_FIRST4" "OK udp 127.0.0.2 5300" || return 1
	sleep 0.2
	expect_captured "$PK_FIRST4" 3 || return 1
	audit_check || return 1
	expect_audit 2 "$L_AUDIT" event=deny op=setsockopt family=ipv4 level=ip optname=4 \
		option=IP_OPTIONS comm=probe pid:int || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=2 packet_dropped=0
}

# The backstop itself, on a path no address hook sees: a record-route option, which needs no
# privilege, sent as ancillary data to an allowed address. The packet leaves outside; inside
# the backstop drops it (IPv4 options), the send fails with EPERM, and the drop is logged and
# counted apart from the hooks' refusals.
test_packet_backstop_ip_options() {
	local p n pid

	p=$(policy pk "$PK_POLICY")
	n=$(received udp 127.0.0.2 5300)
	outside "OK retopts udp 127.0.0.2 5300 rr" "OK retopts udpconn 127.0.0.2 5300 rr" || return 1
	n=$((n + 2))
	expect_received udp 127.0.0.2 5300 "$n" || return 1
	# On a connected socket, ancillary data makes the kernel run the sendmsg hook again,
	# without an address: refused there (op sendmsg to 0.0.0.0), before any packet exists.
	inside --policy "$p" -- "EPERM retopts udp 127.0.0.2 5300 rr" \
		"EPERM retopts udpconn 127.0.0.2 5300 rr" "OK udp 127.0.0.2 5300" || return 1
	expect_received udp 127.0.0.2 5300 $((n + 1)) || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=packet family=ipv4 protocol=udp \
		dst_ip=127.0.0.2 dst_port=5300 dst_port:int reason=ip_options comm=probe uid:int ||
		return 1
	pid=$(audit_get "$L_AUDIT" event=deny op=packet -- pid)
	[ "$pid" -gt 1 ] 2>/dev/null || fail "the packet line names no process (pid '$pid')" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=sendmsg dst_ip=0.0.0.0 dst_port=0 || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 packet_dropped=1 packet_dropped:int
}

# Every option that sets a route, a routing or options header, or a source address, on its
# own (the bytes are what setsockopt takes; root outside may set each).
test_route_socket_options() {
	local p specs=() opt
	local srh=0002040000000000200100db006600000000000000000066
	local pkoptions=140000000000000029000000340000004000000000000000
	# A flow label request (to 2001:db8::1, label 1, IPV6_FL_A_GET, IPV6_FL_S_EXCL,
	# IPV6_FL_F_CREATE) with a hop limit as its options.
	local flowlabel=20010db800000000000000000000000100000001000101000000000000000000$pkoptions

	p=$(policy pk "$PK_POLICY")
	specs=("sockopt inet6 41 57 $srh" "sockopt inet6 41 54 0000000000000000"
		"sockopt inet6 41 55 0000000000000000" "sockopt inet6 41 59 0000000000000000"
		"sockopt inet6 41 6 $pkoptions" "sockopt inet6 41 2 01000000"
		"sockopt inet6 41 3 01000000" "sockopt inet6 41 4 01000000"
		"sockopt inet6 41 5 01000000" "sockopt inet6 41 8 01000000"
		"sockopt inet6 41 50 0000000000000000000000000000000100000000"
		"sockopt inet 0 4 01010101" "sockopt inet6 0 4 01010101"
		"sockopt inet6 41 32 $flowlabel")
	for opt in "${specs[@]}"; do
		outside "OK $opt" || return 1
	done
	# Removing a header, an all-zero IPV6_PKTINFO and unrelated options stay allowed.
	inside --policy "$p" -- "${specs[@]/#/EPERM }" "OK sockopt inet6 41 57 -" \
		"OK sockopt inet6 41 6 -" "OK sockopt inet 0 4 -" \
		"OK sockopt inet6 41 50 0000000000000000000000000000000000000000" \
		"OK sockopt inet6 41 49 01000000" "OK sockopt inet 0 1 10000000" || return 1
	audit_check || return 1
	expect_audit "${#specs[@]}" "$L_AUDIT" event=deny op=setsockopt || return 1
	for opt in IPV6_RTHDR IPV6_HOPOPTS IPV6_RTHDRDSTOPTS IPV6_DSTOPTS IPV6_2292PKTOPTIONS \
		IPV6_2292PKTINFO IPV6_2292HOPOPTS IPV6_2292DSTOPTS IPV6_2292RTHDR IPV6_2292HOPLIMIT \
		IPV6_PKTINFO IPV6_FLOWLABEL_MGR; do
		expect_audit 1 "$L_AUDIT" event=deny op=setsockopt level=ipv6 option="$opt" || return 1
	done
	expect_audit 2 "$L_AUDIT" event=deny op=setsockopt level=ip option=IP_OPTIONS
}

# Many drops at once: each is counted, the deny lines are capped per CPU and second.
test_packet_drop_rate_limit() {
	local p lines cap n

	p=$(policy pk "$PK_POLICY")
	n=$(received udp 127.0.0.2 5300)
	inside --policy "$p" -- "EPERM retopts-burst 200 udp 127.0.0.2 5300 rr" || return 1
	expect_received udp 127.0.0.2 5300 "$n" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit packet_dropped=200 denied=0 || return 1
	lines=$(audit_count "$L_AUDIT" event=deny op=packet reason=ip_options)
	# 16 per CPU per second (PACKET_LOG_BURST); the burst takes well under a second.
	cap=$((16 * $(nproc) * 2))
	{ [ "$lines" -ge 1 ] && [ "$lines" -le "$cap" ]; } ||
		fail "$lines packet lines for 200 drops, expected 1 to $cap"
}

# What the policy allows is untouched: a job's own TCP server on loopback (the listener's
# SYN-ACK, the accepted socket's replies), TCP and UDP to allowed hosts, Fast Open, connected
# UDP. A refused connect is refused by connect, not dropped again.
test_packet_backstop_passes_allowed() {
	local p

	p=$(policy pkself '{"name": "pkself", "allow": [
		{"cidr": "127.0.0.7", "ports": [9100], "protocol": "tcp"},
		{"cidr": "2001:db8::1", "ports": [9101], "protocol": "tcp"},
		{"cidr": "127.0.0.2", "ports": [8080], "protocol": "tcp"},
		{"cidr": "127.0.0.2", "ports": [5300], "protocol": "udp"},
		{"cidr": "2001:db8::1", "ports": [8080], "protocol": "tcp"},
		{"cidr": "2001:db8::1", "ports": [5300], "protocol": "udp"}],
		"listen": [{"port": 9101}]}')
	# 2001:db8::1 is no loopback address: the job may serve there only on a "listen" port.
	inside --policy "$p" -- "OK tcp-self 127.0.0.7 9100" "OK tcp-self 2001:db8::1 9101" \
		"OK tcp 127.0.0.2 8080" "OK tcp-fastopen 127.0.0.2 8080" "OK udp 127.0.0.2 5300" \
		"OK udpconn 127.0.0.2 5300" "OK tcp 2001:db8::1 8080" "OK udpconn 2001:db8::1 5300" \
		"OK udp ::ffff:127.0.0.2 5300" "EPERM tcp 127.0.0.3 8080" || return 1
	audit_check || return 1
	expect_audit 0 "$L_AUDIT" event=deny op=packet || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 packet_dropped=0
}

# Datagrams bigger than the path's MTU leave as fragments, which the kernel makes after the
# egress hook: the backstop judges the datagram whole, and an allowed one arrives entire.
test_packet_backstop_fragments() {
	local p n4 n6

	p=$(policy pkfrag "{\"name\": \"pkfrag\", \"allow\": [
		{\"cidr\": \"$PK_FIRST4\", \"ports\": [5300], \"protocol\": \"udp\"},
		{\"cidr\": \"$PK_FIRST6\", \"ports\": [5300], \"protocol\": \"udp\"}]}")
	forbidden_host_up || return 1
	ip link set "pk$BASHPID" mtu 1280 || fail "cannot set the capture's MTU" || return 1
	outside "OK udp-big $PK_FIRST4 5300 4000" "OK udp-big $PK_FIRST6 5300 4000" || return 1
	expect_captured "$PK_FIRST4" 1 && expect_captured "$PK_FIRST6" 1 || return 1
	sleep 0.2
	n4=$(grep -c " $PK_FIRST4 " "$PK_LOG")
	n6=$(grep -c " $PK_FIRST6 " "$PK_LOG")
	[ "$n4" -ge 4 ] && [ "$n6" -ge 4 ] ||
		fail "expected at least 4 fragments each outside, got $n4 and $n6" || return 1
	inside --policy "$p" -- "OK udp-big $PK_FIRST4 5300 4000" \
		"OK udp-big $PK_FIRST6 5300 4000" || return 1
	expect_captured "$PK_FIRST4" 2 && expect_captured "$PK_FIRST6" 2 || return 1
	sleep 0.2
	expect_eq "IPv4 fragments inside" $((2 * n4)) "$(grep -c " $PK_FIRST4 " "$PK_LOG")" &&
		expect_eq "IPv6 fragments inside" $((2 * n6)) "$(grep -c " $PK_FIRST6 " "$PK_LOG")" ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=0 packet_dropped=0
}
