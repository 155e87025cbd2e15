# SPDX-License-Identifier: LGPL-2.1-or-later
# Shipping the audit log: rotation with the real logrotate under a denial flood, RFC 5424 to a
# real rsyslog (UDP, TCP, a unix socket, /dev/log), a descriptor the job never has, the default
# folder's permissions, and the schema (host, seq, version, sha256, exe, UTF-8, DNS case,
# denied by op with exact sums).

SHIP_POLICY='{"name": "ship", "allow": [{"cidr": "127.0.0.2", "ports": [8080]}]}'
export IT_LAUNCH_SAFETY_S=40

# Runs fixtures/audit_ship.py (its output on stdout); fails with its first problems.
ship_check() {
	local out rc

	out=$("$IT_PY" "$IT_FIX/audit_ship.py" "$@" 2>&1)
	rc=$?
	echo "$out"
	[ "$rc" = 0 ] || fail "audit_ship.py $1: rc $rc: $(grep '^problem:' <<<"$out" | head -3)"
}

# Three sandboxes flood refusals into one file while logrotate -f (the shipped configuration,
# pointed at the test's folder) rotates it every 0.15 s: every line parses, every sandbox's seq
# runs 1..N once across all the files, and the counts add up to exactly what was refused.
test_audit_rotation_logrotate() {
	local p conf logs pids=() i rotations=0 files

	command -v logrotate >/dev/null || fail "logrotate not found (make deps installs it)" ||
		return 1
	p=$(policy ship "$SHIP_POLICY")
	logs=$T_DIR/logs
	mkdir -p "$logs"
	conf=$T_DIR/logrotate.conf
	# The shipped "rotate 14" would delete the oldest files of a slow flood before they are
	# counted: keep every rotation here, the rest of the configuration as shipped.
	sed -e "s|^/var/log/launch/\*.jsonl|$logs/*.jsonl|" -e 's|^\(\s*rotate\) [0-9]*$|\1 500|' \
		"$IT_ROOT/contrib/logrotate.d/launch" >"$conf"
	grep -q '^\s*rotate 500$' "$conf" || fail "the shipped configuration has no rotate line" ||
		return 1
	grep -qF "$logs/*.jsonl {" "$conf" || fail "the shipped configuration names no *.jsonl" ||
		return 1
	for i in 1 2 3; do
		launch_next_names
		L_N=$((L_N + 1))
		"$IT_LAUNCH" --audit-log "$logs/audit.jsonl" --name "$L_NAME" --policy "$p" -- \
			/bin/sh -c 'for i in $(seq 20); do "$0" udp 127.0.0.9 9 150 >/dev/null; sleep 0.1; done' \
			"$IT_HELPERS/flood" </dev/null >"$T_DIR/out$i" 2>"$T_DIR/err$i" &
		pids+=($!)
		track_pid $!
	done
	while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null ||
		kill -0 "${pids[2]}" 2>/dev/null; do
		sleep 0.15
		logrotate -f -s "$T_DIR/logrotate.state" "$conf" ||
			fail "logrotate -f failed" || return 1
		rotations=$((rotations + 1))
	done
	for i in 0 1 2; do
		wait "${pids[$i]}" || fail "launch $i exited $? ($(brief "$(cat "$T_DIR/err$((i + 1))")"))" ||
			return 1
	done
	files=$(ls "$logs")
	echo "rotations: $rotations; files: ${files//$'\n'/ }"
	[ "$rotations" -ge 8 ] || fail "only $rotations rotations during the flood" || return 1
	[ "$(find "$logs" -mindepth 1 -maxdepth 1 | wc -l)" -ge 4 ] || fail "the log was not rotated: $files" || return 1
	ship_check account "$logs"/* --sandboxes 3 --denied 3000
}

# rsyslogd of our own, in the test's network namespace: UDP and TCP inputs on 127.0.0.1 and a
# unix socket input, each written to a file of its own with the header fields apart.
start_rsyslog() {
	local conf=$T_DIR/rsyslog.conf i

	command -v rsyslogd >/dev/null || fail "rsyslogd not found (make deps installs rsyslog)" ||
		return 1
	mkdir -p "$T_DIR/rs"
	cat >"$conf" <<-CONF
		global(workDirectory="$T_DIR/rs" maxMessageSize="64k")
		module(load="imudp")
		module(load="imtcp")
		module(load="imuxsock" SysSock.Use="off")
		template(name="fields" type="string"
			string="%hostname%|%app-name%|%procid%|%msgid%|%structured-data%|%msg%\n")
		input(type="imudp" address="127.0.0.1" port="5514" ruleset="udp")
		input(type="imtcp" address="127.0.0.1" port="5515" ruleset="tcp")
		input(type="imuxsock" socket="$T_DIR/log.sock" useSpecialParser="off"
			parseHostname="on" ruleset="unix")
		ruleset(name="udp") { action(type="omfile" file="$T_DIR/udp.log" template="fields") }
		ruleset(name="tcp") { action(type="omfile" file="$T_DIR/tcp.log" template="fields") }
		ruleset(name="unix") { action(type="omfile" file="$T_DIR/unix.log" template="fields") }
	CONF
	rsyslogd -n -f "$conf" -i "$T_DIR/rsyslogd.pid" >"$T_DIR/rsyslogd.out" 2>&1 &
	RSYSLOG_PID=$!
	track_pid "$RSYSLOG_PID"
	for ((i = 0; i < 250; i++)); do
		[ -S "$T_DIR/log.sock" ] && ss -Hltn 'sport = :5515' | grep -q . &&
			ss -Hlun 'sport = :5514' | grep -q . && return 0
		sleep 0.02
	done
	fail "rsyslogd did not start: $(brief "$(cat "$T_DIR/rsyslogd.out")")"
}

# Waits until FILE has N lines (rsyslog writes asynchronously).
wait_lines() {
	local i

	for ((i = 0; i < 250; i++)); do
		[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.02
	done
	fail "$1 has $(wc -l <"$1" 2>/dev/null) lines, expected $2"
}

# The job of the syslog tests: refusals of three kinds and a name in mixed case.
SHIP_JOB='"$0" tcp 127.0.0.9 80; "$0" udp 127.0.0.9 9; "$0" userns-unshare; echo "caf\303\251"'

# Each transport: every line of the job's sandbox arrives as one RFC 5424 message whose MSG is
# the JSON line, whose header and structured data agree with it, with the counts exact.
test_audit_syslog_rsyslog() {
	local p target file

	p=$(policy ship "$SHIP_POLICY")
	start_rsyslog || return 1
	for target in udp:127.0.0.1:5514 tcp:127.0.0.1:5515 "$T_DIR/log.sock"; do
		case $target in
		udp*) file=$T_DIR/udp.log ;;
		tcp*) file=$T_DIR/tcp.log ;;
		*) file=$T_DIR/unix.log ;;
		esac
		launch_job --audit-log "syslog:$target" --policy "$p" -- /bin/sh -c "$SHIP_JOB" \
			"$IT_PROBE" "é-arg"
		expect_rc "syslog:$target" 0 || return 1
		wait_lines "$file" 5 || return 1
		ship_check syslog "$file" >"$T_LOGS/received.jsonl" || return 1
		ship_check account "$T_LOGS/received.jsonl" --sandboxes 1 --denied 3 || return 1
		expect_audit 1 "$T_LOGS/received.jsonl" event=sandbox_start "sandbox=$L_NAME" \
			argv:list version? host? policies:list || return 1
		grep -q '"é-arg"' "$T_LOGS/received.jsonl" || fail "UTF-8 argv did not arrive" ||
			return 1
		expect_audit 3 "$T_LOGS/received.jsonl" event=deny "sandbox=$L_NAME" pid:int host? \
			seq:int || return 1
		# exe is exact for seccomp's refusals (the process waits for launch's answer).
		expect_audit 1 "$T_LOGS/received.jsonl" event=deny op=userns "exe=$IT_PROBE" ||
			return 1
	done
	# The receiver is gone: the launch fails closed before the job runs.
	kill "$RSYSLOG_PID"
	wait "$RSYSLOG_PID" 2>/dev/null
	launch_job --audit-log "syslog:tcp:127.0.0.1:5515" --policy "$p" -- /bin/touch "$T_DIR/ran"
	expect_rc "syslog receiver gone" 125 || return 1
	expect_match "stderr" "audit log syslog:tcp:127.0.0.1:5515: Connection refused" "$L_ERR" ||
		return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran without its audit log"
}

# "syslog" alone is /dev/log: here a /dev of our own (a tmpfs in a mount namespace of this
# launch only) whose log is a link to rsyslog's socket.
test_audit_syslog_dev_log() {
	local p

	p=$(policy ship "$SHIP_POLICY")
	start_rsyslog || return 1
	mkdir -p "$T_DIR/olddev"
	launch_next_names
	unshare --mount --propagation private -- /bin/sh -c '
		mount --rbind /dev "$1/olddev" &&
		mount -t tmpfs -o mode=0755 tmpfs /dev &&
		for n in null zero full random urandom tty; do
			touch "/dev/$n" && mount --bind "$1/olddev/$n" "/dev/$n" || exit 1
		done &&
		mkdir /dev/pts /dev/shm && ln -s "$1/log.sock" /dev/log &&
		exec "$2" --audit-log syslog --name "$3" --policy "$4" -- "$5" tcp 127.0.0.9 80' \
		sh "$T_DIR" "$IT_LAUNCH" "$L_NAME" "$p" "$IT_PROBE" >"$T_DIR/out" 2>"$T_DIR/err"
	L_RC=$?
	L_ERR=$(cat "$T_DIR/err")
	expect_rc "--audit-log syslog (/dev/log)" 0 || return 1
	wait_lines "$T_DIR/unix.log" 3 || return 1
	ship_check syslog "$T_DIR/unix.log" >"$T_LOGS/received.jsonl" || return 1
	expect_audit 1 "$T_LOGS/received.jsonl" event=deny op=connect dst_port=80 "sandbox=$L_NAME"
}

# fd:N: launch writes to the caller's descriptor; the job, though N is open in launch, has no
# such descriptor (shown first to work outside), so it cannot forge a line.
test_audit_fd_job_cannot_forge() {
	local p

	p=$(policy ship "$SHIP_POLICY")
	/bin/sh -c 'echo outside >&7' 7>>"$T_DIR/outside.log"
	expect_eq "outside, fd 7 is writable" outside "$(cat "$T_DIR/outside.log")" || return 1

	launch_next_names
	echo "+ launch --audit-log fd:7 ... 7>>fd.log"
	"$IT_LAUNCH" --audit-log fd:7 --name "$L_NAME" --policy "$p" -- /bin/sh -c \
		'echo "{\"event\":\"sandbox_exit\",\"forged\":true}" >&7 && echo WROTE; "$0" tcp 127.0.0.9 80; ls /proc/self/fd' \
		"$IT_PROBE" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" 7>>"$T_DIR/fd.log"
	L_RC=$?
	cat "$T_DIR/out" "$T_DIR/err"
	expect_rc "fd:7" 0 || return 1
	! grep -q WROTE "$T_DIR/out" || fail "the job wrote to fd 7" || return 1
	grep -q 'Bad file descriptor' "$T_DIR/err" ||
		fail "the job's write to fd 7 did not fail with EBADF" || return 1
	! grep -q '^{"event":"sandbox_exit","forged"' "$T_DIR/fd.log" ||
		fail "a forged line is in the log" || return 1
	ship_check account "$T_DIR/fd.log" --sandboxes 1 --denied 1 || return 1
	expect_audit 1 "$T_DIR/fd.log" event=deny op=connect "sandbox=$L_NAME" || return 1

	# A live reader: a pipe read by a supervising process.
	launch_next_names
	"$IT_LAUNCH" --audit-log fd:5 --name "$L_NAME" --policy "$p" -- "$IT_PROBE" tcp 127.0.0.9 81 \
		</dev/null >/dev/null 2>"$T_DIR/err2" 5> >(cat >"$T_DIR/pipe.log")
	export L_RC=$?
	expect_rc "fd:5 to a pipe" 0 || return 1
	for _ in $(seq 100); do grep -q sandbox_exit "$T_DIR/pipe.log" && break; sleep 0.02; done
	expect_audit 1 "$T_DIR/pipe.log" event=deny dst_port=81 || return 1

	# Bad descriptors: one clear line, status 125, the job never runs.
	for spec in fd:2 fd:x fd:; do
		launch_raw --audit-log "$spec" --policy "$p" -- /bin/touch "$T_DIR/ran"
		expect_rc "--audit-log $spec" 125 || return 1
		expect_match "stderr" "^launch: --audit-log: \"$spec\" is not fd:N" "$L_ERR" || return 1
	done
	launch_raw --audit-log fd:9 --policy "$p" -- /bin/touch "$T_DIR/ran"
	expect_rc "--audit-log fd:9 (not open)" 125 || return 1
	expect_match "stderr" "audit log fd:9: Bad file descriptor" "$L_ERR" || return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran without its audit log"
}

# The default folder and file: 2750 and 0640, root:adm (on a /var/log of this test's own).
test_audit_default_permissions() {
	local p out

	p=$(policy ship "$SHIP_POLICY")
	getent group adm >/dev/null || fail "no adm group" || return 1
	launch_next_names
	out=$(unshare --mount --propagation private -- /bin/sh -c '
		mount -t tmpfs tmpfs /var/log || exit 1
		"$1" --name "$2" --policy "$3" -- "$4" tcp 127.0.0.9 80 >/dev/null || exit 1
		stat -c "%a %U:%G" /var/log/launch /var/log/launch/audit.jsonl
		grep -c "\"event\":\"deny\"" /var/log/launch/audit.jsonl
		# A folder an older launch made 0750 root:root is brought to the convention.
		rm -r /var/log/launch && mkdir -m 0750 /var/log/launch &&
			"$1" --name "$2-b" --policy "$3" -- /bin/true &&
			stat -c "%a %U:%G" /var/log/launch /var/log/launch/audit.jsonl
		' sh "$IT_LAUNCH" "$L_NAME" "$p" "$IT_PROBE" 2>&1)
	echo "$out"
	echo "$L_NAME-b" >>"$IT_TMP/sandboxes"
	expect_eq "modes and owners" "2750 root:adm
640 root:adm
1
2750 root:adm
640 root:adm" "$out"
}

# The schema: host and seq on every line, sandbox_start's version and policies (path and the
# file's SHA-256), exe, UTF-8 as UTF-8, the look-up's name in the job's case, and denied =
# deny lines + lost + unwritten by op, DNS included.
test_audit_schema_fields() {
	local p p2 version

	command -v dig >/dev/null || fail "dig not found (make deps installs bind9-dnsutils)" ||
		return 1
	p=$(policy ship "$SHIP_POLICY")
	p2=$(policy other '{"name": "other", "allow": [{"cidr": "127.0.0.3"}]}')
	launch_job --policy "$p" --policy "$p2" -- /bin/sh -c '
		"$0" tcp 127.0.0.9 80; "$0" tcp 127.0.0.9 81; "$0" udp 127.0.0.9 9
		"$0" socket packet raw 0; "$0" unix /nonexistent.sock; "$0" userns-unshare
		dig +short +time=2 +tries=1 @192.0.2.53 ExFiL-QmFzZTY0.Example.COM
		true' "$IT_PROBE" "naïve-ü"
	expect_rc "schema job" 0 || return 1
	audit_check || return 1
	ship_check account "$L_AUDIT" --sandboxes 1 --denied 7 || return 1
	expect_audit "$(wc -l <"$L_AUDIT")" "$L_AUDIT" "host=$(hostname)" seq:int || return 1
	version=$("$IT_LAUNCH" --version 2>/dev/null | awk '{print $2}')
	[ -n "$version" ] || version=$(cat "$IT_ROOT/VERSION" 2>/dev/null)
	[ -z "$version" ] || expect_audit 1 "$L_AUDIT" event=sandbox_start "version=$version" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start version~'^[0-9]+\.[0-9]+' seq=1 || return 1
	[ "$("$IT_PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["argv"][-1])' \
		"$L_AUDIT")" = "naïve-ü" ] || fail "argv's last item is not naïve-ü" || return 1
	expect_eq "policies" \
		"[{\"name\":\"ship\",\"path\":\"$p\",\"sha256\":\"$(sha256sum <"$p" | cut -c1-64)\"},{\"name\":\"other\",\"path\":\"$p2\",\"sha256\":\"$(sha256sum <"$p2" | cut -c1-64)\"}]" \
		"$(audit_get "$L_AUDIT" event=sandbox_start -- policies)" || return 1
	grep -q 'naïve-ü' "$L_AUDIT" || fail "UTF-8 argv not written as UTF-8" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns qname=ExFiL-QmFzZTY0.Example.COM || return 1
	# exe: exact for seccomp's refusals; for the kernel's, read from /proc when logged, so a
	# probe that has exited by then has none.
	expect_audit 1 "$L_AUDIT" event=deny op=userns "exe=$IT_PROBE" || return 1
	expect_audit 0 "$L_AUDIT" event=deny "exe~^(?!$IT_PROBE\$)" || return 1
	expect_eq "denied_by_op" \
		'{"connect":2,"sendmsg":1,"socket":1,"connect_unix":1,"userns":1,"dns":1}' \
		"$(audit_get "$L_AUDIT" event=sandbox_exit -- denied_by_op)"
}
