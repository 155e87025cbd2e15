# SPDX-License-Identifier: LGPL-2.1-or-later
# "host" rules: resolved at launch through the system resolver (/etc/hosts) or --resolver.

listeners tcp:127.0.0.1:9005 tcp:127.0.0.2:9005 tcp:127.0.0.2:8080 tcp:127.0.0.3:8080 \
	tcp:127.0.0.4:8080 tcp:127.0.0.5:8080 'tcp:[2001:db8::1]:8080' 'tcp:[2001:db8::2]:8080'

# Address run put on lo for the DNS server; dnsmasq answers only for our test names.
DNS_ADDR=127.0.0.53
DNS_PORT=5353

# Starts dnsmasq in this netns and waits (bounded) until its UDP socket is bound.
start_dnsmasq() {
	dnsmasq_start "$DNS_ADDR" "$DNS_PORT" "$T_DIR/dnsmasq.log" \
		--address=/api.provider.test/127.0.0.2 --address=/api.provider.test/2001:db8::1 \
		--address=/missing.provider.test/
}

# "localhost" resolves through /etc/hosts (files), never through DNS.
test_host_localhost() {
	local p n1

	p=$(policy lh '{"name": "lh", "allow": [{"host": "localhost", "ports": ["9000-9010"]}]}')
	n1=$(received tcp 127.0.0.1 9005)
	outside "OK tcp 127.0.0.2 9005" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.1 9005" "EPERM tcp 127.0.0.2 9005" || return 1
	expect_received tcp 127.0.0.1 9005 $((n1 + 1)) || return 1
}

# run bind-mounts its own /etc/hosts in the test mount namespace: a name with an IPv4 and an
# IPv6 address, both of which the rule must allow.
test_host_hosts_file() {
	local p

	grep -q 'hosts-file.test' /etc/hosts || fail "/etc/hosts is not the test one" || return 1
	p=$(policy hf '{"name": "hf", "allow": [{"host": "hosts-file.test", "ports": [8080]}]}')
	outside "OK tcp 127.0.0.5 8080" "OK tcp 2001:db8::2 8080" || return 1
	inside --policy "$p" -- "OK tcp 127.0.0.4 8080" "OK tcp 2001:db8::1 8080" \
		"EPERM tcp 127.0.0.5 8080" "EPERM tcp 2001:db8::2 8080" || return 1
}

test_host_resolver() {
	local p

	start_dnsmasq || return 1
	p=$(policy api '{"name": "api", "allow": [{"host": "api.provider.test", "ports": [8080]}]}')
	outside "OK tcp 127.0.0.3 8080" || return 1
	inside --resolver "$DNS_ADDR:$DNS_PORT" --policy "$p" -- "OK tcp 127.0.0.2 8080" \
		"OK tcp 2001:db8::1 8080" "EPERM tcp 127.0.0.3 8080" "EPERM tcp 2001:db8::2 8080" ||
		return 1
	grep -q 'query\[A\] api.provider.test' "$T_DIR/dnsmasq.log" ||
		fail "launch did not query the --resolver for A api.provider.test" || return 1
	grep -q 'query\[AAAA\] api.provider.test' "$T_DIR/dnsmasq.log" ||
		fail "launch did not query the --resolver for AAAA api.provider.test" || return 1

	launch_raw check --policy "$p" --resolver "$DNS_ADDR:$DNS_PORT"
	expect_rc "launch check --resolver" 0 || return 1
	[[ $L_OUT == *127.0.0.2* && $L_OUT == *2001:db8::1* ]] ||
		fail "launch check does not list the resolved addresses: $(brief "$L_OUT")" || return 1
}

# A host that does not resolve is a launch failure naming the host, and nothing runs.
test_host_unresolvable() {
	local p

	start_dnsmasq || return 1
	p=$(policy nx '{"name": "nx", "allow": [
		{"cidr": "127.0.0.2", "ports": [8080]},
		{"host": "missing.provider.test", "ports": [443]}]}')
	# Without the DNS proxy nothing could open the host's addresses later: an error.
	launch_job --no-dns-proxy --resolver "$DNS_ADDR:$DNS_PORT" --policy "$p" -- \
		/bin/touch "$T_DIR/ran"
	expect_rc "unresolvable host" 125 || return 1
	[[ $L_ERR == *missing.provider.test* ]] ||
		fail "stderr does not name the host: $(brief "$L_ERR")" || return 1
	[ ! -e "$T_DIR/ran" ] || fail "the job ran although the policy could not be resolved"
}
