# SPDX-License-Identifier: LGPL-2.1-or-later
# Files (threat class "kernel tunables and host-wide files"): what a job may write. Each test
# first shows the attempt works outside the sandbox, as root or as the job's user, then that
# it is refused inside, uid 0 included (--user root). Writes to kernel tunables are "rewrite"
# probes: the file's own bytes written back, which change nothing if they get through, and the
# host's kernel.core_pattern is only ever read outside.

FS_POLICY='{"name": "fs", "allow": []}'

# The masked paths of the job's /proc and /sys (runc's and Docker's defaults, see
# docs/threat-model.md): those this kernel has.
FS_MASKED=(/proc/kcore /proc/keys /proc/timer_list /proc/timer_stats /proc/sched_debug
	/proc/latency_stats /proc/interrupts /proc/acpi /proc/asound /proc/scsi /sys/firmware
	/sys/devices/virtual/powercap /sys/devices/virtual/tpm)

# Makes the folders of a Landlock test: work (the job's working directory), scratch (outside
# it, writable by anyone as far as file modes go) with a file, and allowed (a policy's
# fs.write). Mode 0777 so that only Landlock can refuse the job's writes there.
fs_dirs() {
	mkdir -p "$T_DIR/work" "$T_DIR/scratch" "$T_DIR/allowed" || return 1
	: >"$T_DIR/scratch/file"
	: >"$T_DIR/scratch/listed"
	chmod 0777 "$T_DIR/work" "$T_DIR/scratch" "$T_DIR/allowed"
	chmod 0666 "$T_DIR/scratch/file" "$T_DIR/scratch/listed"
	# A device node outside /dev: what Landlock must refuse, and a read-only mount cannot.
	mknod -m 0666 "$T_DIR/scratch/nulldev" c 1 3 || return 1
}

# Runs `inside` with the job's working directory $T_DIR/work.
fs_inside_work() {
	local rc

	cd "$T_DIR/work" || return 1
	inside "$@"
	rc=$?
	cd "$T_DIR" || return 1
	return $rc
}

# Kernel tunables: /proc/sys (the host's net.* and kernel.*), /proc/irq, /proc/bus, /proc/fs
# and /proc/sysrq-trigger are read-only in the job's mount namespace. ping_group_range is a
# tunable of this test's own network namespace, which the job shares.
test_fs_proc_sys_readonly() {
	local p q specs_out=() specs_in=() specs_nobody=() path

	outside "OK rewrite /proc/sys/net/ipv4/ping_group_range" \
		"OK nonempty /proc/sys/kernel/core_pattern" "OK rewrite /proc/irq/default_smp_affinity" ||
		return 1
	for path in /proc/sys /proc/irq /proc/bus /proc/fs /proc/sysrq-trigger; do
		[ -e "$path" ] || continue
		specs_out+=("OK rw-mount $path")
		specs_in+=("EROFS rw-mount $path")
	done
	outside "${specs_out[@]}" || return 1
	specs_in+=("EROFS rewrite /proc/sys/net/ipv4/ping_group_range"
		"EROFS rewrite /proc/sys/kernel/core_pattern"
		"EROFS rewrite /proc/irq/default_smp_affinity"
		"OK nonempty /proc/sys/kernel/core_pattern")
	p=$(policy fs "$FS_POLICY")
	# uid 0, with Landlock and without it: the read-only mounts refuse on their own.
	inside --user root --policy "$p" -- "${specs_in[@]}" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=0 gid=0 landlock=true || return 1
	q=$(policy fs-rw '{"name": "fs-rw", "allow": [], "fs": {"read_only": false}}')
	# uid 0 may write every folder root owns: its log is a descriptor, never a path.
	L_AUDIT_FD=1 inside --user root --policy "$q" -- "${specs_in[@]}" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=0 landlock=false || return 1
	# The default user is refused by the files' modes before the mount is asked.
	specs_nobody=("EACCES rewrite /proc/sys/net/ipv4/ping_group_range"
		"EACCES rewrite /proc/sys/kernel/core_pattern")
	inside --policy "$p" -- "${specs_nobody[@]}"
}

# /sys and every mount below it are read-only; a tmpfs mounted here under /sys (in the test
# suite's own mount namespace) stands for debugfs, tracefs and friends.
test_fs_sys_readonly() {
	local p dir="" d rc

	for d in /sys/kernel/config /sys/kernel/debug /sys/kernel/tracing /sys/fs/pstore; do
		if [ -d "$d" ] && ! mountpoint -q "$d"; then
			dir=$d
			break
		fi
	done
	[ -n "$dir" ] || {
		fail "no folder under /sys to mount a test tmpfs on"
		return 1
	}
	mount -t tmpfs -o size=64k,mode=0777 fs-test "$dir" || {
		fail "cannot mount a tmpfs on $dir"
		return 1
	}
	p=$(policy fs "$FS_POLICY")
	outside "OK rw-mount /sys" "OK rewrite /sys/module/printk/parameters/time" \
		"OK rw-mount $dir" "OK create $dir/x" &&
		inside --user root --policy "$p" -- "EROFS rw-mount /sys" \
			"EROFS rewrite /sys/module/printk/parameters/time" "EROFS rw-mount $dir" \
			"EROFS create $dir/x" "OK nonempty /sys/kernel"
	rc=$?
	umount "$dir" || fail "cannot unmount the test tmpfs from $dir"
	return $rc
}

# runc's masked paths: /dev/null over files, an empty tmpfs over folders, for any user.
test_fs_proc_masked() {
	local p path specs_out=() specs_in=()

	for path in "${FS_MASKED[@]}"; do
		[ "$(probe_word "nonempty $path")" = OK ] || continue
		specs_out+=("OK nonempty $path")
		specs_in+=("ENODATA nonempty $path")
	done
	[ "${#specs_in[@]}" -ge 3 ] || {
		fail "fewer than 3 of the masked paths have anything to show here: ${specs_out[*]}"
		return 1
	}
	outside "${specs_out[@]}" || return 1
	p=$(policy fs "$FS_POLICY")
	inside --user root --policy "$p" -- "${specs_in[@]}" "OK nonempty /proc/self/status" \
		"OK nonempty /proc/cpuinfo" || return 1
	inside --policy "$p" -- "${specs_in[@]}"
}

# The audit log's folder, whose files a uid-0 job would own, is an empty read-only tmpfs in the
# job's view, also when this launch makes the log (launch opens it before the job's init hides
# it): outside, root without any capability appends to a log like it; inside, the job sees no
# file there and appends nowhere.
test_fs_audit_log_hidden() {
	local p log scratch=$T_LOGS/scratch.jsonl

	: >"$scratch" && chmod 0640 "$scratch" || fail "cannot make $scratch" || return 1
	setpriv --securebits +noroot,+noroot_locked,+no_setuid_fixup --bounding-set -all \
		--inh-caps -all --ambient-caps -all -- /bin/sh -c 'echo forged >>"$1"' sh "$scratch"
	expect_eq "outside, root without capabilities appends to a 0640 log" forged \
		"$(cat "$scratch")" || return 1
	p=$(policy fs "$FS_POLICY")
	launch_next_names
	log=$L_AUDIT
	[ ! -e "$log" ] || fail "internal: $log exists before the launch" || return 1
	# shellcheck disable=SC2016
	# The line is put together in the job, so that the start line's argv does not hold it.
	launch_job --user root --policy "$p" -- /bin/sh -c 'printf "%s%s\n" for ged 2>/dev/null >>"$1" &&
		echo appended || echo refused; ls -A "${1%/*}" | wc -l' sh "$log"
	expect_rc "job" 0 || return 1
	# Its folder is an empty read-only tmpfs in the job's view.
	expect_eq "the job's append, and the files of the log's folder in its view" \
		"refused 0" "$(tr "\n" " " <"$L_OUT_FILE" | sed "s/ $//")" || return 1
	audit_check || return 1
	! grep -q forged "$log" || fail "the job's line is in the audit log" || return 1
}

# Without --user, a job started outside sudo runs as nobody; launch's own uid is 0.
test_fs_default_user_nobody() {
	local p

	p=$(policy fs "$FS_POLICY")
	unset SUDO_UID SUDO_GID
	expect_eq "outside: id -u" 0 "$(id -u)" || return 1
	launch_job --policy "$p" -- /bin/sh -c 'id -u; id -g; id -G'
	expect_rc "job" 0 || return 1
	expect_eq "uid, gid, groups" "65534 65534 65534" "${L_OUT//$'\n'/ }" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=65534 gid=65534 || return 1
	# sudo run by root itself says SUDO_UID=0: still no uid-0 job unless asked for.
	export SUDO_UID=0 SUDO_GID=0
	launch_job --policy "$p" -- /bin/sh -c 'id -u'
	unset SUDO_UID SUDO_GID
	expect_rc "job" 0 || return 1
	expect_eq "uid with SUDO_UID=0" 65534 "$L_OUT"
}

# Started through sudo (SUDO_UID, SUDO_GID), the job runs as the user who ran sudo; here a uid
# with no entry in the user database.
test_fs_default_user_sudo() {
	local p

	p=$(policy fs "$FS_POLICY")
	export SUDO_UID=4242 SUDO_GID=4343
	launch_job --policy "$p" -- /bin/sh -c 'id -u; id -g; id -G'
	unset SUDO_UID SUDO_GID
	expect_rc "job" 0 || return 1
	expect_eq "uid, gid, groups" "4242 4343 4343" "${L_OUT//$'\n'/ }" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=4242 gid=4343 || return 1
	# --user wins over sudo's user.
	export SUDO_UID=4242 SUDO_GID=4343
	launch_job --user nobody --policy "$p" -- /bin/sh -c 'id -u'
	unset SUDO_UID SUDO_GID
	expect_rc "job" 0 || return 1
	expect_eq "uid with --user nobody" 65534 "$L_OUT"
}

# uid 0 only on request, and recorded.
test_fs_user_root_opt_in() {
	local p

	p=$(policy fs "$FS_POLICY")
	export SUDO_UID=4242 SUDO_GID=4343
	launch_job --user root --policy "$p" -- /bin/sh -c 'id -u; id -g'
	unset SUDO_UID SUDO_GID
	expect_rc "job" 0 || return 1
	expect_eq "uid, gid" "0 0" "${L_OUT//$'\n'/ }" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=0 gid=0 landlock=true
}

# Landlock: the job writes only in its working directory, its /tmp and /dev/shm, /dev/null and
# the policy's fs.write paths; everything else is refused with EACCES, uid 0 included, and in
# every process the job starts (the probes are the shell's children).
test_fs_landlock_writes() {
	local p specs=()

	fs_dirs || return 1
	outside "OK create $T_DIR/scratch/new" "OK write $T_DIR/scratch/file x" \
		"OK mkdir $T_DIR/scratch/d" "OK write $T_DIR/scratch/nulldev x" || return 1
	# As nobody too: the file modes allow it, so a refusal inside is Landlock's.
	expect_eq "outside, as nobody: create in scratch" OK \
		"$(setpriv --reuid 65534 --regid 65534 --clear-groups "$IT_PROBE" create "$T_DIR/scratch/new")" ||
		return 1
	: >"$T_DIR/scratch/file"
	p=$(policy fs "{\"name\": \"fs\", \"allow\": [], \"fs\": {\"write\": [\"$T_DIR/allowed\",
		\"$T_DIR/scratch/listed\"], \"read_only\": true}}")
	specs=("EACCES create $T_DIR/scratch/new" "EACCES write $T_DIR/scratch/file x"
		"EACCES mkdir $T_DIR/scratch/d" "EACCES unlink $T_DIR/scratch/file"
		"EACCES create $T_DIR/new" "OK create $T_DIR/work/new" "OK mkdir $T_DIR/work/d"
		"OK create /tmp/new" "OK create /dev/shm/new" "OK write /dev/null x"
		"OK create $T_DIR/allowed/new" "OK mkdir $T_DIR/allowed/d" "OK nonempty $T_DIR/scratch"
		"EACCES create /var/tmp/launch-fs-test-$$" "OK write $T_DIR/scratch/listed x"
		"EACCES unlink $T_DIR/scratch/listed" "EACCES write $T_DIR/scratch/nulldev x")
	fs_inside_work --policy "$p" -- "${specs[@]}" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=65534 landlock=true \
		"fs_write~\"$T_DIR/work\",\"/tmp\".*\"$T_DIR/allowed\"" || return 1
	fs_inside_work --user root --policy "$p" -- "${specs[@]}" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=0 landlock=true || return 1
	{ [ -e "$T_DIR/scratch/file" ] && [ ! -s "$T_DIR/scratch/file" ]; } ||
		fail "scratch/file was changed or removed by the job"
}

# "read_only": false is the explicit, weaker choice: no Landlock, the file modes alone decide.
test_fs_landlock_read_only_false() {
	local p

	fs_dirs || return 1
	p=$(policy fs-rw '{"name": "fs-rw", "allow": [], "fs": {"read_only": false}}')
	fs_inside_work --policy "$p" -- "OK create $T_DIR/scratch/new" "OK write $T_DIR/scratch/file x" \
		"EACCES create /etc/launch-fs-test" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start landlock=false fs_write! || return 1
	! grep -q "Landlock" "$L_ERR_FILE" || fail "a warning about Landlock: $(brief "$L_ERR")"
}

# The job's ruleset is made by the launcher and handed to init with the joined message;
# init adds its own /tmp, /dev/shm and the policy's paths. A ruleset the launcher cannot make,
# or one that does not reach init, stops the launch (125) before the job runs: never a job
# without Landlock where the configuration asks for it (landlock_handoff.so breaks each).
test_fs_landlock_handoff() {
	local p fault why

	p=$(policy fs '{"name": "fs", "allow": [], "fs": {"read_only": true}}')
	launch_job --policy "$p" -- sh -c 'echo ran'
	expect_rc "no fault" 0 || return 1
	expect_eq "the job without a fault" ran "$L_OUT" || return 1
	for fault in create drop; do
		case $fault in
		create) why="^launch: cannot confine the job's file writes with Landlock: Cannot allocate memory$" ;;
		drop) why="^launch: sh: cannot confine the job's file writes with Landlock: Protocol error$" ;;
		esac
		printf '#!/bin/sh\nLANDLOCK_FAULT=%s LD_PRELOAD=%s exec "%s" "$@"\n' "$fault" \
			"$IT_HELPERS/landlock_handoff.so" "$IT_LAUNCH" >"$T_DIR/launch-$fault"
		chmod +x "$T_DIR/launch-$fault"
		IT_LAUNCH=$T_DIR/launch-$fault launch_job --policy "$p" -- sh -c 'echo ran'
		expect_rc "$fault" 125 || return 1
		expect_eq "$fault: the job's output" "" "$L_OUT" || return 1
		expect_match "$fault: stderr" "$why" "$L_ERR" || return 1
	done
}

# A kernel without Landlock (landlock_create_ruleset fails with ENOSYS for launch, under a
# seccomp filter that tests/helpers/no_landlock installs): launch says so on stderr and in
# sandbox_start, and refuses a policy with "fs" unless --allow-no-landlock.
test_fs_no_landlock() {
	local p q

	fs_dirs || return 1
	outside "OK landlock" || return 1
	expect_eq "landlock under no_landlock" ENOSYS "$("$IT_HELPERS/no_landlock" "$IT_PROBE" landlock)" ||
		return 1
	printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$IT_HELPERS/no_landlock" "$IT_LAUNCH" >"$T_DIR/launch-nl"
	chmod 755 "$T_DIR/launch-nl"
	p=$(policy fs "{\"name\": \"fs\", \"allow\": [], \"fs\": {\"write\": [\"$T_DIR/allowed\"]}}")
	IT_LAUNCH=$T_DIR/launch-nl launch_job --policy "$p" -- "$IT_PROBE" create "$T_DIR/scratch/new"
	expect_rc "policy with fs, no Landlock" 125 || return 1
	expect_match "stderr" "no Landlock.*--allow-no-landlock" "$L_ERR" || return 1
	[ ! -s "$L_AUDIT" ] || expect_audit 0 "$L_AUDIT" event=sandbox_start || return 1
	[ ! -e "$T_DIR/scratch/new" ] || fail "the job ran" || return 1

	# Accepted: the job runs. Its mounts are read-only but for what it may write (EROFS, even
	# for chmod), and a device node is the gap Landlock would have closed.
	cd "$T_DIR/work" || return 1
	IT_LAUNCH=$T_DIR/launch-nl launch_job --allow-no-landlock --user root --policy "$p" -- \
		/bin/sh -c "$IT_PROBE_LOOP" sh "$IT_PROBE" "create $T_DIR/scratch/new" \
		"chmod-same $T_DIR/scratch/file" "create $T_DIR/work/new" "create $T_DIR/allowed/new" \
		"create /tmp/new" "write /dev/null x" "write $T_DIR/scratch/nulldev x"
	cd "$T_DIR" || return 1
	expect_rc "--allow-no-landlock" 0 || return 1
	expect_eq "job" "EROFS EROFS OK OK OK OK OK" "${L_OUT//$'\n'/ }" || return 1
	expect_match "stderr" "warning: this kernel has no Landlock" "$L_ERR" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=0 landlock=false landlock_abi! \
		"fs_write~\"$T_DIR/work\",\"/tmp\".*\"$T_DIR/allowed\"" || return 1

	# No "fs" in the policy: the default user runs, with a warning.
	q=$(policy plain "$FS_POLICY")
	cd "$T_DIR/work" || return 1
	IT_LAUNCH=$T_DIR/launch-nl launch_job --policy "$q" -- "$IT_PROBE" create "$T_DIR/work/new2"
	cd "$T_DIR" || return 1
	expect_rc "policy without fs" 0 || return 1
	expect_eq "job" OK "$L_OUT" || return 1
	expect_match "stderr" "warning: this kernel has no Landlock" "$L_ERR" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=65534 landlock=false || return 1

	# uid 0 without Landlock only with --allow-no-landlock; the read-only mounts still hold.
	IT_LAUNCH=$T_DIR/launch-nl launch_job --user root --policy "$q" -- /bin/true
	expect_rc "--user root, no Landlock" 125 || return 1
	expect_match "stderr" "no Landlock.*as root.*--allow-no-landlock" "$L_ERR" || return 1
	IT_LAUNCH=$T_DIR/launch-nl launch_job --allow-no-landlock --user root --policy "$q" -- \
		"$IT_PROBE" rewrite /proc/sys/net/ipv4/ping_group_range
	expect_rc "--user root --allow-no-landlock" 0 || return 1
	expect_eq "job" EROFS "$L_OUT" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start uid=0 landlock=false
}

# A bad "fs" key stops the launch (exit 125) with one line naming the file and the key.
test_fs_policy_errors() {
	local p c i=0
	local -a cases=(
		'"fs": {"write": ["relative/path"]}|fs.write\[0\]: "relative/path" must be an absolute path'
		'"fs": {"write": ["/no/such/launch-fs-path"]}|fs.write\[0\]: "/no/such/launch-fs-path": No such file or directory'
		'"fs": {"write": "/srv"}|fs.write: must be an array, not a string'
		'"fs": {"read_only": "yes"}|fs.read_only: must be true or false, not a string'
		'"fs": {"writable": []}|fs: unknown key "writable"'
		'"fs": {"write": ["/tmp"], "read_only": false}|fs.write: has no effect with "read_only": false'
	)

	for c in "${cases[@]}"; do
		i=$((i + 1))
		p=$(policy "bad$i" "{\"name\": \"bad$i\", \"allow\": [], ${c%%|*}}")
		launch_job --policy "$p" -- /bin/touch "$T_DIR/ran$i"
		expect_rc "policy ${c%%|*}" 125 || return 1
		expect_match "stderr" "^launch: $p: ${c#*|}" "$L_ERR" || return 1
		[ "$(wc -l <"$L_ERR_FILE")" = 1 ] || fail "more than one line on stderr: $(brief "$L_ERR")" ||
			return 1
		[ ! -e "$T_DIR/ran$i" ] || fail "policy ${c%%|*}: the job ran" || return 1
	done
}

# A mountinfo line longer than the walk's first buffer (a mount point and a source full of
# spaces, which mountinfo writes as \040: anyone's FUSE mount can make such a line) is read
# whole: launch starts and runs the job. The walk used to stop
# at such a line, and every launch on the host with it.
test_fs_long_mountinfo_line() {
	local dir=$T_DIR sp src longest

	sp=$(printf '%200s' '')
	for _ in $(seq 1 18); do
		dir="$dir/$sp"
	done
	mkdir -p "$dir" || return 1
	src="x$(printf '%3900s' '')"
	mount -t tmpfs "$src" "$dir" || { fail "cannot mount the test's tmpfs"; return 1; }
	longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n }' /proc/self/mountinfo)
	echo "longest mountinfo line: $longest bytes"
	if [ "$longest" -le 24576 ]; then
		umount "$dir"
		fail "no mountinfo line over 24 KiB ($longest bytes): the test shows nothing"
		return 1
	fi
	inside --policy "$(policy fs "$FS_POLICY")" -- "OK mkdir /tmp/long-line"
	local r=$?
	umount "$dir"
	return $r
}
