# SPDX-License-Identifier: LGPL-2.1-or-later
# What a user of the command line expects: the job's environment (--clearenv, --setenv,
# --pass-env), one line per refusal (--notify-denials), policies by name, and warnings for
# paths under /tmp, which the job does not see.

listeners tcp:127.0.6.2:8080 tcp:127.0.6.3:8080

CLI_POLICY='{"name": "cli", "allow": [{"cidr": "127.0.6.2", "ports": [8080]}]}'

test_env_options() {
	local p

	p=$(policy cli "$CLI_POLICY")
	export CLI_FOO=foo CLI_BAR=bar
	# Without an option the job has launch's environment.
	launch_job --policy "$p" -- /usr/bin/env
	expect_rc "env" 0 || return 1
	grep -qx CLI_BAR=bar "$L_OUT_FILE" || fail "CLI_BAR missing by default" || return 1
	launch_job --clearenv --setenv A=1 --setenv B=x=y --setenv A=2 --policy "$p" -- /usr/bin/env
	expect_rc "env --clearenv" 0 || return 1
	expect_eq "--clearenv --setenv" "A=2 B=x=y" "$(sort "$L_OUT_FILE" | tr '\n' ' ' | sed 's/ $//')" ||
		return 1
	launch_job --pass-env CLI_FOO --pass-env CLI_UNSET --policy "$p" -- /usr/bin/env
	expect_rc "env --pass-env" 0 || return 1
	expect_eq "--pass-env CLI_FOO" "CLI_FOO=foo" "$L_OUT" || return 1
	launch_job --clearenv --pass-env CLI_FOO --setenv CLI_FOO=over --policy "$p" -- /usr/bin/env
	expect_eq "--setenv over --pass-env" "CLI_FOO=over" "$L_OUT" || return 1
	# With no PATH the command is still found, in /bin:/usr/bin as execvp does.
	launch_job --clearenv --policy "$p" -- env
	expect_rc "env found without PATH" 0 || return 1
	expect_eq "empty environment" "" "$L_OUT" || return 1
	launch_raw --setenv NOVALUE --policy "$p" -- /bin/true
	expect_rc "--setenv NOVALUE" 125 || return 1
	expect_match "message" '^launch: --setenv: "NOVALUE" is not NAME=VALUE' "$L_ERR" || return 1
	launch_raw --pass-env A=B --policy "$p" -- /bin/true
	expect_rc "--pass-env A=B" 125 || return 1
	expect_match "message" '^launch: --pass-env: "A=B"' "$L_ERR"
}

# --audit-sync-fd: a descriptor launch reads and writes, so a socket of the caller's, >= 3.
test_audit_sync_fd_bad() {
	local p

	p=$(policy cli "$CLI_POLICY")
	launch_raw --audit-sync-fd 2 --policy "$p" -- /bin/true
	expect_rc "--audit-sync-fd 2" 125 || return 1
	expect_match "message" '^launch: --audit-sync-fd: "2" is not a descriptor N >= 3' "$L_ERR" ||
		return 1
	launch_raw --audit-sync-fd 9 --policy "$p" -- /bin/true 9</dev/null
	expect_rc "--audit-sync-fd on a file" 125 || return 1
	expect_match "message" 'descriptor 9 is not an open socket' "$L_ERR" || return 1
	launch_raw --audit-sync-fd 9 --policy "$p" -- /bin/true
	expect_rc "--audit-sync-fd closed" 125 || return 1
	expect_match "message" 'descriptor 9 is not an open socket' "$L_ERR"
}

test_notify_denials() {
	local p

	p=$(policy cli "$CLI_POLICY")
	outside "OK tcp 127.0.6.3 8080" || return 1
	launch_job --notify-denials --policy "$p" -- /bin/sh -c \
		'"$0" tcp 127.0.6.2 8080; "$0" tcp 127.0.6.3 8080; getent hosts not-allowed.example' \
		"$IT_PROBE"
	expect_eq "job output" "OK EPERM" "$(head -n2 "$L_OUT_FILE" | tr '\n' ' ' | sed 's/ $//')" ||
		return 1
	grep -qx 'launch: refused connect 127.0.6.3:8080 (policy cli)' "$L_ERR_FILE" ||
		fail "no notice for the refused connect: $(brief "$L_ERR")" || return 1
	grep -qx 'launch: refused dns not-allowed.example (policy cli)' "$L_ERR_FILE" ||
		fail "no notice for the refused look-up: $(brief "$L_ERR")" || return 1
	expect_eq "notices for allowed calls" 0 "$(grep -c '127.0.6.2' "$L_ERR_FILE")" || return 1
	# The notices and the audit log tell the same story.
	expect_audit 1 "$L_AUDIT" event=deny op=connect dst_ip=127.0.6.3 dst_port=8080 || return 1
	# And without the option, nothing on stderr.
	launch_job --policy "$p" -- "$IT_PROBE" tcp 127.0.6.3 8080
	expect_eq "job output" EPERM "$L_OUT" || return 1
	expect_eq "stderr without --notify-denials" 0 "$(grep -c 'refused' "$L_ERR_FILE")"
}

test_policy_by_name() {
	local dest=$T_DIR/dest prefix=/usr/local out

	# make install puts the binary and the policies side by side.
	make -s -C "$IT_ROOT" install DESTDIR="$dest" PREFIX="$prefix" BUILD="$(dirname "$IT_LAUNCH")" \
		>"$T_DIR/install.log" 2>&1 || fail "make install: $(brief "$(cat "$T_DIR/install.log")")" ||
		return 1
	[ -f "$dest$prefix/share/launch/policies/stripe.json" ] ||
		fail "make install did not install policies/" || return 1
	IT_LAUNCH=$dest$prefix/bin/launch launch_raw check --policy demo
	expect_rc "check --policy demo (installed)" 0 || return 1
	expect_match "allowlist" '127\.0\.0\.2' "$L_OUT" || return 1
	IT_LAUNCH=$dest$prefix/bin/launch launch_raw check --policy no-such-policy
	expect_rc "check --policy no-such-policy" 125 || return 1
	expect_match "message" '^launch: --policy: no policy named "no-such-policy" in /etc/launch/policies' \
		"$L_ERR" || return 1
	# /etc/launch/policies comes first: shown in a mount namespace of its own, where /etc is an
	# overlay, so the host's /etc is untouched.
	mkdir -p "$T_DIR/etc-upper" "$T_DIR/etc-work"
	out=$(unshare --mount --propagation private /bin/sh -c '
		mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc-upper,workdir=$1/etc-work" /etc &&
		mkdir -p /etc/launch/policies &&
		printf "%s\n" "{\"name\": \"etc-demo\", \"allow\": [{\"cidr\": \"192.0.2.77\"}]}" \
			>/etc/launch/policies/demo.json &&
		"$2" check --policy demo' sh "$T_DIR" "$dest$prefix/bin/launch" 2>&1)
	echo "$out"
	expect_match "/etc/launch/policies first" '192\.0\.2\.77' "$out" || return 1
	# A path, or a name with .json, is a file as before.
	launch_raw check --policy "$(policy cli "$CLI_POLICY")"
	expect_rc "check --policy FILE" 0
}

test_tmp_warnings() {
	local dir p

	p=$(policy cli "$CLI_POLICY")
	dir=$(mktemp -d /tmp/launch-it.XXXXXX) || fail "mktemp under /tmp" || return 1
	cp "$IT_PROBE" "$dir/probe"
	launch_job --policy "$p" -- "$dir/probe" tcp 127.0.6.2 8080
	rm -rf "$dir"
	expect_rc "a command under /tmp" 127 || return 1
	expect_match "warning" "launch: warning: the command $dir/probe .* is under /tmp, which the job does not see" \
		"$L_ERR" || return 1
	dir=$(mktemp -d /tmp/launch-it.XXXXXX) || fail "mktemp under /tmp" || return 1
	(cd "$dir" && launch_job --policy "$p" -- /bin/true)
	rmdir "$dir"
	grep -q "launch: warning: the working directory $dir is under /tmp" "$T_DIR"/launch*.err ||
		fail "no warning for a working directory under /tmp" || return 1
	# Nothing to warn about elsewhere.
	launch_job --policy "$p" -- /bin/true
	expect_eq "warnings for /bin/true" "" "$L_ERR"
}
