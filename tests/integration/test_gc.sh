# SPDX-License-Identifier: LGPL-2.1-or-later
# launch gc under load: it never makes a starting sandbox fail, and it removes what killed
# launchers left, with or without a lock file. Each test uses a cgroup parent of its own, so
# that sandboxes of others on the host are never touched and never counted.

listeners tcp:127.0.0.2:8383 tcp:127.0.0.3:8383

GC_POLICY='{"name": "gc", "allow": [{"cidr": "127.0.0.2", "ports": [8383]}]}'

# A private cgroup parent for this test, under the cgroup2 mount.
gc_parent() {
	echo "$IT_CG2/launch-it$IT_RUNID-$T_NAME"
}

# Removes the private parent (and the program holders in it) once nothing runs in it.
gc_parent_remove() {
	local parent=$1

	"$IT_LAUNCH" gc --unload --cgroup-parent "$parent" >/dev/null 2>&1
	rmdir "$parent" 2>/dev/null
	[ ! -e "$parent" ] || fail "cannot remove the test's cgroup parent $parent: $(ls -a "$parent")"
}

# Starts `launch gc ARGS` in a loop in the background; its PID goes to the test's pid list.
gc_loop() {
	local out=$1

	shift
	# shellcheck disable=SC2016
	bash -c 'while :; do "$@"; sleep 0.02; done' gc-loop "$IT_LAUNCH" gc "$@" >>"$out" 2>&1 &
	track_pid $!
	GC_LOOP_PIDS+=("$!")
}

# 100 launches at once while `launch gc` and `launch gc --unload` run in loops: every launch
# starts (no "every slot is taken"), and every job's forbidden connect is refused.
test_gc_concurrent_launches() {
	local parent p n=${IT_GC_LAUNCHES:-100} i before after failed=0 refused=0 gcs
	local GC_LOOP_PIDS=()

	parent=$(gc_parent)
	p=$(policy gc "$GC_POLICY")
	# The forbidden address takes connections outside the sandbox.
	outside "OK tcp 127.0.0.3 8383" || return 1
	before=$(received tcp 127.0.0.3 8383)
	gc_loop "$T_DIR/gc.log" --cgroup-parent "$parent"
	gc_loop "$T_DIR/gc-unload.log" --unload --cgroup-parent "$parent"
	for ((i = 0; i < n; i++)); do
		# shellcheck disable=SC2016
		timeout -k 3 60 "$IT_LAUNCH" --cgroup-parent "$parent" --policy "$p" \
			--audit-log "$T_DIR/audit$i.jsonl" --name "it$IT_RUNID-gc-$i" -- \
			/bin/sh -c '"$0" tcp 127.0.0.3 8383; "$0" tcp 127.0.0.2 8383' "$IT_PROBE" \
			>"$T_DIR/job$i.out" 2>"$T_DIR/job$i.err" &
		echo "$!" >"$T_DIR/job$i.pid"
		echo "it$IT_RUNID-gc-$i" >>"$IT_TMP/sandboxes"
	done
	for ((i = 0; i < n; i++)); do
		wait "$(cat "$T_DIR/job$i.pid")"
		echo $? >"$T_DIR/job$i.rc"
	done
	kill "${GC_LOOP_PIDS[@]}" 2>/dev/null
	wait "${GC_LOOP_PIDS[@]}" 2>/dev/null
	gcs=$(grep -c '^removed' "$T_DIR/gc.log" "$T_DIR/gc-unload.log" | awk -F: '{ s += $2 } END { print s }')
	for ((i = 0; i < n; i++)); do
		if [ "$(cat "$T_DIR/job$i.rc")" != 0 ] ||
			[ "$(tr '\n' ' ' <"$T_DIR/job$i.out")" != "EPERM OK " ]; then
			failed=$((failed + 1))
			echo "launch $i: rc $(cat "$T_DIR/job$i.rc"), out '$(tr '\n' ' ' <"$T_DIR/job$i.out")'," \
				"err '$(head -c 300 "$T_DIR/job$i.err")'"
		fi
		grep -qx EPERM "$T_DIR/job$i.out" && refused=$((refused + 1))
	done
	after=$(received tcp 127.0.0.3 8383)
	echo "$n launches, $failed failed, $refused forbidden connects refused, $gcs gc runs alongside"
	gc_parent_remove "$parent" || return 1
	[ "$gcs" -ge 4 ] || fail "only $gcs gc runs completed alongside the launches" || return 1
	expect_eq "forbidden connections that got through" 0 $((after - before)) || return 1
	expect_eq "launches that failed or misbehaved beside launch gc" 0 "$failed"
}
