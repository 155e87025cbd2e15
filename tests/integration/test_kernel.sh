# SPDX-License-Identifier: LGPL-2.1-or-later
# What launch does with the kernel it finds, decided by probing: sandbox_start's "features",
# and a kernel without the AF_UNIX cgroup hooks (before 6.7), played here by a preload that
# makes launch's probe of them fail (tests/helpers/preload/no_unix_hooks.c): the job then
# makes no AF_UNIX socket, a policy that allows AF_UNIX paths starts only with
# --allow-degraded, and each refusal is logged. tests/kernels runs the same on real 6.1.

KERNEL_POLICY='{"name": "kernel", "allow": []}'

# features.KEY of the sandbox_start line of an audit log.
k_feature() {
	"$IT_PY" -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "sandbox_start":
        print(e.get("features", {}).get(sys.argv[2], "MISSING"))
        break' "$1" "$2"
}

# A launch that probes no AF_UNIX hooks, as on Linux 6.1.
k_wrapped() {
	printf '#!/bin/sh\nexec env LD_PRELOAD="%s" "%s" "$@"\n' "$IT_HELPERS/no_unix_hooks.so" \
		"$IT_LAUNCH" >"$T_DIR/launch-6.1"
	chmod 755 "$T_DIR/launch-6.1"
}

test_kernel_features_line() {
	local p k_abi

	p=$(policy kernel "$KERNEL_POLICY")
	launch_job --policy "$p" -- /bin/true
	expect_rc "a job" 0 || return 1
	expect_eq "features.unix_connect" bpf "$(k_feature "$L_AUDIT" unix_connect)" || return 1
	expect_eq "features.kernel" "$(uname -r)" "$(k_feature "$L_AUDIT" kernel)" || return 1
	k_abi=$(k_feature "$L_AUDIT" landlock_abi)
	[ "$k_abi" -ge 1 ] 2>/dev/null || fail "features.landlock_abi is $k_abi on a Landlock kernel"
}

test_kernel_no_unix_hooks() {
	local d=$T_DIR/s p pu pid

	mkdir -p "$d"
	"$IT_PY" "$IT_FIX/unix_listen.py" "$d" "stream:$d/other.sock" 2>"$T_DIR/unix_listen.err" &
	pid=$!
	track_pid "$pid"
	wait_for_file "$d/ready" 10 || fail "unix listener did not start" || return 1
	p=$(policy kernel "$KERNEL_POLICY")
	# Outside, and inside on this kernel: the socket is made, the hook refuses the connect.
	outside "OK socket unix stream 0" "OK unix $d/other.sock" || return 1
	inside --policy "$p" -- "OK socket unix stream 0" "EPERM unix $d/other.sock" || return 1
	expect_eq "features.unix_connect here" bpf "$(k_feature "$L_AUDIT" unix_connect)" || return 1

	k_wrapped
	IT_LAUNCH=$T_DIR/launch-6.1 inside --policy "$p" -- "EPERM socket unix stream 0" \
		"EPERM socket unix dgram 0" "EPERM unix $d/other.sock" "OK socketpair unix stream 0" \
		"OK socket inet stream tcp" || return 1
	expect_match "the warning" 'no AF_UNIX cgroup hooks.*no AF_UNIX socket' "$L_ERR" || return 1
	expect_eq "features.unix_connect" refused "$(k_feature "$L_AUDIT" unix_connect)" || return 1
	audit_check || return 1
	expect_audit 3 "$L_AUDIT" event=deny op=socket family=unix || return 1

	# A policy that allows an AF_UNIX path needs the hooks: 125 unless --allow-degraded.
	pu=$(policy kernel_unix "{\"name\": \"kernel_unix\", \"allow\": [], \"unix\": [\"$d/other.sock\"]}")
	IT_LAUNCH=$T_DIR/launch-6.1 launch_job --policy "$pu" -- /bin/true
	expect_rc "a unix policy without the hooks" 125 || return 1
	expect_match "its message" \
		'^launch: a policy allows AF_UNIX paths, and this kernel \(Linux [^)]*\) has no AF_UNIX cgroup hooks .*Linux 6\.7.*--allow-degraded' \
		"$L_ERR" || return 1
	[ ! -e "$IT_CG2/launch/$L_NAME" ] || fail "cgroup $L_NAME left behind" || return 1
	IT_LAUNCH=$T_DIR/launch-6.1 inside --allow-degraded --policy "$pu" -- \
		"EPERM unix $d/other.sock" || return 1
	expect_eq "features.unix_connect degraded" refused "$(k_feature "$L_AUDIT" unix_connect)"
}
