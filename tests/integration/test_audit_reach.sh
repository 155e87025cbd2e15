# SPDX-License-Identifier: LGPL-2.1-or-later
# The audit trail out of the job's reach: a log (or the folder launch makes it in, at the
# start and again after a rotation) that the job may write is refused before anything runs,
# and a log out of its reach stays clean through a rotation while the job tries to add to it.

REACH_POLICY='{"name": "reach", "allow": []}'

# Outside, the attack: uid 0 without a capability appends to a file root owns in a folder
# root owns, and may make one there; so a uid-0 job could, were the log in its folder.
test_audit_reach_refused() {
	local p work=$T_DIR/work log w=$IT_TMP/reach-w-$BASHPID

	mkdir -p "$work" && chmod 0755 "$work"
	log=$work/audit.jsonl
	(cd "$work" && setpriv --inh-caps -all --bounding-set -all -- sh -c 'echo x >made') &&
		[ -s "$work/made" ] || fail "outside: uid 0 without capabilities cannot write $work" ||
		return 1
	rm -f "$work/made"
	p=$(policy reach "$REACH_POLICY")
	# The log in the job's working folder, the job uid 0: the folder is the job's to write.
	launch_next_names
	(cd "$work" && launch_raw --audit-log "$log" --name "$L_NAME" --user root --policy "$p" \
		-- /bin/true >"$T_DIR/r1.out"); cat "$T_DIR/r1.out"
	grep -q '^  rc=125 ' "$T_DIR/r1.out" || fail "a log in a root job's working folder ran" ||
		return 1
	grep -qE "err: launch: --audit-log $log: the job may write the file launch opens there" \
		"$T_DIR/r1.out" || fail "no line naming the log and why" || return 1
	[ ! -e "$log" ] || fail "the refused start made $log" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $L_NAME left behind" || return 1
	# An existing log the job's user may write, in a policy's fs.write folder.
	mkdir -p "$w" && chmod 0777 "$w"
	: >"$w/audit.jsonl"
	p=$(policy reach_w "{\"name\": \"reach_w\", \"allow\": [],
		\"fs\": {\"write\": [\"$w\"]}}")
	launch_raw --audit-log "$w/audit.jsonl" --policy "$p" -- /bin/true
	expect_rc "a log in an fs.write folder" 125 || return 1
	expect_match "its message" "--audit-log $w/audit.jsonl: the job may" \
		"$L_ERR" || return 1
	# The same folder, the job as nobody, and the folder root's 0755: out of reach, it runs.
	chmod 0755 "$w"
	launch_raw --audit-log "$w/audit.jsonl" --policy "$p" -- /bin/true
	expect_rc "a log the job's user may not write" 0 || return 1
	rm -rf "$w"
	# A folder launch would make, under one the job may write (its working folder's a/):
	# the job could rename a/ and put its own in its place.
	mkdir -p "$T_DIR/a" && chmod 0777 "$T_DIR/a"
	p=$(policy reach "$REACH_POLICY")
	launch_raw --audit-log "$T_DIR/a/new/audit.jsonl" --policy "$p" -- /bin/true
	expect_rc "a log in a folder still to be made, below a writable one" 125 || return 1
	expect_match "its message" "the job may rename $T_DIR/a " "$L_ERR" || return 1
	[ ! -e "$T_DIR/a/new" ] || fail "the refused start made $T_DIR/a/new" || return 1
	# uid 0 with "read_only": false may write every folder root owns: the log's folder is
	# hidden from it, but it could rename the one above.
	p=$(policy reach_rw '{"name": "reach_rw", "allow": [], "fs": {"read_only": false}}')
	launch_job --user root --policy "$p" -- /bin/true
	expect_rc "a file log for a uid-0 job that may write anything" 125 || return 1
	expect_match "its message" "--audit-log $L_AUDIT: the job may rename $IT_TMP/logs " \
		"$L_ERR" || return 1
	L_AUDIT_FD=1 launch_job --user root --policy "$p" -- /bin/true
	expect_rc "the same job with the log as a descriptor" 0 || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit
}

# A rotation while a uid-0 job runs, the log out of its reach: the job's append to the path
# fails, launch's next line goes to the new file, and no file holds the job's line.
test_audit_reach_rotation_clean() {
	local p job

	p=$(policy reach "$REACH_POLICY")
	launch_next_names # the L_AUDIT launch_bg uses next
	# shellcheck disable=SC2016
	job='sleep 0.6; printf "{\"event\":\"deny\",\"forged\":1}\n" >>"$1"; echo "append $?";
		"$2" tcp 127.0.9.9 9'
	launch_bg --user root --policy "$p" -- /bin/sh -c "$job" sh "$L_AUDIT" "$IT_PROBE"
	sleep 0.3
	mv "$L_AUDIT" "$L_AUDIT.1" || fail "cannot rotate $L_AUDIT" || return 1
	launch_bg_wait 20 || return 1
	cat "$L_OUT_FILE"
	grep -q '^append [1-9]' "$L_OUT_FILE" || fail "the job's append to the log's path worked" ||
		return 1
	# The start line's argv holds the text; a line of its own would be the forgery.
	! grep -qx '{"event":"deny","forged":1}' "$L_AUDIT" "$L_AUDIT.1" 2>/dev/null ||
		fail "the job's line is in the audit trail" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit || return 1
	expect_audit 1 "$L_AUDIT.1" event=sandbox_start
}
