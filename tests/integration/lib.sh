# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers for tests/integration/test_*.sh: run launch and the probe, check what happened.
#
# tests/integration/run sets IT_* (paths, temp dir, listener dir) and, for each test, sources
# this file and the test file in a fresh bash, then calls it_run_test NAME. A test is a
# function test_NAME; it fails by calling `fail REASON` (usually `... || return 1`), and
# passes when it returns without having failed. Everything it prints goes to its log.

# Each test file declares, at top level, the loopback listeners its tests talk to; run starts
# one listener process for all of them before the first test. SPEC: tcp:ADDR:PORT or
# udp:ADDR:PORT (IPv6 as [ADDR]:PORT).
IT_LISTENERS=()
listeners() {
	IT_LISTENERS+=("$@")
}

# Records the first reason a test failed; later ones are usually its consequences.
fail() {
	if [ ! -s "$T_REASON" ]; then
		printf '%s' "$*" | tr '\n' ' ' >"$T_REASON"
	fi
	printf 'fail: %s\n' "$*"
	return 1
}

expect_eq() {
	local what=$1 expected=$2 actual=$3

	[ "$expected" = "$actual" ] && return 0
	fail "$what: expected '$expected', got '$actual'"
}

expect_match() {
	local what=$1 regex=$2 actual=$3

	[[ $actual =~ $regex ]] && return 0
	fail "$what: '$actual' does not match /$regex/"
}

# The first 300 bytes of a text, on one line, for failure messages.
brief() {
	printf '%s' "$1" | head -c 300 | tr '\n' '|'
}

# Writes a policy file in the test's directory and prints its path.
policy() {
	local path=$T_DIR/$1.json

	printf '%s\n' "$2" >"$path"
	printf '%s\n' "$path"
}

# Tracked background processes are killed by PID when the test ends (and again by run).
track_pid() {
	echo "$1" >>"$T_DIR/pids"
	echo "$1" >>"$IT_TMP/pids"
}

# Polls for a file to exist and be non-empty, for at most $2 seconds (default 5).
wait_for_file() {
	local path=$1 deadline

	deadline=$(($(date +%s%N) / 1000000 + ${2:-5} * 1000))
	while [ ! -s "$path" ]; do
		[ $(($(date +%s%N) / 1000000)) -lt "$deadline" ] || return 1
		sleep 0.02
	done
}

# expect_lines WHAT REGEX...: line i of $L_OUT matches REGEX i, and there are no more lines.
expect_lines() {
	local what=$1 i lines=()

	shift
	mapfile -t lines <<<"$L_OUT"
	for ((i = 0; i < $#; i++)); do
		local want=${*:i+1:1}

		[[ ${lines[$i]:-} =~ ^$want$ ]] ||
			fail "$what: line $((i + 1)) is '${lines[$i]:-}', expected /$want/" || return 1
	done
	[ "${#lines[@]}" -eq "$#" ] ||
		fail "$what: ${#lines[@]} lines, expected $#: $(brief "$L_OUT")"
}

# The sum of one field over the events_lost lines of a log.
lost_sum() {
	"$IT_PY" -c '
import json, sys
print(sum(json.loads(l).get(sys.argv[2], 0) for l in open(sys.argv[1])
          if json.loads(l).get("event") == "events_lost"))' "$1" "$2"
}

# flood_launch_stopped ADDR PORT COUNT LAUNCH_OPTIONS...: a job sends COUNT UDP datagrams to
# ADDR PORT (tests/helpers/flood) while its launch is stopped (SIGSTOP: nothing reads the
# ring buffer), then launch goes on and ends. The flood's results are in $T_DIR/flood.out.
flood_launch_stopped() {
	local addr=$1 port=$2 count=$3

	shift 3
	# shellcheck disable=SC2016
	launch_bg "$@" -- /bin/sh -c 'echo ready >"$0/ready"
		while [ ! -e "$0/go" ]; do sleep 0.01; done
		"$1" udp "$2" "$3" "$4" >"$0/flood.out"' "$T_DIR" "$IT_HELPERS/flood" \
		"$addr" "$port" "$count"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	kill -STOP "$L_PID"
	: >"$T_DIR/go"
	wait_for_file "$T_DIR/flood.out" 20
	kill -CONT "$L_PID"
	launch_bg_wait 20 || return 1
	expect_rc "flood" 0
}

# Milliseconds between two $EPOCHREALTIME values.
elapsed_ms() {
	local a=${1/./} b=${2/./}

	echo $(((10#$b - 10#$a) / 1000))
}

L_N=0

# Runs launch with exactly these arguments. Sets L_RC, L_OUT, L_ERR (and their files),
# L_START, L_END ($EPOCHREALTIME) and L_MS. stdin is /dev/null unless L_STDIN names a file.
# A safety timeout (IT_LAUNCH_SAFETY_S) keeps a hung launcher from hanging the suite.
launch_raw() {
	L_N=$((L_N + 1))
	L_OUT_FILE=$T_DIR/launch$L_N.out
	L_ERR_FILE=$T_DIR/launch$L_N.err
	echo "+ launch $*"
	L_START=$EPOCHREALTIME
	timeout -k 3 "${IT_LAUNCH_SAFETY_S:-40}" "$IT_LAUNCH" "$@" \
		<"${L_STDIN:-/dev/null}" >"$L_OUT_FILE" 2>"$L_ERR_FILE"
	L_RC=$?
	L_END=$EPOCHREALTIME
	L_MS=$(elapsed_ms "$L_START" "$L_END")
	L_OUT=$(cat "$L_OUT_FILE")
	L_ERR=$(cat "$L_ERR_FILE")
	echo "  rc=$L_RC in ${L_MS} ms"
	[ -z "$L_OUT" ] || sed 's/^/  out: /' "$L_OUT_FILE"
	[ -z "$L_ERR" ] || sed 's/^/  err: /' "$L_ERR_FILE"
	return 0
}

# dnsmasq_moved ADDR PORT NAME WANT: NAME moved to WANT in $T_DIR/hosts (dnsmasq's
# --addn-hosts), dnsmasq (DNSMASQ_PID) told with a SIGHUP, and at most 5 s for it to answer
# NAME with WANT on ADDR:PORT (it reads the file again in its own time). On failure the
# background launch (L_PID) is killed.
dnsmasq_moved() {
	local i

	printf '%s %s\n' "$4" "$3" >"$T_DIR/hosts"
	kill -HUP "$DNSMASQ_PID"
	for ((i = 0; i < 250; i++)); do
		dig +short +time=1 +tries=1 -p "$2" @"$1" "$3" 2>/dev/null | grep -qxF "$4" && return 0
		sleep 0.02
	done
	kill -KILL "$L_PID" 2>/dev/null
	fail "dnsmasq on $1:$2 still does not answer $3 with $4"
}

# dnsmasq_start ADDR PORT LOG [ARG...]: dnsmasq on ADDR:PORT (ADDR in 127.0.0.0/8 of this
# namespace) with the test's records (ARGs), its queries logged to LOG; returns once its UDP
# and TCP sockets are bound (DNSMASQ_PID), or fails with its error.
dnsmasq_start() {
	local addr=$1 port=$2 log=$3 i bound a b c d

	shift 3
	: >"$log"
	dnsmasq --keep-in-foreground --conf-file=/dev/null --port="$port" \
		--listen-address="$addr" --bind-interfaces --no-resolv --no-hosts --pid-file= \
		--user=root --log-queries --log-facility="$log" "$@" 2>"$T_DIR/dnsmasq.err" &
	DNSMASQ_PID=$!
	track_pid "$DNSMASQ_PID"
	# /proc/net/{udp,tcp} show the bound address as hex, little endian.
	IFS=. read -r a b c d <<<"$addr"
	bound=$(printf '%02X%02X%02X%02X:%04X' "$d" "$c" "$b" "$a" "$port")
	for ((i = 0; i < 250; i++)); do
		grep -q " $bound " /proc/net/udp && grep -q " $bound 00000000:0000 0A " /proc/net/tcp &&
			return 0
		kill -0 "$DNSMASQ_PID" 2>/dev/null || break
		sleep 0.02
	done
	fail "dnsmasq did not start: $(brief "$(cat "$T_DIR/dnsmasq.err")")"
}

# Next sandbox name and audit log path; run checks that no cgroup of these names survives.
launch_next_names() {
	L_NAME=it$IT_RUNID-$BASHPID-$((L_N + 1))
	L_AUDIT=$T_LOGS/audit$((L_N + 1)).jsonl
	echo "$L_NAME" >>"$IT_TMP/sandboxes"
}

# As launch_raw, with a known sandbox name (L_NAME) and an audit log of its own (L_AUDIT).
launch_job() {
	launch_next_names
	if [ -n "${L_AUDIT_FD:-}" ]; then
		# The log opened here and passed as a descriptor: launch never opens its path.
		launch_raw --audit-log fd:9 --name "$L_NAME" "$@" 9>>"$L_AUDIT"
	else
		launch_raw --audit-log "$L_AUDIT" --name "$L_NAME" "$@"
	fi
}

# Starts launch in the background (L_PID is launch itself, for signals) with the signals
# that bash leaves ignored in background jobs reset, so the job sees what a terminal would.
launch_bg() {
	launch_next_names
	L_N=$((L_N + 1))
	L_OUT_FILE=$T_DIR/launch$L_N.out
	L_ERR_FILE=$T_DIR/launch$L_N.err
	echo "+ launch (background) --audit-log $L_AUDIT --name $L_NAME $*"
	L_START=$EPOCHREALTIME
	env --default-signal=INT,QUIT "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" "$@" \
		</dev/null >"$L_OUT_FILE" 2>"$L_ERR_FILE" &
	L_PID=$!
	track_pid "$L_PID"
}

# Waits at most $1 seconds for the background launch; sets L_RC (or fails after SIGKILL).
launch_bg_wait() {
	local deadline

	deadline=$(($(date +%s%N) / 1000000 + $1 * 1000))
	while kill -0 "$L_PID" 2>/dev/null && [ "$(proc_state "$L_PID")" != Z ]; do
		if [ $(($(date +%s%N) / 1000000)) -ge "$deadline" ]; then
			kill -KILL "$L_PID" 2>/dev/null
			wait "$L_PID" 2>/dev/null
			L_RC=timeout
			fail "launch (pid $L_PID) still running after $1 s"
			return 1
		fi
		sleep 0.02
	done
	wait "$L_PID"
	L_RC=$?
	L_END=$EPOCHREALTIME
	L_MS=$(elapsed_ms "$L_START" "$L_END")
	L_OUT=$(cat "$L_OUT_FILE")
	L_ERR=$(cat "$L_ERR_FILE")
	echo "  rc=$L_RC in ${L_MS} ms"
	[ -z "$L_ERR" ] || sed 's/^/  err: /' "$L_ERR_FILE"
	return 0
}

expect_rc() {
	local what=$1 expected=$2

	[ "$L_RC" = "$expected" ] && return 0
	fail "$what: launch exited $L_RC, expected $expected (stderr: $(brief "$L_ERR"))"
}

# The job that runs several probes in one sandbox: one result word per line, in order.
# shellcheck disable=SC2016
IT_PROBE_LOOP='p=$1; shift
for op do
	r=$("$p" $op 2>/dev/null); rc=$?
	[ "$rc" = 0 ] || r="EXIT$rc"
	echo "${r:-NONE}"
done'

# Splits "EXPECTED op args..." specs into P_EXPECT and P_OPS.
probe_specs() {
	local spec

	P_EXPECT=()
	P_OPS=()
	for spec in "$@"; do
		P_EXPECT+=("${spec%% *}")
		P_OPS+=("${spec#* }")
	done
}

# Runs one probe directly, outside any sandbox; prints its result word.
probe_word() {
	local r rc

	# shellcheck disable=SC2086 # ops are space-separated words by design
	r=$("$IT_PROBE" $1 2>/dev/null)
	rc=$?
	[ "$rc" = 0 ] || r="EXIT$rc"
	echo "${r:-NONE}"
}

# outside "EXPECTED op args"...: each probe, run outside the sandbox, gives EXPECTED. Used to
# show an operation that the sandbox must refuse does work without it.
outside() {
	local i got bad=""

	probe_specs "$@"
	for i in "${!P_OPS[@]}"; do
		got=$(probe_word "${P_OPS[$i]}")
		echo "outside: ${P_OPS[$i]} -> $got"
		[ "$got" = "${P_EXPECT[$i]}" ] ||
			bad+="${bad:+; }${P_OPS[$i]}: expected ${P_EXPECT[$i]}, got $got"
	done
	[ -z "$bad" ] || fail "outside the sandbox: $bad"
}

# inside LAUNCH_OPTIONS... -- "EXPECTED op args"...: runs every probe in one sandbox (in
# order, one launch) and compares each result; the job itself must exit 0.
inside() {
	local opts=() i bad="" results=()

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	probe_specs "$@"
	launch_job "${opts[@]}" -- /bin/sh -c "$IT_PROBE_LOOP" sh "$IT_PROBE" "${P_OPS[@]}"
	if [ "$L_RC" != 0 ]; then
		fail "inside: launch exited $L_RC (stderr: $(brief "$L_ERR"))"
		return 1
	fi
	mapfile -t results <<<"$L_OUT"
	for i in "${!P_OPS[@]}"; do
		[ "${results[$i]:-MISSING}" = "${P_EXPECT[$i]}" ] ||
			bad+="${bad:+; }${P_OPS[$i]}: expected ${P_EXPECT[$i]}, got ${results[$i]:-nothing}"
	done
	[ -z "$bad" ] || fail "inside the sandbox: $bad"
}

# Listener logs: every message received on PROTO ADDR PORT, appended by fixtures/listen.py.
listener_file() {
	echo "$IT_LISTEN/$1_$2_$3.log"
}

# Prints how many "hello" lines PROTO ADDR PORT has received (-1: no such listener).
received() {
	local path

	path=$(listener_file "$@")
	if [ ! -f "$path" ]; then
		echo -1
		return
	fi
	grep -c '^hello$' "$path"
}

# expect_received PROTO ADDR PORT N: polls (at most 3 s) until the listener has N messages,
# then checks it has exactly N.
expect_received() {
	local proto=$1 addr=$2 port=$3 want=$4 got i

	for ((i = 0; i < 150; i++)); do
		got=$(received "$proto" "$addr" "$port")
		[ "$got" -lt "$want" ] || break
		sleep 0.02
	done
	[ "$got" != -1 ] || {
		fail "no listener $proto:$addr:$port declared (see listeners in the test file)"
		return 1
	}
	[ "$got" = "$want" ] ||
		fail "listener $proto $addr:$port received $got message(s), expected $want"
}

# Audit log checks (fixtures/audit.py): every line is JSON with a well-formed ts inside the
# launch's run time.
audit_check() {
	local file=${1:-$L_AUDIT} out

	[ -f "$file" ] || {
		fail "audit log $file was not written"
		return 1
	}
	out=$("$IT_PY" "$IT_FIX/audit.py" check "$file" "${L_START/,/.}" "${L_END/,/.}" 2>&1) ||
		fail "audit log $(basename "$file"): $out"
}

# audit_count FILE MATCH...: prints the number of lines matching every MATCH (see audit.py).
audit_count() {
	"$IT_PY" "$IT_FIX/audit.py" count "$@"
}

# audit_get FILE MATCH... -- KEY: prints KEY of the first matching line.
audit_get() {
	"$IT_PY" "$IT_FIX/audit.py" get "$@"
}

# expect_audit N FILE MATCH...: exactly N lines match.
expect_audit() {
	local want=$1 file=$2 got

	shift 2
	got=$(audit_count "$file" "$@")
	[ "$got" = "$want" ] && return 0
	fail "audit log: $got line(s) match '$*', expected $want (log: $(brief "$(cat "$file" 2>/dev/null)"))"
}

# One-letter state of a process from /proc/PID/stat, empty when it is gone.
proc_state() {
	local stat

	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	echo "${stat%% *}"
}

# True when PID is a live (not zombie) process whose command line contains $2.
proc_running() {
	local state

	state=$(proc_state "$1")
	[ -n "$state" ] && [ "$state" != Z ] || return 1
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# The cgroup v2 path ("0::" line) in /proc/PID/cgroup or a saved copy, as seen from the test
# (the job may see "/" from its own cgroup namespace).
cgroup_v2_path() {
	sed -n 's/^0:://p' "$1"
}

# PIDs (as seen from the test, whatever PID namespace the job is in) of the processes named
# COMM whose command line contains MARKER.
find_pids() {
	local comm=$1 marker=$2 d

	for d in /proc/[0-9]*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = "$comm" ] || continue
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF -- "$marker" && echo "${d#/proc/}"
	done
}

# Run by run in the test's own bash: sets up the test directory and calls test_NAME.
it_run_test() {
	local rc pid

	T_NAME=$1
	T_DIR=$IT_TMP/t/$T_NAME
	T_REASON=$T_DIR/reason
	mkdir -p "$T_DIR"
	# Jobs run as nobody unless a test says --user root, and write their files here.
	chmod 0777 "$T_DIR"
	# Audit logs out of the job's reach: launch refuses a log the job could write
	# (its working directory is T_DIR, which every user may write).
	T_LOGS=$IT_TMP/logs/$T_NAME
	mkdir -p "$T_LOGS" && chmod 0755 "$IT_TMP/logs" "$T_LOGS"
	: >"$T_REASON"
	cd "$T_DIR" || return 1
	"test_$T_NAME" >>"$T_DIR/log" 2>&1
	rc=$?
	if [ -f "$T_DIR/pids" ]; then
		while read -r pid; do
			kill -KILL "$pid" 2>/dev/null
		done <"$T_DIR/pids"
	fi
	if [ "$rc" != 0 ] && [ ! -s "$T_REASON" ]; then
		echo "test_$T_NAME returned $rc without calling fail" >"$T_REASON"
	fi
	[ ! -s "$T_REASON" ]
}

# The mount point of the cgroup v1 hierarchy that has controller $1 (empty: none).
v1_mount() {
	awk -v c="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") {
		if ($(i + 1) == "cgroup" && ("," $(i + 3) ",") ~ ("," c ",")) print $5; break } }' \
		/proc/self/mountinfo | head -n1
}

# Removes a test's private cgroup parent $1 (and the program holders in it) once nothing
# runs in it, with its cgroup v1 mirrors, made for the jobs' limits.
cgroup_parent_remove() {
	local parent=$1

	local c m

	"$IT_LAUNCH" gc --unload --cgroup-parent "$parent" >/dev/null 2>&1
	rmdir "$parent" 2>/dev/null
	for c in pids memory cpu; do
		m=$(v1_mount "$c")
		[ -z "$m" ] || [ ! -d "$m${parent#"$IT_CG2"}" ] || rmdir "$m${parent#"$IT_CG2"}" ||
			fail "cannot remove $m${parent#"$IT_CG2"}"
	done
	[ ! -e "$parent" ] || fail "cannot remove the test's cgroup parent $parent: $(ls -a "$parent")"
}

# Everything under any bpffs whose name contains NAME: launch pins nothing, so there must be
# none.
bpffs_named() {
	local m

	while read -r m; do
		find "$m" -name "*$1*" 2>/dev/null
	done < <(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "bpf") print $5; break } }' \
		/proc/self/mountinfo)
}
