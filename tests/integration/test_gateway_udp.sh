# SPDX-License-Identifier: LGPL-2.1-or-later
# UDP to a gateway host's address (docs/gateway.md, "Redirection"): the gateway takes TCP
# only, so UDP there (HTTP/3 with the job's own key) is refused whatever other rule allows it.
# Each test first shows the datagram reaching the address under the same policy without
# "http" on the host (a cidr rule allows UDP 443 there), then refused with it: EPERM, nothing
# received, and the refusal's line (op connect or sendmsg).

UG_DNS=127.0.0.53
UG_DNS_PORT=5359
UG_ADDR=127.0.6.20 # api.stripe.com at start: an exact address of the policy
UG_LATE=127.0.6.21 # where the name moves at run time: an address the DNS proxy opens

listeners udp:127.0.6.20:443 udp:127.0.6.21:443

# ug_policy HTTP: the host rule (with "http" when HTTP is 1) and a cidr rule allowing UDP 443
# to both addresses. "sni": false: the name check, on by default for port 443, refuses UDP
# there already (sni_refuses_udp); without it, or on a port other than 443, nothing did.
ug_policy() {
	local http=""

	[ "$1" = 1 ] && http=', "http": {}'
	policy "ug$1" '{"name": "ug", "allow": [
		{"host": "api.stripe.com", "ports": [443], "sni": false'"$http"'},
		{"cidr": "127.0.6.20", "ports": [443], "protocol": "udp"},
		{"cidr": "127.0.6.21", "ports": [443], "protocol": "udp"}]}'
}

# A DNS query for api.stripe.com sent to $1:53 from inside: the DNS proxy answers it, whatever
# the address (port 53 is redirected before the gateway's UDP refusal is asked).
# shellcheck disable=SC2016
UG_DNS_QUERY='import socket, struct, sys
q = struct.pack(">HHHHHH", 0x1234, 0x100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p for p in b"api.stripe.com".split(b".")) + b"\0"
q += struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, (sys.argv[1], 53))
r = s.recv(512)
print("dns=%s" % ("answered" if r[:2] == q[:2] and struct.unpack(">H", r[6:8])[0] else "empty"))'

# An exact address: sendmsg and connect both refused once "http" is on the host.
test_gateway_udp_exact() {
	local n

	dnsmasq_start "$UG_DNS" "$UG_DNS_PORT" "$T_DIR/dns.log" \
		--address=/api.stripe.com/"$UG_ADDR" || return 1
	n=$(received udp "$UG_ADDR" 443)
	outside "OK udp $UG_ADDR 443" || return 1
	expect_received udp "$UG_ADDR" 443 $((n + 1)) || return 1
	# Without "http": the cidr rule lets UDP through.
	inside --policy "$(ug_policy 0)" --resolver "$UG_DNS:$UG_DNS_PORT" -- \
		"OK udp $UG_ADDR 443" "OK udpconn $UG_ADDR 443" || return 1
	expect_received udp "$UG_ADDR" 443 $((n + 3)) || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	# With it: refused, and each refusal logged.
	inside --policy "$(ug_policy 1)" --resolver "$UG_DNS:$UG_DNS_PORT" -- \
		"EPERM udp $UG_ADDR 443" "EPERM udpconn $UG_ADDR 443" || return 1
	expect_received udp "$UG_ADDR" 443 $((n + 3)) || return 1
	audit_check || return 1
	expect_audit 2 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=sendmsg family=ipv4 protocol=udp \
		dst_ip="$UG_ADDR" dst_port=443 comm=probe sandbox="$L_NAME" policy=ug || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect family=ipv4 protocol=udp \
		dst_ip="$UG_ADDR" dst_port=443 comm=probe || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=2 \
		'denied_by_op={"connect":1,"sendmsg":1}' || return 1
	# DNS to the gateway host's address still goes to the proxy.
	launch_job --policy "$(ug_policy 1)" --resolver "$UG_DNS:$UG_DNS_PORT" -- \
		"$IT_PY" -c "$UG_DNS_QUERY" "$UG_ADDR"
	expect_rc "the DNS query to $UG_ADDR:53" 0 || return 1
	expect_eq "the DNS query to $UG_ADDR:53" dns=answered "$L_OUT" || return 1
	expect_audit 0 "$L_AUDIT" event=deny
}

# ug_late HTTP: a job that waits for the name to move to $UG_LATE, looks it up (the DNS proxy
# opens the address, for the gateway when HTTP is 1) and sends a datagram there.
ug_late() {
	rm -f "$T_DIR/moved"
	printf '%s api.stripe.com\n' "$UG_ADDR" >"$T_DIR/hosts"
	dnsmasq_start "$UG_DNS" "$UG_DNS_PORT" "$T_DIR/dns.log" --addn-hosts="$T_DIR/hosts" \
		--local-ttl=0 || return 1
	# shellcheck disable=SC2016
	launch_bg --policy "$(ug_policy "$1")" --resolver "$UG_DNS:$UG_DNS_PORT" -- \
		/bin/sh -c 'while [ ! -e "$0/moved" ]; do sleep 0.05; done
			getent ahostsv4 api.stripe.com | head -1
			"$1" udp "$2" 443' "$T_DIR" "$IT_PROBE" "$UG_LATE"
	sleep 0.5
	dnsmasq_moved "$UG_DNS" "$UG_DNS_PORT" api.stripe.com "$UG_LATE" || return 1
	touch "$T_DIR/moved"
	launch_bg_wait 30 || return 1
	cat "$L_OUT_FILE"
	expect_rc "job" 0 || return 1
	grep -q "^$UG_LATE " "$L_OUT_FILE" || fail "the name did not move to $UG_LATE"
}

# An address the DNS proxy opens at run time for the gateway's host: refused too.
test_gateway_udp_dns_answered() {
	local n

	n=$(received udp "$UG_LATE" 443)
	ug_late 0 || return 1
	expect_eq "without http, UDP to $UG_LATE" OK "$(tail -1 "$L_OUT_FILE")" || return 1
	expect_received udp "$UG_LATE" 443 $((n + 1)) || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	kill "$DNSMASQ_PID"
	wait "$DNSMASQ_PID" 2>/dev/null
	ug_late 1 || return 1
	expect_eq "with http, UDP to $UG_LATE" EPERM "$(tail -1 "$L_OUT_FILE")" || return 1
	expect_received udp "$UG_LATE" 443 $((n + 1)) || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=sendmsg protocol=udp dst_ip="$UG_LATE" \
		dst_port=443 comm=probe
}
