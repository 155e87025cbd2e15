# SPDX-License-Identifier: LGPL-2.1-or-later
# Signals sent to launch reach the job; launch then exits with the job's status.

SIG_POLICY='{"name": "sig", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'

# forward SIG: the job traps SIG and exits 42; it says when the trap is set so the signal is
# never sent before (a signal that arrived too early would kill sh instead).
forward() {
	local sig=$1 p

	p=$(policy sig "$SIG_POLICY")
	launch_bg --policy "$p" -- /bin/sh -c \
		"trap 'exit 42' $sig; echo ready >\"\$0\"; while :; do sleep 0.1; done" "$T_DIR/ready"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
		return 1
	}
	kill -"$sig" "$L_PID" || fail "cannot signal launch (pid $L_PID)" || return 1
	launch_bg_wait 10 || return 1
	expect_rc "SIG$sig to launch, job traps it and exits 42" 42 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code=42
}

test_signal_usr1() {
	forward USR1
}

test_signal_term() {
	forward TERM
}

test_signal_int() {
	forward INT
}

test_signal_hup() {
	forward HUP
}

test_signal_quit() {
	forward QUIT
}

test_signal_usr2() {
	forward USR2
}

# A caller's SIG_IGN survives every exec (launch ignores SIGPIPE itself): the job starts with
# every signal at its default all the same, ignored ones included, the C library's own 32 and
# 33 as well (which glibc's and musl's sigaction refuse to touch, so only the raw call can).
test_signal_job_defaults() {
	local p ign=$T_DIR/ignoring want=$((0x180001801)) mask

	p=$(policy sig "$SIG_POLICY")
	# HUP (bit 0), USR2 (11), PIPE (12), 32 and 33 (31, 32) set to SIG_IGN, then the exec.
	cat >"$ign" <<EOF
#!$IT_PY
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
act = (ctypes.c_ulong * 4)(1, 0, 0, 0)  # SIG_IGN, no flags, no restorer, empty mask
for sig in (1, 12, 13, 32, 33):
    if libc.syscall(13, sig, act, None, 8) != 0:  # rt_sigaction on x86-64
        sys.exit("rt_sigaction %d: %s" % (sig, os.strerror(ctypes.get_errno())))
os.execvp(sys.argv[1], sys.argv[1:])
EOF
	chmod +x "$ign"
	[ "$(uname -m)" = x86_64 ] || sed -i 's/syscall(13,/syscall(134,/' "$ign" # arm64
	mask=$("$ign" grep SigIgn /proc/self/status | awk '{print $2}')
	expect_match "outside, the caller's SIG_IGN is inherited" '^[0-9a-f]{16}$' "$mask" || return 1
	# A runner may ignore other signals itself: these five are the ones that must show.
	expect_eq "outside, SigIgn $mask holds these" "$want" $((0x$mask & want)) || return 1
	printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$ign" "$IT_LAUNCH" >"$ign-launch"
	chmod +x "$ign-launch"
	IT_LAUNCH=$ign-launch launch_job --policy "$p" -- grep SigIgn /proc/self/status
	expect_rc "the job reads its own status" 0 || return 1
	expect_match "inside, nothing ignored" '^SigIgn:[[:space:]]+0+$' "$L_OUT" || return 1
	audit_check
}

# sleeper: launch in the background with a job that handles no signal, once it is running.
sleeper() {
	local p

	p=$(policy sig "$SIG_POLICY")
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c 'echo ready >"$0"; exec sleep 100' "$T_DIR/ready"
	wait_for_file "$T_DIR/ready" 10 || {
		kill -KILL "$L_PID" 2>/dev/null
		fail "the job never became ready (stderr: $(brief "$(cat "$L_ERR_FILE")"))"
	}
}

# A job that does not handle the signal dies of it: launch exits 128 + 15.
test_signal_term_untrapped() {
	# Whether the signal finds sh just before exec or sleep after it, neither handles it.
	sleeper || return 1
	kill -TERM "$L_PID" || fail "cannot signal launch (pid $L_PID)" || return 1
	launch_bg_wait 10 || return 1
	expect_rc "SIGTERM to launch, job does not trap it" 143 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit signal=15 exit_code!
}

# A job frozen from outside (launch mcp freezes a finished call's sandbox until it kills it):
# a signal passed on must still end it, not wait for a thaw that never comes.
test_signal_term_frozen() {
	local cg i

	sleeper || return 1
	cg=$IT_CG2/launch/$L_NAME
	echo 1 >"$cg/cgroup.freeze" || fail "cannot freeze $cg" || return 1
	for ((i = 0; i < 100; i++)); do
		grep -q "^frozen 1" "$cg/cgroup.events" && break
		sleep 0.02
	done
	grep -q "^frozen 1" "$cg/cgroup.events" || fail "the sandbox did not freeze" || return 1
	kill -TERM "$L_PID" || fail "cannot signal launch (pid $L_PID)" || return 1
	launch_bg_wait 5 || return 1
	expect_rc "SIGTERM to launch, its job frozen" 143 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit signal=15 exit_code!
}
