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
			--audit-log "$T_LOGS/audit$i.jsonl" --name "it$IT_RUNID-gc-$i" -- \
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
	cgroup_parent_remove "$parent" || return 1
	[ "$gcs" -ge 4 ] || fail "only $gcs gc runs completed alongside the launches" || return 1
	expect_eq "forbidden connections that got through" 0 $((after - before)) || return 1
	expect_eq "launches that failed or misbehaved beside launch gc" 0 "$failed"
}

# BPF objects of the programs attached to a holder: "prog ID" and "map ID" lines, the maps in
# the slots of its maps-of-maps included.
gc_bpf_objects() {
	local holder=$1

	bpftool -j cgroup show "$holder" 2>/dev/null | "$IT_PY" -c '
import json, subprocess, sys

def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else None

maps = set()
for prog in json.loads(sys.stdin.read() or "[]"):
    print("prog", prog["id"])
    info = bpftool("prog", "show", "id", str(prog["id"])) or {}
    maps.update(info.get("map_ids", []))
for m in sorted(maps):
    print("map", m)
    info = bpftool("map", "show", "id", str(m)) or {}
    if info.get("type") in ("array_of_maps", "hash_of_maps"):
        for entry in bpftool("map", "dump", "id", str(m)) or []:
            inner = entry.get("inner_map_id", entry.get("value"))
            if isinstance(inner, int):
                print("map", inner)
' | sort -u
}

# How many of the BPF objects listed (gc_bpf_objects lines) still exist.
gc_bpf_alive() {
	local kind id n=0

	while read -r kind id; do
		bpftool "$kind" show id "$id" >/dev/null 2>&1 && n=$((n + 1))
	done <"$1"
	echo "$n"
}

# SIGKILLs of launchers at random moments (start-up, a flood of refusals, teardown), then
# `launch gc`: nothing is left under the cgroup parent or its cgroup v1 mirrors, no lock file
# of these sandboxes, and none of the BPF programs and maps they used. One killed sandbox
# also loses its lock file, as if /run/launch had been emptied: gc finds it all the same.
test_gc_killed_launchers() {
	local parent p n=${IT_GC_KILLS:-30} i name pid delay left="" m c holder
	local names=()

	parent=$(gc_parent)
	p=$(policy gc "$GC_POLICY")
	[ -x "$IT_HELPERS/flood" ] || fail "$IT_HELPERS/flood is missing (make helpers)" || return 1
	for ((i = 0; i < n; i++)); do
		name=it$IT_RUNID-kill-$i
		names+=("$name")
		echo "$name" >>"$IT_TMP/sandboxes"
		# shellcheck disable=SC2016
		"$IT_LAUNCH" --cgroup-parent "$parent" --policy "$p" --audit-log "$T_LOGS/audit.jsonl" \
			--name "$name" -- /bin/sh -c '"$0" udp 127.0.0.3 5300 $(($1 % 3 * 2000)) >/dev/null' \
			"$IT_HELPERS/flood" "$i" >/dev/null 2>&1 &
		pid=$!
		track_pid "$pid"
		# 0-250 ms: before the cgroup, during set-up, the flood, or the teardown.
		delay=$((RANDOM % 250))
		sleep "$(printf '0.%03d' "$delay")"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# One more, killed while its job runs, whose lock file then disappears.
	name=it$IT_RUNID-kill-nolock
	names+=("$name")
	echo "$name" >>"$IT_TMP/sandboxes"
	"$IT_LAUNCH" --cgroup-parent "$parent" --policy "$p" --audit-log "$T_LOGS/audit.jsonl" \
		--name "$name" -- /bin/sh -c "echo ready >$T_DIR/ready; exec sleep 60" >/dev/null 2>&1 &
	pid=$!
	track_pid "$pid"
	wait_for_file "$T_DIR/ready" 10 || fail "the last sandbox never became ready" || return 1
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	[ -d "$parent/$name" ] || fail "the killed sandbox's cgroup $parent/$name is not there" ||
		return 1
	rm -f "/run/launch/$name.lock"
	holder=$(find "$parent" -mindepth 1 -maxdepth 1 -type d -name '.bpf-*' | head -n1)
	[ -n "$holder" ] || fail "no program holder in $parent" || return 1
	gc_bpf_objects "$holder" >"$T_DIR/bpf.objects"
	echo "before gc: $(find "$parent" -mindepth 1 -maxdepth 1 -type d | wc -l) cgroups," \
		"$(grep -c . "$T_DIR/bpf.objects") BPF objects of the test's programs"
	# A plain `launch gc`: it knows the parent from the launches that used it.
	launch_raw gc
	expect_rc "launch gc" 0 || return 1
	launch_raw gc --unload --cgroup-parent "$parent"
	expect_rc "launch gc --unload" 0 || return 1
	for name in "${names[@]}"; do
		[ ! -e "$parent/$name" ] || left+=" $parent/$name"
		[ ! -e "/run/launch/$name.lock" ] || left+=" /run/launch/$name.lock"
		[ ! -e "/run/launch/$name.ctl" ] || left+=" /run/launch/$name.ctl"
		for c in pids memory cpu; do
			m=$(awk -v c="$c" '{ for (i = 7; i <= NF; i++) if ($i == "-") {
				if ($(i + 1) == "cgroup" && ("," $(i + 3) ",") ~ ("," c ",")) print $5; break } }' \
				/proc/self/mountinfo | head -n1)
			[ -z "$m" ] || [ ! -e "$m${parent#"$IT_CG2"}/$name" ] ||
				left+=" $m${parent#"$IT_CG2"}/$name"
		done
	done
	[ -z "$(find "$parent" -mindepth 1 -maxdepth 1 -type d)" ] ||
		left+=" $(find "$parent" -mindepth 1 -maxdepth 1 -type d | tr '\n' ' ')"
	[ -z "$left" ] || fail "left behind after launch gc:$left" || return 1
	# Programs and maps go once nothing holds them: the kernel frees them after RCU.
	for _ in $(seq 60); do
		[ "$(gc_bpf_alive "$T_DIR/bpf.objects")" = 0 ] && break
		sleep 0.1
	done
	expect_eq "BPF programs and maps of the test left" 0 "$(gc_bpf_alive "$T_DIR/bpf.objects")" ||
		return 1
	cgroup_parent_remove "$parent"
}
