# SPDX-License-Identifier: LGPL-2.1-or-later
# launch run with the HTTPS gateway (docs/gateway.md): an HTTPS stand-in for api.stripe.com
# (127.0.6.2:443, a throwaway CA passed as --upstream-ca) found through a local dnsmasq; the
# job holds only a placeholder, the stand-in gets the real key from the gateway, and what the
# rule refuses (another key, another Host, a denied path) is answered 403 with an http line.

GW_DNS=127.0.0.53
GW_DNS_PORT=5356
GW_ADDR=127.0.6.2
GW_KEY=sk_test_gateway_real_$$
GW_POLICY='{"name": "gw", "allow": [{"host": "api.stripe.com", "ports": [443],
  "http": {"allow": [{"method": "GET", "path": "/v1/customers*"},
                     {"method": "POST", "path": "/v1/customers"}],
           "deny": [{"path": "/v1/customers/cus_secret*"}]}}],
  "secrets": [{"name": "STRIPE_API_KEY", "hosts": ["api.stripe.com"],
               "header": "Authorization", "format": "Bearer {}"}]}'

# The stand-in and dnsmasq; the CA is the gateway's upstream trust, never the job's.
gw_providers() {
	"$IT_ROOT/tests/standin/make-ca.sh" "$T_DIR/ca" || fail "cannot make the test CA" || return 1
	STANDIN_AUTH_LOG=$T_DIR/auth.log node "$IT_ROOT/tests/standin/server.mjs" \
		"$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" \
		"$GW_ADDR" 443 "$T_DIR/standin.ready" >"$T_DIR/standin.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$GW_DNS" "$GW_DNS_PORT" "$T_DIR/dns.log" \
		--address=/stripe.com/"$GW_ADDR" || return 1
	wait_for_file "$T_DIR/standin.ready" 10 ||
		fail "the stand-in did not start: $(brief "$(cat "$T_DIR/standin.log")")"
}

# launch with the gateway's options: the policy, the resolver, the stand-in's CA, the key.
gw_launch() {
	local p

	p=$(policy gw "$GW_POLICY")
	STRIPE_API_KEY=$GW_KEY launch_job --policy "$p" --resolver "$GW_DNS:$GW_DNS_PORT" \
		--upstream-ca "$T_DIR/ca/ca.pem" --secret STRIPE_API_KEY "$@"
}

# The real key in none of: the audit log, launch's stdout and stderr, the CA files.
gw_key_nowhere() {
	local f

	for f in "$L_AUDIT" "$L_OUT_FILE" "$L_ERR_FILE" /run/launch-gateway/*; do
		[ -e "$f" ] || continue
		grep -qF "$GW_KEY" "$f" && fail "the secret's value is in $f" && return 1
	done
	return 0
}

# The job's view: the placeholder in its environment and /proc/self/environ, never the key;
# its call reaches the stand-in with the real key, put in by the gateway.
test_gateway_placeholder() {
	local placeholder nhttp

	gw_providers || return 1
	# The job greps what it can read for the key, given as its stdin (a file only root may
	# open: the job holds the descriptor, not the value in its arguments or environment).
	printf '%s\n' "$GW_KEY" >"$T_DIR/key.pattern"
	chmod 600 "$T_DIR/key.pattern"
	# shellcheck disable=SC2016
	L_STDIN=$T_DIR/key.pattern gw_launch -- /bin/sh -c '
		timeout 20 grep -rlsF -f - /run /tmp /dev/shm /var/tmp /etc \
			/proc/$$/environ /proc/$$/cmdline . | sed "s/^/leak: /"
		echo "env=$STRIPE_API_KEY"; tr "\0" "\n" </proc/$$/environ |
		grep "^STRIPE_API_KEY="; cat "$SSL_CERT_FILE" >/dev/null && echo bundle-readable
		curl -sS -o /dev/null -w "status=%{http_code}\n" \
			-H "Authorization: Bearer $STRIPE_API_KEY" \
			"https://api.stripe.com/v1/customers?limit=1"
		curl -sS -o /dev/null -w "post=%{http_code}\n" \
			-H "Authorization: Bearer $STRIPE_API_KEY" -d "email=a%40example.com&name=A" \
			https://api.stripe.com/v1/customers'
	expect_rc "job" 0 || return 1
	grep -qx post=200 "$L_OUT_FILE" || fail "the job's POST failed: $(brief "$L_OUT")" ||
		return 1
	grep '^leak: ' "$L_OUT_FILE" && fail "the job can read the key: $(grep '^leak' "$L_OUT_FILE")" &&
		return 1
	placeholder=$(sed -n 's/^env=//p' "$L_OUT_FILE")
	expect_match "the job's STRIPE_API_KEY" '^launch-placeholder-[0-9a-f]{32}$' \
		"$placeholder" || return 1
	grep -qx "STRIPE_API_KEY=$placeholder" "$L_OUT_FILE" ||
		fail "/proc/self/environ does not hold the placeholder" || return 1
	grep -qx bundle-readable "$L_OUT_FILE" || fail "the job cannot read its CA bundle" ||
		return 1
	grep -qx status=200 "$L_OUT_FILE" || fail "the job's call failed: $(brief "$L_OUT")" ||
		return 1
	grep -qF "GET api.stripe.com /v1/customers?limit=1 authorization=Bearer $GW_KEY " \
		"$T_DIR/auth.log" ||
		fail "the stand-in did not get the real key: $(brief "$(cat "$T_DIR/auth.log")")" ||
		return 1
	grep -qF "$placeholder" "$T_DIR/auth.log" &&
		fail "the placeholder reached the stand-in" && return 1
	# On http lines "host" is the request's host and "hostname" the machine's.
	expect_audit 1 "$L_AUDIT" event=http method=GET host=api.stripe.com \
		"hostname=$(uname -n)" path=/v1/customers status=200 decision=allow \
		secret=STRIPE_API_KEY reason= || return 1
	nhttp=$(audit_count "$L_AUDIT" event=http)
	expect_eq "http lines" 2 "$nhttp" || return 1
	expect_audit 2 "$L_AUDIT" event=http "hostname=$(uname -n)" http_host! || return 1
	# Every other line keeps the machine's name as "host".
	expect_audit $(($(wc -l <"$L_AUDIT") - nhttp)) "$L_AUDIT" "host=$(uname -n)" || return 1
	gw_key_nowhere
}

# What the rule refuses gets 403 and an http line naming why; the connection stays usable.
test_gateway_refusals() {
	gw_providers || return 1
	# shellcheck disable=SC2016
	gw_launch -- /bin/sh -c '
		curl -sS -o /dev/null -w "attacker=%{http_code}\n" \
			-H "Authorization: Bearer sk_attacker_own" \
			-d "stolen=$STRIPE_API_KEY" https://api.stripe.com/v1/customers
		curl -sS -o /dev/null -w "host=%{http_code}\n" -H "Host: attacker.example" \
			https://api.stripe.com/v1/customers
		curl -sS -o /dev/null -w "rule=%{http_code}\n" \
			https://api.stripe.com/v1/customers/cus_secret1'
	expect_rc "job" 0 || return 1
	expect_eq "the attacker's own key" "attacker=403" "$(grep ^attacker= "$L_OUT_FILE")" ||
		return 1
	expect_eq "a Host of another name" "host=403" "$(grep ^host= "$L_OUT_FILE")" || return 1
	expect_eq "a denied path" "rule=403" "$(grep ^rule= "$L_OUT_FILE")" || return 1
	grep -q 'sk_attacker_own\|attacker.example\|cus_secret' "$T_DIR/auth.log" &&
		fail "a refused request reached the stand-in: $(grep attacker "$T_DIR/auth.log")" &&
		return 1
	expect_audit 1 "$L_AUDIT" event=http decision=deny reason=credential status=403 \
		pid:int || return 1
	expect_audit 1 "$L_AUDIT" event=http decision=deny reason=host host=attacker.example \
		"hostname=$(uname -n)" || return 1
	expect_audit 1 "$L_AUDIT" event=http decision=deny reason=rule \
		path=/v1/customers/cus_secret1 || return 1
	# Counted as refusals in the exit line.
	expect_audit 1 "$L_AUDIT" event=sandbox_exit denied=3 'denied_by_op={"http":3}' || return 1
	gw_key_nowhere
}

# By address, not by name: the connection still reaches the gateway, never the stand-in (the
# job sees the gateway's certificate), and getpeername shows the address the job asked for.
test_gateway_by_address() {
	local issuer_out

	gw_providers || return 1
	# Outside, the stand-in itself answers with the throwaway CA's certificate.
	issuer_out=$(openssl s_client -connect "$GW_ADDR:443" -servername api.stripe.com \
		</dev/null 2>/dev/null | openssl x509 -noout -issuer)
	expect_match "outside: the stand-in's certificate" 'launch throwaway CA' "$issuer_out" ||
		return 1
	gw_launch -- /bin/sh -c "openssl s_client -connect $GW_ADDR:443 -servername api.stripe.com \
		</dev/null 2>/dev/null | openssl x509 -noout -issuer
		python3 -c 'import socket; s = socket.create_connection((\"$GW_ADDR\", 443)); \
print(\"peer=%s:%d\" % s.getpeername())'"
	expect_rc "job" 0 || return 1
	expect_match "inside: not the stand-in's certificate" '(^|'$'\n'')issuer=' "$L_OUT" ||
		return 1
	case $L_OUT in
	*"launch throwaway CA"*) fail "the job reached the stand-in directly: $L_OUT" ;;
	esac
	# The redirected connection shows the address the job asked for, as DNS's does.
	grep -qx "peer=$GW_ADDR:443" "$L_OUT_FILE" ||
		fail "getpeername: $(grep peer= "$L_OUT_FILE")"
}

# An address the DNS proxy opens at run time for the gateway's host (not known at start) goes
# to the gateway too: the host's name now resolves elsewhere, and the job connects there.
test_gateway_dns_address() {
	local late=127.0.6.4 issuer_out

	gw_providers || return 1
	STANDIN_AUTH_LOG=$T_DIR/auth4.log node "$IT_ROOT/tests/standin/server.mjs" \
		"$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" "$late" 443 "$T_DIR/standin4.ready" \
		>"$T_DIR/standin4.log" 2>&1 &
	track_pid $!
	wait_for_file "$T_DIR/standin4.ready" 10 || fail "the second stand-in did not start" ||
		return 1
	printf '%s api.stripe.com\n' "$GW_ADDR" >"$T_DIR/hosts"
	kill "$DNSMASQ_PID"
	wait "$DNSMASQ_PID" 2>/dev/null
	dnsmasq_start "$GW_DNS" "$GW_DNS_PORT" "$T_DIR/dns.log" --addn-hosts="$T_DIR/hosts" \
		--local-ttl=0 || return 1
	issuer_out=$(openssl s_client -connect "$late:443" -servername api.stripe.com \
		</dev/null 2>/dev/null | openssl x509 -noout -issuer)
	expect_match "outside: the second stand-in" 'launch throwaway CA' "$issuer_out" || return 1
	# The value from a file this time (one trailing line break dropped).
	printf '%s\n' "$GW_KEY" >"$T_DIR/key"
	chmod 600 "$T_DIR/key"
	# The job waits for the test to move the name to $late, then looks it up and connects.
	# shellcheck disable=SC2016
	launch_bg --policy "$(policy gw "$GW_POLICY")" --resolver "$GW_DNS:$GW_DNS_PORT" \
		--upstream-ca "$T_DIR/ca/ca.pem" --secret STRIPE_API_KEY=@"$T_DIR/key" -- \
		/bin/sh -c 'while [ ! -e "$0/moved" ]; do sleep 0.05; done
			getent ahostsv4 api.stripe.com | head -1
			curl -sS -o /dev/null -w "status=%{http_code}\n" \
				-H "Authorization: Bearer $STRIPE_API_KEY" \
				https://api.stripe.com/v1/customers
			openssl s_client -connect '"$late"':443 -servername api.stripe.com \
				</dev/null 2>/dev/null | openssl x509 -noout -issuer' "$T_DIR"
	sleep 0.5
	printf '%s api.stripe.com\n' "$late" >"$T_DIR/hosts"
	kill -HUP "$DNSMASQ_PID"
	touch "$T_DIR/moved"
	launch_bg_wait 30 || return 1
	cat "$L_OUT_FILE"
	expect_rc "job" 0 || return 1
	expect_audit 1 "$L_AUDIT" event=http decision=allow secret=STRIPE_API_KEY || return 1
	grep -q "^$late " "$L_OUT_FILE" || fail "the name did not move to $late" || return 1
	grep -qx status=200 "$L_OUT_FILE" || fail "the call failed: $(brief "$L_OUT")" || return 1
	# The gateway resolves the name itself, to $late now: its call, with the file's key, is
	# the one $late saw; a connection of the job's own would have brought the placeholder.
	grep -qF "GET api.stripe.com /v1/customers authorization=Bearer $GW_KEY " \
		"$T_DIR/auth4.log" ||
		fail "$late did not get the gateway's call: $(brief "$(cat "$T_DIR/auth4.log")")" ||
		return 1
	grep -q 'launch-placeholder' "$T_DIR/auth4.log" &&
		fail "the job reached $late directly: $(cat "$T_DIR/auth4.log")" && return 1
	case $(cat "$L_OUT_FILE") in
	*"launch throwaway CA"*) fail "the job saw the stand-in's own certificate at $late" ;;
	esac
}

# Fail closed on what the gateway's options lack.
test_gateway_options() {
	local p

	p=$(policy gw "$GW_POLICY")
	# A secret the policy names, without --secret.
	launch_job --policy "$p" --resolver "$GW_DNS:$GW_DNS_PORT" -- /bin/true
	expect_rc "no --secret" 125 || return 1
	expect_match "no --secret: the message" 'STRIPE_API_KEY' "$L_ERR" || return 1
	# --secret NAME with NAME unset in launch's environment.
	unset STRIPE_API_KEY
	launch_job --policy "$p" --resolver "$GW_DNS:$GW_DNS_PORT" --secret STRIPE_API_KEY -- \
		/bin/true
	expect_rc "unset variable" 125 || return 1
	expect_match "unset variable: the message" 'STRIPE_API_KEY' "$L_ERR" || return 1
	# A --secret no policy names.
	STRIPE_API_KEY=x OTHER_KEY=y launch_job --policy "$p" --secret STRIPE_API_KEY \
		--secret OTHER_KEY -- /bin/true
	expect_rc "unknown --secret" 125 || return 1
	expect_match "unknown --secret: the message" 'OTHER_KEY' "$L_ERR" || return 1
	# An unreadable --upstream-ca.
	launch_job --policy "$p" --upstream-ca "$T_DIR/nonexistent.pem" -- /bin/true
	expect_rc "unreadable --upstream-ca" 125 || return 1
	expect_match "unreadable --upstream-ca: the message" 'nonexistent.pem' "$L_ERR" || return 1
	# A file's value, with a line break inside: refused, the value not printed.
	printf 'sk_a\nInjected: 1\n' >"$T_DIR/key"
	launch_job --policy "$p" --resolver "$GW_DNS:$GW_DNS_PORT" \
		--secret "STRIPE_API_KEY=@$T_DIR/key" -- /bin/true
	expect_rc "a value with a line break" 125 || return 1
	case $L_ERR in
	*Injected*) fail "the value is in the message: $L_ERR" ;;
	esac
}

# Fail closed: a gateway that cannot start, or a CA that cannot be written, is exit 125 with
# nothing left (no_residue checks the cgroups; the CA files are looked for here).
test_gateway_fail_closed() {
	local p rc

	p=$(policy gw "$GW_POLICY")
	# Not a PEM file: the gateway's upstream store cannot be made.
	echo "not a certificate" >"$T_DIR/bad.pem"
	STRIPE_API_KEY=x launch_job --policy "$p" --resolver "$GW_DNS:$GW_DNS_PORT" \
		--upstream-ca "$T_DIR/bad.pem" --secret STRIPE_API_KEY -- /bin/true
	expect_rc "a bad --upstream-ca" 125 || return 1
	expect_match "a bad --upstream-ca: the message" 'bad.pem' "$L_ERR" || return 1
	# The CA's folder read-only (in this test's mount namespace only).
	mkdir -p /run/launch-gateway
	mount -t tmpfs -o ro,size=64k none /run/launch-gateway || fail "cannot mount" || return 1
	STRIPE_API_KEY=x launch_job --policy "$p" --resolver "$GW_DNS:$GW_DNS_PORT" \
		--secret STRIPE_API_KEY -- /bin/true
	rc=$L_RC
	umount /run/launch-gateway
	L_RC=$rc
	expect_rc "an unwritable CA folder" 125 || return 1
	expect_match "an unwritable CA folder: the message" 'CA' "$L_ERR" || return 1
	[ -z "$(find /run/launch-gateway -name "$L_NAME.*" 2>/dev/null)" ] ||
		fail "CA files left: $(ls /run/launch-gateway)"
}

# The sandbox's control socket, there once the job is confined (10 s at most).
gw_wait_ctl() {
	local i

	for ((i = 0; i < 500; i++)); do
		[ -S "/run/launch/$L_NAME.ctl" ] && return 0
		sleep 0.02
	done
	return 1
}

# launch update may not change what the gateway judges by, nor bring "http" rules to a
# sandbox without a gateway: both are refused, the old policy stays.
test_gateway_update() {
	local gw plain rc

	gw=$(policy gw "$GW_POLICY")
	plain=$(policy plain '{"name": "plain", "allow": [{"cidr": "127.0.6.9", "ports": [443]}]}')
	# shellcheck disable=SC2016
	STRIPE_API_KEY=x launch_bg --policy "$gw" --resolver "$GW_DNS:$GW_DNS_PORT" \
		--secret STRIPE_API_KEY -- /bin/sh -c \
		'while [ ! -e "$0/stop" ]; do sleep 0.05; done' "$T_DIR"
	gw_wait_ctl || fail "the job did not start" || return 1
	"$IT_LAUNCH" update "$L_NAME" --policy "$plain" >"$T_DIR/update.out" 2>&1
	rc=$?
	touch "$T_DIR/stop"
	launch_bg_wait 10 || return 1
	[ "$rc" != 0 ] || fail "launch update of a gateway's sandbox succeeded" || return 1
	grep -q 'gateway' "$T_DIR/update.out" ||
		fail "launch update: $(brief "$(cat "$T_DIR/update.out")")" || return 1
	expect_audit 0 "$L_AUDIT" event=policy_update || return 1
	# A sandbox without a gateway is refused a policy with "http".
	rm -f "$T_DIR/stop"
	# shellcheck disable=SC2016
	launch_bg --policy "$plain" -- /bin/sh -c \
		'while [ ! -e "$0/stop" ]; do sleep 0.05; done' "$T_DIR"
	gw_wait_ctl || fail "the second job did not start" || return 1
	"$IT_LAUNCH" update "$L_NAME" --policy "$gw" --resolver "$GW_DNS:$GW_DNS_PORT" \
		>"$T_DIR/update2.out" 2>&1
	rc=$?
	touch "$T_DIR/stop"
	launch_bg_wait 10 || return 1
	[ "$rc" != 0 ] || fail "launch update to an http policy succeeded" || return 1
	expect_audit 0 "$L_AUDIT" event=policy_update
}

# The http lines in OCSF and ECS, from a real job: HTTP Activity (4002) and ECS's web access.
test_gateway_audit_formats() {
	local line want me

	me=$(uname -n)

	gw_providers || return 1
	# shellcheck disable=SC2016
	gw_launch --audit-format ocsf -- /bin/sh -c 'curl -sS -o /dev/null \
		-H "Authorization: Bearer sk_attacker_own" https://api.stripe.com/v1/customers'
	expect_rc "job (ocsf)" 0 || return 1
	expect_audit 1 "$L_AUDIT" class_uid=4002 activity_id=3 action_id=2 \
		status_detail=credential || return 1
	# The machine is the device; the request's host is the URL's and the destination's.
	line=$(grep '"class_uid":4002' "$L_AUDIT")
	for want in "\"device\":{\"hostname\":\"$me\"" \
		'"url":{"scheme":"https","hostname":"api.stripe.com"' \
		'"dst_endpoint":{"hostname":"api.stripe.com"}'; do
		grep -qF "$want" <<<"$line" || fail "OCSF http lacks $want: $(brief "$line")" ||
			return 1
	done
	# shellcheck disable=SC2016
	gw_launch --audit-format ecs -- /bin/sh -c 'curl -sS -o /dev/null \
		-H "Authorization: Bearer $STRIPE_API_KEY" https://api.stripe.com/v1/customers'
	expect_rc "job (ecs)" 0 || return 1
	grep -q '"category":\["web"\],"type":\["access"\],"outcome":"success"' "$L_AUDIT" ||
		fail "no ECS web access line: $(brief "$(cat "$L_AUDIT")")" || return 1
	grep -q '"http":{"request":{"method":"GET"' "$L_AUDIT" ||
		fail "no ECS http fields: $(brief "$(cat "$L_AUDIT")")" || return 1
	line=$(grep '"category":\["web"\]' "$L_AUDIT")
	for want in "\"host\":{\"hostname\":\"$me\",\"name\":\"$me\"}" \
		'"url":{"scheme":"https","domain":"api.stripe.com"'; do
		grep -qF "$want" <<<"$line" || fail "ECS http lacks $want: $(brief "$line")" ||
			return 1
	done
	gw_key_nowhere
}

# IPv6: a connection to the host's IPv6 address goes to the gateway's ::1 listener.
test_gateway_ipv6_redirect() {
	local v6=2001:db8::2

	"$IT_ROOT/tests/standin/make-ca.sh" "$T_DIR/ca" || fail "cannot make the test CA" || return 1
	STANDIN_AUTH_LOG=$T_DIR/auth.log node "$IT_ROOT/tests/standin/server.mjs" \
		"$T_DIR/ca/server.pem" "$T_DIR/ca/server.key" "$v6" 443 "$T_DIR/standin.ready" \
		>"$T_DIR/standin.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$GW_DNS" "$GW_DNS_PORT" "$T_DIR/dns.log" \
		--address=/stripe.com/"$v6" || return 1
	wait_for_file "$T_DIR/standin.ready" 10 || fail "the stand-in did not start" || return 1
	# Outside, the address is the stand-in's own.
	curl -sS -o /dev/null --cacert "$T_DIR/ca/ca.pem" --resolve "api.stripe.com:443:[$v6]" \
		https://api.stripe.com/v1/customers || fail "the stand-in is not reachable at $v6" ||
		return 1
	grep -q "authorization= " "$T_DIR/auth.log" || fail "the direct call did not arrive" ||
		return 1
	: >"$T_DIR/auth.log"
	# shellcheck disable=SC2016
	gw_launch -- /bin/sh -c 'curl -6 -sS -o /dev/null -w "status=%{http_code}\n" \
		-H "Authorization: Bearer $STRIPE_API_KEY" https://api.stripe.com/v1/customers'
	expect_rc "job" 0 || return 1
	grep -qx status=200 "$L_OUT_FILE" || fail "the call failed: $(brief "$L_OUT")" || return 1
	expect_audit 1 "$L_AUDIT" event=http decision=allow secret=STRIPE_API_KEY || return 1
	grep -qF "authorization=Bearer $GW_KEY " "$T_DIR/auth.log" ||
		fail "the stand-in did not get the real key: $(brief "$(cat "$T_DIR/auth.log")")" ||
		return 1
	grep -q launch-placeholder "$T_DIR/auth.log" && fail "the job reached $v6 directly" &&
		return 1
	return 0
}

# The query is left out of http lines (it may hold personal data) unless --audit-http-query.
test_gateway_audit_query() {
	gw_providers || return 1
	# shellcheck disable=SC2016
	gw_launch --audit-http-query -- /bin/sh -c 'curl -sS -o /dev/null \
		-H "Authorization: Bearer $STRIPE_API_KEY" \
		"https://api.stripe.com/v1/customers?email=ada%40example.com"'
	expect_rc "job" 0 || return 1
	expect_audit 1 "$L_AUDIT" event=http 'path=/v1/customers?email=ada%40example.com'
}

# A process outside the sandbox that learns the gateway's port and the placeholder (from a
# command line or an environment it can read) gets no secret put into its requests: the
# gateway closes a connection whose other end no process of the sandbox holds. The job's own
# request on the same port is served, before and after.
test_gateway_outsider() {
	local placeholder port out

	gw_providers || return 1
	# shellcheck disable=SC2016
	STRIPE_API_KEY=$GW_KEY launch_bg --policy "$(policy gw "$GW_POLICY")" \
		--resolver "$GW_DNS:$GW_DNS_PORT" --upstream-ca "$T_DIR/ca/ca.pem" \
		--secret STRIPE_API_KEY -- /bin/sh -c '
		curl -sS -o /dev/null -w "inside=%{http_code}\n" \
			-H "Authorization: Bearer $STRIPE_API_KEY" \
			"https://api.stripe.com/v1/customers?limit=1"
		echo "ca=$NODE_EXTRA_CA_CERTS"; echo "placeholder=$STRIPE_API_KEY"; sleep 4'
	for _ in $(seq 150); do
		grep -q '^placeholder=' "$L_OUT_FILE" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^placeholder=' "$L_OUT_FILE" ||
		fail "the job did not start: $(cat "$L_ERR_FILE")" || return 1
	placeholder=$(sed -n 's/^placeholder=//p' "$L_OUT_FILE")
	# The gateway's IPv4 port: one of launch's own TCP listeners on 127.0.0.1 (the DNS proxy
	# has another), the one that answers TLS; the gateway's CA, which the job trusts, so that
	# the outsider's TLS would verify.
	for port in $(ss -Hltnp 2>/dev/null | awk -v pid="pid=$L_PID," \
		'index($0, pid) && $4 ~ /^127\.0\.0\.1:/ { sub(/.*:/, "", $4); print $4 }'); do
		out=$("$IT_PY" "$IT_HELPERS/../fixtures/gw_client.py" \
			"$(sed -n 's/^ca=//p' "$L_OUT_FILE")" 127.0.0.1 "$port" api.stripe.com \
			"GET /v1/customers?limit=2|Authorization: Bearer $placeholder" 2>&1)
		echo "outsider at 127.0.0.1:$port: $(brief "$out")"
	done
	launch_bg_wait 20 || return 1
	grep -qx "inside=200" "$L_OUT_FILE" || fail "the job's own call failed: $(cat "$L_OUT_FILE")" ||
		return 1
	grep -q '^status 200' <<<"$out" && fail "the outsider was served: $out" && return 1
	grep -qF "limit=2" "$T_DIR/auth.log" &&
		fail "the outsider's request reached the stand-in: $(cat "$T_DIR/auth.log")" && return 1
	gw_key_nowhere
}
