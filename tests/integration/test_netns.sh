# SPDX-License-Identifier: LGPL-2.1-or-later
# launch inside a named network namespace: `ip netns exec` mounts a fresh sysfs over /sys,
# which hides the cgroup2 mount; launch mounts it again for itself and works.

NETNS_POLICY='{"name": "netns", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'

test_netns_exec() {
	local p ns=launch-it-$IT_RUNID-$BASHPID hidden unsandboxed

	p=$(policy netns "$NETNS_POLICY")
	ip netns add "$ns" || fail "ip netns add $ns" || return 1
	# The hierarchy is hidden there, as launch will find it.
	# shellcheck disable=SC2016 # awk's $5
	hidden=$(ip netns exec "$ns" awk '$0 ~ / - cgroup2 / { print $5 }' /proc/self/mountinfo)
	# Outside any sandbox, in that namespace (lo down), the connect is unreachable.
	unsandboxed=$(ip netns exec "$ns" "$IT_PROBE" tcp 127.0.0.3 8080 2>&1)
	launch_next_names
	L_N=$((L_N + 1))
	L_OUT_FILE=$T_DIR/launch$L_N.out
	L_ERR_FILE=$T_DIR/launch$L_N.err
	# shellcheck disable=SC2034 # L_START and L_END bound the log's timestamps (audit_check)
	L_START=$EPOCHREALTIME
	echo "+ ip netns exec $ns launch --audit-log $L_AUDIT --name $L_NAME --policy $p -- ..."
	# shellcheck disable=SC2016
	timeout -k 3 30 ip netns exec "$ns" "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" \
		--policy "$p" -- /bin/sh -c '"$0" tcp 127.0.0.3 8080; grep -c " - cgroup" /proc/self/mountinfo' \
		"$IT_PROBE" </dev/null >"$L_OUT_FILE" 2>"$L_ERR_FILE"
	L_RC=$?
	# shellcheck disable=SC2034
	L_END=$EPOCHREALTIME
	L_OUT=$(cat "$L_OUT_FILE")
	L_ERR=$(cat "$L_ERR_FILE")
	echo "  rc=$L_RC out=$(brief "$L_OUT") err=$(brief "$L_ERR")"
	ip netns del "$ns" || fail "ip netns del $ns" || return 1
	expect_eq "cgroup2 mounts visible under ip netns exec" "" "$hidden" || return 1
	expect_eq "the connect outside the sandbox" ENETUNREACH "$unsandboxed" || return 1
	# grep -c prints 0 and exits 1: the job's own status.
	expect_rc "launch under ip netns exec" 1 || return 1
	expect_eq "the job's refused connect, then its cgroup mounts" "EPERM 0" "${L_OUT//$'\n'/ }" ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.0.3 dst_port=8080 || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code=1 denied=1 || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $IT_CG2/launch/$L_NAME left behind"
}

# Runs launch in network namespace $1 through `ip netns exec` (the rest: its arguments);
# sets L_RC, L_OUT, L_ERR as launch_job does.
netns_launch() {
	local ns=$1

	shift
	launch_next_names
	L_N=$((L_N + 1))
	L_OUT_FILE=$T_DIR/launch$L_N.out
	L_ERR_FILE=$T_DIR/launch$L_N.err
	# shellcheck disable=SC2034 # L_START and L_END bound the log's timestamps (audit_check)
	L_START=$EPOCHREALTIME
	echo "+ ip netns exec $ns launch --audit-log $L_AUDIT --name $L_NAME $*"
	timeout -k 3 30 ip netns exec "$ns" "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" \
		"$@" </dev/null >"$L_OUT_FILE" 2>"$L_ERR_FILE"
	L_RC=$?
	# shellcheck disable=SC2034
	L_END=$EPOCHREALTIME
	L_OUT=$(cat "$L_OUT_FILE")
	L_ERR=$(cat "$L_ERR_FILE")
	echo "  rc=$L_RC out=$(brief "$L_OUT") err=$(brief "$L_ERR")"
}

# Limits hold under `ip netns exec` too, where the hierarchies that enforce them (cgroup v1
# ones on a hybrid host) are hidden with /sys: 100 processes run without a limit, and stop
# the job at --pids-max 64. The default limits apply without a warning.
test_netns_exec_limits() {
	local p ns=launch-it-$IT_RUNID-$BASHPID ok=1

	p=$(policy netns "$NETNS_POLICY")
	ip netns add "$ns" || fail "ip netns add $ns" || return 1
	# shellcheck disable=SC2016
	netns_launch "$ns" --pids-max max --policy "$p" -- /bin/sh -c \
		'for i in $(seq 100); do sleep 1 & done; wait'
	expect_rc "100 processes under --pids-max max" 0 || ok=0
	if [ "$ok" = 1 ]; then
		# shellcheck disable=SC2016
		netns_launch "$ns" --pids-max 64 --policy "$p" -- /bin/sh -c \
			'for i in $(seq 100); do sleep 1 & done; wait'
		expect_rc "100 processes under --pids-max 64" 137 || ok=0
	fi
	[ "$ok" = 0 ] || audit_check || ok=0
	[ "$ok" = 0 ] || expect_audit 1 "$L_AUDIT" event=limit kind=pids limit=64 action=stopped ||
		ok=0
	[ "$ok" = 0 ] || [ ! -e "$IT_CG2/launch/$L_NAME" ] ||
		fail "cgroup $IT_CG2/launch/$L_NAME left behind" || ok=0
	if [ "$ok" = 1 ]; then
		netns_launch "$ns" --policy "$p" -- /bin/true
		expect_rc "a job under the default limits" 0 || ok=0
		[ "$ok" = 0 ] || expect_eq "launch's stderr under the default limits" "" "$L_ERR" ||
			ok=0
	fi
	ip netns del "$ns" || fail "ip netns del $ns" || return 1
	[ "$ok" = 1 ]
}

# Under `ip netns exec` on a hybrid host, the limits' v1 hierarchies are mounted again for
# launch alone. When that mount fails (here an LD_PRELOAD library refuses cgroup v1 mounts),
# a job with limits, the default ones included, does not start: it would run unlimited on a
# host that can limit it. A job that wants no limit starts.
test_netns_exec_no_v1_mounts() {
	local p ns=launch-it-$IT_RUNID-$BASHPID ok=1 lines

	grep -q ' - cgroup ' /proc/self/mountinfo || {
		echo "  no cgroup v1 hierarchy on this host: launch mounts none, nothing to refuse"
		return 0
	}
	p=$(policy netns "$NETNS_POLICY")
	printf '#!/bin/sh\nLD_PRELOAD=%s exec "%s" "$@"\n' "$IT_HELPERS/fail_cgroup_v1.so" \
		"$IT_LAUNCH" >"$T_DIR/launch-nov1"
	chmod 755 "$T_DIR/launch-nov1"
	ip netns add "$ns" || fail "ip netns add $ns" || return 1
	# Without the library, the default limits hold there (test_netns_exec_limits).
	netns_launch "$ns" --policy "$p" -- /bin/true
	expect_rc "default limits under ip netns exec" 0 || ok=0
	if [ "$ok" = 1 ]; then
		IT_LAUNCH=$T_DIR/launch-nov1 netns_launch "$ns" --policy "$p" -- /bin/true
		expect_rc "default limits, v1 hierarchies not mountable" 125 || ok=0
		lines=$(printf '%s\n' "$L_ERR" | grep -c .)
		[ "$ok" = 0 ] || expect_eq "stderr lines" 1 "$lines" || ok=0
		[ "$ok" = 0 ] || [[ $L_ERR == *"cannot mount the cgroup v1 hierarchies"*"Operation not permitted"* ]] ||
			fail "stderr does not name the mount and its error: $(brief "$L_ERR")" || ok=0
		[ "$ok" = 0 ] || [ ! -e "$IT_CG2/launch/$L_NAME" ] ||
			fail "cgroup $IT_CG2/launch/$L_NAME left behind" || ok=0
	fi
	if [ "$ok" = 1 ]; then
		IT_LAUNCH=$T_DIR/launch-nov1 netns_launch "$ns" --pids-max 64 --memory-max max \
			--policy "$p" -- /bin/true
		expect_rc "--pids-max 64, v1 hierarchies not mountable" 125 || ok=0
	fi
	if [ "$ok" = 1 ]; then
		IT_LAUNCH=$T_DIR/launch-nov1 netns_launch "$ns" --pids-max max --memory-max max \
			--policy "$p" -- /bin/true
		expect_rc "no limit wanted, v1 hierarchies not mountable" 0 || ok=0
	fi
	# launch mcp makes the mounts its calls' launches take: it stops there too.
	if [ "$ok" = 1 ]; then
		mkdir -p "$T_DIR/modules/tsx" && echo '{}' >"$T_DIR/modules/tsx/package.json"
		timeout -k 3 30 ip netns exec "$ns" "$T_DIR/launch-nov1" mcp --policy "$p" \
			--modules "$T_DIR/modules" </dev/null >"$T_DIR/mcp.out" 2>"$T_DIR/mcp.err"
		L_RC=$?
		L_ERR=$(cat "$T_DIR/mcp.err")
		expect_rc "launch mcp, v1 hierarchies not mountable" 125 || ok=0
		[ "$ok" = 0 ] || [[ $L_ERR == *"cannot mount the cgroup v1 hierarchies"* ]] ||
			fail "launch mcp: $(brief "$L_ERR")" || ok=0
	fi
	ip netns del "$ns" || fail "ip netns del $ns" || return 1
	[ "$ok" = 1 ]
}
