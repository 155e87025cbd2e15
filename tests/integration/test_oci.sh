# SPDX-License-Identifier: LGPL-2.1-or-later
# launch oci-hook under podman with runc: a container from a rootfs folder the test makes
# (busybox-static and the probe with its libraries), the hook found in a hooks dir of the
# test's own whose path is this build's launch. Only --network none: the container has its
# own loopback and nothing else.

# podman, as these tests run it: runc (crun refuses this hybrid host's cgroup layout), no
# systemd, and rlimits the host lets a root without CAP_SYS_RESOURCE set.
oci_podman() {
	podman --runtime runc --cgroup-manager cgroupfs --events-backend file \
		--hooks-dir "$IT_TMP/oci-hooks" "$@"
}

OCI_RUN=(run --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
# The DNS upstream, a dnsmasq in the test's network namespace (the hook's and the supervisor's).
OCI_DNS_ADDR=127.0.0.53
OCI_DNS_PORT=5354

# The rootfs and the hooks dir, made once per run.
oci_setup() {
	local root=$IT_TMP/oci-rootfs lib

	command -v podman >/dev/null || fail "podman not found (make deps)" || return 1
	command -v runc >/dev/null || fail "runc not found (make deps)" || return 1
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		fail "no static /bin/busybox (busybox-static)" || return 1
	[ -d "$root" ] && return 0
	mkdir -p "$root"/{bin,proc,sys,dev,etc,tmp} "$IT_TMP/oci-hooks" || return 1
	# Any address will do: the programs send port 53 of every address to the DNS proxy.
	echo "nameserver $OCI_DNS_ADDR" >"$root/etc/resolv.conf"
	cp /bin/busybox "$root/bin/" && ln -s busybox "$root/bin/sh" &&
		cp "$IT_PROBE" "$root/bin/probe" || return 1
	for lib in $(ldd "$IT_PROBE" | awk '/\// { print ($2 == "=>") ? $3 : $1 }'); do
		mkdir -p "$root${lib%/*}" && cp "$lib" "$root$lib" || return 1
	done
	printf '{"version":"1.0.0","hook":{"path":"%s","args":["launch","oci-hook"]},' \
		"$(realpath "$IT_LAUNCH")" >"$IT_TMP/oci-hooks/launch.json"
	printf '"when":{"annotations":{"^io\\\\.launch\\\\.policy$":".*"}},' \
		>>"$IT_TMP/oci-hooks/launch.json"
	printf '"stages":["createRuntime","poststop"]}\n' >>"$IT_TMP/oci-hooks/launch.json"
}

# oci_run NAME [OPTION...] -- COMMAND...: runs a container named NAME (removed before and
# after) with podman run's OPTIONs after the common ones; its output on stdout, podman's
# errors in $T_DIR/NAME.err, podman's exit status.
oci_run() {
	local name=$1 opts=() rc

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	oci_podman rm -f "$name" >/dev/null 2>&1
	timeout -k 5 60 podman --runtime runc --cgroup-manager cgroupfs --events-backend file \
		--hooks-dir "$IT_TMP/oci-hooks" "${OCI_RUN[@]}" --name "$name" "${opts[@]}" \
		--rootfs "$IT_TMP/oci-rootfs" "$@" 2>"$T_DIR/$name.err"
	rc=$?
	oci_podman rm -f "$name" >/dev/null 2>&1
	return $rc
}

# Launch's cgroups of containers (12 hex digits) left in the default parent.
oci_cgroups() {
	find "$IT_CG2/launch" -maxdepth 1 -regextype egrep -regex '.*/[0-9a-f]{12}' 2>/dev/null
}

# Supervisors still running (a launch oci-hook process whose parent is not a hook runner).
oci_supervisors() {
	find_pids launch "oci-hook"
}

# Without the annotation the container's connect goes (ECONNREFUSED: its own loopback has no
# listener); with a policy that allows nothing, it is refused with a deny line naming it.
test_oci_refused() {
	local p log out id

	oci_setup || return 1
	p=$(policy none '{"name": "none", "allow": []}')
	log=$T_LOGS/audit.jsonl
	out=$(oci_run "it$IT_RUNID-oci-free" -- /bin/probe tcp 127.0.0.1 9)
	expect_eq "unconfined container's connect" ECONNREFUSED "$out" || return 1
	[ ! -e "$log" ] || fail "the hook ran for a container without the annotation" || return 1
	out=$(oci_run "it$IT_RUNID-oci-none" --annotation io.launch.policy="$p" \
		--annotation io.launch.audit-log="$log" -- /bin/probe tcp 127.0.0.1 9)
	expect_eq "confined container's connect" EPERM "$out" ||
		fail "podman: $(brief "$(cat "$T_DIR/it$IT_RUNID-oci-none.err")")" || return 1
	id=$(audit_get "$log" event=sandbox_start -- sandbox)
	expect_match "sandbox id" '^[0-9a-f]{12}$' "$id" || return 1
	expect_audit 1 "$log" event=deny sandbox="$id" op=connect dst_ip=127.0.0.1 dst_port=9 ||
		return 1
	expect_audit 1 "$log" event=sandbox_exit sandbox="$id" denied=1 exit_code! signal!
}

# A policy that does not exist: podman run fails with the hook's line, the command never ran,
# and nothing of launch's is left.
test_oci_bad_policy() {
	local out err

	oci_setup || return 1
	out=$(oci_run "it$IT_RUNID-oci-bad" --annotation io.launch.policy=it-no-such-policy \
		-- /bin/sh -c 'echo RAN')
	expect_eq "podman run's exit status" 126 "$?" || return 1
	err=$(cat "$T_DIR/it$IT_RUNID-oci-bad.err")
	expect_match "podman's error" 'launch oci-hook: --policy: no policy named "it-no-such-policy"' \
		"$err" || return 1
	expect_eq "the command's output" "" "$out" || return 1
	expect_eq "launch cgroups left" "" "$(oci_cgroups)" || return 1
	expect_eq "supervisors left" "" "$(oci_supervisors)"
}

# A policy with "http" rules: no gateway runs for a container, so its hosts would be reached
# directly; the hook refuses, the command never runs, nothing is left.
test_oci_http_refused() {
	local p out err

	oci_setup || return 1
	p=$(policy gwc '{"name": "gwc", "allow": [{"host": "api.stripe.com", "ports": [443],
		"http": {}}]}')
	out=$(oci_run "it$IT_RUNID-oci-http" --annotation io.launch.policy="$p" \
		-- /bin/sh -c 'echo RAN')
	expect_eq "podman run's exit status" 126 "$?" || return 1
	err=$(cat "$T_DIR/it$IT_RUNID-oci-http.err")
	expect_match "podman's error" 'containers get no HTTPS gateway' "$err" || return 1
	expect_eq "the command's output" "" "$out" || return 1
	expect_eq "launch cgroups left" "" "$(oci_cgroups)" || return 1
	expect_eq "supervisors left" "" "$(oci_supervisors)"
}

# After a container ran detached and podman rm -f: no cgroup, no supervisor, no pid file.
test_oci_no_residue() {
	local p log name=it$IT_RUNID-oci-rm

	oci_setup || return 1
	p=$(policy none '{"name": "none", "allow": []}')
	log=$T_LOGS/audit.jsonl
	oci_podman rm -f "$name" >/dev/null 2>&1
	timeout -k 5 60 podman --runtime runc --cgroup-manager cgroupfs --events-backend file \
		--hooks-dir "$IT_TMP/oci-hooks" "${OCI_RUN[@]}" -d --name "$name" \
		--annotation io.launch.policy="$p" --annotation io.launch.audit-log="$log" \
		--rootfs "$IT_TMP/oci-rootfs" /bin/busybox sleep 1000 >/dev/null 2>"$T_DIR/run.err" ||
		fail "podman run -d: $(brief "$(cat "$T_DIR/run.err")")" || return 1
	[ -n "$(oci_supervisors)" ] || fail "no supervisor while the container runs" || return 1
	# podman exec joins the engine's cgroup, which is the one confined.
	expect_eq "podman exec's connect" EPERM "$(oci_podman exec "$name" /bin/probe tcp 127.0.0.1 9)" ||
		return 1
	oci_podman rm -f -t 0 "$name" >/dev/null 2>&1 || fail "podman rm -f failed" || return 1
	expect_eq "launch cgroups left" "" "$(oci_cgroups)" || return 1
	expect_eq "supervisors left" "" "$(oci_supervisors)" || return 1
	expect_eq "pid files left" "" "$(ls /run/launch/oci 2>/dev/null)" || return 1
	expect_audit 1 "$log" event=sandbox_exit denied=1
}

# The supervisor SIGKILLed: the programs stay and refuse; podman rm then leaves nothing.
test_oci_supervisor_killed() {
	local p log id sup out name=it$IT_RUNID-oci-kill

	oci_setup || return 1
	p=$(policy none '{"name": "none", "allow": []}')
	log=$T_LOGS/audit.jsonl
	oci_podman rm -f "$name" >/dev/null 2>&1
	oci_podman "${OCI_RUN[@]}" -d --name "$name" --annotation io.launch.policy="$p" \
		--annotation io.launch.audit-log="$log" --rootfs "$IT_TMP/oci-rootfs" \
		/bin/busybox sleep 1000 >/dev/null 2>"$T_DIR/run.err" ||
		fail "podman run -d: $(brief "$(cat "$T_DIR/run.err")")" || return 1
	id=$(audit_get "$log" event=sandbox_start -- sandbox)
	sup=$(cat "/run/launch/oci/$id.pid" 2>/dev/null)
	[ -n "$sup" ] || fail "no pid file for $id" || return 1
	kill -KILL "$sup"
	# Refused, or the container gone already: any launch's sweep (a poststop of another
	# container, podman runs those late) kills what a dead supervisor leaves.
	out=$(oci_podman exec "$name" /bin/probe tcp 127.0.0.1 9 2>"$T_DIR/exec.err")
	[ "$out" = EPERM ] || grep -q "stopped container" "$T_DIR/exec.err" ||
		fail "podman exec's connect, the supervisor dead: '$out' $(brief "$(cat "$T_DIR/exec.err")")" ||
		return 1
	oci_podman rm -f -t 0 "$name" >/dev/null 2>&1 || fail "podman rm -f failed" || return 1
	expect_eq "supervisors left" "" "$(oci_supervisors)" || return 1
	expect_eq "lock files left" "" "$(ls "/run/launch/$id.lock" 2>/dev/null)" || return 1
	expect_eq "pid files left" "" "$(ls /run/launch/oci 2>/dev/null)"
}

# Starts dnsmasq on $OCI_DNS_ADDR:$OCI_DNS_PORT: ok.test is 127.0.0.1 (the container's own
# loopback), *.evil.test an address that must never be looked up, ok.test's TXT a secret.
oci_dns_upstream() {
	dnsmasq_start "$OCI_DNS_ADDR" "$OCI_DNS_PORT" "$T_DIR/upstream.log" --no-negcache \
		--address=/ok.test/127.0.0.1 --address=/evil.test/127.0.0.9 \
		--txt-record=ok.test,leaked
}

# The container's look-ups go to a proxy in its own network namespace (it has no other way
# out), which asks the upstream in the host's: an allowed name is answered and its address
# opened; a name outside the policy, or a TXT query, is refused with a deny line naming the
# container, and never reaches the upstream.
test_oci_dns() {
	local p log id out name=it$IT_RUNID-oci-dns

	oci_setup || return 1
	oci_dns_upstream || return 1
	p=$(policy okhost '{"name": "okhost", "allow": [{"host": "ok.test", "ports": [9]}]}')
	log=$T_LOGS/audit.jsonl
	out=$(oci_run "$name" --annotation io.launch.policy="$p" \
		--annotation io.launch.audit-log="$log" \
		--annotation io.launch.resolver=$OCI_DNS_ADDR:$OCI_DNS_PORT -- /bin/sh -c '
		nslookup -type=a ok.test '$OCI_DNS_ADDR' >/tmp/ok.out 2>&1
		grep -q "Address: 127.0.0.1" /tmp/ok.out && echo "ok.test 127.0.0.1" ||
			{ echo "ok.test failed:"; cat /tmp/ok.out; }
		/bin/probe tcp 127.0.0.1 9
		/bin/probe tcp 127.0.0.1 10
		nslookup -type=a secret.evil.test '$OCI_DNS_ADDR' >/dev/null 2>&1 &&
			echo "secret.evil.test answered" || echo "secret.evil.test refused"
		nslookup -type=txt ok.test '$OCI_DNS_ADDR' 2>&1 | grep -q leaked &&
			echo "TXT answered" || echo "TXT refused"')
	# shellcheck disable=SC2034 # expect_lines reads it
	L_OUT=$out
	expect_lines "container" "ok.test 127.0.0.1" ECONNREFUSED EPERM "secret.evil.test refused" \
		"TXT refused" || fail "podman: $(brief "$(cat "$T_DIR/$name.err")")" || return 1
	id=$(audit_get "$log" event=sandbox_start -- sandbox)
	expect_match "sandbox id" '^[0-9a-f]{12}$' "$id" || return 1
	expect_audit 1 "$log" event=deny sandbox="$id" op=dns qname=secret.evil.test qtype=A \
		reason=name || return 1
	expect_audit 1 "$log" event=deny sandbox="$id" op=dns qname=ok.test qtype=TXT || return 1
	# The asking process, found through the container's own /proc/PID/net tables.
	expect_match "the deny line's pid" '^[0-9]+$' \
		"$(audit_get "$log" event=deny op=dns qname=secret.evil.test -- pid)" || return 1
	expect_audit 1 "$log" event=deny sandbox="$id" op=connect dst_ip=127.0.0.1 dst_port=10 ||
		return 1
	grep -q "query\[A\] ok.test" "$T_DIR/upstream.log" ||
		fail "the upstream saw no query for ok.test" || return 1
	! grep -q "evil.test\|query\[TXT\]" "$T_DIR/upstream.log" ||
		fail "a refused look-up reached the upstream: $(brief "$(cat "$T_DIR/upstream.log")")" ||
		return 1
	expect_audit 1 "$log" event=sandbox_exit sandbox="$id" denied=3
}

OCI_MANY=20

# The containers of oci_many, started at once; checked by oci_many_check.
oci_many_start() {
	local pa=$1 pb=$2 log=$3 i p pids=() rc=0

	for ((i = 0; i < OCI_MANY; i++)); do
		p=$pa
		[ $((i % 2)) = 1 ] && p=$pb
		timeout -k 5 60 podman --runtime runc --cgroup-manager cgroupfs \
			--events-backend file --hooks-dir "$IT_TMP/oci-hooks" "${OCI_RUN[@]}" -d \
			--name "it$IT_RUNID-oci-many-$i" --annotation io.launch.policy="$p" \
			--annotation io.launch.audit-log="$log" --rootfs "$IT_TMP/oci-rootfs" \
			/bin/busybox sleep 1000 >/dev/null 2>"$T_DIR/run-$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" ||
			fail "podman run -d of container $i: $(brief "$(cat "$T_DIR/run-$i.err")")" ||
			rc=1
	done
	return $rc
}

# Each container's connect as its own policy says, and its deny line with its own id.
oci_many_check() {
	local log=$1 i id want out ids=()

	for ((i = 0; i < OCI_MANY; i++)); do
		id=$(oci_podman inspect --format '{{.Id}}' "it$IT_RUNID-oci-many-$i" 2>/dev/null)
		ids+=("${id:0:12}")
		expect_match "container $i's id" '^[0-9a-f]{12}$' "${ids[$i]}" || return 1
	done
	for ((i = 0; i < OCI_MANY; i++)); do
		oci_podman exec "it$IT_RUNID-oci-many-$i" /bin/probe tcp 127.0.0.1 9 \
			>"$T_DIR/exec-$i.out" 2>&1 &
	done
	wait
	for ((i = 0; i < OCI_MANY; i++)); do
		want=ECONNREFUSED
		[ $((i % 2)) = 1 ] && want=EPERM
		out=$(cat "$T_DIR/exec-$i.out")
		expect_eq "container $i's connect" "$want" "$out" || return 1
		expect_audit $((i % 2)) "$log" event=deny sandbox="${ids[$i]}" op=connect \
			dst_ip=127.0.0.1 dst_port=9 || return 1
	done
	expect_audit $((OCI_MANY / 2)) "$log" event=deny op=connect dst_port=9 || return 1
	printf '%s\n' "${ids[@]}" >"$T_DIR/ids"
}

oci_many_remove() {
	local i

	for ((i = 0; i < OCI_MANY; i++)); do
		oci_podman rm -f -t 0 "it$IT_RUNID-oci-many-$i" >/dev/null 2>&1 &
	done
	wait
}

# 20 containers under two policies in turn, started at once: the shared programs keep each
# one's verdicts and lines apart; removed, they leave nothing of launch's.
test_oci_many() {
	local pa pb log rc=0 id

	oci_setup || return 1
	pa=$(policy port9 '{"name": "port9", "allow": [{"cidr": "127.0.0.1", "ports": [9]}]}')
	pb=$(policy none '{"name": "none", "allow": []}')
	log=$T_LOGS/audit.jsonl
	oci_many_remove
	oci_many_start "$pa" "$pb" "$log" && oci_many_check "$log" || rc=1
	oci_many_remove
	[ $rc = 0 ] || return 1
	expect_eq "launch cgroups left" "" "$(oci_cgroups)" || return 1
	expect_eq "supervisors left" "" "$(oci_supervisors)" || return 1
	expect_eq "pid files left" "" "$(ls /run/launch/oci 2>/dev/null)" || return 1
	while read -r id; do
		expect_audit 1 "$log" event=sandbox_exit sandbox="$id" || return 1
	done <"$T_DIR/ids"
}

# podman kill ends the container's init: the supervisor sees its cgroup empty (or poststop's
# signal), writes sandbox_exit and goes; podman rm then leaves nothing of launch's.
test_oci_podman_kill() {
	local p log id rc=0 name=it$IT_RUNID-oci-pkill

	oci_setup || return 1
	p=$(policy none '{"name": "none", "allow": []}')
	log=$T_LOGS/audit.jsonl
	oci_podman rm -f "$name" >/dev/null 2>&1
	oci_podman "${OCI_RUN[@]}" -d --name "$name" --annotation io.launch.policy="$p" \
		--annotation io.launch.audit-log="$log" --rootfs "$IT_TMP/oci-rootfs" \
		/bin/busybox sleep 1000 >/dev/null 2>"$T_DIR/run.err" ||
		fail "podman run -d: $(brief "$(cat "$T_DIR/run.err")")" || rc=1
	id=$(audit_get "$log" event=sandbox_start -- sandbox)
	[ $rc = 0 ] && { [ -s "/run/launch/oci/$id.pid" ] || fail "no pid file for $id"; } || rc=1
	[ $rc = 0 ] && { oci_podman kill "$name" >/dev/null 2>"$T_DIR/kill.err" ||
		fail "podman kill: $(brief "$(cat "$T_DIR/kill.err")")"; } || rc=1
	[ $rc = 0 ] && { timeout 20 podman --runtime runc --cgroup-manager cgroupfs \
		--events-backend file wait "$name" >/dev/null 2>&1 || fail "podman wait"; } || rc=1
	oci_podman rm -f -t 0 "$name" >/dev/null 2>&1 || fail "podman rm -f failed" || rc=1
	[ $rc = 0 ] || return 1
	expect_eq "launch cgroups left" "" "$(oci_cgroups)" || return 1
	expect_eq "supervisors left" "" "$(oci_supervisors)" || return 1
	expect_eq "lock files left" "" "$(ls "/run/launch/$id.lock" 2>/dev/null)" || return 1
	expect_eq "pid files left" "" "$(ls /run/launch/oci 2>/dev/null)" || return 1
	expect_audit 1 "$log" event=sandbox_exit sandbox="$id"
}
