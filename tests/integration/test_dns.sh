# SPDX-License-Identifier: LGPL-2.1-or-later
# The DNS proxy (docs/dns.md): the job's look-ups, to any address on port 53, are answered by
# launch; allowed names open the addresses of their answer, others never leave the host.
#
# The upstream is a real dnsmasq in the test's network namespace, on 127.0.0.53:5354, with its
# own zone: api.provider.test (a hosts file, changed mid-run), *.cdn.provider.test, and names
# that must never be asked (evil.example, TXT records). Every launch runs with a resolv.conf
# that points at 192.0.2.53 (fixtures/dns/launch-ns): a documentation address that exists
# nowhere, so an answer can only have come from the proxy.

listeners tcp:127.0.3.1:8443 tcp:127.0.3.2:8443 tcp:127.0.3.7:8443 tcp:127.0.3.8:8443 \
	tcp:127.0.3.7:9443 'tcp:[2001:db8::2]:8443' udp:127.0.3.7:8443

DNS_UP_ADDR=127.0.0.53
DNS_UP_PORT=5354
DNS_RESOLVER=$DNS_UP_ADDR:$DNS_UP_PORT
DNS_JOB=$IT_FIX/dns/job.py
export DNS_REAL_LAUNCH=$IT_LAUNCH DNS_RESOLV_CONF=$IT_FIX/dns/resolv.conf DNS_PY=$IT_PY

DNS_POLICY='{"name": "dns", "allow": [
	{"host": "api.provider.test", "ports": [8443]},
	{"host": "*.cdn.provider.test", "ports": [8443]}]}'
DNS_WILD_POLICY='{"name": "wild", "allow": [{"host": "*.cdn.provider.test", "ports": [8443]}]}'

# Starts dnsmasq with api.provider.test at $1 (default 127.0.3.1); sets DNS_UP_PID.
dns_upstream() {
	local i

	printf '%s api.provider.test\n' "${1:-127.0.3.1}" >"$T_DIR/zone.hosts"
	# 40 addresses: more than a 512-byte UDP answer holds.
	for ((i = 1; i <= 40; i++)); do
		printf '127.0.4.%d x.big.provider.test\n' "$i"
	done >"$T_DIR/big.hosts"
	dnsmasq_start "$DNS_UP_ADDR" "$DNS_UP_PORT" "$T_DIR/upstream.log" \
		--addn-hosts="$T_DIR/zone.hosts" --addn-hosts="$T_DIR/big.hosts" --no-negcache \
		--address=/cdn.provider.test/127.0.3.7 --address=/cdn.provider.test/2001:db8::2 \
		--address=/evil.example/127.0.3.9 --address=/missing.provider.test/ \
		--txt-record=api.provider.test,leaked --txt-record=x.cdn.provider.test,leaked || return 1
	DNS_UP_PID=$DNSMASQ_PID
}

# The queries the upstream saw for NAME (any type), e.g. "query[A] x.cdn.provider.test".
upstream_saw() {
	grep -c "query\[[A-Z0-9]*\] $1 from" "$T_DIR/upstream.log"
}

# launch_job through fixtures/dns/launch-ns, with the test's upstream.
dns_launch() {
	IT_LAUNCH=$IT_FIX/dns/launch-ns launch_job --resolver "$DNS_RESOLVER" "$@"
}

# Polls (at most $2 s) until the background launch's output has a line $1.
wait_output() {
	local i

	for ((i = 0; i < $2 * 50; i++)); do
		grep -qx -- "$1" "$L_OUT_FILE" 2>/dev/null && return 0
		sleep 0.02
	done
	fail "the job never printed '$1' (output: $(brief "$(cat "$L_OUT_FILE")"))"
}

# getent, python's getaddrinfo and connect: addresses open only once the job looked them up.
test_dns_resolve_and_connect() {
	local p n7 n6 n8

	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	outside "OK tcp 127.0.3.8 8443" "OK tcp 127.0.3.7 9443" || return 1
	n7=$(received tcp 127.0.3.7 8443)
	n6=$(received tcp 2001:db8::2 8443)
	n8=$(received tcp 127.0.3.8 8443)
	dns_launch --audit-dns-allowed --policy "$p" -- /bin/sh -c '
		"$0" "$1" "tcp 127.0.3.7 8443"
		getent ahostsv4 y.cdn.provider.test | head -n 1
		exec "$0" "$@"' "$IT_PY" "$DNS_JOB" "tcp 127.0.3.7 8443" "gai x.cdn.provider.test 8443" \
		"tcp 127.0.3.8 8443" "tcp 127.0.3.7 9443"
	expect_rc "job" 0 || return 1
	expect_lines "job" "tcp 127.0.3.7 EPERM" \
		"127\.0\.3\.7 +STREAM y\.cdn\.provider\.test" "tcp 127.0.3.7 OK" \
		"gai x.cdn.provider.test (127.0.3.7|2001:db8::2) OK" "tcp 127.0.3.8 EPERM" \
		"tcp 127.0.3.7 EPERM" || return 1
	# Two connections reached the answered addresses; none reached the unanswered one.
	expect_eq "connections to the answered addresses" $((n7 + n6 + 2)) \
		$(($(received tcp 127.0.3.7 8443) + $(received tcp 2001:db8::2 8443))) || return 1
	expect_received tcp 127.0.3.8 8443 "$n8" || return 1
	[ "$(upstream_saw y.cdn.provider.test)" -ge 1 ] ||
		fail "the upstream never saw y.cdn.provider.test" || return 1

	audit_check || return 1
	# Before the look-up the address had no name; after it, its name is the one the job asked.
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.7 dst_port=8443 \
		dst_name! || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.7 dst_port=9443 \
		dst_name=x.cdn.provider.test || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.8 dst_name! || return 1
	expect_audit 1 "$L_AUDIT" event=dns_allow qname=y.cdn.provider.test qtype=A \
		protocol=udp rcode=NOERROR 'addrs=["127.0.3.7"]' naddrs=1 ttl=0 open_s=65 || return 1
	expect_audit 1 "$L_AUDIT" event=dns_allow qname=x.cdn.provider.test qtype=AAAA \
		'addrs=["2001:db8::2"]' || return 1
}

# Any address on port 53: UDP (connected or not), TCP, IPv6 sockets (mapped and native), dig.
# Each answer must seem to come from the address asked (dig and glibc check it).
test_dns_any_resolver_address() {
	local p

	command -v dig >/dev/null || fail "dig not found (make deps installs bind9-dnsutils)" ||
		return 1
	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	dns_launch --policy "$p" -- /bin/sh -c '
		"$0" "$@"
		dig +short +time=3 +tries=1 @198.51.100.1 x.cdn.provider.test
		dig +short +time=3 +tries=1 +tcp @192.0.2.53 api.provider.test
		dig +short +time=3 +tries=1 @2001:db8::53 AAAA x.cdn.provider.test' "$IT_PY" "$DNS_JOB" \
		"q udp 192.0.2.53 api.provider.test A" \
		"q udpconn 198.51.100.1 x.cdn.provider.test A" \
		"q tcp 192.0.2.53 x.cdn.provider.test AAAA" \
		"q udp6 ::ffff:192.0.2.53 api.provider.test A" \
		"q udp6 2001:db8::53 x.cdn.provider.test AAAA" \
		"q tcp 2001:db8::53 api.provider.test A" \
		"tcp 127.0.3.7 8443" "tcp 2001:db8::2 8443"
	expect_rc "job" 0 || return 1
	expect_lines "job" \
		"q udp api.provider.test A rcode=0 from=192.0.2.53 addrs=127.0.3.1" \
		"q udpconn x.cdn.provider.test A rcode=0 from=198.51.100.1 addrs=127.0.3.7" \
		"q tcp x.cdn.provider.test AAAA rcode=0 from=192.0.2.53 addrs=2001:db8::2" \
		"q udp6 api.provider.test A rcode=0 from=::ffff:192.0.2.53 addrs=127.0.3.1" \
		"q udp6 x.cdn.provider.test AAAA rcode=0 from=2001:db8::53 addrs=2001:db8::2" \
		"q tcp api.provider.test A rcode=0 from=2001:db8::53 addrs=127.0.3.1" \
		"tcp 127.0.3.7 OK" "tcp 2001:db8::2 OK" "127.0.3.7" "127.0.3.1" "2001:db8::2" ||
		return 1
	# Every one of them was the proxy's question to the test's upstream.
	[ "$(upstream_saw x.cdn.provider.test)" -ge 5 ] ||
		fail "the upstream saw x.cdn.provider.test $(upstream_saw x.cdn.provider.test) times" ||
		return 1
	audit_check || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
}

# The upstream moves api.provider.test; the job's next look-up opens the new address.
test_dns_address_change_mid_run() {
	local p n2

	dns_upstream 127.0.3.1 || return 1
	p=$(policy dns "$DNS_POLICY")
	n2=$(received tcp 127.0.3.2 8443)
	# glibc's default, two attempts (the other tests' resolv.conf asks once).
	printf 'nameserver 192.0.2.53\noptions timeout:2\n' >"$T_DIR/resolv.conf"
	DNS_RESOLV_CONF=$T_DIR/resolv.conf IT_LAUNCH=$IT_FIX/dns/launch-ns launch_bg --resolver "$DNS_RESOLVER" --policy "$p" -- \
		"$IT_PY" "$DNS_JOB" "gai api.provider.test 8443" "tcp 127.0.3.2 8443" "mark moved" \
		"wait api.provider.test 127.0.3.2 20" "tcp 127.0.3.2 8443" "tcp 127.0.3.1 8443"
	wait_output moved 20 || return 1
	printf '127.0.3.2 api.provider.test\n' >"$T_DIR/zone.hosts"
	kill -HUP "$DNS_UP_PID"
	launch_bg_wait 30 || return 1
	L_OUT=$(cat "$L_OUT_FILE")
	expect_rc "job" 0 || return 1
	# 127.0.3.1 stays open: it was resolved at launch, and its answer has not expired.
	expect_lines "job" "gai api.provider.test 127.0.3.1 OK" "tcp 127.0.3.2 EPERM" "moved" \
		"wait api.provider.test 127.0.3.2 OK" "tcp 127.0.3.2 OK" "tcp 127.0.3.1 OK" ||
		return 1
	expect_received tcp 127.0.3.2 8443 $((n2 + 1)) || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.2 || return 1
}

# After TTL (0, floored at --dns-min-ttl 1) + --dns-grace 1 the address closes for new
# connections; an established one goes on; a new look-up opens it again.
test_dns_expiry() {
	local p n7

	dns_upstream || return 1
	p=$(policy wild "$DNS_WILD_POLICY")
	n7=$(received tcp 127.0.3.7 8443)
	dns_launch --dns-min-ttl 1 --dns-grace 1 --policy "$p" -- "$IT_PY" "$DNS_JOB" \
		"q udp 192.0.2.53 x.cdn.provider.test A" "tcp 127.0.3.7 8443" \
		"hold 127.0.3.7 8443" "sleep 3.5" "tcp 127.0.3.7 8443" "send" \
		"q udp 192.0.2.53 x.cdn.provider.test A" "tcp 127.0.3.7 8443"
	expect_rc "job" 0 || return 1
	expect_lines "job" "q udp x.cdn.provider.test A rcode=0 from=192.0.2.53 addrs=127.0.3.7" \
		"tcp 127.0.3.7 OK" "hold 127.0.3.7 OK" "tcp 127.0.3.7 EPERM" "send OK" \
		"q udp x.cdn.provider.test A rcode=0 from=192.0.2.53 addrs=127.0.3.7" \
		"tcp 127.0.3.7 OK" || return 1
	# tcp, hold, send (on the held connection), tcp: four hellos.
	expect_received tcp 127.0.3.7 8443 $((n7 + 4)) || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.7 dst_port=8443 \
		dst_name=x.cdn.provider.test || return 1
}

# An answer too big for UDP: the proxy fetches it over TCP and opens every address, the job
# gets TC and asks again over TCP (glibc does it by itself).
test_dns_truncated_answer() {
	local p

	dns_upstream || return 1
	p=$(policy big '{"name": "big", "allow": [{"host": "*.big.provider.test", "ports": [8443]}]}')
	dns_launch --policy "$p" -- /bin/sh -c '
		"$0" "$1" "q udp 192.0.2.53 x.big.provider.test A" "tcp 127.0.4.39 8443" \
			"tcp 127.0.5.1 8443" "q tcp 192.0.2.53 x.big.provider.test A"
		getent ahostsv4 x.big.provider.test | grep -c STREAM' "$IT_PY" "$DNS_JOB"
	expect_rc "job" 0 || return 1
	# Nothing listens on 127.0.4.39:8443: ECONNREFUSED means the sandbox let it through.
	expect_lines "job" "q udp x.big.provider.test A rcode=0 tc from=192.0.2.53 addrs=-" \
		"tcp 127.0.4.39 ECONNREFUSED" "tcp 127.0.5.1 EPERM" \
		"q tcp x.big.provider.test A rcode=0 from=192.0.2.53 addrs=40x" "40" || return 1
	grep -q "query\[A\] x.big.provider.test from $DNS_UP_ADDR" "$T_DIR/upstream.log" ||
		fail "the upstream never saw the look-up" || return 1
}

# A refused look-up the job sends and does not wait for, right before it exits, is judged at
# the teardown at the latest: its deny line comes before the exit line, which counts it and
# stays last. The loop usually reads it before init's exit anyway; the teardown's own read
# makes that certain, and no DNS line may follow the exit line.
test_dns_refused_unanswered_at_exit() {
	local p last

	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	dns_launch --policy "$p" -- "$IT_PY" "$DNS_JOB" "qsend 192.0.2.53 evil.example A"
	expect_rc "job" 0 || return 1
	expect_lines "job" "qsend evil.example sent" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns protocol=udp qname=evil.example qtype=A \
		reason=name || return 1
	last=$(tail -n 1 "$L_AUDIT")
	case $last in
	*'"event":"sandbox_exit"'*) ;;
	*)
		fail "the exit line is not the log's last: $(brief "$last")"
		return 1
		;;
	esac
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1 || return 1
	expect_eq "queries of evil.example the upstream saw" 0 "$(upstream_saw evil.example)"
}

# A name no policy allows is refused by the proxy, audited, and never reaches the upstream.
test_dns_denied_name() {
	local p

	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	dns_launch --policy "$p" -- /bin/sh -c '
		getent hosts evil.example
		echo "getent=$?"
		exec "$0" "$@"' "$IT_PY" "$DNS_JOB" "q udp 192.0.2.53 evil.example A" \
		"q tcp 2001:db8::53 evil.example AAAA" "q udp 192.0.2.53 provider.test A" \
		"q udp 192.0.2.53 cdn.provider.test A" "q udp 192.0.2.53 api.provider.test.evil.example A"
	expect_rc "job" 0 || return 1
	expect_lines "job" "getent=2" \
		"q udp evil.example A rcode=5 from=192.0.2.53 addrs=-" \
		"q tcp evil.example AAAA rcode=5 from=2001:db8::53 addrs=-" \
		"q udp provider.test A rcode=5 from=192.0.2.53 addrs=-" \
		"q udp cdn.provider.test A rcode=5 from=192.0.2.53 addrs=-" \
		"q udp api.provider.test.evil.example A rcode=5 from=192.0.2.53 addrs=-" || return 1
	audit_check || return 1
	# getent asks AAAA then A, the job A over UDP and AAAA over TCP.
	[ "$(audit_count "$L_AUDIT" event=deny op=dns protocol=udp qname=evil.example qtype=A \
		reason=name rcode=REFUSED)" -ge 2 ] ||
		fail "the UDP look-ups of evil.example were not audited" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns protocol=tcp qname=evil.example qtype=AAAA \
		reason=name || return 1
	expect_eq "queries of evil.example the upstream saw" 0 "$(upstream_saw evil.example)" ||
		return 1
	expect_eq "queries of cdn.provider.test the upstream saw" 0 \
		"$(upstream_saw cdn.provider.test)" || return 1

	dns_launch --dns-deny=nxdomain --policy "$p" -- "$IT_PY" "$DNS_JOB" \
		"q udp 192.0.2.53 evil.example A"
	expect_rc "job" 0 || return 1
	expect_lines "job" "q udp evil.example A rcode=3 from=192.0.2.53 addrs=-" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns qname=evil.example rcode=NXDOMAIN || return 1
	expect_eq "queries of evil.example the upstream saw" 0 "$(upstream_saw evil.example)"
}

# TXT (and NULL, ANY, MX) of allowed names: refused, audited, never forwarded.
test_dns_txt_refused() {
	local p

	command -v dig >/dev/null || fail "dig not found (make deps installs bind9-dnsutils)" ||
		return 1
	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	dns_launch --policy "$p" -- /bin/sh -c '
		"$0" "$@"
		dig +time=3 +tries=1 @192.0.2.53 TXT api.provider.test | grep -o "status: [A-Z]*"' \
		"$IT_PY" "$DNS_JOB" "q udp 192.0.2.53 api.provider.test TXT" \
		"q tcp 192.0.2.53 x.cdn.provider.test TXT" "q udp 192.0.2.53 api.provider.test NULL" \
		"q udp 192.0.2.53 api.provider.test ANY" "q udp 192.0.2.53 x.cdn.provider.test MX"
	expect_rc "job" 0 || return 1
	expect_lines "job" "q udp api.provider.test TXT rcode=5 from=192.0.2.53 addrs=-" \
		"q tcp x.cdn.provider.test TXT rcode=5 from=192.0.2.53 addrs=-" \
		"q udp api.provider.test NULL rcode=5 from=192.0.2.53 addrs=-" \
		"q udp api.provider.test ANY rcode=5 from=192.0.2.53 addrs=-" \
		"q udp x.cdn.provider.test MX rcode=5 from=192.0.2.53 addrs=-" "status: REFUSED" ||
		return 1
	expect_audit 2 "$L_AUDIT" event=deny op=dns qname=api.provider.test qtype=TXT \
		reason=qtype rcode=REFUSED || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns qname=x.cdn.provider.test qtype=TXT \
		protocol=tcp || return 1
	expect_eq "TXT, NULL, ANY or MX queries the upstream saw" 0 \
		"$(grep -c 'query\[\(TXT\|NULL\|ANY\|MX\)\]' "$T_DIR/upstream.log")"
}

# Thousands of random and mangled packets (UDP and TCP, IPv4 and IPv6) from the job: the
# launcher answers or drops each and still serves the valid query that follows.
test_dns_fuzz() {
	local p

	dns_upstream || return 1
	p=$(policy wild "$DNS_WILD_POLICY")
	dns_launch --policy "$p" -- "$IT_PY" "$DNS_JOB" "fuzz 192.0.2.53 3000 1" \
		"fuzz 2001:db8::53 1000 2" "tcp 127.0.3.7 8443"
	expect_rc "job" 0 || return 1
	expect_lines "job" "fuzz sent=3000 answered=[0-9]+ final=rcode=0" \
		"fuzz sent=1000 answered=[0-9]+ final=rcode=0" "tcp 127.0.3.7 OK" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit exit_code=0 || return 1
}

# With the unix-socket doors closed (AF_UNIX filtering), nscd is no way around the proxy:
# glibc tries it, finds no socket there (hidden: ENOENT, no deny line), and falls back to
# DNS, which the proxy answers.
test_dns_nscd_fallback() {
	local p n

	dns_upstream || return 1
	p=$(policy wild "$DNS_WILD_POLICY")
	launch_next_names
	L_OUT_FILE=$T_DIR/nscd.out
	echo "+ nscd-ns $T_DIR nscd.cdn.provider.test launch ... -- getent hosts"
	timeout -k 3 40 "$IT_FIX/dns/nscd-ns" "$T_DIR" nscd.cdn.provider.test "$IT_LAUNCH" \
		--audit-log "$L_AUDIT" --name "$L_NAME" --resolver "$DNS_RESOLVER" --policy "$p" \
		-- getent ahostsv4 nscd.cdn.provider.test >"$L_OUT_FILE" 2>"$T_DIR/nscd.err"
	L_RC=$?
	L_OUT=$(cat "$L_OUT_FILE")
	L_ERR=$(cat "$T_DIR/nscd.err")
	echo "  rc=$L_RC out=$L_OUT err=$L_ERR outside=$(cat "$T_DIR/outside.out" 2>/dev/null)"
	# Outside the sandbox glibc does use the (fake) nscd.
	n=$(grep -c connect "$T_DIR/nscd.log" 2>/dev/null)
	[ "${n:-0}" -ge 1 ] || fail "glibc never tried nscd outside the sandbox" || return 1
	expect_rc "getent in the sandbox" 0 || return 1
	[[ $L_OUT =~ ^127\.0\.3\.7\ +STREAM\ nscd\.cdn\.provider\.test ]] ||
		fail "getent printed '$L_OUT'" || return 1
	expect_eq "nscd connections from the sandbox" "$n" "$(grep -c connect "$T_DIR/nscd.log")" ||
		return 1
	# Hidden, not refused: no deny line (glibc asks it before every look-up).
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	[ "$(upstream_saw nscd.cdn.provider.test)" -ge 1 ] ||
		fail "the look-up did not go through the proxy to the upstream"
}

# A well-behaved job, one look-up of an allowed name and one connection, leaves no deny line.
# Outside (under strace), glibc asks nscd's socket before the look-up, and with several
# answers it connects a UDP socket to each, on the service's port, to sort them by source
# address (RFC 6724). Inside, nscd's socket is hidden (ENOENT, as on a host without nscd),
# and the UDP connects to the proxy's answers, which send nothing, are refused without a line.
test_dns_clean_job_no_deny() {
	local p n7 n6 u7

	command -v strace >/dev/null || fail "strace not found (make deps installs it)" || return 1
	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	# hosts-file.test: 127.0.0.4 and 2001:db8::1 in the test's /etc/hosts.
	strace -f -qq -e trace=connect -o "$T_DIR/strace.out" "$IT_PY" -c \
		'import socket; socket.getaddrinfo("hosts-file.test", 8443, type=socket.SOCK_STREAM)' ||
		fail "getaddrinfo under strace failed outside the sandbox" || return 1
	grep -q '"/var/run/nscd/socket"' "$T_DIR/strace.out" ||
		fail "glibc did not ask nscd's socket outside: $(brief "$(cat "$T_DIR/strace.out")")" ||
		return 1
	grep -q 'htons(8443).*"2001:db8::1"' "$T_DIR/strace.out" ||
		fail "glibc did not connect to its answers to sort them: $(brief "$(cat "$T_DIR/strace.out")")" ||
		return 1
	n7=$(received tcp 127.0.3.7 8443)
	n6=$(received tcp 2001:db8::2 8443)
	# x.cdn.provider.test: 127.0.3.7 and 2001:db8::2, two answers to sort.
	dns_launch --policy "$p" -- "$IT_PY" "$DNS_JOB" "gai x.cdn.provider.test 8443"
	expect_rc "job" 0 || return 1
	expect_lines "job" "gai x.cdn.provider.test (127.0.3.7|2001:db8::2) OK" || return 1
	expect_eq "connections to x.cdn.provider.test" $((n7 + n6 + 1)) \
		$(($(received tcp 127.0.3.7 8443) + $(received tcp 2001:db8::2 8443))) || return 1
	audit_check || return 1
	expect_audit 0 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=0 'denied_by_op={}' || return 1
	[ "$(upstream_saw x.cdn.provider.test)" -ge 1 ] ||
		fail "the look-up did not go through the proxy to the upstream" || return 1

	# What sends is logged: after the same look-up, a UDP datagram to the answered address
	# (sendto) is refused with a line, and a UDP connect there is refused, without one,
	# and sends nothing (its send fails).
	u7=$(received udp 127.0.3.7 8443)
	outside "OK udp 127.0.3.7 8443" "OK udpconn 127.0.3.7 8443" || return 1
	expect_received udp 127.0.3.7 8443 $((u7 + 2)) || return 1
	u7=$((u7 + 2))
	dns_launch --policy "$p" -- /bin/sh -c '"$1" "$2" "gai x.cdn.provider.test 8443"
		"$0" udp 127.0.3.7 8443; "$0" udpconn 127.0.3.7 8443' "$IT_PROBE" "$IT_PY" "$DNS_JOB"
	expect_rc "job" 0 || return 1
	expect_lines "job" "gai x.cdn.provider.test (127.0.3.7|2001:db8::2) OK" EPERM EPERM ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=sendmsg protocol=udp dst_ip=127.0.3.7 \
		dst_port=8443 dst_name=x.cdn.provider.test || return 1
	expect_audit 1 "$L_AUDIT" event=deny || return 1
	expect_received udp 127.0.3.7 8443 "$u7"
}

# glibc asks again after REFUSED: a refused look-up is one deny line, written when its window
# (DNSPROXY_REPEAT_WINDOW_MS, 1 s) closes, even while the job runs on, with the other queries
# counted in "repeats"; a look-up after the window is a line of its own.
test_dns_refused_repeats_one_line() {
	local p i

	dns_upstream || return 1
	p=$(policy dns "$DNS_POLICY")
	# glibc's default, two attempts (the other tests' resolv.conf asks once).
	printf 'nameserver 192.0.2.53\noptions timeout:2\n' >"$T_DIR/resolv.conf"
	DNS_RESOLV_CONF=$T_DIR/resolv.conf IT_LAUNCH=$IT_FIX/dns/launch-ns launch_bg --resolver "$DNS_RESOLVER" --policy "$p" -- \
		/bin/sh -c 'getent ahostsv4 evil.example; echo "getent=$?"; sleep 4
		exec "$0" "$@"' "$IT_PY" "$DNS_JOB" "q udp 192.0.2.53 evil.example A" "sleep 1.5" \
		"q udp 192.0.2.53 evil.example A"
	for ((i = 0; i < 150; i++)); do
		[ "$(audit_count "$L_AUDIT" event=deny op=dns qname=evil.example 2>/dev/null)" = 1 ] &&
			break
		sleep 0.02
	done
	kill -0 "$L_PID" 2>/dev/null ||
		fail "launch ended before the look-up's line was written" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns qname=evil.example || return 1
	launch_bg_wait 20 || return 1
	expect_rc "job" 0 || return 1
	expect_lines "job" "getent=2" "q udp evil.example A rcode=5 from=192.0.2.53 addrs=-" \
		"q udp evil.example A rcode=5 from=192.0.2.53 addrs=-" || return 1
	audit_check || return 1
	# getent's look-up, asked twice by glibc, then the job's two, 1.5 s apart.
	expect_audit 1 "$L_AUDIT" event=deny op=dns qname=evil.example qtype=A reason=name \
		rcode=REFUSED repeats=1 || return 1
	expect_audit 2 "$L_AUDIT" event=deny op=dns qname=evil.example qtype=A repeats=0 ||
		return 1
	expect_audit 3 "$L_AUDIT" event=deny || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=3 'denied_by_op={"dns":3}' || return 1
	expect_eq "queries of evil.example the upstream saw" 0 "$(upstream_saw evil.example)"
}

# --no-dns-proxy: port 53 is an ordinary port again, and wildcards cannot work.
test_dns_no_proxy() {
	local p

	dns_upstream || return 1
	p=$(policy wild "$DNS_WILD_POLICY")
	dns_launch --no-dns-proxy --policy "$p" -- /bin/true
	expect_rc "wildcard without the proxy" 125 || return 1
	[[ $L_ERR == *'*.cdn.provider.test'*wildcard* ]] ||
		fail "stderr does not explain the wildcard: $(brief "$L_ERR")" || return 1
	p=$(policy dns '{"name": "dns", "allow": [{"host": "api.provider.test", "ports": [8443]}]}')
	dns_launch --no-dns-proxy --policy "$p" -- "$IT_PY" "$DNS_JOB" \
		"q udp 192.0.2.53 api.provider.test A" "tcp 127.0.3.1 8443"
	expect_rc "job" 0 || return 1
	expect_lines "job" "q udp api.provider.test A EPERM" "tcp 127.0.3.1 OK" || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=sendmsg dst_ip=192.0.2.53 dst_port=53 \
		protocol=udp || return 1
	# The launch-time address keeps its policy host's name in deny lines.
	dns_launch --no-dns-proxy --policy "$p" -- "$IT_PY" "$DNS_JOB" "tcp 127.0.3.1 9443"
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.1 dst_port=9443 \
		dst_name=api.provider.test
}

# With the proxy, a host that does not resolve at launch is a warning: the job may still look
# it up later. `launch check` shows wildcards as opened by answers.
test_dns_unresolved_host_warns() {
	local p

	dns_upstream || return 1
	p=$(policy late '{"name": "late", "allow": [
		{"host": "missing.provider.test", "ports": [8443]},
		{"host": "*.cdn.provider.test", "ports": [8443]}]}')
	dns_launch --policy "$p" -- /bin/true
	expect_rc "unresolved host with the proxy" 0 || return 1
	[[ $L_ERR == *warning*missing.provider.test* ]] ||
		fail "no warning naming the host: $(brief "$L_ERR")" || return 1
	dns_launch --no-dns-proxy --policy "$p" -- /bin/true
	expect_rc "unresolved host without the proxy" 125 || return 1
	launch_raw check --resolver "$DNS_RESOLVER" --policy "$p"
	expect_rc "launch check" 0 || return 1
	[[ $L_OUT == *'*.cdn.provider.test'*"DNS proxy"* ]] ||
		fail "launch check does not explain the wildcard: $(brief "$L_OUT")"
}

# launch update never judges a call by the new settings with an address that a look-up opened
# under the old policy (with the old name's ports): the proxy closes those before the swap.
# In the sandbox, one thread connects to 127.0.3.8:7443, which only the new policy allows
# (the marker: once it passes, the new settings are in force), then to 127.0.3.7:7443, which
# only the old one allows (x.cdn.provider.test by a wildcard, so opened by the job's look-up
# alone), round after round, with no pause, through the update. No round may pass the old
# address after the marker passed. No listener: a connect the hooks let through is refused by
# the host (ECONNREFUSED), one they refuse fails with EPERM.
test_dns_update_closes_before_swap() {
	local old new i result

	dns_upstream || return 1
	old=$(policy old '{"name": "old", "allow": [{"host": "*.cdn.provider.test", "ports": [7443]}]}')
	new=$(policy new '{"name": "new", "allow": [
		{"host": "*.cdn.provider.test", "ports": [9443]},
		{"cidr": "127.0.3.8", "ports": [7443]}]}')
	outside "ECONNREFUSED tcp 127.0.3.7 7443" "ECONNREFUSED tcp 127.0.3.8 7443" || return 1
	# shellcheck disable=SC2016
	IT_LAUNCH=$IT_FIX/dns/launch-ns launch_bg --resolver "$DNS_RESOLVER" --policy "$old" -- \
		/bin/sh -c '"$1" "$2" "gai x.cdn.provider.test 7443" >"$3/gai.out"
		exec "$0" connect-race 127.0.3.8 7443 127.0.3.7 7443 "$3/go"' \
		"$IT_PROBE" "$IT_PY" "$DNS_JOB" "$T_DIR"
	for ((i = 0; i < 500; i++)); do
		[ -s "$T_DIR/gai.out" ] && [ -S "/run/launch/$L_NAME.ctl" ] && break
		sleep 0.02
	done
	: >"$T_DIR/go"
	sleep 0.05
	"$DNS_REAL_LAUNCH" update "$L_NAME" --policy "$new" >"$T_DIR/update.out" 2>&1 ||
		fail "launch update failed: $(brief "$(cat "$T_DIR/update.out")")"
	launch_bg_wait 30 || return 1
	expect_rc "job" 0 || return 1
	result=$(cat "$L_OUT_FILE")
	echo "  $(cat "$T_DIR/gai.out"); race: $result"
	[[ $result =~ ^new=([0-9]+)\ old_before=([0-9]+)\ mixed=([0-9]+)$ ]] ||
		fail "no race result: $(brief "$result") $(brief "$(cat "$L_ERR_FILE")")" || return 1
	[ "${BASH_REMATCH[2]}" -gt 0 ] ||
		fail "the look-up's address was never reached under the old policy" || return 1
	[ "${BASH_REMATCH[1]}" -gt 0 ] ||
		fail "the new policy's address was never reached after the update" || return 1
	[ "${BASH_REMATCH[3]}" = 0 ] ||
		fail "${BASH_REMATCH[3]} round(s) reached the old policy's DNS-opened address under the new settings" ||
		return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=policy_update
}

# held_run OLD NEW [WAIT]: a job looks up held.cdn.provider.test under policy OLD; while the
# upstream holds the answer (the look-up in flight at the proxy), `launch update` puts NEW in
# force; WAIT seconds later (the proxy sends the query again 1 s after the first) the upstream
# answers, and the job connects to 127.0.3.7:8443. HELD_MAX: how many queries the upstream
# may see, 1 plus the proxy's resend when the update may have ended after it (the resend goes
# out under the old policy then).
held_run() {
	local i held_at upd_ms

	rm -f "$T_DIR/held/held" "$T_DIR/held/release"
	# shellcheck disable=SC2016
	IT_LAUNCH=$IT_FIX/dns/launch-ns launch_bg --resolver 127.0.0.53:5355 --audit-dns-allowed \
		--policy "$1" -- \
		"$IT_PY" "$DNS_JOB" "q udp 192.0.2.53 held.cdn.provider.test A" "tcp 127.0.3.7 8443"
	wait_for_file "$T_DIR/held/held" 10 || fail "the look-up never reached the upstream" ||
		upd_held_stop || return 1
	held_at=$EPOCHREALTIME
	for ((i = 0; i < 500; i++)); do
		[ -S "/run/launch/$L_NAME.ctl" ] && break
		sleep 0.02
	done
	"$DNS_REAL_LAUNCH" update "$L_NAME" --policy "$2" >"$T_DIR/update.out" 2>&1 ||
		fail "launch update failed: $(brief "$(cat "$T_DIR/update.out")")" || upd_held_stop ||
		return 1
	# The resend leaves at most 1 s after the query reached the upstream (held_at, polled at
	# 20 ms): an update done well before that swapped first.
	upd_ms=$(elapsed_ms "$held_at" "$EPOCHREALTIME")
	HELD_MAX=$((upd_ms < 900 ? 1 : 2))
	echo "  update done ${upd_ms} ms after the query reached the upstream: at most $HELD_MAX"
	sleep "${3:-0}"
	: >"$T_DIR/held/release"
	launch_bg_wait 20 || return 1
	expect_rc "job" 0
}

upd_held_stop() {
	: >"$T_DIR/held/release"
	launch_bg_wait 20
	return 1
}

# launch update with a look-up in flight: the old policy sent it upstream, its answer comes
# after the swap. The answer is judged by the policy in force when it arrives: a name the new
# policy refuses gets REFUSED and a deny line, and its address opens for nothing.
test_dns_update_in_flight() {
	local old keep drop

	old=$(policy old '{"name": "old", "allow": [{"host": "*.cdn.provider.test", "ports": [8443]}]}')
	keep=$(policy keep '{"name": "keep", "allow": [
		{"host": "*.cdn.provider.test", "ports": [8443]},
		{"cidr": "127.0.3.8", "ports": [8443]}]}')
	drop=$(policy drop '{"name": "drop", "allow": [{"cidr": "127.0.3.8", "ports": [8443]}]}')
	outside "OK tcp 127.0.3.7 8443" || return 1
	mkdir -p "$T_DIR/held"
	"$IT_PY" "$IT_FIX/dns/held_upstream.py" 127.0.0.53 5355 127.0.3.7 "$T_DIR/held" \
		2>"$T_DIR/held.err" &
	track_pid $!
	wait_for_file "$T_DIR/held/ready" 10 || [ -e "$T_DIR/held/ready" ] ||
		fail "the held upstream did not start: $(brief "$(cat "$T_DIR/held.err")")" ||
		return 1

	# The answer held across an update to a policy that still allows the name: it arrives,
	# and opens its address with the new policy's ports.
	held_run "$old" "$keep" || return 1
	expect_lines "job" "q udp held.cdn.provider.test A rcode=0 from=192.0.2.53 addrs=127.0.3.7" \
		"tcp 127.0.3.7 OK" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=dns_allow qname=held.cdn.provider.test policy=keep ||
		return 1

	# The same across an update to a policy that refuses the name, answered at once (before
	# the proxy's resend): the answer is judged when it arrives, the refusal, not the answer.
	held_run "$old" "$drop" 0 || return 1
	dns_held_refused "$drop" || return 1

	# And answered after the resend's time (1 s): the name is not sent upstream again once
	# the update is done (a resend made before the swap, under the old policy, may be seen).
	held_run "$old" "$drop" 1.5 || return 1
	dns_held_refused "$drop"
}

# dns_held_refused: after held_run to policy drop: the upstream saw no query after the
# update, the job got the refusal and its connect was refused, each logged.
dns_held_refused() {
	local n

	n=$(grep -c . "$T_DIR/held/held")
	echo "  queries of held.cdn.provider.test the upstream saw: $n (at most $HELD_MAX)"
	[ "$n" -ge 1 ] && [ "$n" -le "$HELD_MAX" ] ||
		fail "the upstream saw $n queries of held.cdn.provider.test, expected 1 to $HELD_MAX" ||
		return 1
	expect_lines "job" "q udp held.cdn.provider.test A rcode=5 from=192.0.2.53 addrs=-" \
		"tcp 127.0.3.7 EPERM" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns protocol=udp qname=held.cdn.provider.test \
		qtype=A reason=name rcode=REFUSED policy=drop pid:int || return 1
	expect_audit 0 "$L_AUDIT" event=dns_allow || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.3.7 policy=drop
}

# A look-up the upstream never answers over TCP (its UDP answer truncated, its TCP connection
# silent) ends in SERVFAIL at the proxy's deadline, with a deny line that says why and the
# exit line counting it: no look-up the job made is missing from the log.
test_dns_upstream_tcp_unanswered() {
	local p

	p=$(policy stall '{"name": "stall", "allow": [{"host": "*.cdn.provider.test", "ports": [8443]}]}')
	mkdir -p "$T_DIR/held"
	"$IT_PY" "$IT_FIX/dns/held_upstream.py" 127.0.0.53 5355 127.0.3.7 "$T_DIR/held" \
		2>"$T_DIR/held.err" &
	track_pid $!
	wait_for_file "$T_DIR/held/ready" 10 || [ -e "$T_DIR/held/ready" ] ||
		fail "the upstream did not start: $(brief "$(cat "$T_DIR/held.err")")" || return 1
	IT_LAUNCH=$IT_FIX/dns/launch-ns launch_job --resolver 127.0.0.53:5355 --policy "$p" -- \
		"$IT_PY" "$DNS_JOB" "q udp 192.0.2.53 stall.cdn.provider.test A"
	expect_rc "job" 0 || return 1
	expect_lines "job" "q udp stall.cdn.provider.test A rcode=2 from=192.0.2.53 addrs=-" ||
		return 1
	[ -s "$T_DIR/held/tcp" ] || fail "the proxy never asked the upstream over TCP" || return 1
	audit_check || return 1
	expect_audit 1 "$L_AUDIT" event=deny op=dns protocol=udp qname=stall.cdn.provider.test \
		qtype=A reason=upstream_timeout rcode=SERVFAIL pid:int || return 1
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=1
}
