# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2153 # L_RC, L_ERR, L_END: set by lib.sh's launch helpers
# launch update: a running sandbox's policy replaced at once, under loops of connections that
# record every outcome with the time it began.
#
# Each address is first shown to be reachable outside the sandbox, so that a refusal inside
# is the policy's doing.

listeners tcp:127.0.0.2:8201 tcp:127.0.0.3:8202 tcp:127.0.0.4:8203 udp:127.0.0.2:8211

UPD_OLD='{"name": "old", "allow": [{"cidr": "127.0.0.2", "ports": [8201], "protocol": "tcp"}]}'
UPD_NEW='{"name": "new", "allow": [{"cidr": "127.0.0.3", "ports": [8202], "protocol": "tcp"}]}'

# upd_outcomes LOG FROM_US TO_US: "OK REFUSED OTHER" counts of the attempts begun in [FROM, TO).
upd_outcomes() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 < b {
		if ($2 == "OK") ok++; else if ($2 == "EPERM") no++; else other++
	} END { printf "%d %d %d\n", ok, no, other }' "$1"
}

# upd_wait_ok LOG FROM_US N SECONDS: waits until N attempts begun after FROM succeeded.
upd_wait_ok() {
	local i ok

	for ((i = 0; i < $4 * 50; i++)); do
		read -r ok _ < <(upd_outcomes "$1" "$2" 99999999999999999)
		[ "$ok" -ge "$3" ] && return 0
		sleep 0.02
	done
	fail "$(basename "$1"): fewer than $3 connections succeeded after $2 ($(upd_outcomes "$1" "$2" 99999999999999999))"
}

# upd_wait_refused LOG N SECONDS: waits until N attempts were refused.
upd_wait_refused() {
	local i no

	for ((i = 0; i < $3 * 50; i++)); do
		read -r _ no _ < <(upd_outcomes "$1" 0 99999999999999999)
		[ "$no" -ge "$2" ] && return 0
		sleep 0.02
	done
	fail "$(basename "$1"): fewer than $2 connections refused ($(upd_outcomes "$1" 0 99999999999999999))"
}

upd_us() {
	echo "${1/./}"
}

# upd_run ARGS...: launch_raw for `launch update`, leaving the background launch's files and
# start time in place for launch_bg_wait and audit_check; U_RC, U_ERR, U_END are the command's.
upd_run() {
	local out=$L_OUT_FILE err=$L_ERR_FILE start=$L_START

	launch_raw "$@"
	U_RC=$L_RC
	U_ERR=$L_ERR
	U_END=$L_END
	L_OUT_FILE=$out
	L_ERR_FILE=$err
	L_START=$start
}

# upd_wait_control: waits until the background sandbox takes requests (its control socket).
upd_wait_control() {
	local i

	for ((i = 0; i < 500; i++)); do
		[ -S "/run/launch/$L_NAME.ctl" ] && return 0
		sleep 0.02
	done
	fail "no control socket /run/launch/$L_NAME.ctl after 10 s"
}

# upd_stop: ends the job's loops and waits for the launcher (after a failure).
upd_stop() {
	: >"$T_DIR/stop"
	: >"$T_DIR/go"
	launch_bg_wait 10
	return 1
}

# upd_expect_ok: the last upd_run of `launch update` succeeded; otherwise fails and stops.
upd_expect_ok() {
	[ "$U_RC" = 0 ] && return 0
	fail "launch update exited $U_RC ($(brief "$U_ERR"))"
	upd_stop
}

# upd_finish: ends the job's loops, waits for the launcher and expects the job's success.
upd_finish() {
	: >"$T_DIR/stop"
	launch_bg_wait 10 || return 1
	expect_rc "job" 0
}

# upd_held: starts the upstream that holds names starting with "held." (answering 127.0.0.3)
# until $T_DIR/held/release exists, at 127.0.0.53:5356.
upd_held() {
	local i

	mkdir -p "$T_DIR/held"
	"$IT_PY" "$IT_FIX/dns/held_upstream.py" 127.0.0.53 5356 127.0.0.3 "$T_DIR/held" \
		2>"$T_DIR/held.err" &
	track_pid $!
	for ((i = 0; i < 500; i++)); do
		[ -e "$T_DIR/held/ready" ] && return 0
		sleep 0.02
	done
	fail "the held upstream did not start: $(brief "$(cat "$T_DIR/held.err")")"
}

# upd_request_held NEW: `launch update` of the running sandbox to policy NEW, in the
# background (its pid in $T_DIR/update.pid, its output in $T_DIR/update.out), once the held
# upstream has been asked for the new policy's host.
upd_request_held() {
	"$IT_LAUNCH" update "$L_NAME" --policy "$1" >"$T_DIR/update.out" 2>&1 &
	echo $! >"$T_DIR/update.pid"
	track_pid "$(cat "$T_DIR/update.pid")"
	wait_for_file "$T_DIR/held/held" 10 || fail "the update never asked for its host" ||
		upd_stop
}

test_update_swap() {
	local old new before after end ok no other old_sha new_sha

	old=$(policy old "$UPD_OLD")
	new=$(policy new "$UPD_NEW")
	outside "OK tcp 127.0.0.2 8201" || return 1
	outside "OK tcp 127.0.0.3 8202" || return 1
	outside "OK tcp 127.0.0.4 8203" || return 1

	# shellcheck disable=SC2016
	launch_bg --policy "$old" -- /bin/sh -c '
		"$0" tcp-loop 127.0.0.2 8201 "$1/old.log" "$1/stop" >/dev/null &
		"$0" tcp-loop 127.0.0.3 8202 "$1/new.log" "$1/stop" >/dev/null &
		"$0" tcp-loop 127.0.0.4 8203 "$1/neither.log" "$1/stop" >/dev/null &
		wait' "$IT_PROBE" "$T_DIR"
	upd_wait_ok "$T_DIR/old.log" 0 20 10 || upd_stop || return 1
	# The three loops run side by side, not in step: each has its 20 before the update.
	upd_wait_refused "$T_DIR/new.log" 20 10 || upd_stop || return 1
	upd_wait_refused "$T_DIR/neither.log" 20 10 || upd_stop || return 1

	before=$(upd_us "$EPOCHREALTIME")
	upd_run update "$L_NAME" --policy "$new"
	after=$(upd_us "$U_END")
	upd_expect_ok || return 1
	# The new address, refused until the update, is reached after it.
	upd_wait_ok "$T_DIR/new.log" "$after" 20 10 || upd_stop || return 1
	upd_finish || return 1
	end=$(upd_us "$EPOCHREALTIME")
	echo "  update took $(((after - before) / 1000)) ms"

	# Old-only: reached before the update; refused from the moment the command returned.
	read -r ok no other < <(upd_outcomes "$T_DIR/old.log" 0 "$before")
	[ "$ok" -ge 20 ] || fail "old address: $ok connections before the update succeeded" || return 1
	read -r ok no other < <(upd_outcomes "$T_DIR/old.log" "$after" "$end")
	[ "$ok" = 0 ] && [ "$other" = 0 ] && [ "$no" -ge 20 ] ||
		fail "old address after the update: $ok succeeded, $no refused, $other other" ||
		return 1
	# New-only: refused until the command began.
	read -r ok no other < <(upd_outcomes "$T_DIR/new.log" 0 "$before")
	[ "$ok" = 0 ] && [ "$other" = 0 ] && [ "$no" -ge 20 ] ||
		fail "new address before the update: $ok succeeded, $no refused, $other other" ||
		return 1
	read -r ok no other < <(upd_outcomes "$T_DIR/new.log" "$after" "$end")
	[ "$no" = 0 ] && [ "$other" = 0 ] ||
		fail "new address after the update: $ok succeeded, $no refused, $other other" ||
		return 1
	# Neither: refused at every moment, the swap's included.
	read -r ok no other < <(upd_outcomes "$T_DIR/neither.log" 0 "$end")
	[ "$ok" = 0 ] && [ "$other" = 0 ] && [ "$no" -ge 40 ] ||
		fail "address of neither policy: $ok succeeded, $no refused, $other other" || return 1

	audit_check || return 1
	old_sha=$(sha256sum "$old" | cut -c1-64)
	new_sha=$(sha256sum "$new" | cut -c1-64)
	expect_audit 1 "$L_AUDIT" event=policy_update sandbox="$L_NAME" policy=new old_policy=old \
		"old_policies~$old_sha" "policies~$new_sha" rules=1 requester_uid=0 \
		requester_pid:int || return 1
	# Refusals after the update name the new policy; sandbox_start named the old one.
	expect_audit 1 "$L_AUDIT" event=sandbox_start policy=old || return 1
	[ "$(audit_count "$L_AUDIT" event=deny dst_ip=127.0.0.2 policy=new)" -ge 1 ] ||
		fail "no deny line for the old address under the new policy" || return 1
	# The counters live apart from the settings: the swap lost none of them.
	expect_audit 1 "$L_AUDIT" event=sandbox_exit policy=new lost=0 \
		denied="$(audit_count "$L_AUDIT" event=deny)" || return 1
}

# A socket's unconnected sends: sendmsg remembers, on the socket, the destination that the
# allowlist's maps let it reach (more than four exact addresses are in maps, not compared in
# place). What it remembered under the old policy must not let the same socket reach that
# destination under the new one.
test_update_udp_remembered() {
	local old new before after end ok no other i

	old=$(policy old '{"name": "old", "allow": [
		{"cidr": "127.0.0.2", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.1", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.2", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.3", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.4", "ports": [8211], "protocol": "udp"}]}')
	new=$(policy new '{"name": "new", "allow": [
		{"cidr": "127.0.9.1", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.2", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.3", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.4", "ports": [8211], "protocol": "udp"},
		{"cidr": "127.0.9.5", "ports": [8211], "protocol": "udp"}]}')
	outside "OK udp 127.0.0.2 8211" || return 1

	launch_bg --policy "$old" -- "$IT_PROBE" udp-loop 127.0.0.2 8211 "$T_DIR/udp.log" \
		"$T_DIR/stop"
	upd_wait_ok "$T_DIR/udp.log" 0 20 10 || upd_stop || return 1
	before=$(upd_us "$EPOCHREALTIME")
	upd_run update "$L_NAME" --policy "$new"
	after=$(upd_us "$U_END")
	upd_expect_ok || return 1
	# Refusals after the update, on the socket that sent there before it.
	for ((i = 0; i < 500; i++)); do
		read -r ok no other < <(upd_outcomes "$T_DIR/udp.log" "$after" 99999999999999999)
		[ "$((ok + no + other))" -ge 20 ] && break
		sleep 0.02
	done
	: >"$T_DIR/stop"
	launch_bg_wait 10 || return 1
	end=$(upd_us "$EPOCHREALTIME")
	read -r ok no other < <(upd_outcomes "$T_DIR/udp.log" 0 "$before")
	[ "$ok" -ge 20 ] && [ "$no" = 0 ] && [ "$other" = 0 ] ||
		fail "before the update: $ok sent, $no refused, $other other" || return 1
	read -r ok no other < <(upd_outcomes "$T_DIR/udp.log" "$after" "$end")
	[ "$ok" = 0 ] && [ "$other" = 0 ] && [ "$no" -ge 20 ] ||
		fail "the same socket after the update: $ok sent, $no refused, $other other" ||
		return 1
	audit_check || return 1
	[ "$(audit_count "$L_AUDIT" event=deny op=sendmsg dst_ip=127.0.0.2 policy=new)" -ge 1 ] ||
		fail "no sendmsg deny line for the old address under the new policy" || return 1
}

# A policy that does not load leaves the old one in force, and says which file is at fault.
test_update_bad_policy() {
	local old bad

	old=$(policy old "$UPD_OLD")
	bad=$T_DIR/bad.json
	echo '{"name": "bad", "allow": [{"cidr": "127.0.0.999"}]}' >"$bad"
	# shellcheck disable=SC2016
	launch_bg --policy "$old" -- /bin/sh -c '
		while [ ! -e "$1/go" ]; do sleep 0.01; done
		"$0" tcp 127.0.0.2 8201' "$IT_PROBE" "$T_DIR"
	upd_wait_control || upd_stop || return 1
	upd_run update "$L_NAME" --policy "$bad"
	[ "$U_RC" = 125 ] || fail "launch update with a bad policy exited $U_RC, expected 125" ||
		upd_stop || return 1
	expect_match "stderr" "bad.json" "$U_ERR" || upd_stop || return 1
	: >"$T_DIR/go"
	launch_bg_wait 10 || return 1
	expect_eq "the old policy's address after a failed update" OK "$L_OUT" || return 1
	expect_audit 0 "$L_AUDIT" event=policy_update || return 1
}

test_update_no_sandbox() {
	local p

	p=$(policy new "$UPD_NEW")
	launch_raw update "it-no-such-sandbox-$$" --policy "$p"
	expect_rc "launch update of no sandbox" 125 || return 1
	expect_match "stderr" "no running sandbox" "$L_ERR" || return 1
}

# A job cannot widen its own policy: even as uid 0, its `launch update` cannot reach the
# launcher's control socket (the AF_UNIX hook refuses a path no policy names, and logs it).
test_update_from_inside() {
	local old wide name

	old=$(policy old "$UPD_OLD")
	wide=$(policy wide '{"name": "wide", "allow": [{"cidr": "127.0.0.0/8", "protocol": "any"}]}')
	# The name launch_job is about to give the sandbox.
	name=it$IT_RUNID-$BASHPID-$((L_N + 1))
	# shellcheck disable=SC2016
	launch_job --user root --policy "$old" -- /bin/sh -c '
		"$0" update "$1" --policy "$2" >/dev/null 2>"$3/inside.err"
		echo "update=$?"
		"$4" tcp 127.0.0.4 8203' "$IT_LAUNCH" "$name" "$wide" "$T_DIR" "$IT_PROBE"
	expect_rc "job" 0 || return 1
	expect_eq "sandbox name" "$name" "$L_NAME" || return 1
	expect_eq "the job's launch update, then its connect" "update=125
EPERM" "$L_OUT" || return 1
	expect_audit 0 "$L_AUDIT" event=policy_update || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect_unix "dst_path=/run/launch/$name.ctl" ||
		return 1
}

# The control socket never stalls the launcher's one loop: a requester that connects and
# sends nothing is answered ETIMEDOUT after 2 s and dropped, and meanwhile the job's DNS
# look-ups (answered by the proxy in that loop) and its refused connections go on at once.
test_update_silent_client() {
	local old new out i

	old=$(policy old "$UPD_OLD")
	new=$(policy new "$UPD_NEW")
	outside "OK tcp 127.0.0.4 8203" || return 1
	# shellcheck disable=SC2016
	launch_bg --policy "$old" -- /bin/sh -c '
		while [ ! -e "$0/go" ]; do sleep 0.01; done
		"$1" "$2" "qtimes udp 192.0.2.53 evil.example A 10 0.1" "tcp 127.0.0.4 8203"
		while [ ! -e "$0/stop" ]; do sleep 0.01; done' "$T_DIR" "$IT_PY" "$IT_FIX/dns/job.py"
	upd_wait_control || upd_stop || return 1
	# A root requester outside the sandbox that connects and sends nothing.
	"$IT_PY" -c '
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
start = time.monotonic()
with open(sys.argv[2], "w") as f:
    f.write("connected\n")
s.settimeout(10)
m = s.recv(4096)
print(struct.unpack("=i", m[:4])[0], int((time.monotonic() - start) * 1000), m[4:].decode())
' "/run/launch/$L_NAME.ctl" "$T_DIR/connected" >"$T_DIR/silent.out" 2>&1 &
	track_pid $!
	wait_for_file "$T_DIR/connected" 10 || fail "the silent requester did not connect" ||
		upd_stop || return 1
	: >"$T_DIR/go"
	# The look-ups are done before the silent requester is let go (2 s): had the loop waited
	# on it, they would end after its answer.
	for ((i = 0; i < 500; i++)); do
		grep -q "^tcp " "$L_OUT_FILE" && break
		sleep 0.02
	done
	[ ! -s "$T_DIR/silent.out" ] ||
		fail "the silent requester was answered ($(cat "$T_DIR/silent.out")) before the job's look-ups were done: $(brief "$(cat "$L_OUT_FILE")")" ||
		upd_stop || return 1
	wait_for_file "$T_DIR/silent.out" 10
	out=$(cat "$L_OUT_FILE")
	echo "  job: $(brief "$out"); silent requester: $(cat "$T_DIR/silent.out")"
	[[ $out =~ qtimes\ evil.example\ rcode=5\ max_ms=([0-9]+) ]] ||
		fail "no look-up result: $(brief "$out")" || upd_stop || return 1
	[ "${BASH_REMATCH[1]}" -lt 500 ] ||
		fail "a look-up waited ${BASH_REMATCH[1]} ms while a requester sent nothing" ||
		upd_stop || return 1
	expect_match "the job's connect" "tcp 127.0.0.4 EPERM" "$out" || upd_stop || return 1
	[[ $(cat "$T_DIR/silent.out") =~ ^-110\ ([0-9]+)\ no\ request ]] ||
		fail "silent requester: $(brief "$(cat "$T_DIR/silent.out")")" || upd_stop || return 1
	[ "${BASH_REMATCH[1]}" -ge 1500 ] ||
		fail "the silent requester was dropped after ${BASH_REMATCH[1]} ms, not 2 s" ||
		upd_stop || return 1
	# The next requester is served.
	upd_run update "$L_NAME" --policy "$new"
	upd_expect_ok || return 1
	upd_finish || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=policy_update policy=new || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.0.4 policy=old
}

# The compile of the new policies runs beside the loop: resolving their hosts (here held by
# the upstream until the test lets it answer) holds neither the job's DNS look-ups nor its
# refusals; the update completes once the host resolved.
test_update_slow_compile() {
	local old new out i

	old=$(policy old "$UPD_OLD")
	new=$(policy new '{"name": "new", "allow": [{"host": "held.provider.test", "ports": [8202]}]}')
	upd_held || return 1
	# shellcheck disable=SC2016
	launch_bg --resolver 127.0.0.53:5356 --policy "$old" -- /bin/sh -c '
		while [ ! -e "$0/go" ]; do sleep 0.01; done
		"$1" "$2" "qtimes udp 192.0.2.53 evil.example A 5 0.1" "tcp 127.0.0.4 8203"
		while [ ! -e "$0/stop" ]; do sleep 0.01; done
		"$1" "$2" "tcp 127.0.0.3 8202"' "$T_DIR" "$IT_PY" "$IT_FIX/dns/job.py"
	upd_wait_control || upd_stop || return 1
	upd_request_held "$new" || return 1
	: >"$T_DIR/go"
	# The resolver tries for 2 s: the job's look-ups and refusal must be done well before
	# the host is let go, or the loop was held by the compile.
	for ((i = 0; i < 60; i++)); do
		grep -q "^tcp " "$L_OUT_FILE" && break
		sleep 0.02
	done
	if ! grep -q "^tcp " "$L_OUT_FILE"; then
		: >"$T_DIR/held/release"
		fail "the job's look-ups were not done within 1.2 s while the update's host was held: $(brief "$(cat "$L_OUT_FILE")")"
		upd_stop
		return 1
	fi
	: >"$T_DIR/held/release"
	wait "$(cat "$T_DIR/update.pid")" ||
		fail "launch update failed: $(brief "$(cat "$T_DIR/update.out")")" || upd_stop ||
		return 1
	upd_finish || return 1
	out=$(cat "$L_OUT_FILE")
	echo "  job: $(brief "$out")"
	[[ $out =~ qtimes\ evil.example\ rcode=5\ max_ms=([0-9]+) ]] ||
		fail "no look-up result: $(brief "$out")" || return 1
	[ "${BASH_REMATCH[1]}" -lt 500 ] ||
		fail "a look-up waited ${BASH_REMATCH[1]} ms while the update resolved its host" ||
		return 1
	expect_lines "job" "qtimes evil.example rcode=5 max_ms=[0-9]+" "tcp 127.0.0.4 EPERM" \
		"tcp 127.0.0.3 OK" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=policy_update policy=new
}

# A requester that gives up (killed here) while the new policy's host is held is told nothing
# took effect, and nothing does: when the compile ends, its result is dropped, the old policy
# stays and no policy_update line names the dead requester.
test_update_requester_gone() {
	local old new out i

	old=$(policy old "$UPD_OLD")
	new=$(policy new '{"name": "new", "allow": [{"host": "held.provider.test", "ports": [8202]}]}')
	outside "OK tcp 127.0.0.3 8202" || return 1
	upd_held || return 1
	# shellcheck disable=SC2016
	launch_bg --resolver 127.0.0.53:5356 --policy "$old" -- /bin/sh -c '
		while [ ! -e "$0/go" ]; do sleep 0.01; done
		"$1" "$2" "tcp 127.0.0.3 8202"
		while [ ! -e "$0/stop" ]; do sleep 0.01; done' "$T_DIR" "$IT_PY" "$IT_FIX/dns/job.py"
	upd_wait_control || upd_stop || return 1
	upd_request_held "$new" || return 1
	kill -KILL "$(cat "$T_DIR/update.pid")"
	wait "$(cat "$T_DIR/update.pid")" 2>/dev/null
	: >"$T_DIR/held/release"
	# Both look-ups (A, AAAA) answered, the compile ends at once: then the job connects.
	for ((i = 0; i < 250; i++)); do
		[ "$(grep -c . "$T_DIR/held/held")" -ge 2 ] && break
		sleep 0.02
	done
	sleep 0.3
	: >"$T_DIR/go"
	for ((i = 0; i < 250; i++)); do
		grep -q "^tcp " "$L_OUT_FILE" && break
		sleep 0.02
	done
	# The next requester is served once the first compile is over (joined): the old policy
	# again, whose policy_update line is the only one.
	upd_run update "$L_NAME" --policy "$old"
	upd_expect_ok || return 1
	upd_finish || return 1
	out=$(cat "$L_OUT_FILE")
	echo "  job: $(brief "$out")"
	expect_lines "job" "tcp 127.0.0.3 EPERM" || return 1
	audit_check || return 1
	expect_audit 0 "$L_AUDIT" event=policy_update policy=new || return 1
	expect_audit 1 "$L_AUDIT" event=policy_update || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.0.3 policy=old
}

# A job that ends while an update's host is held: launch does not wait for the compile (it
# exits well under 2 s after the job, the resolver's tries taking 4), and leaves nothing of
# the sandbox in /run/launch.
test_update_teardown_mid_compile() {
	local new go ms left

	new=$(policy new '{"name": "new", "allow": [{"host": "held.provider.test", "ports": [8202]}]}')
	upd_held || return 1
	# shellcheck disable=SC2016
	launch_bg --resolver 127.0.0.53:5356 --policy "$(policy old "$UPD_OLD")" -- /bin/sh -c '
		while [ ! -e "$0/go" ]; do sleep 0.01; done' "$T_DIR"
	upd_wait_control || upd_stop || return 1
	upd_request_held "$new" || return 1
	go=$EPOCHREALTIME
	: >"$T_DIR/go"
	launch_bg_wait 10 || return 1
	: >"$T_DIR/held/release"
	expect_rc "job" 0 || return 1
	ms=$(elapsed_ms "$go" "$L_END")
	echo "  launch ended ${ms} ms after the job was let go"
	[ "$ms" -lt 1000 ] || fail "launch ended ${ms} ms after the job, waiting for the compile" ||
		return 1
	left=$(ls /run/launch/"$L_NAME".* 2>/dev/null)
	[ -z "$left" ] || fail "left behind: $left"
}
