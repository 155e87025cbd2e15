# SPDX-License-Identifier: LGPL-2.1-or-later
# Resource limits: a fork bomb or a memory hog is stopped at its limit and on record, the host
# stays usable meanwhile, and nothing of the sandbox is left; the limits come from options or
# the policy, and one that cannot be enforced is an error.

LIMITS_POLICY='{"name": "limits", "allow": []}'

# Fails if anything of sandbox $1 is left: its cgroups (v2 and v1 mirrors), its lock file,
# processes whose command line holds $2.
l_nothing_left() {
	local name=$1 marker=$2 c m left=""

	[ ! -e "$IT_CG2/launch/$name" ] || left+=" $IT_CG2/launch/$name"
	for c in pids memory cpu; do
		m=$(v1_mount "$c")
		[ -z "$m" ] || [ ! -e "$m/launch/$name" ] || left+=" $m/launch/$name"
	done
	[ ! -e "/run/launch/$name.lock" ] || left+=" /run/launch/$name.lock"
	[ -z "$(find_pids probe "$marker")" ] || left+=" processes '$marker'"
	[ -z "$left" ] || fail "left behind by $name:$left"
}

# Runs `launch check` (at most N times) until $L_PID ends. L_CHECKS counts the runs, L_SLOW
# those slower than 200 ms, L_CHECK_MS is the slowest. A plain run, as a user would: a
# higher priority does not help here (nice costs an exec; SCHED_FIFO makes the check queue
# on the kernel's mapping lock instead of spinning for it, measured 2-3x slower).
l_check_alongside() {
	local p=$1 n=$2 t0 t1 ms

	L_CHECK_MS=0
	L_CHECKS=0
	L_SLOW=0
	while [ "$L_CHECKS" -lt "$n" ] && kill -0 "$L_PID" 2>/dev/null; do
		t0=$EPOCHREALTIME
		"$IT_LAUNCH" check --policy "$p" >/dev/null 2>&1 || {
			fail "launch check failed beside the job"
			return 1
		}
		t1=$EPOCHREALTIME
		ms=$(elapsed_ms "$t0" "$t1")
		echo "launch check beside the job: $ms ms"
		[ "$ms" -le "$L_CHECK_MS" ] || L_CHECK_MS=$ms
		[ "$ms" -le 200 ] || L_SLOW=$((L_SLOW + 1))
		L_CHECKS=$((L_CHECKS + 1))
		sleep 0.05
	done
}

# l_expect_cgroup_value CONTROLLER V2_FILE V1_FILE VALUE: the running sandbox $L_NAME has
# VALUE in its cgroup v2 file, or else in its v1 mirror's file (the first word of it).
l_expect_cgroup_value() {
	local ctrl=$1 v2=$2 v1=$3 want=$4 m got

	if [ -e "$IT_CG2/launch/$L_NAME/$v2" ]; then
		got=$(cut -d' ' -f1 "$IT_CG2/launch/$L_NAME/$v2")
	else
		m=$(v1_mount "$ctrl")
		got=$(cat "$m/launch/$L_NAME/$v1" 2>/dev/null)
	fi
	expect_eq "$ctrl limit of the running sandbox" "$want" "$got"
}

# Waits at most $2 seconds for the running sandbox ($L_NAME) to hold $1 tasks or more.
l_wait_tasks() {
	local want=$1 deadline file m got

	file=$IT_CG2/launch/$L_NAME/pids.current
	if [ ! -e "$file" ]; then
		m=$(v1_mount pids)
		file=$m/launch/$L_NAME/pids.current
	fi
	deadline=$(($(date +%s%N) / 1000000 + $2 * 1000))
	while [ $(($(date +%s%N) / 1000000)) -lt "$deadline" ]; do
		got=$(cat "$file" 2>/dev/null)
		[ "${got:-0}" -ge "$want" ] && return 0
		sleep 0.01
	done
	return 0
}

# A uid-0 fork bomb (every process forks until the deadline) under the given options: it is
# stopped at its pids limit (exit 137, a "limit" event), `launch check` answers within 200 ms
# meanwhile, and nothing is left.
l_forkbomb() {
	local limit=$1 p

	shift
	p=$(policy limits "$LIMITS_POLICY")
	launch_bg --timeout 60 --policy "$p" "$@" -- "$IT_PROBE" forkbomb 45
	# From the moment the bomb forks (init, the bomb and a child in the sandbox), however
	# long launch took to start it.
	l_wait_tasks 3 10
	l_check_alongside "$p" 300 || return 1
	launch_bg_wait 60 || return 1
	expect_rc "fork bomb" 137 || return 1
	echo "launch check: $L_CHECKS runs, $L_SLOW over 200 ms, slowest $L_CHECK_MS ms"
	# A bomb that hits its limit fast is stopped within a few hundred ms on an idle host, so
	# one answer beside it is all that can be asked for; every answer counts.
	[ "$L_CHECKS" -ge 1 ] ||
		fail "the bomb was stopped before launch check could run beside it" ||
		return 1
	# Every answer: the host is usable throughout, not on average.
	[ "$L_SLOW" = 0 ] ||
		fail "launch check answered $L_SLOW of $L_CHECKS times in over 200 ms beside the fork bomb (slowest $L_CHECK_MS ms)" ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=limit kind=pids limit="$limit" action=stopped || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit signal=9 || return 1
	l_nothing_left "$L_NAME" "forkbomb 45"
}

# The default pids limit: 64 per online CPU, at most 2048 and at most 15% of the kernel's
# task limit.
test_limit_forkbomb_default() {
	local tasks limit

	tasks=$(cat /proc/sys/kernel/pid_max)
	[ "$(cat /proc/sys/kernel/threads-max)" -ge "$tasks" ] || tasks=$(cat /proc/sys/kernel/threads-max)
	limit=$((tasks * 15 / 100))
	[ "$limit" -le 2048 ] || limit=2048
	[ "$limit" -le $(($(getconf _NPROCESSORS_ONLN) * 64)) ] ||
		limit=$(($(getconf _NPROCESSORS_ONLN) * 64))
	[ "$limit" -ge 64 ] || limit=64
	l_forkbomb "$limit"
}

test_limit_forkbomb_256() {
	local p

	# What the limit stops: 300 processes at once run to the end without it.
	p=$(policy limits "$LIMITS_POLICY")
	# shellcheck disable=SC2016
	launch_job --pids-max max --policy "$p" -- /bin/sh -c 'for i in $(seq 300); do sleep 2 & done; wait'
	expect_rc "300 processes under --pids-max max" 0 || return 1
	# shellcheck disable=SC2016
	launch_job --pids-max 256 --policy "$p" -- /bin/sh -c 'for i in $(seq 300); do sleep 2 & done; wait'
	expect_rc "300 processes under --pids-max 256" 137 || return 1
	expect_audit 1 "$L_AUDIT" event=limit kind=pids limit=256 action=stopped || return 1
	l_forkbomb 256 --pids-max 256
}

# A memory hog under --memory-max 256M is killed and logged; the launcher survives it (it
# writes sandbox_exit), and the same job under the limit runs to the end.
test_limit_memory_hog() {
	local p

	p=$(policy limits "$LIMITS_POLICY")
	launch_job --memory-max 256M --policy "$p" -- "$IT_PROBE" memhog 128
	expect_rc "128 MiB under --memory-max 256M" 0 || return 1
	expect_eq "128 MiB under --memory-max 256M" OK "$L_OUT" || return 1
	launch_job --memory-max 256M --policy "$p" -- "$IT_PROBE" memhog 1024
	expect_rc "1 GiB under --memory-max 256M" 137 || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=limit kind=memory limit=268435456 action=stopped || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit signal=9 || return 1
	l_nothing_left "$L_NAME" "memhog 1024"
}

# A full /tmp (--tmp-size) is on record; the job sees ENOSPC and its exit status is its own.
test_limit_tmp_full() {
	local p

	p=$(policy limits "$LIMITS_POLICY")
	# shellcheck disable=SC2016
	launch_job --tmp-size 1M --policy "$p" -- /bin/sh -c \
		'df -k /tmp | awk "NR == 2 { print \$2 }"
		 dd if=/dev/zero of=/tmp/fill bs=64k count=64 2>/dev/null; echo "dd $?"; sleep 0.3
		 exit 3'
	expect_rc "a job that filled /tmp" 3 || return 1
	# shellcheck disable=SC2086,SC2116 # echo joins the lines with single spaces
	expect_eq "/tmp size in KiB, then dd's status" "1024 dd 1" "$(echo $L_OUT)" || return 1
	expect_audit 1 "$L_AUDIT" event=limit kind=tmp limit=1048576 action=none || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code=3
}

# Limits from the policy's "limits" object; options override them; the job's OOM score is
# raised (the launcher's is not) and its RLIMIT_NOFILE set.
test_limit_policy_and_options() {
	local p own

	p=$(policy limits '{"name": "limits", "allow": [],
		"limits": {"pids_max": 64, "memory_max": "512M", "tmp_size": "2M", "nofile": 512,
		"cpu_max": 0.5}}')
	# shellcheck disable=SC2016
	launch_job --policy "$p" -- /bin/sh -c \
		'ulimit -n; ulimit -Hn; cat /proc/self/oom_score_adj; df -k /tmp | awk "NR == 2 { print \$2 }"'
	expect_rc "a job under the policy's limits" 0 || return 1
	# shellcheck disable=SC2086,SC2116 # echo joins the lines with single spaces
	expect_eq "nofile soft, hard, OOM score, /tmp KiB" "512 512 1000 2048" "$(echo $L_OUT)" ||
		return 1
	# The limits are in the job's cgroups (v2, or the v1 mirrors on a hybrid host).
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c 'echo ready >"$0/ready"; sleep 3' "$T_DIR"
	wait_for_file "$T_DIR/ready" 10 || fail "the job never became ready" || return 1
	l_expect_cgroup_value pids pids.max pids.max 64 || return 1
	l_expect_cgroup_value memory memory.max memory.limit_in_bytes $((512 << 20)) || return 1
	l_expect_cgroup_value cpu cpu.max cpu.cfs_quota_us "50000" || return 1
	kill -KILL "$L_PID"
	launch_bg_wait 10 || return 1
	own=$(cat /proc/self/oom_score_adj)
	# shellcheck disable=SC2016
	launch_job --policy "$p" -- /bin/sh -c 'for i in $(seq 100); do sleep 2 & done; wait'
	expect_rc "100 processes under the policy's pids_max 64" 137 || return 1
	expect_audit 1 "$L_AUDIT" event=limit kind=pids limit=64 || return 1
	# shellcheck disable=SC2016
	launch_job --pids-max 200 --nofile 100 --policy "$p" -- /bin/sh -c \
		'for i in $(seq 100); do sleep 1 & done; wait; ulimit -n'
	expect_rc "--pids-max 200 over the policy's 64" 0 || return 1
	expect_eq "--nofile over the policy's" 100 "$L_OUT" || return 1
	expect_eq "launch's own OOM score after its jobs" "$own" "$(cat /proc/self/oom_score_adj)"
}

# The v1 cgroups of the limits (pids and memory, on a hybrid host) that sandbox $L_NAME has,
# as "controller mount" lines; fails when the host has none.
l_v1_joined_dirs() {
	local c m

	for c in pids memory cpu; do
		m=$(v1_mount "$c")
		[ -n "$m" ] && [ -d "$m/launch/$L_NAME" ] && echo "$c $m/launch/$L_NAME"
	done
	return 0
}

# Init moves itself into the v1 cgroups of the limits before it starts the job: every process
# of the sandbox (init and the job, the members of its cgroup v2) is in each of them, and the
# job's cgroup namespace has each as its root ("/").
test_limit_v1_joined() {
	local p dirs c d want got bad

	p=$(policy limits "$LIMITS_POLICY")
	# shellcheck disable=SC2016 # the job's own shell expands them
	launch_bg --policy "$p" -- /bin/sh -c \
		'cat /proc/self/cgroup >"$0/cgroup"; echo ready >"$0/ready"; exec sleep 5' "$T_DIR"
	wait_for_file "$T_DIR/ready" 10 || fail "the job never became ready" || return 1
	dirs=$(l_v1_joined_dirs)
	echo "v1 cgroups: $dirs"
	if ! grep -q '^pids ' <<<"$dirs" || ! grep -q '^memory ' <<<"$dirs"; then
		kill -TERM "$L_PID"
		launch_bg_wait 10
		fail "this test needs a host whose pids and memory limits are in cgroup v1 hierarchies"
		return 1
	fi
	want=$(sort -n "$IT_CG2/launch/$L_NAME/cgroup.procs" | tr '\n' ' ')
	while read -r c d; do
		got=$(sort -n "$d/cgroup.procs" | tr '\n' ' ')
		expect_eq "the processes of the $c v1 cgroup (the v2 cgroup's: init and the job)" \
			"$want" "$got" || break
	done <<<"$dirs"
	# shellcheck disable=SC2086 # counted as words
	set -- $want
	[ "$#" = 2 ] || fail "the sandbox's cgroup v2 holds '$want', not init and the job"
	kill -TERM "$L_PID"
	launch_bg_wait 10 || return 1
	[ ! -s "$T_REASON" ] || return 1
	bad=$(awk -F: '$2 ~ /(^|,)(pids|memory|cpu)(,|$)/ && $3 != "/"' "$T_DIR/cgroup")
	[ -z "$bad" ] || fail "the job sees a v1 cgroup outside its namespace's root: $bad" || return 1
	l_nothing_left "$L_NAME" "sleep 5"
}

# Runs job $5 under policy $4 through launch started by the command in $6..., which must
# stop it with 125 and "cannot move the sandbox into $2/launch/NAME: $3" ($1 names the case)
# before the job runs, leaving nothing behind.
l_join_refused() {
	local what=$1 m=$2 why=$3 p=$4 job=$5

	shift 5
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$*" "$IT_LAUNCH" >"$T_DIR/launch-wrapped"
	chmod 755 "$T_DIR/launch-wrapped"
	IT_LAUNCH=$T_DIR/launch-wrapped launch_job --policy "$p" -- /bin/sh -c "$job" "$T_DIR"
	expect_rc "$what" 125 || return 1
	expect_match "its message" \
		"^launch: cannot move the sandbox into $m/launch/$L_NAME: $why\$" "$L_ERR" || return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran though init is not in its limits" || return 1
	l_nothing_left "$L_NAME" "ran"
}

# A move into a v1 cgroup that fails stops launch with 125 naming the cgroup, and the job never
# runs: a directory without `tasks` handed to init for the pids cgroup (an LD_PRELOAD library
# in the launcher swaps it in), and, where the cpu hierarchy
# schedules real-time groups, the kernel's own refusal of a real-time task in a cgroup that has
# no real-time time (EINVAL: a new cgroup gets none).
test_limit_v1_join_refused() {
	local p m job

	p=$(policy limits "$LIMITS_POLICY")
	m=$(v1_mount pids)
	if grep -qw pids "$IT_CG2/launch/cgroup.controllers" 2>/dev/null || [ -z "$m" ]; then
		fail "this test needs a host whose pids controller is a cgroup v1 hierarchy"
		return 1
	fi
	# shellcheck disable=SC2016
	job='echo ran >"$0/ran"'
	launch_job --policy "$p" -- /bin/sh -c "$job" "$T_DIR"
	expect_rc "the job, moves allowed" 0 || return 1
	[ -e "$T_DIR/ran" ] || fail "the job did not run with its moves allowed" || return 1
	rm -f "$T_DIR/ran"

	l_join_refused "the move into the pids v1 cgroup refused" "$m" "No such file or directory" "$p" \
		"$job" env LD_PRELOAD="$IT_HELPERS/fail_v1_tasks.so" || return 1

	m=$(v1_mount cpu)
	if [ -z "$m" ] || [ ! -e "$m/cpu.rt_runtime_us" ] ||
		grep -qw cpu "$IT_CG2/launch/cgroup.controllers" 2>/dev/null; then
		echo "  no real-time group scheduling in a cpu v1 hierarchy here: the kernel's refusal is not tried"
		return 0
	fi
	l_join_refused "a real-time launch (its cpu v1 cgroup has no real-time time)" "$m" \
		"Invalid argument" "$p" "$job" chrt -f 1
}

test_limit_bad_values() {
	local p spec opt value

	p=$(policy limits "$LIMITS_POLICY")
	for spec in "--pids-max 0" "--pids-max -5" "--memory-max 1K" "--memory-max 12Q" \
		"--cpu-max 0" "--cpu-max fast" "--tmp-size max" "--tmp-size 200%" "--nofile 1"; do
		opt=${spec%% *}
		value=${spec#* }
		launch_raw "$opt" "$value" --policy "$p" -- /bin/true
		expect_rc "$spec" 125 || return 1
		expect_match "$spec message" "^launch: $opt: \"$value\" is not" "$L_ERR" || return 1
	done
	p=$(policy bad '{"name": "bad", "allow": [], "limits": {"memory_max": "lots"}}')
	launch_raw --policy "$p" -- /bin/true
	expect_rc "a policy with a bad memory_max" 125 || return 1
	expect_match "its message" 'bad.json: limits.memory_max: "lots" is not a size' "$L_ERR"
}

# A limit that cannot be enforced (here: no pids controller in sight, as in a mount namespace
# without the v1 hierarchy) stops launch with 125 naming it; "max" runs without it.
test_limit_unenforceable() {
	local p m

	p=$(policy limits "$LIMITS_POLICY")
	m=$(v1_mount pids)
	if grep -qw pids "$IT_CG2/launch/cgroup.controllers" 2>/dev/null || [ -z "$m" ]; then
		fail "this test needs a host whose pids controller is a cgroup v1 hierarchy"
		return 1
	fi
	launch_next_names
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- /bin/sh -c 'umount -l "$0" && exec "$@"' \
		"$m" "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" --pids-max 256 \
		--policy "$p" -- /bin/true >"$T_DIR/out" 2>"$T_DIR/err"
	L_RC=$?
	L_ERR=$(cat "$T_DIR/err")
	echo "rc $L_RC, err $L_ERR"
	expect_rc "--pids-max 256 with no pids controller" 125 || return 1
	expect_match "its message" '^launch: --pids-max 256 cannot be enforced: .*no cgroup v1 hierarchy' \
		"$L_ERR" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "the refused sandbox's cgroup is left" || return 1
	launch_next_names
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- /bin/sh -c 'umount -l "$0" && exec "$@"' \
		"$m" "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" --pids-max max \
		--policy "$p" -- /bin/true >"$T_DIR/out" 2>"$T_DIR/err"
	L_RC=$?
	L_ERR=$(cat "$T_DIR/err")
	expect_rc "--pids-max max with no pids controller" 0 || return 1
	# The default limit, which nobody asked for: the job runs, and stderr says so.
	launch_next_names
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- /bin/sh -c 'umount -l "$0" && exec "$@"' \
		"$m" "$IT_LAUNCH" --audit-log "$L_AUDIT" --name "$L_NAME" --policy "$p" -- /bin/true \
		>"$T_DIR/out" 2>"$T_DIR/err"
	L_RC=$?
	L_ERR=$(cat "$T_DIR/err")
	expect_rc "the default pids limit with no pids controller" 0 || return 1
	expect_match "its warning" '^launch: warning: no cgroup controller for the default --pids-max [0-9]+ here' \
		"$L_ERR"
}
