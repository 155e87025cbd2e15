# SPDX-License-Identifier: LGPL-2.1-or-later
# The BPF programs are verified once and shared (docs/design.md): a holder cgroup keeps them,
# each sandbox attaches them to its own cgroup and has its own slot; `launch gc --unload`
# frees them. Nothing is ever pinned.

listeners tcp:127.0.0.2:8282 tcp:127.0.0.3:8282

SHARED_POLICY='{"name": "shared", "allow": [{"cidr": "127.0.0.2", "ports": [8282]}]}'

# This build's holder cgroup of the shared programs, <cgroup2>/launch/.bpf-<version>, when it
# exists: other builds on the same host (other checkouts' tests) have holders of their own.
s_holders() {
	local version

	version=$("$IT_LAUNCH" --version | sed -n 's/.*(bpf \([0-9a-f]*\))$/\1/p')
	[ -n "$version" ] || {
		echo "launch --version gave no BPF version" >&2
		return
	}
	find "$IT_CG2/launch" -mindepth 1 -maxdepth 1 -type d -name ".bpf-$version" 2>/dev/null
}

# The "bpf load|reuse" word of launch -v's timing line.
s_bpf_mode() {
	sed -n 's/.*timing: .*bpf \(load\|reuse\) .*/\1/p' "$L_ERR_FILE"
}

# Runs a sandbox whose job reaches the allowed address and is refused the other one.
s_run_checked() {
	launch_job -v --policy "$1" -- /bin/sh -c \
		'"$0" tcp 127.0.0.2 8282; "$0" tcp 127.0.0.3 8282' "$IT_PROBE"
	expect_rc "sandbox" 0 || return 1
	expect_eq "the job's two connects" "$(printf 'OK\nEPERM')" "$L_OUT" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_port=8282 || return 1
}

# The second of two launches reuses what the first loaded: the timing line says so, one holder
# cgroup has the programs attached, and no BPF object is pinned anywhere.
test_shared_verified_once() {
	local p holders mode

	p=$(policy shared "$SHARED_POLICY")
	s_run_checked "$p" || return 1
	s_run_checked "$p" || return 1
	mode=$(s_bpf_mode)
	expect_eq "the second launch's BPF stage" reuse "$mode" || return 1
	holders=$(s_holders)
	[ "$(echo "$holders" | grep -c .)" = 1 ] ||
		fail "expected one holder cgroup, found: $(brief "$holders")" || return 1
	bpftool cgroup show "$holders" | grep -q connect4 ||
		fail "no program attached to the holder $holders" || return 1
	[ -z "$(cat "$holders/cgroup.procs")" ] || fail "the holder $holders has processes" ||
		return 1
	[ -z "$(bpffs_named launch_)" ] ||
		fail "launch pinned something: $(brief "$(bpffs_named launch_)")" || return 1
}

# gc --unload removes the holder (the programs go once no sandbox uses them); the next launch
# loads and verifies them again, and confines as before.
test_shared_unload() {
	local p holder mode

	p=$(policy shared "$SHARED_POLICY")
	s_run_checked "$p" || return 1
	holder=$(s_holders)
	[ -n "$holder" ] || fail "no holder cgroup after a launch" || return 1
	launch_raw gc --unload
	expect_rc "launch gc --unload" 0 || return 1
	# At least this build's: other builds' idle sets on the host go too (their running
	# sandboxes keep their own attachments).
	[[ $L_OUT =~ unloaded\ [1-9][0-9]*\ program\ set ]] ||
		fail "launch gc --unload said '$L_OUT', expected 'unloaded N program sets', N >= 1" ||
		return 1
	[ ! -e "$holder" ] || fail "$holder still exists after gc --unload" || return 1
	s_run_checked "$p" || return 1
	mode=$(s_bpf_mode)
	expect_eq "the BPF stage after gc --unload" load "$mode" || return 1
	[ "$(s_holders)" = "$holder" ] || fail "the holder is not back at $holder" || return 1
}

# A holder of another build is removed by launch gc, and this build's stays.
test_shared_gc_old_versions() {
	local old=$IT_CG2/launch/.bpf-0000000000000000 p

	p=$(policy shared "$SHARED_POLICY")
	s_run_checked "$p" || return 1
	mkdir "$old" || fail "cannot make $old" || return 1
	launch_raw gc
	expect_rc "launch gc" 0 || return 1
	[ ! -e "$old" ] || {
		rmdir "$old"
		fail "launch gc left the holder of another build"
		return 1
	}
	[ -n "$(s_holders)" ] || fail "launch gc removed this build's holder" || return 1
}

# A launcher killed while a process it did not start sits in its cgroup (moved there from
# outside, so the job's death does not take it along), and whose lock a sweep cannot take: the
# next sandbox that gets the dead one's slot first empties that cgroup, since the programs
# trust the slot in a cgroup's storage alone.
test_shared_slot_of_dead_sandbox() {
	local p name pid secs

	p=$(policy shared "$SHARED_POLICY")
	secs=$((600000 + RANDOM))
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c 'echo ready >"$0/ready"; exec sleep 1000' "$T_DIR"
	name=$L_NAME
	wait_for_file "$T_DIR/ready" 10 || fail "sandbox $name never became ready" || return 1
	sleep "$secs" &
	pid=$!
	track_pid "$pid"
	echo "$pid" >"$IT_CG2/launch/$name/cgroup.procs" ||
		fail "cannot move pid $pid into $name" || return 1
	kill -KILL "$L_PID"
	wait "$L_PID" 2>/dev/null
	# Held as a live launcher would hold it: the sweep of the next launch leaves it alone.
	exec 8<>"/run/launch/$name.lock"
	flock -n 8 || fail "cannot take the dead sandbox's lock" || return 1
	sleep 0.2
	proc_running "$pid" "sleep $secs" || {
		exec 8>&-
		fail "the moved process died with the launcher: nothing left to test"
		return 1
	}
	s_run_checked "$p"
	local rc=$?
	exec 8>&-
	[ "$rc" = 0 ] || return 1
	! proc_running "$pid" "sleep $secs" ||
		fail "pid $pid still runs in the dead sandbox's cgroup after its slot was reused" ||
		return 1
	launch_raw gc
	expect_rc "launch gc" 0 || return 1
	[ ! -e "$IT_CG2/launch/$name" ] || fail "launch gc left $IT_CG2/launch/$name" || return 1
}

# The ring buffers (BPF_MAP_TYPE_RINGBUF, 27) process $1 holds: a launcher holds its slot's.
s_ringbufs_of() {
	grep -l '^map_type:[[:space:]]*27$' /proc/"$1"/fdinfo/* 2>/dev/null |
		xargs -r sed -n 's/^map_id:[[:space:]]*//p'
}

# Whether any process holds map $1 (another sandbox that took the slot meanwhile, say).
s_map_held() {
	grep -qsx "map_id:[[:space:]]*$1" /proc/[0-9]*/fdinfo/* 2>/dev/null
}

# A slot keeps its maps (a 512 KiB ring buffer, most of all) for the next sandbox; launch gc
# frees those of every idle slot, and the next sandbox makes its slot's maps anew. Only this
# sandbox's ring buffer counts: other sandboxes on the host keep theirs, and another gc may
# free ours first.
test_shared_gc_trims_idle_slots() {
	local p ids id left

	p=$(policy shared "$SHARED_POLICY")
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c 'echo ready >"$0/ready"; sleep 0.5' "$T_DIR"
	wait_for_file "$T_DIR/ready" 10 || fail "the sandbox never became ready" || return 1
	ids=$(s_ringbufs_of "$L_PID")
	launch_bg_wait 10 || return 1
	expect_rc "the sandbox" 0 || return 1
	[ -n "$ids" ] || fail "the launcher held no ring buffer" || return 1
	# What gc is for: the idle slot keeps the ring buffer once its sandbox is gone.
	for id in $ids; do
		bpftool map show id "$id" >/dev/null 2>&1 ||
			s_map_held "$id" ||
			fail "ring buffer $id went with its sandbox, before any gc" || return 1
	done
	launch_raw gc
	expect_rc "launch gc" 0 || return 1
	[[ $L_OUT =~ freed\ the\ maps\ of\ [0-9]+\ idle\ slot ]] ||
		fail "launch gc said nothing of idle slots: '$L_OUT'" || return 1
	for _ in $(seq 50); do
		left=""
		for id in $ids; do
			bpftool map show id "$id" >/dev/null 2>&1 && ! s_map_held "$id" &&
				left+=" $id"
		done
		[ -z "$left" ] && break
		sleep 0.05
	done
	expect_eq "this sandbox's idle ring buffers left after launch gc" "" "$left" || return 1
	s_run_checked "$p"
}

# A slot's maps outlive its sandbox: what one policy allowed must not carry over to the next
# sandbox in the slot. Here an AF_UNIX path (the kind of map a policy may not have at all).
test_shared_slot_reuse_forgets() {
	local d=$T_DIR/u p_with p_without pid

	mkdir -p "$d"
	# shellcheck disable=SC2016
	"$IT_PY" -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)  # the job runs as nobody
s.listen(16)
open(sys.argv[2], "w").write("ready\n")
while True:
    c = s.accept()[0]
    c.recv(64)
    c.close()' "$d/door.sock" "$d/ready" &
	pid=$!
	track_pid "$pid"
	wait_for_file "$d/ready" 10 || fail "the unix listener did not start" || return 1
	p_with=$(policy door "{\"name\": \"door\", \"allow\": [{\"cidr\": \"127.0.0.2\", \"ports\": [8282]}],
		\"unix\": [\"$d/door.sock\"]}")
	p_without=$(policy shared "$SHARED_POLICY")
	launch_job --policy "$p_with" -- "$IT_PROBE" unix "$d/door.sock"
	expect_rc "sandbox with the path" 0 || return 1
	expect_eq "connect with the path in the policy" OK "$L_OUT" || return 1
	launch_job --policy "$p_without" -- "$IT_PROBE" unix "$d/door.sock"
	expect_rc "sandbox without it" 0 || return 1
	expect_eq "connect in the next sandbox, whose policy has no unix path" EPERM "$L_OUT" ||
		return 1
	kill "$pid" 2>/dev/null
	# Exact addresses in the slot's hash map (more than the 4 kept in place): the next
	# sandbox's, in place or in the same map, must not see them.
	local many="" i
	for i in 1 2 3 4 5; do
		many="$many{\"cidr\": \"127.0.3.$i\", \"ports\": [8282]},"
	done
	launch_job --policy "$(policy a "{\"name\": \"a\", \"allow\": [$many
		{\"cidr\": \"127.0.0.3\", \"ports\": [8282]}]}")" -- "$IT_PROBE" tcp 127.0.0.3 8282
	expect_eq "connect allowed through the hash map" OK "$L_OUT" || return 1
	launch_job --policy "$p_without" -- "$IT_PROBE" tcp 127.0.0.3 8282
	expect_eq "the next sandbox (its address in place)" EPERM "$L_OUT" || return 1
	launch_job --policy "$(policy b "{\"name\": \"b\", \"allow\": [$many
		{\"cidr\": \"127.0.0.2\", \"ports\": [8282]}]}")" -- "$IT_PROBE" tcp 127.0.0.3 8282
	expect_eq "the next sandbox (its addresses in the same map)" EPERM "$L_OUT" || return 1
	# Prefixes in the slot's prefix hash (more than the 4 kept in place).
	local nets=""
	for i in 1 2 3 4; do
		nets="$nets{\"cidr\": \"10.$i.0.0/16\", \"ports\": [8282]},"
	done
	launch_job --policy "$(policy c "{\"name\": \"c\", \"allow\": [$nets
		{\"cidr\": \"127.0.0.0/24\", \"ports\": [8282]}]}")" -- "$IT_PROBE" tcp 127.0.0.3 8282
	expect_eq "connect allowed by a prefix" OK "$L_OUT" || return 1
	launch_job --policy "$(policy d "{\"name\": \"d\", \"allow\": [$nets
		{\"cidr\": \"10.0.0.0/8\", \"ports\": [8282]}]}")" -- "$IT_PROBE" tcp 127.0.0.3 8282
	expect_eq "the next sandbox (other prefixes in the same map)" EPERM "$L_OUT" || return 1
	launch_job --policy "$(policy e '{"name": "e", "allow": [{"cidr": "10.0.0.0/8", "ports": [8282]}]}')" \
		-- "$IT_PROBE" tcp 127.0.0.3 8282
	expect_eq "the next sandbox (its prefix in place)" EPERM "$L_OUT"
}

# The AF_UNIX programs read two members of bpf_sock_addr_kern at offsets the loader finds in
# the kernel's BTF (kbtf.c), uaddr as a pointer and uaddrlen as a u32. A BTF where either has
# another type makes launch refuse to load them (exit 125, the member named), before any job
# runs. The kernel's file is replaced, in a mount namespace of the launcher's own, by a copy:
# unchanged, the programs load and confine (so the refusals are the types' doing). A cgroup
# parent of the test's own, its holder unloaded before each launch, makes each load the
# programs itself.
test_shared_btf_member_types() {
	local p parent member

	p=$(policy shared "$SHARED_POLICY")
	parent=$IT_CG2/launch-it$IT_RUNID-$T_NAME
	cat >"$T_DIR/launch-btf" <<-EOF
		#!/bin/bash
		exec unshare --mount --propagation private -- /bin/bash -c \
			'mount --bind "\$0" /sys/kernel/btf/vmlinux || exit 125; exec "\$@"' \
			"$T_DIR/vmlinux" "$IT_LAUNCH" "\$@"
	EOF
	chmod +x "$T_DIR/launch-btf"
	for member in "" uaddr uaddrlen; do
		"$IT_PY" "$IT_FIX/btf_member_type.py" /sys/kernel/btf/vmlinux "$T_DIR/vmlinux" \
			$member || fail "cannot make the BTF copy ($member)" || break
		# No holder there: this launch loads the programs, and reads the BTF.
		"$IT_LAUNCH" gc --unload --cgroup-parent "$parent" >/dev/null 2>&1
		IT_LAUNCH=$T_DIR/launch-btf launch_job --cgroup-parent "$parent" --policy "$p" -- \
			/bin/sh -c '"$0" tcp 127.0.0.2 8282; "$0" tcp 127.0.0.3 8282' "$IT_PROBE"
		if [ -z "$member" ]; then
			expect_rc "the unchanged BTF" 0 || break
			expect_eq "the job's two connects" "$(printf 'OK\nEPERM')" "$L_OUT" || break
		else
			expect_rc "BTF with another type for $member" 125 || break
			expect_match "stderr" "vmlinux: bpf_sock_addr_kern\\.$member is not a" \
				"$L_ERR" || break
			expect_eq "stderr's lines (one)" 1 "$(printf '%s\n' "$L_ERR" | grep -c .)" ||
				break
			expect_eq "the job's output" "" "$L_OUT" || break
		fi
	done
	cgroup_parent_remove "$parent" || return 1
	[ ! -s "$T_REASON" ]
}
