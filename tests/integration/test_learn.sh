# SPDX-License-Identifier: LGPL-2.1-or-later
# --audit-only, launch learn and launch report (docs/policy.md, Learning a policy): a job run
# with --audit-only reaches what its policy refuses and the log says would_deny; the policy
# learned from that log, enforced, lets the same job run without a refusal, and refuses a new
# destination exactly there.
#
# The upstream is a real dnsmasq on 127.0.0.53:5357 with the test's names; every launch runs
# with a resolv.conf that points at 192.0.2.53 (fixtures/dns/launch-ns), so every answer the
# job gets comes from launch's proxy.

listeners tcp:127.0.9.1:8443 tcp:127.0.9.2:8443 tcp:127.0.9.3:9000 tcp:127.0.9.4:9000 \
	udp:127.0.9.5:9001 udp:127.0.9.1:9001

LEARN_UP_ADDR=127.0.0.53
LEARN_UP_PORT=5357
LEARN_JOB=$IT_FIX/dns/job.py
export DNS_REAL_LAUNCH=$IT_LAUNCH DNS_RESOLV_CONF=$IT_FIX/dns/resolv.conf

# What the security team starts from: the provider's API, nothing else.
LEARN_POLICY='{"name": "start", "allow": [{"host": "api.learn.test", "ports": [8443]}]}'
# The job: its provider, a second name the policy does not know, an address without a name.
LEARN_STEPS=("gai api.learn.test 8443" "gai cdn.learn.test 8443" "tcp 127.0.9.3 9000")

# Starts dnsmasq with the test's names.
learn_upstream() {
	dnsmasq_start "$LEARN_UP_ADDR" "$LEARN_UP_PORT" "$T_DIR/upstream.log" \
		--address=/api.learn.test/127.0.9.1 --address=/cdn.learn.test/127.0.9.2 \
		--address=/new.learn.test/127.0.9.4 || return 1
}

learn_launch() {
	IT_LAUNCH=$IT_FIX/dns/launch-ns launch_job --resolver "$LEARN_UP_ADDR:$LEARN_UP_PORT" "$@"
}

# Runs `launch learn` or `launch report` (no privilege needed); sets L_RC, L_OUT, L_ERR.
learn_tool() {
	echo "+ launch $*"
	"$IT_LAUNCH" "$@" >"$T_DIR/tool.out" 2>"$T_DIR/tool.err"
	L_RC=$?
	L_OUT=$(cat "$T_DIR/tool.out")
	L_ERR=$(cat "$T_DIR/tool.err")
	echo "  rc=$L_RC"
	sed 's/^/  out: /' "$T_DIR/tool.out"
	sed 's/^/  err: /' "$T_DIR/tool.err"
}

# In audit-only mode a connection the policy refuses really happens, and is logged as
# would_deny with deny's fields; enforcing, the same connection is refused.
test_learn_audit_only_reaches_refused() {
	local p n3 n1 would_deny

	learn_upstream || return 1
	p=$(policy start "$LEARN_POLICY")
	outside "OK tcp 127.0.9.3 9000" || return 1
	n3=$(received tcp 127.0.9.3 9000)
	n1=$(received tcp 127.0.9.1 8443)
	learn_launch --policy "$p" -- "$IT_PY" "$LEARN_JOB" "tcp 127.0.9.3 9000"
	expect_rc "enforcing" 0 || return 1
	expect_lines "enforcing" "tcp 127.0.9.3 EPERM" || return 1
	expect_received tcp 127.0.9.3 9000 "$n3" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.9.3 dst_port=9000 || return 1

	learn_launch --audit-only --policy "$p" -- "$IT_PY" "$LEARN_JOB" "${LEARN_STEPS[@]}"
	expect_rc "audit-only" 0 || return 1
	expect_lines "audit-only" "gai api.learn.test 127.0.9.1 OK" "gai cdn.learn.test 127.0.9.2 OK" \
		"tcp 127.0.9.3 OK" || return 1
	# The listener got it: nothing was enforced.
	expect_received tcp 127.0.9.3 9000 "$((n3 + 1))" || return 1
	expect_received tcp 127.0.9.1 8443 "$((n1 + 1))" || return 1
	expect_eq "warnings on stderr" 1 "$(grep -c 'audit-only.*not enforced' "$L_ERR_FILE")" ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_start audit_only=true || return 1
	expect_audit 0 "$L_AUDIT" event=deny op=connect || return 1
	expect_audit 0 "$L_AUDIT" event=deny op=dns || return 1
	# deny's fields, the process's among them; the name the job looked up where it did.
	expect_audit 1 "$L_AUDIT" event=would_deny op=connect family=ipv4 protocol=tcp \
		dst_ip=127.0.9.3 dst_port=9000 dst_name! pid:int tid:int comm=python3 uid:int || return 1
	expect_audit 1 "$L_AUDIT" event=would_deny op=connect dst_ip=127.0.9.2 dst_port=8443 \
		dst_name=cdn.learn.test || return 1
	[ "$(audit_count "$L_AUDIT" event=would_deny op=dns qname=cdn.learn.test reason=name)" -ge 1 ] ||
		fail "no would_deny line for the look-up of cdn.learn.test" || return 1
	# Forwarded all the same: the upstream saw it.
	grep -q 'query\[A\] cdn.learn.test' "$T_DIR/upstream.log" ||
		fail "the upstream never saw cdn.learn.test" || return 1
	expect_audit 1 "$L_AUDIT" event=allow op=connect dst_ip=127.0.9.1 dst_port=8443 \
		dst_name=api.learn.test || return 1
	# sandbox_exit accounts for them: every would_deny has its line (none lost here).
	would_deny=$(($(audit_count "$L_AUDIT" event=would_deny) +
		$(audit_get "$L_AUDIT" event=sandbox_exit -- would_deny_lost)))
	expect_eq "sandbox_exit would_deny = would_deny lines + lost" "$would_deny" \
		"$(audit_get "$L_AUDIT" event=sandbox_exit -- would_deny)" || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=0 allowed=1 || return 1
}

# A UDP connect to an address a look-up opened, on a port the policy does not give it:
# enforcing refuses it without a line (getaddrinfo's source-address probes; the job's sends
# there pass sendmsg, which logs). In audit-only the connect goes through and the sends on the
# connected socket pass no address hook: the connect is the one would_deny line for them.
test_learn_audit_only_udp_connect_answered() {
	local p n would_deny

	learn_upstream || return 1
	p=$(policy start "$LEARN_POLICY")
	outside "OK udpconn 127.0.9.1 9001" || return 1
	n=$(received udp 127.0.9.1 9001)
	# shellcheck disable=SC2016
	learn_launch --policy "$p" -- /bin/sh -c '"$0" "$1" "gai api.learn.test 8443" &&
		"$2" udpconn 127.0.9.1 9001' "$IT_PY" "$LEARN_JOB" "$IT_PROBE"
	expect_rc "enforcing" 0 || return 1
	expect_lines "enforcing" "gai api.learn.test 127.0.9.1 OK" "EPERM" || return 1
	expect_received udp 127.0.9.1 9001 "$n" || return 1

	# shellcheck disable=SC2016
	learn_launch --audit-only --policy "$p" -- /bin/sh -c '"$0" "$1" "gai api.learn.test 8443" &&
		"$2" udpconn 127.0.9.1 9001' "$IT_PY" "$LEARN_JOB" "$IT_PROBE"
	expect_rc "audit-only" 0 || return 1
	expect_lines "audit-only" "gai api.learn.test 127.0.9.1 OK" "OK" || return 1
	expect_received udp 127.0.9.1 9001 "$((n + 1))" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=would_deny op=connect family=ipv4 protocol=udp \
		dst_ip=127.0.9.1 dst_port=9001 dst_name=api.learn.test || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	would_deny=$(($(audit_count "$L_AUDIT" event=would_deny) +
		$(audit_get "$L_AUDIT" event=sandbox_exit -- would_deny_lost)))
	expect_eq "sandbox_exit would_deny = would_deny lines + lost" "$would_deny" \
		"$(audit_get "$L_AUDIT" event=sandbox_exit -- would_deny)"
}

# Refusals no policy can lift stay refusals in audit-only mode (docs/threat-model.md); an
# unconnected UDP send the policy refuses leaves (the packet backstop lets it through too).
test_learn_audit_only_keeps_structure() {
	local p n5

	p=$(policy start "$LEARN_POLICY")
	outside "OK socket inet raw icmp" "OK socket packet raw all" || return 1
	n5=$(received udp 127.0.9.5 9001)
	inside --audit-only --user root --policy "$p" -- "OK tcp 127.0.9.3 9000" \
		"OK udp 127.0.9.5 9001" "EPERM socket inet raw icmp" "EPERM socket packet raw all" ||
		return 1
	expect_received udp 127.0.9.5 9001 "$((n5 + 1))" || return 1
	expect_audit 1 "$L_AUDIT" event=would_deny op=sendmsg protocol=udp dst_ip=127.0.9.5 \
		dst_port=9001 || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit packet_dropped=0 || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=ipv4 type=raw || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=socket family=packet || return 1
	expect_audit 1 "$L_AUDIT" event=would_deny op=connect dst_ip=127.0.9.3 || return 1
}

# The round trip: audit-only, learn, enforce: zero refusals; then a job that also reaches a
# new host is refused there and only there.
test_learn_round_trip() {
	local p learned audit_log sandbox n4 deny_ts second

	learn_upstream || return 1
	p=$(policy start "$LEARN_POLICY")
	learn_launch --audit-only --policy "$p" -- "$IT_PY" "$LEARN_JOB" "${LEARN_STEPS[@]}"
	expect_rc "audit-only" 0 || return 1
	audit_log=$L_AUDIT
	sandbox=$L_NAME
	# Another sandbox's lines in the same log are not learned (--sandbox).
	cat "$audit_log" >"$T_LOGS/both.jsonl"
	learn_launch --audit-only --policy "$p" -- "$IT_PY" "$LEARN_JOB" "tcp 127.0.9.4 9000"
	cat "$L_AUDIT" >>"$T_LOGS/both.jsonl"

	learn_tool learn "$T_LOGS/both.jsonl" --sandbox "$sandbox" --name learned
	expect_rc "launch learn" 0 || return 1
	learned=$T_DIR/learned.json
	printf '%s\n' "$L_OUT" >"$learned"
	chmod 644 "$learned"
	"$IT_PY" - "$learned" <<'EOF' || fail "learned policy: $(brief "$L_OUT")" || return 1
import json, sys
p = json.load(open(sys.argv[1]))
assert p["name"] == "learned", p
allow = p["allow"]
want = [{"host": "api.learn.test", "ports": [8443], "protocol": "tcp"},
        {"host": "cdn.learn.test", "ports": [8443], "protocol": "tcp"},
        {"cidr": "127.0.9.3/32", "ports": [9000], "protocol": "tcp"}]
assert allow == want, allow
# glibc tries nscd's socket before DNS: that is what the job did, so it is learned too.
assert p.get("unix", []) in ([], ["/var/run/nscd/socket"]), p.get("unix")
EOF
	learn_tool learn "$T_LOGS/both.jsonl" --sandbox nosuchsandbox
	expect_rc "launch learn of no sandbox" 125 || return 1
	expect_match "its error" "no line of sandbox \"nosuchsandbox\"" "$L_ERR" || return 1

	# Enforced, the learned policy runs the same job with no refusal at all.
	learn_launch --policy "$learned" -- "$IT_PY" "$LEARN_JOB" "${LEARN_STEPS[@]}"
	expect_rc "enforcing the learned policy" 0 || return 1
	expect_lines "enforcing the learned policy" "gai api.learn.test 127.0.9.1 OK" \
		"gai cdn.learn.test 127.0.9.2 OK" "tcp 127.0.9.3 OK" || return 1
	audit_check || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=0 || return 1

	# A second job that also reaches a new host: refused there, exactly once, and only there.
	n4=$(received tcp 127.0.9.4 9000)
	learn_launch --policy "$learned" -- "$IT_PY" "$LEARN_JOB" "${LEARN_STEPS[@]}" \
		"tcp 127.0.9.4 9000"
	expect_rc "the second job" 0 || return 1
	expect_lines "the second job" "gai api.learn.test 127.0.9.1 OK" \
		"gai cdn.learn.test 127.0.9.2 OK" "tcp 127.0.9.3 OK" "tcp 127.0.9.4 EPERM" || return 1
	expect_received tcp 127.0.9.4 9000 "$n4" || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.9.4 dst_port=9000 || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 || return 1
	second=$L_AUDIT
	# A new name is refused at its look-up.
	learn_launch --policy "$learned" -- "$IT_PY" "$LEARN_JOB" "gai new.learn.test 9000"
	expect_rc "the look-up of a new name" 0 || return 1
	[ "$(audit_count "$L_AUDIT" event=deny op=dns qname=new.learn.test reason=name)" -ge 1 ] ||
		fail "the look-up of new.learn.test was not refused" || return 1

	# The report of the second job's log: the one destination, counted, first and last seen.
	deny_ts=$(audit_get "$second" event=deny -- ts)
	learn_tool report "$second"
	expect_rc "launch report" 0 || return 1
	expect_match "report: the refused destination" \
		"deny +connect +127\.0\.9\.4:9000 tcp +1 +$deny_ts +$deny_ts" "$L_OUT" || return 1
	expect_match "report: the job among those ended with denials" \
		"jobs that ended with denials:.*sandbox [^ ]+ \(policy learned\): exit 0, denied 1, lost 0" \
		"$(tr '\n' ' ' <<<"$L_OUT")" || return 1
	# The audit-only log's report: would_deny destinations, with the names.
	learn_tool report "$audit_log"
	expect_rc "launch report (audit-only)" 0 || return 1
	expect_match "report: audit-only sandbox" "policy start, sandbox $sandbox \(audit-only\): exit 0" \
		"$L_OUT" || return 1
	expect_match "report: the would_deny destination" \
		"would_deny +connect +cdn\.learn\.test 127\.0\.9\.2:8443 tcp +1 " "$L_OUT" || return 1
	expect_match "report: the nameless one" "would_deny +connect +127\.0\.9\.3:9000 tcp +1 " \
		"$L_OUT" || return 1
}

# Audit-only accounting stays exact when the ring buffer overflows: with launch stopped, a
# burst of sends the policy refuses all leave, and would_deny = would_deny lines + lost.
test_learn_audit_only_lost_accounting() {
	local p count=10000 lines lost_events lost_exit

	p=$(policy start "$LEARN_POLICY")
	flood_launch_stopped 127.0.9.6 5300 "$count" --audit-only --policy "$p" || return 1
	# Nothing enforced: every send left.
	expect_eq "flood results" "OK=$count" "$(cat "$T_DIR/flood.out")" || return 1
	audit_check || return 1
	lines=$(audit_count "$L_AUDIT" event=would_deny op=sendmsg)
	lost_events=$(lost_sum "$L_AUDIT" would_deny)
	lost_exit=$(audit_get "$L_AUDIT" event=sandbox_exit -- would_deny_lost)
	echo "would_deny lines $lines, events_lost would_deny $lost_events, exit lost $lost_exit"
	[ "$lost_events" -gt 0 ] ||
		fail "no lost would_deny although $count met a stopped reader" || return 1
	expect_eq "would_deny lines + lost vs sends" "$count" $((lines + lost_events)) || return 1
	expect_eq "sandbox_exit would_deny_lost vs events_lost" "$lost_events" "$lost_exit" ||
		return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit would_deny="$count" denied=0 lost=0 ||
		return 1
	expect_eq "events_lost count (refusals lost)" 0 "$(lost_sum "$L_AUDIT" count)" || return 1
	# A policy learned from it may miss destinations: launch learn says so.
	learn_tool learn "$L_AUDIT"
	expect_rc "launch learn (incomplete log)" 0 || return 1
	[[ $L_ERR == *"is incomplete ($lost_events events lost, 0 lines not written)"* ]] ||
		fail "launch learn did not warn of the $lost_events lost events: $(brief "$L_ERR")"
}

# launch update replaces the policy, not the mode: an audit-only sandbox stays audit-only,
# and judges by the new policy (what it allows is logged allow, the rest would_deny).
test_learn_audit_only_survives_update() {
	local p new i

	p=$(policy start "$LEARN_POLICY")
	new=$(policy new '{"name": "new", "allow": [{"cidr": "127.0.9.3", "ports": [9000]}]}')
	# shellcheck disable=SC2016
	launch_bg --audit-only --policy "$p" -- /bin/sh -c '
		while [ ! -e "$1/go" ]; do sleep 0.01; done
		"$0" tcp 127.0.9.3 9000; "$0" tcp 127.0.9.4 9000' "$IT_PROBE" "$T_DIR"
	for ((i = 0; i < 500; i++)); do
		[ -S "/run/launch/$L_NAME.ctl" ] && break
		sleep 0.02
	done
	"$IT_LAUNCH" update "$L_NAME" --policy "$new" >"$T_DIR/update.out" 2>&1 ||
		fail "launch update failed: $(brief "$(cat "$T_DIR/update.out")")"
	: >"$T_DIR/go"
	launch_bg_wait 10 || return 1
	expect_rc "the job" 0 || return 1
	expect_eq "both connections went through" "$(printf 'OK\nOK')" "$L_OUT" || return 1
	expect_audit 1 "$L_AUDIT" event=policy_update || return 1
	expect_audit 1 "$L_AUDIT" event=allow op=connect dst_ip=127.0.9.3 dst_port=9000 || return 1
	expect_audit 1 "$L_AUDIT" event=would_deny op=connect dst_ip=127.0.9.4 dst_port=9000 ||
		return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
}
