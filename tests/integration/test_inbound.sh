# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2153 # L_PID, L_OUT: set by lib.sh's launch helpers
# The job as a server (docs/threat-model.md, "Inbound"): it may bind and listen on loopback
# only, and only processes inside its sandbox may connect there; a policy's "listen" allows
# more. Each test first shows a forbidden peer outside the sandbox reading a server's data,
# then that the same server inside is refused (or its peer is), with its deny line.
# shellcheck disable=SC2016 # specs are single-quoted so that the shell running them expands

# Starts `probe serve ADDR PORT` (or serve-unix NAME) outside any sandbox, in the background,
# and waits until it listens. Sets S_PID and S_OUT (its result word, once it exits).
serve_outside() {
	local ready=$T_DIR/ready.out.$RANDOM

	S_OUT=$ready.result
	if [ "$1" = unix ]; then
		"$IT_PROBE" serve-unix "$2" "$ready" >"$S_OUT" 2>&1 &
	else
		"$IT_PROBE" serve "$1" "$2" "$ready" >"$S_OUT" 2>&1 &
	fi
	S_PID=$!
	track_pid "$S_PID"
	wait_for_file "$ready" 5 || fail "the server outside did not start: $(cat "$S_OUT")"
}

# serve_inside LAUNCH_OPTIONS... -- ADDR PORT | unix NAME: the same server as the sandbox's
# job (launch in the background); waits until it listens (or fails, when the sandbox
# refuses it: then the job has exited with its result word in L_OUT_FILE).
serve_inside() {
	local opts=() ready=$T_DIR/ready.in.$RANDOM

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	if [ "$1" = unix ]; then
		launch_bg "${opts[@]}" -- "$IT_PROBE" serve-unix "$2" "$ready"
	else
		launch_bg "${opts[@]}" -- "$IT_PROBE" serve "$1" "$2" "$ready"
	fi
	S_READY=$ready
	local i

	for ((i = 0; i < 250; i++)); do
		[ -s "$ready" ] && return 0
		kill -0 "$L_PID" 2>/dev/null || return 0
		sleep 0.02
	done
	fail "the server inside neither started nor failed"
}

# expect_result FILE WORD: a server's result word.
expect_result() {
	expect_eq "$3" "$2" "$(head -n1 "$1" 2>/dev/null)"
}

# A server on every address: outside, a peer that connects to it reads its data. Inside, the
# bind to 0.0.0.0 and :: on a fixed port is refused, and so is a listen on a socket bound to
# port 0 (or not bound at all), which would listen on every address as well.
test_inbound_wildcard_server() {
	local p

	serve_outside 0.0.0.0 9100 || return 1
	outside 'OK fetch 127.0.0.1 9100' || return 1
	wait "$S_PID"
	expect_result "$S_OUT" OK "the server outside" || return 1
	serve_outside :: 9101 || return 1
	outside 'OK fetch ::1 9101' || return 1
	wait "$S_PID"

	p=$(policy none '{"name": "none", "allow": []}')
	inside --policy "$p" -- 'EPERM serve 0.0.0.0 9100 /dev/null' 'EPERM serve :: 9101 /dev/null' \
		'EPERM serve 0.0.0.0 0 /dev/null' 'EPERM listen-unbound' \
		'EPERM bind 0.0.0.0 9102 udp' 'OK bind 0.0.0.0 0 udp' 'OK bind 0.0.0.0 0 tcp' \
		'OK bind 127.0.0.1 9103 udp' || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=bind family=ipv4 type=stream protocol=tcp \
		local_ip=0.0.0.0 local_port=9100 reason=address pid:int comm=probe || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=bind family=ipv6 local_ip=:: local_port=9101 \
		reason=address || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=bind protocol=udp local_port=9102 || return 1
	expect_audit 2 "$L_AUDIT" event=deny op=listen family=ipv4 local_ip=0.0.0.0 \
		reason=address syscall=listen || return 1
	expect_audit 5 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=5 || return 1
}

# A server on loopback: any process of the host may connect to it (outside, one does and
# reads the data). Inside, the job may listen there, but a peer outside the sandbox is not let
# in (its SYN is dropped: it times out) and the attempt is logged; a peer inside the sandbox
# (the policy allows the job to connect to that port) is.
test_inbound_loopback_peers() {
	local p n

	serve_outside 127.0.0.1 9110 || return 1
	outside 'OK fetch 127.0.0.1 9110' || return 1
	wait "$S_PID"
	expect_result "$S_OUT" OK "the server outside" || return 1

	p=$(policy lo '{"name": "lo", "allow": []}')
	serve_inside --policy "$p" -- 127.0.0.1 9110 || return 1
	[ -s "$S_READY" ] || fail "the job could not listen on loopback: $(cat "$L_OUT_FILE")" ||
		return 1
	outside 'ETIMEDOUT fetch 127.0.0.1 9110' || return 1
	launch_bg_wait 10 || return 1
	expect_rc "the server inside" 0 || return 1
	expect_eq "the server inside" ETIMEDOUT "$L_OUT" || return 1
	audit_check || return 1
	expect_audit 0 "$L_AUDIT" event=deny op=bind || return 1
	expect_audit 0 "$L_AUDIT" event=deny reason=address || return 1
	n=$(audit_count "$L_AUDIT" event=deny op=listen reason=peer family=ipv4 \
		local_ip=127.0.0.1 local_port=9110 peer_ip=127.0.0.1 peer_port:int)
	[ "$n" -ge 1 ] || fail "no deny line for the peer outside the sandbox" || return 1
	# The process named is the job's server, which bound the listener, not the peer.
	n=$(audit_count "$L_AUDIT" event=deny op=listen reason=peer comm=probe pid:int uid:int)
	[ "$n" -ge 1 ] || fail "the peer's deny line does not name the job's server" || return 1

	# A client inside the same sandbox reads the server's data.
	p=$(policy self '{"name": "self", "allow": [{"cidr": "127.0.0.1", "ports": [9111]}]}')
	launch_job --policy "$p" -- /bin/sh -c '"$1" serve 127.0.0.1 9111 "$2" & s=$!
		while [ ! -s "$2" ]; do sleep 0.01; done
		"$1" fetch 127.0.0.1 9111; wait $s' sh "$IT_PROBE" "$T_DIR/ready.self"
	expect_rc "a client and its server in one sandbox" 0 || return 1
	expect_eq "client, then server" "OK OK" "$(tr '\n' ' ' <"$L_OUT_FILE" | sed 's/ $//')" ||
		return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
}

# "listen" in the policy: the port may be served on every address, to any peer; others not.
test_inbound_listen_policy() {
	local p

	p=$(policy serve '{"name": "serve", "allow": [],
		"listen": [{"port": 9120}, {"port": "9130-9131", "protocol": "udp"}]}')
	serve_inside --policy "$p" -- 0.0.0.0 9120 || return 1
	[ -s "$S_READY" ] || fail "the job could not listen on 0.0.0.0:9120: $(cat "$L_OUT_FILE")" ||
		return 1
	outside 'OK fetch 127.0.0.1 9120' || return 1
	launch_bg_wait 10 || return 1
	expect_eq "the server inside" OK "$L_OUT" || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1

	inside --policy "$p" -- 'OK bind 0.0.0.0 9130 udp' 'OK bind :: 9131 udp' \
		'EPERM bind 0.0.0.0 9130 tcp' 'EPERM serve 0.0.0.0 9121 /dev/null' \
		'EPERM bind 0.0.0.0 9132 udp' || return 1
	expect_audit 3 "$L_AUDIT" event=deny op=bind || return 1
}

# An abstract unix socket lives in the network namespace, shared with the host: any process
# may connect to one the job binds. Inside, listening on one is refused unless the policy's
# "listen" names it; a path socket (the job's /tmp is its own) is not concerned.
test_inbound_abstract_unix() {
	local p name=launch-it-$$-srv

	serve_outside unix "@$name" || return 1
	outside "OK fetch-unix @$name" || return 1
	wait "$S_PID"
	expect_result "$S_OUT" OK "the server outside" || return 1

	p=$(policy ab '{"name": "ab", "allow": []}')
	inside --policy "$p" -- "EPERM serve-unix @$name /dev/null" \
		"EPERM serve-unix @$name\\0hidden /dev/null" 'EPERM unix-self @own' \
		'OK unix-self /tmp/own.sock' || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=listen family=unix type=stream reason=abstract \
		path="@$name" syscall=listen || return 1
	# The name whole, its NUL escaped.
	expect_audit 1 "$L_AUDIT" event=deny op=listen "path~^@$name\\x00hidden\$" || return 1
	grep -qF "\"path\":\"@$name\\u0000hidden\"" "$L_AUDIT" ||
		fail "the name with a NUL is not written escaped whole" || return 1

	p=$(policy abok "{\"name\": \"abok\", \"allow\": [], \"listen\": [{\"unix\": \"@$name\"}]}")
	serve_inside --policy "$p" -- unix "@$name" || return 1
	[ -s "$S_READY" ] || fail "the policy's abstract name was refused: $(cat "$L_OUT_FILE")" ||
		return 1
	outside "OK fetch-unix @$name" || return 1
	launch_bg_wait 10 || return 1
	expect_eq "the server inside" OK "$L_OUT" || return 1
}

# i_hooks CGROUP: the hooks with a program attached to the cgroup, one per line (bpftool's
# attach type names: cgroup_inet4_connect, cgroup_inet_ingress, ...).
i_hooks() {
	bpftool cgroup show "$1" 2>/dev/null | awk 'NR > 1 { print $2 }'
}

# i_wait_file FILE: the job got that far (or the launch ended: fails then).
i_wait_file() {
	local i

	for ((i = 0; i < 250; i++)); do
		[ -e "$1" ] && return 0
		kill -0 "$L_PID" 2>/dev/null || break
		sleep 0.02
	done
	fail "the job did not reach $1: $(cat "$L_OUT_FILE" "$L_ERR_FILE")"
}

# i_release GOFILE WHY: a test that failed while its job waits for GOFILE lets the job end
# before it fails, so that its launcher cleans up.
i_release() {
	: >"$1"
	launch_bg_wait 10
	fail "$2"
}

# The ingress program only judges packets to the job's TCP listeners, and the job's sockets
# listen only through the launcher: a client-only sandbox has it not attached at all (the
# other hooks are), a listen on a path AF_UNIX socket does not attach it, the first inet
# listen does, before the socket listens, and it then keeps a peer outside out as before.
test_inbound_ingress_on_listen() {
	local p cg hooks up=$T_DIR/ingress.up go=$T_DIR/ingress.go ready=$T_DIR/ingress.ready n

	p=$(policy lo '{"name": "lo", "allow": []}')
	launch_bg --policy "$p" -- /bin/sh -c '"$1" unix-self /tmp/own.sock; : >"$2"
		while [ ! -e "$3" ]; do sleep 0.01; done
		exec "$1" serve 127.0.0.1 9140 "$4"' sh "$IT_PROBE" "$up" "$go" "$ready"
	cg=$IT_CG2/launch/$L_NAME
	i_wait_file "$up" || return 1
	hooks=$(i_hooks "$cg")
	echo "$hooks" | grep -qx cgroup_inet4_connect ||
		i_release "$go" "no program on the client-only sandbox's connect4 hook: $hooks" ||
		return 1
	echo "$hooks" | grep -qx cgroup_inet_egress ||
		i_release "$go" "no program on the client-only sandbox's egress hook: $hooks" ||
		return 1
	if echo "$hooks" | grep -qx cgroup_inet_ingress; then
		i_release "$go" "ingress attached to a sandbox that listened only on a path socket"
		return 1
	fi
	: >"$go"
	i_wait_file "$ready" || return 1
	i_hooks "$cg" | grep -qx cgroup_inet_ingress ||
		fail "no ingress program once the job listens on 127.0.0.1:9140" || return 1
	outside 'ETIMEDOUT fetch 127.0.0.1 9140' || return 1
	launch_bg_wait 10 || return 1
	expect_rc "the server inside" 0 || return 1
	expect_eq "the job's words" "OK ETIMEDOUT" "$(tr '\n' ' ' <"$L_OUT_FILE" | sed 's/ $//')" ||
		return 1
	audit_check || return 1
	n=$(audit_count "$L_AUDIT" event=deny op=listen reason=peer local_port=9140)
	[ "$n" -ge 1 ] || fail "no deny line for the peer outside the sandbox" || return 1
}

# Fails closed: when the ingress program cannot be attached (here another program sits on
# the hook with BPF_F_ALLOW_MULTI, which the kernel will not mix with launch's own mode), the
# listen is refused with EPERM and logged (reason attach), and the job goes on, confined.
test_inbound_ingress_attach_fails() {
	local p cg id version up=$T_DIR/fail.up go=$T_DIR/fail.go

	p=$(policy lo '{"name": "lo", "allow": []}')
	launch_bg --policy "$p" -- /bin/sh -c ': >"$2"; while [ ! -e "$3" ]; do sleep 0.01; done
		"$1" serve 127.0.0.1 9141 /dev/null; "$1" bind 127.0.0.1 9142 tcp' \
		sh "$IT_PROBE" "$up" "$go"
	cg=$IT_CG2/launch/$L_NAME
	i_wait_file "$up" || return 1
	# launch_ingress itself, from this build's holder: it still judges the peers meanwhile.
	version=$("$IT_LAUNCH" --version | sed -n 's/.*(bpf \([0-9a-f]*\))$/\1/p')
	id=$(bpftool cgroup show "$IT_CG2/launch/.bpf-$version" 2>/dev/null |
		awk '$2 == "cgroup_inet_ingress" { print $1; exit }')
	[ -n "$id" ] || i_release "$go" "no ingress program on the holder" || return 1
	bpftool cgroup attach "$cg" cgroup_inet_ingress id "$id" multi ||
		i_release "$go" "cannot attach a program to $cg with BPF_F_ALLOW_MULTI" || return 1
	: >"$go"
	launch_bg_wait 10 || return 1
	expect_rc "the job" 0 || return 1
	expect_eq "the job's words" "EPERM OK" "$(tr '\n' ' ' <"$L_OUT_FILE" | sed 's/ $//')" ||
		return 1
	expect_match "launch's stderr" "cannot attach launch_ingress" "$L_ERR" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=listen family=ipv4 type=stream local_ip=127.0.0.1 \
		local_port=9141 reason=attach syscall=listen || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 || return 1
}
