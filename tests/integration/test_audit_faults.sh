# SPDX-License-Identifier: LGPL-2.1-or-later
# Audit sinks that fail for real (a FIFO nobody reads, a pipe nobody drains, a full tmpfs) and
# command lines too long for one line: the supervisor never stalls and the record adds up.

FAULT_POLICY='{"name": "fault", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'

# The job: records its pid, makes $2 refused UDP sends (each a deny line, about 300 bytes:
# 3,000 overfill a pipe's 64 KiB), then sleeps unless $3 says "exit".
# shellcheck disable=SC2016
FLOOD_JOB='echo $$ >"$0"; "$1" udp 127.0.0.9 9 "$2"; [ "$3" = exit ] || exec sleep 60'

# A launch that hangs on its log must not hang the suite: well above every bound below.
IT_LAUNCH_SAFETY_S=25

# A FIFO in the test's folder with a reader that opens it and never reads: sets FIFO.
fifo_idle_reader() {
	FIFO=$T_DIR/$1
	mkfifo "$FIFO" || fail "mkfifo $FIFO" || return 1
	# shellcheck disable=SC2217 # the redirection is the point: it opens the FIFO
	sleep 120 <"$FIFO" &
	track_pid $!
}

# What a fault must not leave behind: the job (pid in $1) and the sandbox's cgroup.
expect_nothing_left() {
	local pid

	pid=$(cat "$1" 2>/dev/null)
	[ -z "$pid" ] || ! proc_running "$pid" "sleep 60" ||
		fail "the job (pid $pid) outlived launch" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $IT_CG2/launch/$L_NAME left behind"
}

# expect_within MS: launch took less than MS milliseconds.
expect_within() {
	[ "$L_MS" -lt "$1" ] || fail "launch took $L_MS ms, more than $1"
}

# Parses launch's last stderr line, the audit accounting: sets A_DENIED, A_WRITTEN, A_LOST,
# A_UNWRITTEN, and checks that every refusal is counted exactly once.
expect_accounting() {
	local last re='^launch: audit: sandbox ([^:]+): denied ([0-9]+), written ([0-9]+), lost ([0-9]+), unwritten ([0-9]+) \('

	last=$(tail -n1 "$L_ERR_FILE")
	[[ $last =~ $re ]] ||
		fail "no audit accounting as launch's last stderr line: $(brief "$L_ERR")" || return 1
	expect_eq "sandbox in the accounting line" "$L_NAME" "${BASH_REMATCH[1]}" || return 1
	A_DENIED=${BASH_REMATCH[2]}
	A_WRITTEN=${BASH_REMATCH[3]}
	A_LOST=${BASH_REMATCH[4]}
	A_UNWRITTEN=${BASH_REMATCH[5]}
	[ $((A_WRITTEN + A_LOST + A_UNWRITTEN)) = "$A_DENIED" ] ||
		fail "denied $A_DENIED != written $A_WRITTEN + lost $A_LOST + unwritten $A_UNWRITTEN"
}

# A FIFO that no process ever opens: launch waits for a reader no longer than the stall
# timeout. Stop (default): exit 125 naming the FIFO, the job never runs. Continue: the job
# runs, and every refusal is accounted for on stderr.
test_audit_fifo_no_reader() {
	local p

	p=$(policy fault "$FAULT_POLICY")
	mkfifo "$T_DIR/fifo" || fail "mkfifo" || return 1
	launch_next_names
	launch_raw --audit-log "$T_DIR/fifo" --name "$L_NAME" --policy "$p" -- \
		/bin/touch "$T_DIR/ran"
	expect_rc "FIFO without a reader" 125 || return 1
	expect_within 12000 || return 1
	[[ $L_ERR == *"$T_DIR/fifo"* ]] || fail "stderr does not name the FIFO: $(brief "$L_ERR")" ||
		return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran without its audit log" || return 1
	expect_nothing_left /dev/null || return 1

	launch_next_names
	launch_raw --audit-log "$T_DIR/fifo" --audit-failure=continue --name "$L_NAME" \
		--policy "$p" -- /bin/sh -c "$FLOOD_JOB" "$T_DIR/job.pid" "$IT_HELPERS/flood" 50 exit
	expect_rc "FIFO without a reader, --audit-failure=continue" 0 || return 1
	expect_within 12000 || return 1
	expect_accounting || return 1
	expect_eq "denied, written, unwritten" "50 0 50" "$A_DENIED $A_WRITTEN $A_UNWRITTEN"
}

# A reader that opens the FIFO and never reads: the pipe fills, launch stops the job after
# the stall timeout (default 5 s) and exits 125; nothing is left behind.
test_audit_fifo_reader_never_reads() {
	local p

	p=$(policy fault "$FAULT_POLICY")
	fifo_idle_reader fifo || return 1
	launch_next_names
	launch_raw --audit-log "$FIFO" --name "$L_NAME" --policy "$p" -- \
		/bin/sh -c "$FLOOD_JOB" "$T_DIR/job.pid" "$IT_HELPERS/flood" 3000
	expect_rc "FIFO reader that never reads" 125 || return 1
	expect_within 12000 || return 1
	expect_match "stderr" "audit log $FIFO: it accepted nothing" "$L_ERR" || return 1
	expect_accounting || return 1
	expect_nothing_left "$T_DIR/job.pid"
}

# --timeout fires while the sink accepts nothing (--audit-failure=continue keeps the job).
test_audit_stall_timeout_fires() {
	local p

	p=$(policy fault "$FAULT_POLICY")
	fifo_idle_reader fifo || return 1
	launch_next_names
	launch_raw --audit-log "$FIFO" --audit-failure=continue --timeout 2 --name "$L_NAME" \
		--policy "$p" -- /bin/sh -c "$FLOOD_JOB" "$T_DIR/job.pid" "$IT_HELPERS/flood" 3000
	expect_rc "--timeout 2 with a stalled log" 124 || return 1
	# The timeout, then teardown waits for the log at most until the stall (5 s) is due.
	expect_within 12000 || return 1
	expect_accounting || return 1
	expect_eq "denied" 3000 "$A_DENIED" || return 1
	[ "$A_UNWRITTEN" -gt 0 ] || fail "nothing unwritten with a stalled log" || return 1
	expect_nothing_left "$T_DIR/job.pid"
}

# Signals still reach the job while the sink accepts nothing.
test_audit_stall_signal_forwarded() {
	local p

	p=$(policy fault "$FAULT_POLICY")
	fifo_idle_reader fifo || return 1
	# A later --audit-log wins: the log goes to the FIFO, not to launch_bg's file.
	launch_bg --audit-log "$FIFO" --audit-failure=continue --policy "$p" -- /bin/sh -c \
		"trap 'exit 42' TERM; \"\$1\" udp 127.0.0.9 9 3000; echo ready >\"\$0\"; while :; do sleep 0.1; done" \
		"$T_DIR/ready" "$IT_HELPERS/flood"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	# Let the pipe fill and the supervisor meet the stalled sink.
	sleep 0.5
	kill -TERM "$L_PID" || fail "cannot signal launch (pid $L_PID)" || return 1
	launch_bg_wait 12 || return 1
	expect_rc "SIGTERM to launch while its log stalls, job traps it and exits 42" 42 || return 1
	expect_accounting || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $IT_CG2/launch/$L_NAME left behind"
}

# --audit-log - into a pipe nobody drains: launch's own stderr is the stalled sink.
test_audit_stderr_pipe_undrained() {
	local p

	p=$(policy fault "$FAULT_POLICY")
	fifo_idle_reader stderr || return 1
	launch_next_names
	echo "+ launch --audit-log - ... 2>$FIFO"
	L_START=$EPOCHREALTIME
	timeout -k 3 "$IT_LAUNCH_SAFETY_S" "$IT_LAUNCH" --audit-log - --name "$L_NAME" --policy "$p" \
		-- /bin/sh -c "$FLOOD_JOB" "$T_DIR/job.pid" "$IT_HELPERS/flood" 3000 \
		</dev/null >/dev/null 2>"$FIFO"
	L_RC=$?
	L_MS=$(elapsed_ms "$L_START" "$EPOCHREALTIME")
	echo "  rc=$L_RC in $L_MS ms"
	expect_rc "--audit-log - into a pipe nobody drains" 125 || return 1
	# The stall (5 s), then at most one second for launch's own message.
	expect_within 13000 || return 1
	expect_nothing_left "$T_DIR/job.pid"
}

test_audit_stall_timeout_option() {
	local p v

	p=$(policy fault "$FAULT_POLICY")
	fifo_idle_reader fifo || return 1
	launch_next_names
	launch_raw --audit-log "$FIFO" --audit-stall-timeout 0.5 --name "$L_NAME" --policy "$p" -- \
		/bin/sh -c "$FLOOD_JOB" "$T_DIR/job.pid" "$IT_HELPERS/flood" 3000
	expect_rc "--audit-stall-timeout 0.5" 125 || return 1
	expect_within 5000 || return 1
	expect_nothing_left "$T_DIR/job.pid" || return 1
	for v in 0 -1 abc 1e9; do
		launch_job --audit-stall-timeout "$v" --policy "$p" -- /bin/touch "$T_DIR/ran"
		expect_rc "--audit-stall-timeout $v" 125 || return 1
		expect_match "stderr" "^launch: --audit-stall-timeout: \"$v\"" "$L_ERR" || return 1
		[ ! -e "$T_DIR/ran" ] || fail "--audit-stall-timeout $v: the job ran" || return 1
	done
}

# A 64 KiB tmpfs, private to the test's mount namespace, for the audit log.
small_tmpfs() {
	mkdir -p "$T_DIR/small"
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$T_DIR/small" ||
		fail "cannot mount a 64 KiB tmpfs on $T_DIR/small"
}

# The log fills under a denial flood. Continue: the job runs to its own exit, and launch's
# last stderr line accounts for every refusal; the file holds whole lines only. Stop: exit
# 125, and the same accounting.
test_audit_full_disk_counts() {
	local p written mode

	p=$(policy fault "$FAULT_POLICY")
	small_tmpfs || return 1
	for mode in continue stop; do
		rm -f "$T_DIR/small/audit.jsonl"
		launch_next_names
		L_AUDIT=$T_DIR/small/audit.jsonl
		launch_raw --audit-log "$L_AUDIT" --audit-failure="$mode" --name "$L_NAME" \
			--policy "$p" -- /bin/sh -c "$FLOOD_JOB" "$T_DIR/job.pid" \
			"$IT_HELPERS/flood" 3000 exit
		if [ "$mode" = continue ]; then
			expect_rc "full log, --audit-failure=continue" 0 || break
			expect_match "the job's output" "EPERM=3000" "$L_OUT" || break
		else
			expect_rc "full log, --audit-failure=stop" 125 || break
		fi
		expect_accounting || break
		written=$(audit_count "$L_AUDIT" event=deny)
		expect_eq "$mode: deny lines in the file" "$written" "$A_WRITTEN" || break
		[ "$A_UNWRITTEN" -gt 0 ] || fail "$mode: nothing unwritten in a full 64 KiB" || break
		"$IT_PY" "$IT_FIX/audit.py" check "$L_AUDIT" ||
			fail "$mode: the full log holds a line that is not whole JSON" || break
		[ "$mode" = stop ] || expect_eq "denied" 3000 "$A_DENIED" || break
		expect_nothing_left "$T_DIR/job.pid" || break
	done
	umount "$T_DIR/small"
	[ ! -s "$T_REASON" ]
}

# A sink that stalls, then drains: lines dropped meanwhile are counted in sandbox_exit's
# "unwritten", apart from "lost" (the kernel's ring), so that denied = deny lines + lost +
# unwritten, exactly.
test_audit_exit_separates_unwritten() {
	local p deny lost unwritten denied

	p=$(policy fault "$FAULT_POLICY")
	mkfifo "$T_DIR/fifo"
	# Opens the FIFO at once, reads nothing until the job says so, then everything. The job
	# floods, waits for the stall (1 s) to be declared, and floods again: those refusals
	# find the queue full.
	"$IT_PY" -c '
import os, sys, time
f = open(sys.argv[1], "rb")
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
time.sleep(0.5)
with open(sys.argv[2], "wb") as out:
    out.write(f.read())
' "$T_DIR/fifo" "$T_LOGS/drained.jsonl" "$T_DIR/flooded" &
	track_pid $!
	launch_next_names
	L_AUDIT=$T_LOGS/drained.jsonl
	# shellcheck disable=SC2016
	launch_raw --audit-log "$T_DIR/fifo" --audit-failure=continue --audit-stall-timeout 1 \
		--name "$L_NAME" --policy "$p" -- /bin/sh -c \
		'"$1" udp 127.0.0.9 9 3000; sleep 2.5; "$1" udp 127.0.0.9 9 3000; touch "$2"; sleep 3' \
		sh "$IT_HELPERS/flood" "$T_DIR/flooded"
	expect_rc "stalled, then drained log" 0 || return 1
	expect_accounting || return 1
	wait_for_file "$T_LOGS/drained.jsonl" 5 || fail "the reader wrote nothing" || return 1
	sleep 0.2
	expect_audit 1 "$L_AUDIT" event=sandbox_exit unwritten:int lost:int || return 1
	deny=$(audit_count "$L_AUDIT" event=deny)
	denied=$(audit_get "$L_AUDIT" event=sandbox_exit -- denied)
	lost=$(audit_get "$L_AUDIT" event=sandbox_exit -- lost)
	unwritten=$(audit_get "$L_AUDIT" event=sandbox_exit -- unwritten)
	expect_eq "denied in sandbox_exit" 6000 "$denied" || return 1
	[ "$unwritten" -gt 0 ] || fail "sandbox_exit: nothing unwritten after a stall" || return 1
	expect_eq "deny lines + lost + unwritten" "$denied" $((deny + lost + unwritten)) || return 1
	expect_eq "stderr and sandbox_exit agree" "$A_LOST $A_UNWRITTEN $A_WRITTEN" \
		"$lost $unwritten $deny"
}

# One 5,000-byte argument, then 100,000 arguments: the job runs, and sandbox_start is
# written, parses, and says the argv was cut and how many arguments there were.
test_audit_long_command_line() {
	local p big

	p=$(policy fault "$FAULT_POLICY")
	big=$(head -c 5000 /dev/zero | tr '\0' a)
	launch_job --policy "$p" -- /bin/true "$big"
	expect_rc "/bin/true with a 5,000-byte argument" 0 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start argc=2 argv_truncated=true argv:list ||
		return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code=0 || return 1

	# shellcheck disable=SC2046 # one argument per number, on purpose
	launch_job --policy "$p" -- /bin/true $(seq 100000)
	expect_rc "/bin/true with 100,000 arguments" 0 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start argc=100001 argv_truncated=true || return 1
	expect_eq "first argument" /bin/true \
		"$(audit_get "$L_AUDIT" event=sandbox_start -- argv | "$IT_PY" -c 'import json, sys; print(json.load(sys.stdin)[0])')"
}

# Several launchers flooding one log at once, a regular file (O_APPEND) and then a FIFO
# (writes of whole lines, at most PIPE_BUF): every line is whole, and each sandbox's refusals
# add up.
test_audit_shared_sink_whole_lines() {
	local p sink i pids names bad="" deny lost denied reader log

	p=$(policy fault "$FAULT_POLICY")
	mkfifo "$T_DIR/shared.fifo"
	for sink in file fifo; do
		pids=()
		names=()
		: >"$T_LOGS/shared.$sink.jsonl"
		if [ "$sink" = fifo ]; then
			cat "$T_DIR/shared.fifo" >"$T_LOGS/shared.$sink.jsonl" &
			reader=$!
			track_pid "$reader"
			log=$T_DIR/shared.fifo
		else
			log=$T_LOGS/shared.$sink.jsonl
		fi
		for i in 1 2 3 4; do
			launch_next_names
			L_N=$((L_N + 1))
			names+=("$L_NAME")
			"$IT_LAUNCH" --audit-log "$log" --name "$L_NAME" --policy "$p" -- \
				"$IT_HELPERS/flood" udp 127.0.0.9 9 2000 </dev/null >/dev/null \
				2>"$T_DIR/shared.$sink.$i.err" &
			pids+=($!)
			track_pid $!
		done
		for i in 0 1 2 3; do
			wait "${pids[i]}" || bad+="${bad:+; }$sink: launch $i exited $?"
		done
		[ "$sink" = file ] || wait "$reader"
		[ -z "$bad" ] || fail "$bad" || return 1
		L_AUDIT=$T_LOGS/shared.$sink.jsonl
		"$IT_PY" "$IT_FIX/audit.py" check "$L_AUDIT" ||
			fail "$sink shared by 4 launchers: a line is not whole JSON" || return 1
		for i in 0 1 2 3; do
			deny=$(audit_count "$L_AUDIT" event=deny sandbox="${names[i]}")
			denied=$(audit_get "$L_AUDIT" event=sandbox_exit sandbox="${names[i]}" -- denied)
			lost=$(audit_get "$L_AUDIT" event=sandbox_exit sandbox="${names[i]}" -- lost)
			[ "$denied" = 2000 ] && [ $((deny + lost)) = 2000 ] ||
				bad+="${bad:+; }$sink: ${names[i]}: $deny deny lines + $lost lost, denied '$denied'"
		done
	done
	[ -z "$bad" ] || fail "$bad"
}

# The ring's reader is mapped after `go`, while the job execs (docs/design.md, "Start-up cost"): a
# ring that cannot be mapped then (an LD_PRELOAD library in the launcher fails libbpf's
# mapping of its data with ENOMEM) stops the job, which was confined all along, with 125
# and the reason, and leaves the log whole, its sandbox_exit line last. The same launch
# without the library runs the job.
test_audit_ring_map_fails() {
	local p job

	p=$(policy fault "$FAULT_POLICY")
	# shellcheck disable=SC2016
	job='sleep 1; echo ran >"$0/ran"'
	launch_job --policy "$p" -- /bin/sh -c "$job" "$T_DIR"
	expect_rc "the job, its ring mapped" 0 || return 1
	[ -e "$T_DIR/ran" ] || fail "the job did not run with its ring mapped" || return 1
	rm -f "$T_DIR/ran"

	printf '#!/bin/sh\nexec env LD_PRELOAD="%s" "%s" "$@"\n' "$IT_HELPERS/fail_ring_map.so" \
		"$IT_LAUNCH" >"$T_DIR/launch-wrapped"
	chmod 755 "$T_DIR/launch-wrapped"
	IT_LAUNCH=$T_DIR/launch-wrapped launch_job --policy "$p" -- /bin/sh -c "$job" "$T_DIR"
	expect_rc "the ring not mapped" 125 || return 1
	expect_match "its message" \
		'^launch: cannot open the event ring buffer: Cannot allocate memory$' "$L_ERR" ||
		return 1
	# Past the job's own sleep: a job left running would have written by then.
	sleep 1.3
	[ ! -e "$T_DIR/ran" ] || fail "the job ran on after launch gave up" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $IT_CG2/launch/$L_NAME left behind" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit || return 1
	expect_eq "the log's last event" sandbox_exit "$(tail -n1 "$L_AUDIT" | "$IT_PY" -c \
		'import json, sys; print(json.load(sys.stdin).get("event"))')"
}
