# SPDX-License-Identifier: LGPL-2.1-or-later
# The HTTPS gateway with the providers' real SDKs (issue 28): each example of examples/ (stripe,
# openai, @anthropic-ai/sdk) runs under its policies/PROVIDER-gateway.json with --secret, against
# the stand-in (tests/standin/server.mjs on 127.0.7.2:443, a throwaway CA given as
# --upstream-ca), found by name through a local dnsmasq. The job holds a placeholder: its SDK
# calls succeed, the stand-in gets the real key only from the gateway, and nothing the job can
# read holds the key. What an attacker's code tries at the allowed host (its own key, another
# Host inside the session, a path the policy does not allow, a TLS connection by address) is
# first shown to reach the stand-in without launch, then refused (403, an http line) or
# answered by the gateway. A streamed completion reaches the SDK as the stand-in sends it.

GWSDK_ADDR=127.0.7.2
GWSDK_DNS=127.0.0.53
GWSDK_DNS_PORT=5358
# How the job looks for the key in what it can read (the pattern on stdin): devices, FIFOs
# and sockets skipped (a read would block), and the examples' modules (tens of MB).
GWSDK_GREP=(grep -rlsF -D skip --exclude-dir=node_modules -f -)
# The stand-in's words of a streamed reply, this far apart (server.mjs).
GWSDK_STREAM_MS=200

# The example's copy readable by the job (nobody), with the job's script beside its modules.
gwsdk_example() {
	local src=$IT_ROOT/examples/$1-agent

	GWSDK_DIR=$IT_TMP/examples/$1-agent
	[ -f "$src/node_modules/.package-lock.json" ] ||
		fail "$src/node_modules is not installed: make test runs npm ci there" || return 1
	command -v node >/dev/null || fail "node not found (make deps installs nodejs)" || return 1
	if [ ! -d "$GWSDK_DIR" ]; then
		mkdir -p "$IT_TMP/examples" && chmod 755 "$IT_TMP/examples" &&
			cp -a "$src" "$GWSDK_DIR.$BASHPID" && chmod -R a+rX "$GWSDK_DIR.$BASHPID" &&
			mv -T "$GWSDK_DIR.$BASHPID" "$GWSDK_DIR" || fail "cannot copy $src" || return 1
	fi
	install -m 0644 "$IT_FIX/gateway_sdk_job.mjs" "$GWSDK_DIR/gateway_sdk_job.mjs" ||
		fail "cannot copy the job's script"
}

# The stand-in and dnsmasq. What holds the real key or the stand-in's secrets (its key, its
# log of the credentials it received) is in $GWSDK_PRIV, which only root may enter.
gwsdk_providers() {
	GWSDK_PRIV=$T_DIR/private
	mkdir -m 0700 "$GWSDK_PRIV" || fail "cannot make $GWSDK_PRIV" || return 1
	"$IT_ROOT/tests/standin/make-ca.sh" "$GWSDK_PRIV/ca" >/dev/null ||
		fail "cannot make the test CA" || return 1
	STANDIN_AUTH_LOG=$GWSDK_PRIV/auth.log STANDIN_STREAM_MS=$GWSDK_STREAM_MS node \
		"$IT_ROOT/tests/standin/server.mjs" "$GWSDK_PRIV/ca/server.pem" \
		"$GWSDK_PRIV/ca/server.key" "$GWSDK_ADDR" 443 "$T_DIR/standin.ready" \
		>"$GWSDK_PRIV/standin.log" 2>&1 &
	track_pid $!
	dnsmasq_start "$GWSDK_DNS" "$GWSDK_DNS_PORT" "$T_DIR/dns.log" \
		--address=/stripe.com/"$GWSDK_ADDR" --address=/openai.com/"$GWSDK_ADDR" \
		--address=/anthropic.com/"$GWSDK_ADDR" --address=/attacker.example/"$GWSDK_ADDR" ||
		return 1
	wait_for_file "$T_DIR/standin.ready" 10 ||
		fail "the stand-in did not start: $(brief "$(cat "$GWSDK_PRIV/standin.log")")"
}

# One "decision reason host secret" line per http line of the audit log. The request's host
# is "host" on lines that name the machine "hostname", else "http_host" (the older name).
gwsdk_http_lines() {
	"$IT_PY" -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("event") != "http":
        continue
    host = d.get("host") if "hostname" in d else d.get("http_host", d.get("host"))
    print(d.get("decision"), d.get("reason") or "-", host, d.get("secret") or "-")' "$1"
}

# The value of NAME=... in the job's output.
gwsdk_out() {
	sed -n "s/^$1=//p" "$L_OUT_FILE" | head -n1
}

# The chunks' arrival times (ms, comma-separated) must be spread as the stand-in sent them:
# four words GWSDK_STREAM_MS apart, never all at once at the end.
gwsdk_spread() {
	local times=$1 t prev="" gap min=999999 n=0 first="" last=""

	for t in ${times//,/ }; do
		n=$((n + 1))
		[ -n "$first" ] || first=$t
		last=$t
		if [ -n "$prev" ]; then
			gap=$((t - prev))
			[ "$gap" -ge "$min" ] || min=$gap
		fi
		prev=$t
	done
	echo "stream: $n chunks at $times ms, smallest gap $min ms, spread $((last - first)) ms"
	[ "$n" = 4 ] || fail "the stream came in $n text chunks, expected 4: $times" || return 1
	[ "$min" -ge $((GWSDK_STREAM_MS / 5)) ] ||
		fail "the stream's chunks arrived together (smallest gap $min ms): $times" || return 1
	[ $((last - first)) -ge $((GWSDK_STREAM_MS * 2)) ] ||
		fail "the stream's chunks were not spread out: $times"
}

# gwsdk PROVIDER KEY_VARIABLE AGENT_LINE
gwsdk() {
	local provider=$1 var=$2 line=$3 api=api.$1.com real placeholder got lines allowed sent

	gwsdk_example "$provider" || return 1
	gwsdk_providers || return 1

	# Outside launch, as root, straight to the stand-in's address: the attacker's own key,
	# another Host and the denied path are all served, and its certificate is the test CA's.
	env -C "$GWSDK_DIR" KEY_VAR="$var" "$var=sk_test_outside_only" \
		PROVIDER_ADDR="$GWSDK_ADDR" NODE_EXTRA_CA_CERTS="$GWSDK_PRIV/ca/ca.pem" \
		node gateway_sdk_job.mjs "$provider" outside >"$T_DIR/outside.out" 2>&1
	sed 's/^/outside: /' "$T_DIR/outside.out"
	for got in "attacker=200 -" "host=200 -" "rule=200 -" \
		"tls=launch throwaway CA authorized=true"; do
		grep -qxF "$got" "$T_DIR/outside.out" ||
			fail "outside: expected '$got': $(brief "$(cat "$T_DIR/outside.out")")" || return 1
	done
	grep -q 'attacker_own_key' "$GWSDK_PRIV/auth.log" && grep -q ' attacker.example ' \
		"$GWSDK_PRIV/auth.log" || fail "outside: the stand-in did not get the attempts" ||
		return 1
	: >"$GWSDK_PRIV/auth.log"

	real=sk_live_gwsdk_${provider}_$$_$RANDOM$RANDOM
	printf '%s\n' "$real" >"$GWSDK_PRIV/key.pattern"
	# The job's search for the key (below) finds it, as nobody, in a file that holds it.
	mkdir -p "$T_DIR/decoy" && printf 'x%sx\n' "$real" >"$T_DIR/decoy/f" &&
		got=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "${GWSDK_GREP[@]}" \
			"$T_DIR/decoy" <"$GWSDK_PRIV/key.pattern")
	rm -r "$T_DIR/decoy"
	expect_eq "outside: the search for the key" "$T_DIR/decoy/f" "$got" || return 1
	# The job greps what it can read for the key, given as its stdin (a file only root may
	# open); then the example's agent, then the SDK calls and the attempts.
	# The real key in launch's environment, as a user would have it (the job's is replaced).
	local -x "$var=$real"
	# shellcheck disable=SC2016
	L_STDIN=$GWSDK_PRIV/key.pattern EXAMPLE_ADDRESS=$GWSDK_ADDR KEY_VAR=$var \
		PROVIDER_ADDR=$GWSDK_ADDR launch_job \
		--policy "$IT_ROOT/policies/$provider-gateway.json" \
		--resolver "$GWSDK_DNS:$GWSDK_DNS_PORT" --upstream-ca "$GWSDK_PRIV/ca/ca.pem" \
		--secret "$var" -- /bin/sh -c "GWSDK_GREP='${GWSDK_GREP[*]}'"'
		leaks=$(timeout 20 $GWSDK_GREP /run /tmp /dev/shm /var/tmp /etc . "$1" \
			/proc/[0-9]*/environ /proc/[0-9]*/cmdline)
		echo "grep_rc=$?"
		[ -z "$leaks" ] || printf "leak: %s\n" $leaks
		echo "env=$(printenv "$KEY_VAR")"
		tr "\0" "\n" </proc/$$/environ | sed -n "s/^$KEY_VAR=/environ=/p"
		cd "$1" || exit 1
		"$1/node_modules/.bin/tsx" agent.ts 2>&1 | grep -v ExperimentalWarning |
			sed "s/^/agent: /"
		node gateway_sdk_job.mjs "$2" inside 2>&1' sh "$GWSDK_DIR" "$provider"
	unset "$var"
	expect_rc "the job" 0 || return 1

	# grep: 1 when it read everything and found nothing, 2 when some file was unreadable.
	case $(gwsdk_out grep_rc) in
	1 | 2) ;;
	*) fail "the job's grep for the key did not finish: exit $(gwsdk_out grep_rc)" || return 1 ;;
	esac
	grep '^leak: ' "$L_OUT_FILE" &&
		fail "the job can read the key: $(brief "$(grep '^leak' "$L_OUT_FILE")")" && return 1
	placeholder=$(gwsdk_out env)
	expect_match "the job's $var" '^launch-placeholder-[0-9a-f]{32}$' "$placeholder" ||
		return 1
	expect_eq "/proc/self/environ's $var" "$placeholder" "$(gwsdk_out environ)" || return 1
	grep -qF "agent: $line" "$L_OUT_FILE" ||
		fail "the example's SDK call failed: $(brief "$L_OUT")" || return 1
	grep -q 'went through' "$L_OUT_FILE" &&
		fail "an attempt went through: $(brief "$(grep 'went through' "$L_OUT_FILE")")" &&
		return 1
	[ -n "$(gwsdk_out sdk)" ] || fail "the job's SDK calls failed: $(brief "$L_OUT")" ||
		return 1
	expect_eq "the SDK with the attacker's own key" "403 credential" \
		"$(gwsdk_out sdk_attacker)" || return 1
	expect_eq "the attacker's own key" "403 credential" "$(gwsdk_out attacker)" || return 1
	expect_eq "a Host of another name" "403 host" "$(gwsdk_out host)" || return 1
	expect_eq "a path the policy does not allow" "403 rule" "$(gwsdk_out rule)" || return 1
	expect_eq "a TLS connection to $GWSDK_ADDR" "launch gateway CA authorized=true" \
		"$(gwsdk_out tls)" || return 1
	if [ "$provider" != stripe ]; then
		got=$(gwsdk_out stream)
		expect_eq "the streamed reply" '"Hello from the stand-in."' "${got% *}" || return 1
		gwsdk_spread "${got##* }" || return 1
	fi

	# The stand-in: the real key in every request it received, which the gateway sent (one
	# per allowed http line); never the placeholder, nor any refused request.
	sed 's/^/stand-in: /' "$GWSDK_PRIV/auth.log"
	sent=$(grep -c . "$GWSDK_PRIV/auth.log")
	[ "$(grep -c " authorization=Bearer $real x-api-key=$" "$GWSDK_PRIV/auth.log")" = "$sent" ] ||
		fail "a request reached the stand-in without the real key: $(brief "$(grep -vF "$real" \
			"$GWSDK_PRIV/auth.log")")" || return 1
	grep -q "placeholder\|attacker\|webhook_endpoints\|/gw/" "$GWSDK_PRIV/auth.log" &&
		fail "the stand-in got a refused request or the placeholder" && return 1
	audit_check || return 1
	lines=$(gwsdk_http_lines "$L_AUDIT")
	while read -r got; do echo "http: $got"; done <<<"$lines"
	allowed=$(grep -c "^allow - $api $var$" <<<"$lines")
	[ "$allowed" -ge 1 ] && [ "$allowed" = "$sent" ] ||
		fail "$allowed allowed http lines for $sent requests at the stand-in" || return 1
	for got in "deny credential $api" "deny host" "deny rule $api"; do
		grep -q "^$got" <<<"$lines" || fail "no http line '$got': $(brief "$lines")" || return 1
	done
	[ "$(grep -c '^deny credential' <<<"$lines")" = 2 ] ||
		fail "expected 2 credential refusals: $(brief "$lines")" || return 1

	# The key in no log line, message or file the job could read.
	for got in "$L_AUDIT" "$L_OUT_FILE" "$L_ERR_FILE" "$T_DIR"/*.log /run/launch-gateway/*; do
		[ -f "$got" ] || continue
		grep -qF "$real" "$got" && fail "the secret's value is in $got" && return 1
	done
	return 0
}

test_gateway_sdk_stripe() {
	gwsdk stripe STRIPE_API_KEY 'stripe.customers.create: cus_new'
}

test_gateway_sdk_openai() {
	gwsdk openai OPENAI_API_KEY 'openai.chat.completions.create: Hello from the stand-in.'
}

test_gateway_sdk_anthropic() {
	gwsdk anthropic ANTHROPIC_API_KEY 'anthropic.messages.create: Hello from the stand-in.'
}
