# SPDX-License-Identifier: LGPL-2.1-or-later
# The sandbox's life: its cgroup, teardown of everything the job started, the audit log.

listeners tcp:127.0.0.2:8080 tcp:127.0.0.3:8080

LIFE_POLICY='{"name": "life", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'

# A job that leaves a daemon behind (new session, reparented away from the job): when launch
# returns, the daemon is dead and the sandbox cgroup is gone. The daemon is found from outside
# while the job waits, so this works whatever PID and cgroup namespaces the job has.
test_teardown_daemon() {
	local p pid pids cg secs

	p=$(policy life "$LIFE_POLICY")
	# A duration nobody else uses, to recognise the daemon among all processes.
	secs=$((900000 + RANDOM))
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c '
		setsid sleep "$1" </dev/null >/dev/null 2>&1 &
		echo ready >"$0/ready"
		while [ ! -e "$0/go" ]; do sleep 0.01; done
		exit 0' "$T_DIR" "$secs"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	for _ in $(seq 100); do
		pids=$(find_pids sleep "sleep $secs")
		[ -z "$pids" ] || break
		sleep 0.02
	done
	pid=$pids
	[[ $pid =~ ^[0-9]+$ ]] || fail "cannot find the daemon 'sleep $secs' (found '$pids')" || {
		: >"$T_DIR/go"
		return 1
	}
	track_pid "$pid"
	cg=$(cgroup_v2_path "/proc/$pid/cgroup")
	echo "daemon: pid $pid, cgroup $cg"
	: >"$T_DIR/go"
	launch_bg_wait 10 || return 1
	expect_rc "job with a daemon" 0 || return 1
	if proc_running "$pid" "sleep $secs"; then
		fail "the daemon (pid $pid) outlived launch"
		return 1
	fi
	[[ $cg == /launch/?* ]] ||
		fail "the job ran in cgroup '$cg', expected one under /launch/" || return 1
	[ ! -e "$IT_CG2$cg" ] || fail "the sandbox cgroup $IT_CG2$cg still exists" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code=0 duration_ms:int denied=0 lost=0 ||
		return 1
}

# sandbox_start and sandbox_exit frame the log; denied counts the deny lines.
test_audit_start_exit() {
	local p argv_json first last dur host

	p=$(policy audited '{"name": "audited", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}')
	local job=(/bin/sh -c "$IT_PROBE_LOOP; exit 3" sh "$IT_PROBE" "tcp 127.0.0.3 8080"
		"udp 127.0.0.3 5300" "tcp 2001:db8::2 8080" "tcp 127.0.0.2 8080")
	launch_job --policy "$p" -- "${job[@]}"
	expect_rc "job exiting 3" 3 || return 1
	expect_eq "probe results" "EPERM EPERM EPERM OK" "${L_OUT//$'\n'/ }" || return 1
	audit_check || return 1
	first=$("$IT_PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["event"])' \
		"$L_AUDIT" 2>&1)
	last=$("$IT_PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["event"])' \
		"$L_AUDIT" 2>&1)
	expect_eq "first audit event" sandbox_start "$first" || return 1
	expect_eq "last audit event" sandbox_exit "$last" || return 1

	argv_json=$("$IT_PY" -c 'import json,sys; print(json.dumps(sys.argv[1:], separators=(",", ":")))' \
		"${job[@]}")
	host=$(uname -n)
	expect_audit 1 "$L_AUDIT" event=sandbox_start sandbox="$L_NAME" policy=audited \
		argv="$argv_json" pid:int uid=65534 gid=65534 landlock=true rules? hostname="$host" ||
		return 1
	expect_audit 3 "$L_AUDIT" event=deny sandbox="$L_NAME" policy=audited || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit sandbox="$L_NAME" exit_code=3 denied=3 lost=0 \
		duration_ms:int || return 1
	dur=$(audit_get "$L_AUDIT" event=sandbox_exit -- duration_ms)
	[ "$dur" -ge 0 ] && [ "$dur" -le $((L_MS + 50)) ] ||
		fail "duration_ms $dur is not within the $L_MS ms launch took" || return 1
}

# Many refusals at once, with launch reading as fast as it can: every refusal is either a
# deny line or counted as lost (whether any are lost depends on the machine; the deterministic
# overflow, and what "denied" counts, is test_events_lost_accounting).
test_deny_flood_accounting() {
	local p count=20000 lines lost_events lost_exit

	[ -x "$IT_HELPERS/flood" ] || fail "$IT_HELPERS/flood is missing (make helpers)" || return 1
	p=$(policy life "$LIFE_POLICY")
	launch_job --policy "$p" -- "$IT_HELPERS/flood" udp 127.0.0.3 5300 "$count"
	expect_rc "flood" 0 || return 1
	expect_eq "flood results" "EPERM=$count" "$L_OUT" || return 1
	audit_check || return 1
	lines=$(audit_count "$L_AUDIT" event=deny)
	lost_events=$(lost_sum "$L_AUDIT" count)
	lost_exit=$(audit_get "$L_AUDIT" event=sandbox_exit -- lost)
	echo "deny lines $lines, events_lost total $lost_events, exit lost $lost_exit"
	expect_eq "deny lines + lost vs refusals" "$count" $((lines + lost_events)) || return 1
	expect_eq "sandbox_exit lost vs events_lost counts" "$lost_events" "$lost_exit" || return 1
}

# With launch stopped (SIGSTOP: it cannot read the ring buffer), a burst of refusals
# overflows the ring buffer: the overflow is reported as events_lost, and the totals agree
# (sandbox_exit's denied = deny lines + lost, exactly).
test_events_lost_accounting() {
	local p count=10000 lines lost_events lost_exit denied

	[ -x "$IT_HELPERS/flood" ] || fail "$IT_HELPERS/flood is missing (make helpers)" || return 1
	p=$(policy life "$LIFE_POLICY")
	flood_launch_stopped 127.0.0.3 5300 "$count" --policy "$p" || return 1
	expect_eq "flood results" "EPERM=$count" "$(cat "$T_DIR/flood.out")" || return 1
	audit_check || return 1
	lines=$(audit_count "$L_AUDIT" event=deny)
	lost_events=$(lost_sum "$L_AUDIT" count)
	denied=$(audit_get "$L_AUDIT" event=sandbox_exit -- denied)
	lost_exit=$(audit_get "$L_AUDIT" event=sandbox_exit -- lost)
	echo "deny lines $lines, events_lost total $lost_events, exit denied $denied lost $lost_exit"
	[ "$lost_events" -gt 0 ] ||
		fail "no events_lost line although $count refusals met a stopped reader" || return 1
	expect_eq "deny lines + lost vs refusals" "$count" $((lines + lost_events)) || return 1
	expect_eq "sandbox_exit lost vs events_lost counts" "$lost_events" "$lost_exit" || return 1
	# denied counts every refusal, logged or lost.
	expect_eq "sandbox_exit denied vs deny lines + lost" $((lines + lost_exit)) "$denied" ||
		return 1
}

test_audit_log_stderr() {
	local p

	p=$(policy life "$LIFE_POLICY")
	launch_next_names
	launch_raw --audit-log - --name "$L_NAME" --policy "$p" -- "$IT_PROBE" tcp 127.0.0.3 8080
	expect_rc "--audit-log -" 0 || return 1
	expect_eq "job stdout" EPERM "$L_OUT" || return 1
	grep '^{' "$L_ERR_FILE" >"$T_LOGS/stderr.jsonl"
	audit_check "$T_LOGS/stderr.jsonl" || return 1
	expect_audit 1 "$T_LOGS/stderr.jsonl" event=sandbox_start sandbox="$L_NAME" || return 1
	expect_audit 1 "$T_LOGS/stderr.jsonl" event=deny dst_ip=127.0.0.3 dst_port=8080 || return 1
	expect_audit 1 "$T_LOGS/stderr.jsonl" event=sandbox_exit denied=1 || return 1
	[ ! -e "$T_DIR/-" ] || fail "--audit-log - created a file named '-'" || return 1
}

# Without --name the sandbox gets a random hex id, different each run.
test_default_name() {
	local p a b

	p=$(policy life "$LIFE_POLICY")
	launch_raw --audit-log "$T_LOGS/a.jsonl" --policy "$p" -- /bin/true
	expect_rc "first run" 0 || return 1
	launch_raw --audit-log "$T_LOGS/b.jsonl" --policy "$p" -- /bin/true
	expect_rc "second run" 0 || return 1
	a=$(audit_get "$T_LOGS/a.jsonl" event=sandbox_start -- sandbox)
	b=$(audit_get "$T_LOGS/b.jsonl" event=sandbox_start -- sandbox)
	expect_match "default sandbox id" '^[0-9a-f]{8,}$' "$a" || return 1
	[ "$a" != "$b" ] || fail "two runs got the same sandbox id $a" || return 1
}

# The sandbox's init is launch-init, beside launch: a launch without it, with one that someone
# but root could have written (it runs with all of launch's privileges), or with one it cannot
# execute, refuses to start, says why, and leaves no cgroup behind; launch-init run by hand
# does nothing. The same
# copies with a proper launch-init beside them run the job, so each refusal is the check's.
test_init_binary_checked() {
	local p bin IT_LAUNCH

	p=$(policy life "$LIFE_POLICY")
	bin=$T_DIR/bin
	mkdir -p "$bin"
	cp "$BUILD/launch" "$bin/launch"
	# shellcheck disable=SC2034 # launch_raw runs $IT_LAUNCH: this test's copy.
	IT_LAUNCH=$bin/launch
	launch_job --policy "$p" -- /bin/true
	expect_rc "launch without launch-init" 125 || return 1
	expect_match "the missing init named" "launch-init.*No such file" "$L_ERR" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $L_NAME left behind" || return 1

	install -m 0775 "$BUILD/launch-init" "$bin/launch-init"
	launch_job --policy "$p" -- /bin/true
	expect_rc "launch with a group-writable launch-init" 125 || return 1
	expect_match "the writable init refused" "launch-init.*not permitted" "$L_ERR" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $L_NAME left behind" || return 1

	# Root's and writable by none else, but not executable: its exec fails, and says why.
	chmod 0644 "$bin/launch-init"
	launch_job --policy "$p" -- /bin/true
	expect_rc "launch with a launch-init it cannot execute" 125 || return 1
	expect_match "the failed exec named" "launch-init.*Permission denied" "$L_ERR" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $L_NAME left behind" || return 1

	chmod 0755 "$bin/launch-init"
	launch_job --policy "$p" -- /bin/sh -c 'echo ran'
	expect_rc "launch with its init" 0 || return 1
	expect_eq "the job ran" ran "$L_OUT" || return 1

	"$bin/launch-init" 3 4 5 -1 >"$T_DIR/by-hand.out" 2>&1
	expect_eq "launch-init by hand" 125 "$?" || return 1
	expect_match "launch-init by hand says what it is" "not a command" \
		"$(cat "$T_DIR/by-hand.out")"
}
