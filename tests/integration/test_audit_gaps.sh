# SPDX-License-Identifier: LGPL-2.1-or-later
# Netlink between processes, and refusals that used to leave no (or a cut) audit line: calls
# of another ABI refused by the seccomp filter, abstract unix names holding NUL bytes, and a
# datagram to port 53 that is no DNS query. Each shows the attempt outside first.
# shellcheck disable=SC2016 # specs are single-quoted so that the shell running them expands

listeners udp:127.0.0.4:53

# NETLINK_USERSOCK carries data from any process to any other (outside: a receiver gets the
# payload). Inside, only NETLINK_ROUTE sockets may be made (getaddrinfo's AI_ADDRCONFIG,
# if_nameindex): a usersock one is refused and logged, and nothing reaches the receiver.
test_netlink_usersock() {
	local p pid portid=$((70000 + $$ % 10000)) ready=$T_DIR/nl.ready

	"$IT_PROBE" netlink-recv "$portid" "$ready" >"$T_DIR/nl.out" 2>&1 &
	pid=$!
	track_pid "$pid"
	wait_for_file "$ready" 5 || fail "netlink receiver did not start" || return 1
	outside "OK netlink-send $portid" || return 1
	wait "$pid"
	expect_eq "the receiver outside" OK "$(cat "$T_DIR/nl.out")" || return 1

	rm -f "$ready"
	"$IT_PROBE" netlink-recv "$portid" "$ready" >"$T_DIR/nl.out" 2>&1 &
	pid=$!
	track_pid "$pid"
	wait_for_file "$ready" 5 || fail "netlink receiver did not start" || return 1
	p=$(policy nl '{"name": "nl", "allow": []}')
	inside --policy "$p" -- "EPERM netlink-send $portid" 'EPERM socket netlink raw 2' \
		'EPERM socket netlink dgram 15' 'EPERM socket netlink raw 4' \
		'OK socket netlink raw 0' 'OK socket netlink dgram 0' || return 1
	wait "$pid"
	expect_eq "the receiver, with the sender inside" ETIMEDOUT "$(cat "$T_DIR/nl.out")" ||
		return 1
	audit_check || return 1
	expect_audit 2 "$L_AUDIT" event=deny op=socket family=netlink type=raw protocol=usersock \
		syscall=socket pid:int comm=probe || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=netlink protocol=kobject_uevent ||
		return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=netlink protocol=sock_diag ||
		return 1
	expect_audit 4 "$L_AUDIT" event=deny || return 1
	# getaddrinfo with AI_ADDRCONFIG still works: it asks NETLINK_ROUTE for the addresses.
	launch_job --policy "$p" -- "$IT_PY" -c 'import socket
socket.getaddrinfo("localhost", 80, flags=socket.AI_ADDRCONFIG)
print(len(socket.if_nameindex()) > 0)'
	expect_rc "getaddrinfo(AI_ADDRCONFIG) and if_nameindex inside" 0 || return 1
	expect_eq "if_nameindex inside" True "$L_OUT" || return 1
}

# x32 calls (bit 30 of the number) reach the seccomp filter before the kernel finds it has no
# x32 ABI (outside: ENOSYS). Inside they are refused, and logged with the call's name and ABI.
test_audit_other_abi() {
	local p

	outside 'ENOSYS x32 socket' || return 1
	p=$(policy abi '{"name": "abi", "allow": []}')
	inside --policy "$p" -- 'EPERM x32 socket' 'OK socket inet stream tcp' || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=syscall syscall=socket abi=x32 pid:int \
		comm=probe || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 || return 1
}

# An abstract name is any bytes, NULs included: the deny line has it whole, escaped, not cut at
# its first NUL (outside, a server of that name is reached).
test_audit_abstract_name_whole() {
	local p pid name=launch-it-$$-nul ready=$T_DIR/ab.ready

	"$IT_PROBE" serve-unix "@$name\\0secret\\0" "$ready" >"$T_DIR/ab.out" 2>&1 &
	pid=$!
	track_pid "$pid"
	wait_for_file "$ready" 5 || fail "the server outside did not start" || return 1
	outside "OK fetch-unix @$name\\0secret\\0" || return 1
	wait "$pid"

	p=$(policy ab '{"name": "ab", "allow": []}')
	inside --policy "$p" -- "EPERM unix @$name\\0secret\\0" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix "dst_path~^@$name\\x00secret\\x00\$" ||
		return 1
	grep -qF "\"dst_path\":\"@$name\\u0000secret\\u0000\"" "$L_AUDIT" ||
		fail "the name is not written whole: $(grep connect_unix "$L_AUDIT")" || return 1
}

# A datagram to port 53 is the DNS proxy's, whatever the address: outside, text sent there
# reaches whoever listens. Inside, the proxy gets it (nothing leaves), answers it as a
# malformed query, and writes a deny line with the sender's pid.
test_audit_dns_malformed() {
	local p before

	outside 'OK udp-text 127.0.0.4 53 exfil:sk_live_secret' || return 1
	sleep 0.2
	grep -q 'exfil:sk_live_secret' "$(listener_file udp 127.0.0.4 53)" ||
		fail "the listener outside did not receive the text" || return 1
	before=$(c_bytes_or_zero)

	p=$(policy dns '{"name": "dns", "allow": []}')
	inside --policy "$p" --resolver 127.0.0.53:5354 -- \
		'OK udp-text 8.8.8.8 53 exfil:sk_live_secret' \
		'OK udp-text 127.0.0.4 53 exfil:sk_live_secret' || return 1
	audit_check || return 1
	expect_audit 2 "$L_AUDIT" event=deny op=dns reason=malformed protocol=udp pid:int || return 1
	expect_audit 0 "$L_AUDIT" event=deny op=dns pid! || return 1
	sleep 0.2
	expect_eq "bytes the listener on 127.0.0.4:53 received from inside" "$before" \
		"$(c_bytes_or_zero)" || return 1
}

c_bytes_or_zero() {
	stat -c %s "$(listener_file udp 127.0.0.4 53)" 2>/dev/null || echo 0
}
