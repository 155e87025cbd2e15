# SPDX-License-Identifier: LGPL-2.1-or-later
# Exit statuses, the command line, policy errors and `launch check`.

MIN_POLICY='{"name": "min", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'

test_exit_status_passthrough() {
	local p code

	p=$(policy min "$MIN_POLICY")
	for code in 0 1 7 255; do
		launch_job --policy "$p" -- /bin/sh -c "exit $code"
		expect_rc "sh -c 'exit $code'" "$code" || return 1
		expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code="$code" || return 1
	done
}

# A job killed by signal N: launch exits 128 + N and the audit log says which signal.
test_exit_signal_status() {
	local p

	p=$(policy min "$MIN_POLICY")
	# shellcheck disable=SC2016
	launch_job --policy "$p" -- /bin/sh -c 'kill -TERM $$'
	expect_rc "job killed by SIGTERM" 143 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit signal? exit_code! || return 1
	# shellcheck disable=SC2016
	launch_job --policy "$p" -- /bin/sh -c 'kill -KILL $$'
	expect_rc "job killed by SIGKILL" 137 || return 1
}

test_exit_timeout() {
	local p pid

	p=$(policy min "$MIN_POLICY")
	# shellcheck disable=SC2016
	launch_job --timeout 1 --policy "$p" -- /bin/sh -c 'echo $$ > "$0"; exec sleep 10' \
		"$T_DIR/job.pid"
	expect_rc "--timeout 1 -- sleep 10" 124 || return 1
	[ "$L_MS" -ge 900 ] && [ "$L_MS" -lt 3500 ] ||
		fail "--timeout 1 took $L_MS ms, expected about 1000" || return 1
	pid=$(cat "$T_DIR/job.pid" 2>/dev/null)
	[ -n "$pid" ] || fail "the job did not start" || return 1
	! proc_running "$pid" "sleep 10" || fail "the timed-out job (pid $pid) still runs" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit || return 1
}

test_exit_not_executable() {
	local p

	p=$(policy min "$MIN_POLICY")
	printf '#!/bin/sh\ntouch "%s/ran"\n' "$T_DIR" >"$T_DIR/noexec.sh"
	chmod 644 "$T_DIR/noexec.sh"
	launch_job --policy "$p" -- "$T_DIR/noexec.sh"
	expect_rc "non-executable file" 126 || return 1
	expect_eq "stderr" "launch: $T_DIR/noexec.sh: cannot execute: Permission denied" "$L_ERR" ||
		return 1
	[ ! -e "$T_DIR/ran" ] || fail "the non-executable file ran" || return 1
	mkdir -p "$T_DIR/adir"
	launch_job --policy "$p" -- "$T_DIR/adir"
	expect_rc "a directory as the command" 126 || return 1
}

test_exit_not_found() {
	local p

	p=$(policy min "$MIN_POLICY")
	launch_job --policy "$p" -- "$T_DIR/no/such/command"
	expect_rc "missing path" 127 || return 1
	# One line saying why, as for every failure of launch's own.
	expect_eq "stderr" "launch: $T_DIR/no/such/command: cannot execute: No such file or directory" \
		"$L_ERR" || return 1
	# The job's user (nobody) searches PATH: a folder it may not enter (/root/bin) would make
	# execvp answer EACCES (126), as it would for that user anywhere.
	PATH=/usr/local/bin:/usr/bin:/bin launch_job --policy "$p" -- no-such-command-for-launch-tests
	expect_rc "command not found in PATH" 127 || return 1
}

# Each bad policy: exit 125, one stderr line naming the file, and the job never runs.
test_policy_errors() {
	local good bad i=0 n
	local cases=(
		'missing:'
		'syntax:{"name": "bad", "allow": ['
		'port:{"name": "bad", "allow": [{"cidr": "127.0.0.2", "ports": [70000]}]}'
		'range:{"name": "bad", "allow": [{"cidr": "127.0.0.2", "ports": ["9010-9000"]}]}'
		'hostbits:{"name": "bad", "allow": [{"cidr": "10.0.0.1/8"}]}'
		'cidr:{"name": "bad", "allow": [{"cidr": "300.1.2.3"}]}'
		'protocol:{"name": "bad", "allow": [{"cidr": "127.0.0.2", "protocol": "sctp"}]}'
		'nodest:{"name": "bad", "allow": [{"ports": [80]}]}'
		'unknownkey:{"name": "bad", "allow": [{"cidr": "127.0.0.2", "prots": [80]}]}'
		'second:{"name": "bad", "allow": "everything"}'
	)

	good=$(policy good "$MIN_POLICY")
	for c in "${cases[@]}"; do
		i=$((i + 1))
		bad=$T_DIR/bad-${c%%:*}.json
		[ "${c%%:*}" = missing ] || printf '%s\n' "${c#*:}" >"$bad"
		if [ "${c%%:*}" = second ]; then
			launch_job --policy "$good" --policy "$bad" -- /bin/touch "$T_DIR/ran$i"
		else
			launch_job --policy "$bad" -- /bin/touch "$T_DIR/ran$i"
		fi
		expect_rc "policy case ${c%%:*}" 125 || return 1
		n=$(printf '%s\n' "$L_ERR" | grep -c .)
		[ "$n" = 1 ] || fail "policy case ${c%%:*}: $n stderr lines, expected 1: $(brief "$L_ERR")" ||
			return 1
		[[ $L_ERR == *"$bad"* ]] ||
			fail "policy case ${c%%:*}: stderr does not name $bad: $(brief "$L_ERR")" || return 1
		[ ! -e "$T_DIR/ran$i" ] || fail "policy case ${c%%:*}: the job ran" || return 1
	done
}

test_bad_options() {
	local p c i=0
	local -a cases=(
		"--bogus-option"
		"--timeout abc"
		"--timeout"
		"--resolver not-an-address"
		"--user no-such-user-for-launch-tests"
		"--cgroup-parent $T_DIR/not-a-cgroup"
	)

	p=$(policy min "$MIN_POLICY")
	for c in "${cases[@]}"; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # the case is split into options on purpose
		launch_job $c --policy "$p" -- /bin/touch "$T_DIR/ran$i"
		expect_rc "launch $c" 125 || return 1
		[ ! -e "$T_DIR/ran$i" ] || fail "launch $c: the job ran" || return 1
		[ -n "$L_ERR" ] || fail "launch $c: exit 125 without a message on stderr" || return 1
	done
	launch_job -- /bin/touch "$T_DIR/ran-nopolicy"
	expect_rc "no --policy" 125 || return 1
	[ ! -e "$T_DIR/ran-nopolicy" ] || fail "no --policy: the job ran" || return 1
	launch_job --policy "$p" --
	expect_rc "no command" 125 || return 1
	launch_job --policy "$p"
	expect_rc "no command and no --" 125 || return 1
}

# A launch that fails before the job exists closes none of the caller's descriptors: its
# stdin (0) stays open to the end. strace shows every close(); the failures: an audit log
# under a file (ENOTDIR), a cgroup parent that is no cgroup.
test_early_failure_keeps_stdin() {
	local p c i=0 trace rc
	local -a cases=(
		"--audit-log $T_DIR/stdin/audit.jsonl"
		"--audit-log $T_LOGS/audit-cg.jsonl --cgroup-parent $T_DIR/not-a-cgroup"
	)

	command -v strace >/dev/null || fail "strace not found (make deps installs it)" || return 1
	p=$(policy min "$MIN_POLICY")
	: >"$T_DIR/stdin"
	for c in "${cases[@]}"; do
		i=$((i + 1))
		trace=$T_DIR/trace$i
		echo "+ strace launch $c"
		# shellcheck disable=SC2086 # the case is split into options on purpose
		timeout -k 3 40 strace -f -qq -e trace=close -o "$trace" "$IT_LAUNCH" $c \
			--policy "$p" -- /bin/touch "$T_DIR/ran$i" <"$T_DIR/stdin" 2>"$T_DIR/err$i"
		rc=$?
		cat "$T_DIR/err$i"
		expect_eq "launch $c: exit status" 125 "$rc" || return 1
		[ ! -e "$T_DIR/ran$i" ] || fail "launch $c: the job ran" || return 1
		grep -q 'close(' "$trace" || fail "launch $c: strace saw no close() at all" || return 1
		! grep -E '^[0-9]+ +close\(0\)' "$trace" ||
			fail "launch $c closed its stdin (fd 0) on the way out" || return 1
	done
}

test_help() {
	launch_raw --help
	expect_rc "--help" 0 || return 1
	[[ $L_OUT == *--policy* ]] || fail "--help does not describe --policy: $(brief "$L_OUT")" ||
		return 1
	launch_raw -h
	expect_rc "-h" 0 || return 1
}

# --version: the release (the VERSION file) and the BPF object's hash, which names the holder
# cgroup that keeps this build's programs; it needs no privilege and no policy.
test_version() {
	local p want_release want_bpf copy=$T_DIR/nobody/launch

	want_release=$(cat "$IT_ROOT/VERSION")
	want_bpf=$(sha256sum "$(dirname "$IT_LAUNCH")/launch.bpf.o" | cut -c1-16)
	launch_raw --version
	expect_rc "--version" 0 || return 1
	expect_eq "launch --version" "launch $want_release (bpf $want_bpf)" "$L_OUT" || return 1
	p=$(policy min "$MIN_POLICY")
	launch_job --policy "$p" -- /bin/true
	expect_rc "a job" 0 || return 1
	[ -d "$IT_CG2/launch/.bpf-$want_bpf" ] ||
		fail "no holder cgroup $IT_CG2/launch/.bpf-$want_bpf for this build" || return 1
	# As nobody (from a copy: the checkout may be closed to nobody).
	mkdir -p "${copy%/*}" && cp "$IT_LAUNCH" "$copy" && chmod 755 "${copy%/*}" "$copy" ||
		fail "cannot copy launch to $copy" || return 1
	expect_eq "launch --version as nobody" "launch $want_release (bpf $want_bpf)" \
		"$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$copy" --version 2>&1)"
}

# `launch check` prints the effective allowlist (host rules resolved) and runs nothing.
test_check() {
	local p made

	p=$(policy chk '{"name": "chk", "allow": [
		{"cidr": "127.0.0.2", "ports": [8080]},
		{"host": "localhost", "ports": ["9000-9010"], "protocol": "udp"},
		{"cidr": "2001:db8::/64", "ports": [443]}]}')
	launch_raw check --policy "$p"
	expect_rc "launch check" 0 || return 1
	local want
	for want in 127.0.0.2 8080 127.0.0.1 9000 9010 2001:db8:: 443; do
		[[ $L_OUT == *"$want"* ]] ||
			fail "launch check output lacks $want: $(brief "$L_OUT")" || return 1
	done
	# Every directory it makes, from strace: other sandboxes on the host may come and go.
	command -v strace >/dev/null || fail "strace not found (make deps installs it)" || return 1
	strace -f -qq -e trace=mkdir,mkdirat -o "$T_DIR/check.trace" "$IT_LAUNCH" check \
		--policy "$p" >/dev/null 2>&1 || fail "launch check under strace failed" || return 1
	made=$(grep -E 'mkdir(at)?\(' "$T_DIR/check.trace")
	[ -z "$made" ] || fail "launch check made directories: $(brief "$made")" || return 1

	p=$(policy bad '{"name": "bad", "allow": [{"cidr": "127.0.0.2", "ports": [0, 70000]}]}')
	launch_raw check --policy "$p"
	expect_rc "launch check with a bad policy" 125 || return 1
	[[ $L_ERR == *"$p"* ]] || fail "launch check: stderr does not name $p" || return 1
}
