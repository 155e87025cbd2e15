# SPDX-License-Identifier: LGPL-2.1-or-later
# --audit-format=ocsf|ecs: a real job with a refused connect and a refused DNS look-up, in each
# format, to each kind of sink (a file, standard error, a descriptor, syslog over UDP); every
# line parses and carries its class and fields (fixtures/audit_format.py).

listeners tcp:127.0.0.3:8443

FORMAT_POLICY='{"name": "fmt", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'
# The job: one connect the policy refuses, one look-up no policy host matches.
FORMAT_JOB='"$0" tcp 127.0.0.3 8443; "$1" "$2" "q udp 192.0.2.53 ExFiL.Example.COM TXT"'

# format_check KIND FORMAT FILE: fixtures/audit_format.py on one run's log; sets F_REFUSALS.
format_check() {
	local out

	out=$("$IT_PY" "$IT_FIX/audit_format.py" "$1" "$2" "$3" "$L_NAME" "$(hostname)" \
		"${L_START/,/.}" "${L_END/,/.}" 2>&1)
	echo "$out"
	F_REFUSALS=$(sed -n 's/^refusals //p' <<<"$out")
	[ -n "$F_REFUSALS" ] || fail "$2 $(basename "$3"): $(grep '^problem:' <<<"$out" | head -3)"
}

# Each format to a file: the same refusals as the JSON lines, in documents of the schema.
test_audit_format_file() {
	local p fmt json_denied

	p=$(policy fmt "$FORMAT_POLICY")
	outside "OK tcp 127.0.0.3 8443" || return 1
	for fmt in json ocsf ecs; do
		# Both spellings: --audit-format=ocsf and --audit-format ecs.
		if [ "$fmt" = ecs ]; then
			launch_job --audit-format "$fmt" --resolver 127.0.0.53 --policy "$p" -- \
				/bin/sh -c "$FORMAT_JOB" "$IT_PROBE" "$IT_PY" "$IT_FIX/dns/job.py"
		else
			launch_job --audit-format="$fmt" --resolver 127.0.0.53 --policy "$p" -- \
				/bin/sh -c "$FORMAT_JOB" "$IT_PROBE" "$IT_PY" "$IT_FIX/dns/job.py"
		fi
		expect_rc "$fmt job" 0 || return 1
		expect_match "$fmt job output" "^EPERM"$'\n'"q udp ExFiL.Example.COM TXT rcode=5 " \
			"$L_OUT" || return 1
		if [ "$fmt" = json ]; then
			# Today's lines, unchanged.
			audit_check || return 1
			expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.0.3 \
				dst_port=8443 || return 1
			expect_audit 1 "$L_AUDIT" event=deny op=dns qname=ExFiL.Example.COM \
				qtype=TXT || return 1
			json_denied=$(audit_get "$L_AUDIT" event=sandbox_exit -- denied)
			continue
		fi
		format_check check "$fmt" "$L_AUDIT" || return 1
		expect_eq "$fmt refusals (as in the JSON log)" "$json_denied" "$F_REFUSALS" ||
			return 1
	done
}

# Standard error and a descriptor carry the documents too.
test_audit_format_stderr_fd() {
	local p

	p=$(policy fmt "$FORMAT_POLICY")
	launch_next_names
	L_N=$((L_N + 1))
	echo "+ launch --audit-format=ocsf --audit-log fd:7 ... 7>fd.log"
	L_START=$EPOCHREALTIME
	"$IT_LAUNCH" --audit-format=ocsf --audit-log fd:7 --name "$L_NAME" --resolver 127.0.0.53 \
		--policy "$p" -- /bin/sh -c "$FORMAT_JOB" "$IT_PROBE" "$IT_PY" \
		"$IT_FIX/dns/job.py" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" 7>"$T_DIR/fd.log"
	L_RC=$?
	L_END=$EPOCHREALTIME
	expect_rc "fd:7 job" 0 || return 1
	format_check check ocsf "$T_DIR/fd.log" || return 1

	launch_next_names
	echo "+ launch --audit-format=ecs --audit-log - ... 2>err.log"
	L_START=$EPOCHREALTIME
	"$IT_LAUNCH" --audit-format=ecs --audit-log - --name "$L_NAME" --resolver 127.0.0.53 \
		--policy "$p" -- /bin/sh -c "$FORMAT_JOB" "$IT_PROBE" "$IT_PY" \
		"$IT_FIX/dns/job.py" </dev/null >"$T_DIR/out2" 2>"$T_DIR/err.log"
	export L_RC=$?
	L_END=$EPOCHREALTIME
	expect_rc "stderr job" 0 || return 1
	format_check check ecs "$T_DIR/err.log"
}

# Syslog: the structured data is launch's (event, seq...), the MSG the document.
test_audit_format_syslog() {
	local p fmt port=5516 rpid

	p=$(policy fmt "$FORMAT_POLICY")
	for fmt in ocsf ecs; do
		: >"$T_DIR/syslog-$fmt.log"
		"$IT_PY" "$IT_FIX/audit_format.py" udp "$port" "$T_DIR/syslog-$fmt.log" \
			>"$T_DIR/recv-$fmt.out" 2>&1 &
		rpid=$!
		track_pid "$rpid"
		wait_for_file "$T_DIR/recv-$fmt.out" || fail "the UDP receiver did not start" ||
			return 1
		launch_job --audit-format="$fmt" --audit-log "syslog:udp:127.0.0.1:$port" \
			--resolver 127.0.0.53 --policy "$p" -- /bin/sh -c "$FORMAT_JOB" "$IT_PROBE" \
			"$IT_PY" "$IT_FIX/dns/job.py"
		expect_rc "$fmt syslog job" 0 || return 1
		for _ in $(seq 100); do
			grep -q 'event="sandbox_exit"' "$T_DIR/syslog-$fmt.log" && break
			sleep 0.02
		done
		kill "$rpid" 2>/dev/null
		wait "$rpid" 2>/dev/null
		format_check syslog "$fmt" "$T_DIR/syslog-$fmt.log" || return 1
		port=$((port + 1))
	done
}

# A bad value: one line naming the option, exit 125, and no job.
test_audit_format_bad_value() {
	local p

	p=$(policy fmt "$FORMAT_POLICY")
	launch_raw --audit-format=xml --policy "$p" -- /bin/touch "$T_DIR/ran"
	expect_rc "--audit-format=xml" 125 || return 1
	expect_eq "stderr" 'launch: --audit-format: "xml" is not json, ocsf or ecs' "$L_ERR" ||
		return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran" || return 1
	launch_raw --audit-format --policy "$p" -- /bin/true
	expect_rc "--audit-format --policy" 125 || return 1
	expect_match "stderr" "^launch: --audit-format: " "$L_ERR"
}
