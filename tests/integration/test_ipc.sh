# SPDX-License-Identifier: LGPL-2.1-or-later
# System V and POSIX IPC are the job's own (docs/threat-model.md): each sandbox has its IPC
# namespace, and its own mqueue file system on /dev/mqueue; nothing it makes is seen by the
# host or another sandbox, or outlives it.

IPC_NONE='{"name": "none", "allow": []}'

# The key of this test's System V object N (0 msg, 1 shm, 2 sem, 3 the host's own queue),
# unique to the test's shell ($$, not the subshell's $BASHPID): the tests' IPC namespace is
# the host's.
ipc_key() {
	printf '0x%x\n' $((0x4c000000 | ($$ & 0xfffff) << 4 | $1))
}

# The lines of `ipcs` output that list an object (a key and an id).
ipc_listed() {
	grep -E '^0x[0-9a-f]+ +[0-9]+ ' || true
}

# What `ipc find` says of the test's message queue, segment, semaphore set and POSIX queue $1.
ipc_find_all() {
	local kind n=0 out=""

	for kind in msg shm sem; do
		out+="$kind=$("$IT_HELPERS/ipc" find "$kind" "$(ipc_key $n)") "
		n=$((n + 1))
	done
	echo "${out}mq=$("$IT_HELPERS/ipc" find mq "$1")"
}

# The host's lines of `ipcs` with a key that the job's `ipcs` output, file $1, listed.
ipc_host_has() {
	ipcs | ipc_listed | grep -F -f <(ipc_listed <"$1" | awk '{ print $1 " " }')
}

# Removes what a sandbox sharing the host's IPC left there (POSIX queue $1, and the objects
# its `ipcs` output, file $2, listed), so that a failure leaves no residue; $2 is a file.
ipc_cleanup() {
	local kind n=0

	for kind in msg shm sem; do
		"$IT_HELPERS/ipc" remove "$kind" "$(ipc_key $n)" >/dev/null
		n=$((n + 1))
	done
	"$IT_HELPERS/ipc" remove mq "$1" >/dev/null
	[ -f "$2" ] || return 0
	awk '/^------ Message/ { o = "-Q" } /^------ Shared/ { o = "-M" }
	     /^------ Semaphore/ { o = "-S" } /^0x[0-9a-f]+ +[0-9]+ / { print o, $1 }' "$2" |
		while read -r opt key; do ipcrm "$opt" "$key" 2>/dev/null; done
	return 0
}

# Two host processes share a queue by its key. Then sandbox 1 makes a queue, a segment and a
# semaphore set (by key and with ipcmk) and a POSIX message queue, and waits: sandbox 2, at
# the same time, sees none of them, nor does the host, while sandbox 1 runs and after it ends.
test_ipc_private() {
	local p mq=launch-it-ipc-$$ host_key listed job_pid job_out job_err job_start

	host_key=$(ipc_key 3)
	expect_eq "the host makes a queue" OK "$("$IT_HELPERS/ipc" create msg "$host_key")" ||
		return 1
	expect_eq "another host process finds it" OK \
		"$("$IT_HELPERS/ipc" find msg "$host_key")" || return 1
	"$IT_HELPERS/ipc" remove msg "$host_key" >/dev/null
	expect_eq "the host's objects before" "msg=ENOENT shm=ENOENT sem=ENOENT mq=ENOENT" \
		"$(ipc_find_all "$mq")" || return 1

	p=$(policy none "$IPC_NONE")
	# shellcheck disable=SC2016
	launch_bg --policy "$p" -- /bin/sh -c 'd=$1 ipc=$2
		for obj in "msg $3" "shm $4" "sem $5"; do $ipc create $obj; done >"$d/made"
		$ipc create mq "$6" >/dev/null
		$ipc find mq "$6" >>"$d/made"
		ipcmk -Q -p 0666 && ipcmk -M 4096 -p 0666 && ipcmk -S 1 -p 0666 || exit 1
		ipcs >"$d/ipcs1.tmp" && mv "$d/ipcs1.tmp" "$d/ipcs1"
		while [ ! -e "$d/go" ]; do sleep 0.01; done' \
		sh "$T_DIR" "$IT_HELPERS/ipc" "$(ipc_key 0)" "$(ipc_key 1)" "$(ipc_key 2)" "$mq"
	job_pid=$L_PID job_out=$L_OUT_FILE job_err=$L_ERR_FILE job_start=$L_START
	wait_for_file "$T_DIR/ipcs1" 10 || {
		kill -KILL "$job_pid" 2>/dev/null
		ipc_cleanup "$mq" "$T_DIR/ipcs1"
		fail "sandbox 1 never made its objects (stderr: $(brief "$(cat "$job_err")"))"
		return 1
	}
	listed=$(ipc_listed <"$T_DIR/ipcs1")
	printf 'sandbox 1 lists:\n%s\n' "$listed"
	# Landlock refuses the job every open of a POSIX queue (a file at no path a policy can
	# name): EACCES, once the kernel made it, says that it exists.
	if expect_match "sandbox 1 makes them" '^OK OK OK (OK|EACCES) $' \
		"$(tr '\n' ' ' <"$T_DIR/made")" &&
		expect_eq "sandbox 1 lists its objects" 6 "$(grep -c . <<<"$listed")"; then
		# shellcheck disable=SC2016
		launch_job --policy "$p" -- /bin/sh -c 'ipcs
			for obj in "msg $2" "shm $3" "sem $4" "mq $5"; do
				printf "%s " "$($1 find $obj)"
			done' sh "$IT_HELPERS/ipc" "$(ipc_key 0)" "$(ipc_key 1)" "$(ipc_key 2)" "$mq"
		expect_rc "sandbox 2" 0 &&
			expect_eq "what sandbox 2 lists" "" "$(ipc_listed <<<"$L_OUT")" &&
			expect_eq "what sandbox 2 finds" "ENOENT ENOENT ENOENT ENOENT" \
				"$(tail -n 1 <<<"$L_OUT" | sed 's/ $//')" &&
			expect_eq "what the host finds" "msg=ENOENT shm=ENOENT sem=ENOENT mq=ENOENT" \
				"$(ipc_find_all "$mq")" &&
			expect_eq "sandbox 1's objects in the host's ipcs" "" \
				"$(ipc_host_has "$T_DIR/ipcs1")"
	fi
	: >"$T_DIR/go"
	L_PID=$job_pid L_OUT_FILE=$job_out L_ERR_FILE=$job_err L_START=$job_start
	launch_bg_wait 10 && expect_rc "sandbox 1" 0 &&
		expect_eq "what the host finds after sandbox 1" \
			"msg=ENOENT shm=ENOENT sem=ENOENT mq=ENOENT" "$(ipc_find_all "$mq")" &&
		expect_eq "sandbox 1's objects in the host's ipcs after it" "" \
			"$(ipc_host_has "$T_DIR/ipcs1")"
	[ ! -s "$T_REASON" ] || {
		ipc_cleanup "$mq" "$T_DIR/ipcs1"
		return 1
	}
}

# The job's /dev/mqueue lists its own POSIX queues, not the host's: a host queue is not
# there, one the job makes is. The host here may have no /dev/mqueue: launch then runs in a
# mount namespace of its own whose /dev is an overlay of the host's with one, the host's
# mqueue file system mounted on it.
test_ipc_mqueue_mount() {
	local p host_mq=launch-it-host-$$ job_mq=launch-it-job-$$ wrapper=$T_DIR/launch-mqueue

	mkdir -p "$T_DIR/dev-upper" "$T_DIR/dev-work"
	cat >"$wrapper" <<-EOF_WRAPPER
		#!/bin/sh
		exec unshare --mount --propagation private -- /bin/sh -c '
			mount -t overlay overlay -o lowerdir=/dev,upperdir=\$0/dev-upper,workdir=\$0/dev-work /dev &&
			mkdir -p /dev/mqueue && mount -t mqueue mqueue /dev/mqueue &&
			exec "\$@"' "$T_DIR" "$IT_LAUNCH" "\$@"
	EOF_WRAPPER
	chmod 755 "$wrapper"
	expect_eq "the host makes a queue" OK "$("$IT_HELPERS/ipc" create mq "$host_mq")" ||
		return 1
	p=$(policy none "$IPC_NONE")
	# shellcheck disable=SC2016
	IT_LAUNCH=$wrapper launch_job --policy "$p" -- /bin/sh -c \
		'grep " /dev/mqueue " /proc/self/mountinfo >&2
		"$0" create mq "$1" >/dev/null; ls -A /dev/mqueue' "$IT_HELPERS/ipc" "$job_mq"
	"$IT_HELPERS/ipc" remove mq "$host_mq" >/dev/null
	"$IT_HELPERS/ipc" remove mq "$job_mq" >/dev/null
	expect_rc "the job" 0 || return 1
	expect_eq "the job's /dev/mqueue" "$job_mq" "$L_OUT"
}
