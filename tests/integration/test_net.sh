# SPDX-License-Identifier: LGPL-2.1-or-later
# IP egress rules: what the sandbox lets through, what it refuses, and the audit trail.
#
# Every refusal is first shown to work outside the sandbox (the probe run directly reaches a
# listener), so a test cannot pass because the operation was impossible anyway.

listeners tcp:127.0.0.2:8080 tcp:127.0.0.3:8080 tcp:127.0.0.2:8081 tcp:127.0.0.5:8080 \
	tcp:127.0.1.5:8080 tcp:127.0.0.5:8081 tcp:127.0.1.5:8081 'tcp:[2001:db8::1]:8080' \
	'tcp:[2001:db8::2]:8080' tcp:127.0.0.2:5300 tcp:127.0.0.2:8999 tcp:127.0.0.2:9000 \
	tcp:127.0.0.2:9005 tcp:127.0.0.2:9010 tcp:127.0.0.2:9011 udp:127.0.0.2:5300 \
	udp:127.0.0.3:5300 udp:127.0.0.2:8080 udp:127.0.0.2:8081 'udp:[2001:db8::1]:5300' \
	'udp:[2001:db8::2]:5300'

WEB_POLICY='{"name": "web", "allow": [{"cidr": "127.0.0.2", "ports": [8080], "protocol": "tcp"}]}'
DNS_POLICY='{"name": "dns", "allow": [{"cidr": "127.0.0.2", "ports": [5300], "protocol": "udp"}]}'

test_tcp_allow_deny() {
	local p n2 n3 pid

	p=$(policy web "$WEB_POLICY")
	n2=$(received tcp 127.0.0.2 8080)
	n3=$(received tcp 127.0.0.3 8080)
	outside "OK tcp 127.0.0.3 8080" || return 1
	expect_received tcp 127.0.0.3 8080 $((n3 + 1)) || return 1
	n3=$((n3 + 1))

	# The job pauses before exec'ing the refused probe, so the test can learn the probe's
	# PID (the shell's: exec keeps it) as the audit log reports it, from outside any PID
	# namespace the job is in.
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c '"$0" tcp 127.0.0.2 8080 >"$1/allowed"
		echo ready >"$1/ready"
		while [ ! -e "$1/go" ]; do sleep 0.01; done
		exec "$0" tcp 127.0.0.3 8080' "$IT_PROBE" "$T_DIR"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	pid=$(find_pids sh "$T_DIR")
	: >"$T_DIR/go"
	launch_bg_wait 10 || return 1
	expect_rc "job" 0 || return 1
	[[ $pid =~ ^[0-9]+$ ]] || fail "cannot tell the job's PID (found '$pid')" || return 1
	expect_eq "allowed connect to 127.0.0.2:8080" OK "$(cat "$T_DIR/allowed")" || return 1
	expect_eq "refused connect to 127.0.0.3:8080" EPERM "$L_OUT" || return 1
	expect_received tcp 127.0.0.2 8080 $((n2 + 1)) || return 1
	expect_received tcp 127.0.0.3 8080 "$n3" || return 1

	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect family=ipv4 protocol=tcp dst_ip=127.0.0.3 \
		dst_port=8080 dst_port:int pid="$pid" pid:int tid="$pid" tid:int comm=probe uid=65534 \
		uid:int sandbox="$L_NAME" policy=web ts:str || return 1
}

test_udp_allow_deny() {
	local p n2 n3

	p=$(policy dns "$DNS_POLICY")
	n2=$(received udp 127.0.0.2 5300)
	n3=$(received udp 127.0.0.3 5300)
	outside "OK udp 127.0.0.3 5300" "OK udpconn 127.0.0.3 5300" "OK udp-sendmsg 127.0.0.3 5300" \
		"OK udp-sendmmsg 127.0.0.3 5300" "OK tcp 127.0.0.2 5300" || return 1
	n3=$((n3 + 5))
	expect_received udp 127.0.0.3 5300 "$n3" || return 1

	inside --policy "$p" -- "OK udp 127.0.0.2 5300" "OK udpconn 127.0.0.2 5300" \
		"OK udp-sendmsg 127.0.0.2 5300" "OK udp-sendmmsg 127.0.0.2 5300" \
		"EPERM udp 127.0.0.3 5300" "EPERM udpconn 127.0.0.3 5300" \
		"EPERM udp-sendmsg 127.0.0.3 5300" "EPERM udp-sendmmsg 127.0.0.3 5300" \
		"EPERM tcp 127.0.0.2 5300" || return 1
	# sendmmsg sends two datagrams.
	expect_received udp 127.0.0.2 5300 $((n2 + 5)) || return 1
	expect_received udp 127.0.0.3 5300 "$n3" || return 1

	audit_check || return 1
	expect_audit 4 "$L_AUDIT" event=deny family=ipv4 protocol=udp dst_ip=127.0.0.3 \
		dst_port=5300 || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect protocol=udp dst_ip=127.0.0.3 || return 1
	expect_audit 3 "$L_AUDIT" event=deny op=sendmsg protocol=udp dst_ip=127.0.0.3 || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect protocol=tcp dst_ip=127.0.0.2 \
		dst_port=5300 || return 1
	expect_audit 5 "$L_AUDIT" event=deny || return 1
}

# The default protocol is tcp; "udp" and "tcp" rules allow only their protocol, "any" both.
test_protocol_rules() {
	local p n8080 n8081

	p=$(policy proto '{"name": "proto", "allow": [
		{"cidr": "127.0.0.2", "ports": [8080]},
		{"cidr": "127.0.0.2", "ports": [8081], "protocol": "any"},
		{"cidr": "127.0.0.2", "ports": [9000], "protocol": "tcp"}]}')
	n8080=$(received udp 127.0.0.2 8080)
	n8081=$(received udp 127.0.0.2 8081)
	outside "OK udp 127.0.0.2 8080" "OK udpconn 127.0.0.2 8080" "OK udp 127.0.0.2 9000" || return 1
	n8080=$((n8080 + 2))
	expect_received udp 127.0.0.2 8080 "$n8080" || return 1

	inside --policy "$p" -- "OK tcp 127.0.0.2 8080" "EPERM udp 127.0.0.2 8080" \
		"EPERM udpconn 127.0.0.2 8080" "OK tcp 127.0.0.2 8081" "OK udp 127.0.0.2 8081" \
		"OK udpconn 127.0.0.2 8081" "OK tcp 127.0.0.2 9000" "EPERM udp 127.0.0.2 9000" ||
		return 1
	expect_received udp 127.0.0.2 8081 $((n8081 + 2)) || return 1
	expect_received udp 127.0.0.2 8080 "$n8080" || return 1
	audit_check || return 1
	expect_audit 3 "$L_AUDIT" event=deny protocol=udp || return 1
}

# MSG_FASTOPEN sends the SYN from sendto, without connect().
test_tcp_fastopen() {
	local p n2 n3

	p=$(policy web "$WEB_POLICY")
	n2=$(received tcp 127.0.0.2 8080)
	n3=$(received tcp 127.0.0.3 8080)
	outside "OK tcp-fastopen 127.0.0.3 8080" || return 1
	n3=$((n3 + 1))
	expect_received tcp 127.0.0.3 8080 "$n3" || return 1
	inside --policy "$p" -- "OK tcp-fastopen 127.0.0.2 8080" "EPERM tcp-fastopen 127.0.0.3 8080" ||
		return 1
	expect_received tcp 127.0.0.2 8080 $((n2 + 1)) || return 1
	expect_received tcp 127.0.0.3 8080 "$n3" || return 1
	expect_audit 1 "$L_AUDIT" event=deny protocol=tcp dst_ip=127.0.0.3 dst_port=8080
}

# A UDP socket connected to an allowed peer must not reach another one by connecting again
# or by naming it in sendto.
test_udp_reconnect() {
	local p n3

	p=$(policy dns "$DNS_POLICY")
	n3=$(received udp 127.0.0.3 5300)
	outside "OK reconnect 127.0.0.2 5300 127.0.0.3 5300" \
		"OK udpconn-sendto 127.0.0.2 5300 127.0.0.3 5300" || return 1
	n3=$((n3 + 2))
	expect_received udp 127.0.0.3 5300 "$n3" || return 1
	inside --policy "$p" -- "EPERM reconnect 127.0.0.2 5300 127.0.0.3 5300" \
		"EPERM udpconn-sendto 127.0.0.2 5300 127.0.0.3 5300" "OK udpconn 127.0.0.2 5300" ||
		return 1
	expect_received udp 127.0.0.3 5300 "$n3" || return 1
	expect_audit 2 "$L_AUDIT" event=deny protocol=udp dst_ip=127.0.0.3 dst_port=5300
}

test_ipv6() {
	local p t2 u2 t1 u1

	p=$(policy v6 '{"name": "v6", "allow": [
		{"cidr": "2001:db8::1", "ports": [8080]},
		{"cidr": "2001:db8::1", "ports": [5300], "protocol": "udp"}]}')
	t1=$(received tcp 2001:db8::1 8080)
	u1=$(received udp 2001:db8::1 5300)
	t2=$(received tcp 2001:db8::2 8080)
	u2=$(received udp 2001:db8::2 5300)
	outside "OK tcp 2001:db8::2 8080" "OK udp 2001:db8::2 5300" || return 1
	t2=$((t2 + 1))
	u2=$((u2 + 1))
	expect_received tcp 2001:db8::2 8080 "$t2" || return 1
	expect_received udp 2001:db8::2 5300 "$u2" || return 1

	inside --policy "$p" -- "OK tcp 2001:db8::1 8080" "EPERM tcp 2001:db8::2 8080" \
		"OK udp 2001:db8::1 5300" "EPERM udp 2001:db8::2 5300" \
		"EPERM udpconn 2001:db8::2 5300" "EPERM tcp 127.0.0.2 8080" || return 1
	expect_received tcp 2001:db8::1 8080 $((t1 + 1)) || return 1
	expect_received udp 2001:db8::1 5300 $((u1 + 1)) || return 1
	expect_received tcp 2001:db8::2 8080 "$t2" || return 1
	expect_received udp 2001:db8::2 5300 "$u2" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect family=ipv6 protocol=tcp \
		dst_ip=2001:db8::2 dst_port=8080 || return 1
	expect_audit 2 "$L_AUDIT" event=deny family=ipv6 protocol=udp dst_ip=2001:db8::2 \
		dst_port=5300 || return 1
}

# ::ffff:a.b.c.d on an AF_INET6 socket is IPv4 traffic: the IPv4 rules judge it.
test_ipv4_mapped() {
	local p p3 n3

	p=$(policy mapped '{"name": "mapped", "allow": [
		{"cidr": "127.0.0.2", "ports": [8080]},
		{"cidr": "127.0.0.2", "ports": [5300], "protocol": "udp"}]}')
	n3=$(received tcp 127.0.0.3 8080)
	outside "OK tcp ::ffff:127.0.0.3 8080" "OK udp ::ffff:127.0.0.3 5300" || return 1
	n3=$((n3 + 1))
	expect_received tcp 127.0.0.3 8080 "$n3" || return 1

	inside --policy "$p" -- "OK tcp ::ffff:127.0.0.2 8080" "EPERM tcp ::ffff:127.0.0.3 8080" \
		"EPERM tcp-fastopen ::ffff:127.0.0.3 8080" "OK udp ::ffff:127.0.0.2 5300" \
		"EPERM udp ::ffff:127.0.0.3 5300" "EPERM udpconn ::ffff:127.0.0.3 5300" \
		"EPERM udp-sendmsg ::ffff:127.0.0.3 5300" || return 1
	expect_received tcp 127.0.0.3 8080 "$n3" || return 1
	audit_check || return 1
	expect_audit 2 "$L_AUDIT" event=deny protocol=tcp 'dst_ip~(^|:)127\.0\.0\.3$' \
		dst_port=8080 || return 1

	p3=$(policy mapped3 '{"name": "mapped3", "allow": [{"cidr": "127.0.0.3", "ports": [8080]}]}')
	inside --policy "$p3" -- "OK tcp ::ffff:127.0.0.3 8080" "OK tcp 127.0.0.3 8080" \
		"EPERM tcp ::ffff:127.0.0.2 8080" || return 1
	expect_received tcp 127.0.0.3 8080 $((n3 + 2)) || return 1
}

test_port_ranges() {
	local p

	p=$(policy range '{"name": "range", "allow": [{"cidr": "127.0.0.2", "ports": ["9000-9010", 8080]}]}')
	outside "OK tcp 127.0.0.2 9011" "OK tcp 127.0.0.2 8999" "OK tcp 127.0.0.2 8081" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.2 9000" "OK tcp 127.0.0.2 9005" \
		"OK tcp 127.0.0.2 9010" "OK tcp 127.0.0.2 8080" "EPERM tcp 127.0.0.2 9011" \
		"EPERM tcp 127.0.0.2 8999" "EPERM tcp 127.0.0.2 8081" || return 1
	expect_audit 3 "$L_AUDIT" event=deny || return 1
}

# "ports" omitted allows every port, for the rule's protocol only.
test_ports_omitted() {
	local p

	p=$(policy allports '{"name": "allports", "allow": [{"cidr": "127.0.0.3"}]}')
	outside "OK udp 127.0.0.3 5300" "OK tcp 127.0.0.2 8080" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.3 8080" "EPERM udp 127.0.0.3 5300" \
		"EPERM tcp 127.0.0.2 8080" || return 1
}

test_cidr() {
	local p

	p=$(policy nets '{"name": "nets", "allow": [
		{"cidr": "127.0.0.0/24", "ports": [8080]},
		{"cidr": "2001:db8::/127", "ports": [8080]}]}')
	outside "OK tcp 127.0.1.5 8080" "OK tcp 2001:db8::2 8080" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.5 8080" "OK tcp 127.0.0.3 8080" \
		"EPERM tcp 127.0.1.5 8080" "EPERM tcp 127.0.0.5 8081" "OK tcp 2001:db8::1 8080" \
		"EPERM tcp 2001:db8::2 8080" || return 1
}

# The kernel's LPM trie returns only the longest match, so a nested prefix must carry the
# ports of the prefixes containing it.
test_cidr_nested() {
	local p

	p=$(policy nested '{"name": "nested", "allow": [
		{"cidr": "127.0.0.0/8", "ports": [8080]},
		{"cidr": "127.0.0.0/24", "ports": [8081]}]}')
	outside "OK tcp 127.0.1.5 8081" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.5 8080" "OK tcp 127.0.0.5 8081" \
		"OK tcp 127.0.1.5 8080" "EPERM tcp 127.0.1.5 8081" || return 1
}

# Prefixes of close lengths are expanded to one length (a /24 is two /25s) for the hashed
# lookup; nested ports must survive that.
test_cidr_expanded() {
	local p entries="" len

	for len in 16 17 18 19 20 21 22 23 24; do
		entries="$entries{\"cidr\": \"127.0.0.0/$len\", \"ports\": [8080]},"
	done
	p=$(policy lengths "{\"name\": \"lengths\", \"allow\": [$entries
		{\"cidr\": \"127.0.0.0/25\", \"ports\": [8081]}]}")
	outside "OK tcp 127.0.1.5 8081" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.5 8080" "OK tcp 127.0.0.5 8081" \
		"OK tcp 127.0.1.5 8080" "EPERM tcp 127.0.1.5 8081" || return 1
}

# More distinct prefix lengths than the hashed lookup takes (MAX_HASHED_PREFIX_LENGTHS, 8),
# spaced too far apart (5 bits) for expansion to merge them: the kernel side then walks the
# LPM trie; the decisions must be the same.
test_cidr_many_lengths() {
	local p entries="" len

	for len in 32 37 42 47 52 57 62 67 72; do
		entries="$entries{\"cidr\": \"2001:db8::/$len\", \"ports\": [8080], \"protocol\": \"tcp\"},"
	done
	p=$(policy lengths "{\"name\": \"lengths\", \"allow\": [$entries
		{\"cidr\": \"2001:db8::/127\", \"ports\": [5300], \"protocol\": \"udp\"}]}")
	outside "OK udp 2001:db8::2 5300" || return 1
	inside --policy "$p" -- "OK tcp 2001:db8::1 8080" "OK tcp 2001:db8::2 8080" \
		"OK udp 2001:db8::1 5300" "EPERM udp 2001:db8::2 5300" || return 1
}

# More exact addresses than the sandbox's settings keep in place (MAX_INLINE_EXACT, 4): they
# go to the hash map; the decisions must be the same.
test_many_exact() {
	local p entries="" i

	for i in 1 2 3 4 5 6; do
		entries="$entries{\"cidr\": \"127.0.2.$i\", \"ports\": [8080]},"
	done
	p=$(policy many "{\"name\": \"many\", \"allow\": [$entries
		{\"cidr\": \"127.0.0.2\", \"ports\": [8080]}]}")
	outside "OK tcp 127.0.0.3 8080" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.2 8080" "EPERM tcp 127.0.0.3 8080" \
		"EPERM tcp 127.0.0.2 8081" || return 1
}

test_policy_union() {
	local p1 p2

	p1=$(policy web "$WEB_POLICY")
	p2=$(policy other '{"name": "other", "allow": [
		{"cidr": "127.0.0.3", "ports": [8080]},
		{"cidr": "127.0.0.3", "ports": [5300], "protocol": "udp"}]}')
	outside "OK tcp 127.0.0.5 8080" || return 1
	inside --policy "$p1" --policy "$p2" -- "OK tcp 127.0.0.2 8080" "OK tcp 127.0.0.3 8080" \
		"OK udp 127.0.0.3 5300" "EPERM tcp 127.0.0.5 8080" "EPERM udp 127.0.0.2 5300" ||
		return 1
	inside --policy "$p2" -- "EPERM tcp 127.0.0.2 8080" "OK tcp 127.0.0.3 8080" || return 1
}

test_empty_allow_denies_all() {
	local p

	p=$(policy none '{"name": "none", "allow": []}')
	outside "OK tcp 127.0.0.2 8080" "OK udp 127.0.0.2 5300" "OK tcp 2001:db8::1 8080" || return 1
	inside --policy "$p" -- "EPERM tcp 127.0.0.2 8080" "EPERM udp 127.0.0.2 5300" \
		"EPERM udpconn 127.0.0.2 5300" "EPERM tcp 2001:db8::1 8080" \
		"EPERM udp 2001:db8::1 5300" "EPERM tcp-fastopen 127.0.0.2 8080" \
		"EPERM tcp ::ffff:127.0.0.2 8080" || return 1
	expect_audit 7 "$L_AUDIT" event=deny || return 1
}

# Raw and ICMP ("ping") sockets bypass connect/sendmsg address checks, so they are refused at
# creation. run opens net.ipv4.ping_group_range in the test netns, so only the sandbox stops
# the ping sockets (raw ones also need CAP_NET_RAW, which the job lacks).
test_raw_and_ping_sockets() {
	local p n

	p=$(policy web "$WEB_POLICY")
	outside "OK socket inet raw icmp" "OK socket inet dgram icmp" "OK socket inet6 raw icmpv6" \
		"OK socket inet6 dgram icmpv6" "OK socket packet raw all" || return 1
	inside --policy "$p" -- "EPERM socket inet raw icmp" "EPERM socket inet dgram icmp" \
		"EPERM socket inet6 raw icmpv6" "EPERM socket inet6 dgram icmpv6" \
		"EPERM socket packet raw all" "OK socket inet stream tcp" "OK socket inet dgram udp" \
		"OK socket inet6 stream 0" "OK socket inet6 dgram 0" "OK socket unix stream 0" ||
		return 1
	audit_check || return 1
	n=$(audit_count "$L_AUDIT" event=deny op=socket)
	[ "$n" -ge 2 ] ||
		fail "expected a deny line with op=socket for each ping socket, found $n" || return 1
}
