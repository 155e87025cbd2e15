# SPDX-License-Identifier: LGPL-2.1-or-later
# What the job inherits: stdio, environment, arguments; and what it must not: fds, privileges.

listeners tcp:127.0.0.2:8080 tcp:127.0.0.3:8080

ENV_POLICY='{"name": "env", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'

test_stdio_env_args() {
	local p want

	p=$(policy env "$ENV_POLICY")
	printf 'line-from-stdin\n' >"$T_DIR/stdin"
	export FOO='bar baz'
	# shellcheck disable=SC2016
	L_STDIN=$T_DIR/stdin launch_job --policy "$p" -- /bin/sh -c \
		'cat; echo "FOO=$FOO"; echo to-stderr >&2; printf "%s|" "$@"; echo' sh 'a b' '' c
	expect_rc "job" 0 || return 1
	want=$(printf 'line-from-stdin\nFOO=bar baz\na b||c|')
	expect_eq "job stdout" "$want" "$L_OUT" || return 1
	grep -qx 'to-stderr' "$L_ERR_FILE" ||
		fail "the job's stderr did not reach launch's stderr: $(brief "$L_ERR")" || return 1
}

# fd list of the process in $1 (saved `ls -l /proc/self/fd` output), without ls's own dirfd.
fd_list() {
	awk '$(NF-1) == "->" && $NF !~ /^\/proc\/[0-9]+\/fd$/ { printf "%s%s", sep, $(NF-2); sep = " " }' "$1"
}

fd_targets() {
	awk '$(NF-1) == "->" { printf "%s->%s ", $(NF-2), $NF }' "$1"
}

# launch's own descriptors (BPF maps, ring buffer, cgroup, audit log) must not leak into the
# job. launch runs here with nothing but 0, 1 and 2 open, so any other fd is launch's.
test_fds_only_stdio() {
	local p

	p=$(policy env "$ENV_POLICY")
	launch_next_names
	(
		for fd in "/proc/$BASHPID/fd/"*; do
			fd=${fd##*/}
			[ "$fd" -le 2 ] || eval "exec $fd>&-" 2>/dev/null
		done
		exec timeout -k 3 "${IT_LAUNCH_SAFETY_S:-40}" "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" --policy "$p" -- \
			/bin/ls -l /proc/self/fd
	) </dev/null >"$T_DIR/fds" 2>"$T_DIR/fds.err"
	# shellcheck disable=SC2034 # read by expect_rc
	L_RC=$?
	L_ERR=$(cat "$T_DIR/fds.err")
	cat "$T_DIR/fds"
	expect_rc "ls /proc/self/fd" 0 || return 1
	expect_eq "fds open in the job ($(fd_targets "$T_DIR/fds"))" "0 1 2" "$(fd_list "$T_DIR/fds")"
}

# A descriptor the caller leaves open (here a file on fd 7) does not reach the job either.
test_fds_inherited_closed() {
	local p

	p=$(policy env "$ENV_POLICY")
	launch_job --policy "$p" -- /bin/ls -l /proc/self/fd 7>"$T_DIR/inherited"
	expect_rc "ls /proc/self/fd" 0 || return 1
	expect_eq "fds open in the job ($(fd_targets "$L_OUT_FILE"))" "0 1 2" "$(fd_list "$L_OUT_FILE")"
}

# Even when started by root, the job has no capability at all and cannot gain any.
test_capabilities() {
	local p f want

	p=$(policy env "$ENV_POLICY")
	if grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status; then
		fail "the test runs without capabilities, so it cannot tell"
		return 1
	fi
	launch_job --policy "$p" -- /bin/grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' \
		/proc/self/status
	expect_rc "grep /proc/self/status" 0 || return 1
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		want=0000000000000000
		expect_eq "$f" "$want" "$(awk -v f="$f:" '$1 == f { print $2 }' <<<"$L_OUT")" || return 1
	done
	expect_eq NoNewPrivs 1 "$(awk '$1 == "NoNewPrivs:" { print $2 }' <<<"$L_OUT")"
}

test_user_nobody() {
	local p n2 probe=$IT_PROBE

	p=$(policy env "$ENV_POLICY")
	n2=$(received tcp 127.0.0.2 8080)
	# The checkout may sit in a directory nobody cannot enter (a 0700 home): run copies the
	# helpers to its own directory, which it keeps open to all.
	setpriv --reuid=65534 --regid=65534 --clear-groups -- test -x "$probe" ||
		fail "nobody cannot run $probe" || return 1
	# shellcheck disable=SC2016
	launch_job --user nobody --policy "$p" -- /bin/sh -c \
		'id -u; id -g; id -G; "$0" tcp 127.0.0.3 8080; "$0" tcp 127.0.0.2 8080' "$probe"
	expect_rc "job as nobody" 0 || return 1
	expect_eq "uid, gid, groups, refused, allowed" "65534 65534 65534 EPERM OK" "${L_OUT//$'\n'/ }" ||
		return 1
	expect_received tcp 127.0.0.2 8080 $((n2 + 1)) || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny uid=65534 dst_ip=127.0.0.3 dst_port=8080
}
