#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernel suite: /init of the guest tests/kernels/run boots (busybox sh, as PID 1). What
# differs between kernels: the programs load and judge every send path, the DNS allowlist,
# exact audit counts under a flood, the unix policy with or without the AF_UNIX hooks, a
# SIGKILLed launcher, a limit, and the features line with its warnings. Prints PASS/FAIL
# lines and "launch-kernel: N passed, N failed", then powers the guest off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo # past the firmware's last line on the console
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /sys/fs/cgroup /sys/fs/bpf /dev/shm /dev/pts
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# As systemd does: the controllers launch's limits need, delegated below the root.
echo "+pids +memory +cpu" >/sys/fs/cgroup/cgroup.subtree_control
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /dev/shm
mkdir -p /var/log/k
chmod 1777 /tmp
ip link set lo up

if grep -q 'launch.mode=probe' /proc/cmdline; then
	echo "launch-kernel: probe ok"
	poweroff -f
fi

P=/k/probe
PASS=0
FAIL=0
N=0
KERNEL=$(uname -r)
# The jobs' working folder, which they (as nobody) may write: what they leave is read here.
mkdir -p /w && chmod 0777 /w && cd /w || exit 1

pass() {
	echo "PASS $1"
	PASS=$((PASS + 1))
}

fail() {
	echo "FAIL $1: $2"
	FAIL=$((FAIL + 1))
}

# policy NAME JSON: the file's path.
policy() {
	printf '%s\n' "$2" >"/k/$1.json"
	echo "/k/$1.json"
}

# run ARGS...: launch with a log of its own (LOG); RC, OUT and ERR after.
run() {
	N=$((N + 1))
	LOG=/var/log/k/audit$N.jsonl
	timeout -s KILL 60 launch --audit-log "$LOG" "$@" >/tmp/out 2>/tmp/err </dev/null
	RC=$?
	OUT=$(cat /tmp/out)
	ERR=$(cat /tmp/err)
}

# count FILE PATTERN...: lines matching every pattern.
count() {
	f=$1
	shift
	c=$(cat "$f")
	for pat; do
		c=$(printf '%s\n' "$c" | grep -F -- "$pat")
	done
	if [ -z "$c" ]; then
		echo 0
	else
		printf '%s\n' "$c" | wc -l
	fi
}

# oneline TEXT: its lines joined by spaces.
oneline() {
	printf '%s' "$1" | tr '\n' ' '
}

# field FILE EVENT KEY: KEY's number in the first EVENT line.
field() {
	grep -F "\"event\":\"$2\"" "$1" | head -1 | sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
}

NONE=$(policy none '{"name": "none", "allow": []}')
ALLOW=$(policy allow '{"name": "allow", "allow": [{"cidr": "127.0.0.3", "ports": [9]}]}')

# The programs load and the job runs; the features line names this kernel.
run --policy "$NONE" -- /bin/true
if [ "$RC" = 0 ]; then pass start; else fail start "exit $RC: $ERR"; fi
FEATURES=$(grep -o '"features":{[^}]*}' "$LOG" | head -1)
echo "  $FEATURES"
case $FEATURES in
*"\"kernel\":\"$KERNEL\""*) pass features_line ;;
*) fail features_line "no features naming $KERNEL in sandbox_start: $(head -c 300 "$LOG")" ;;
esac
# Weaker than the policy could ask for: on stderr as well.
case $FEATURES in
*'"unix_connect":"bpf"'*)
	if [ -z "$ERR" ]; then pass degraded_quiet; else fail degraded_quiet "stderr: $ERR"; fi ;;
*)
	case $ERR in
	*warning*) pass degraded_warned ;;
	*) fail degraded_warned "unix_connect is not bpf, and stderr says nothing" ;;
	esac ;;
esac

# Each send path, shown to work outside first (ECONNREFUSED or OK: the packet went).
for spec in "tcp 127.0.0.2 9" "udp 127.0.0.2 9" "udpconn 127.0.0.2 9" "udp-sendmsg 127.0.0.2 9" \
	"udp-sendmmsg 127.0.0.2 9" "tcp-fastopen 127.0.0.2 9" "tcp ::1 9" "udp ::1 9"; do
	name=$(echo "$spec" | cut -d' ' -f1,2 | tr ' :.' '___')
	# shellcheck disable=SC2086
	outside=$($P $spec 2>&1)
	case $outside in
	OK | ECONNREFUSED) ;;
	*) fail "send_$name" "outside: $outside"; continue ;;
	esac
	# shellcheck disable=SC2086
	run --policy "$NONE" -- $P $spec
	if [ "$OUT" = EPERM ] && [ "$(count "$LOG" '"event":"deny"')" -ge 1 ]; then
		pass "send_$name"
	else
		fail "send_$name" "inside: '$OUT' (outside $outside), rc $RC, $(count "$LOG" '"event":"deny"') deny lines"
	fi
done
run --policy "$ALLOW" -- $P tcp 127.0.0.3 9
if [ "$OUT" = ECONNREFUSED ]; then pass send_allowed; else fail send_allowed "'$OUT': $ERR"; fi

# The packet backstop (cgroup_skb): an IPv4 packet with options is dropped and logged, naming
# the process whose socket sent it; a peer refused at the job's listener names the server.
ALLOW8=$(policy allow8 '{"name": "allow8", "allow": [{"cidr": "127.0.0.1", "ports": [8], "protocol": "udp"}]}')
run --policy "$ALLOW8" -- $P retopts udp 127.0.0.1 8 rr
if [ "$OUT" = EPERM ] && [ "$(count "$LOG" '"op":"packet"' '"comm":"probe"')" -ge 1 ]; then
	pass packet_dropped
else
	fail packet_dropped "'$OUT' rc $RC, $(count "$LOG" '"op":"packet"') packet lines: $ERR"
fi
# No "listen" section: the job may listen, and only the policy's addresses may connect to it.
LISTENP=$(policy listen '{"name": "listen", "allow": [{"cidr": "127.0.0.1", "ports": [8]}]}')
rm -f /w/ready
timeout -s KILL 60 launch --audit-log /var/log/k/listen.jsonl --policy "$LISTENP" -- \
	$P serve 127.0.0.1 9110 /w/ready >/tmp/serve.out 2>/tmp/serve.err &
spid=$!
i=0
while [ ! -s /w/ready ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
peer=$($P fetch 127.0.0.1 9110 2>&1)
wait "$spid"
if [ "$(count /var/log/k/listen.jsonl '"op":"listen"' '"comm":"probe"' '"reason":"peer"')" -ge 1 ]; then
	pass peer_refused
else
	fail peer_refused "peer got '$peer'; server: $(cat /tmp/serve.out /tmp/serve.err)"
fi

# The DNS allowlist: an allowed name opens its address, another is refused and logged.
dnsmasq --port=5354 --listen-address=127.0.0.53 --bind-interfaces --no-resolv --no-hosts \
	--address=/ok.test/127.0.0.7 --address=/evil.test/127.0.0.8 --pid-file=/tmp/dnsmasq.pid \
	--user=root 2>/tmp/dnsmasq.err || echo "  dnsmasq: $(cat /tmp/dnsmasq.err)"
DNSP=$(policy dns '{"name": "dns", "allow": [{"host": "ok.test", "ports": [9]}]}')
run --resolver 127.0.0.53:5354 --policy "$DNSP" -- /bin/sh -c \
	'nslookup ok.test 127.0.0.53 2>&1 | grep -q "127\.0\.0\.7" && echo ok-resolved
	nslookup evil.test 127.0.0.53 2>&1 | grep -q "127\.0\.0\.8" && echo evil-resolved
	/k/probe tcp 127.0.0.7 9; /k/probe tcp 127.0.0.8 9'
if [ "$(oneline "$OUT")" = "ok-resolved ECONNREFUSED EPERM" ] &&
	[ "$(count "$LOG" '"event":"deny"' '"op":"dns"' '"qname":"evil.test"')" -ge 1 ]; then
	pass dns_allowlist
else
	fail dns_allowlist "job: $(oneline "$OUT"); rc $RC; $ERR"
fi
kill "$(cat /tmp/dnsmasq.pid)" 2>/dev/null

# Exact counts under a flood: every refusal is a deny line or counted lost or unwritten.
run --policy "$NONE" -- /k/flood udp 127.0.0.9 9 3000
denied=$(field "$LOG" sandbox_exit denied)
lost=$(field "$LOG" sandbox_exit lost)
unwritten=$(field "$LOG" sandbox_exit unwritten)
lines=$(count "$LOG" '"event":"deny"')
if [ "${denied:-x}" = 3000 ] && [ $((lines + ${lost:-0} + ${unwritten:-0})) = 3000 ]; then
	pass audit_flood_exact
else
	fail audit_flood_exact "denied ${denied:-none}, deny lines $lines, lost ${lost:-none}, unwritten ${unwritten:-none}"
fi

# The unix policy: enforced by the hooks where the kernel has them, else refused outright
# unless --allow-degraded, and then the job makes no AF_UNIX socket at all.
# (Under its private /tmp the job's own sockets are always reachable: the paths are in /run.)
UNIXP=$(policy unix '{"name": "unix", "allow": [], "unix": ["/run/ok.sock"]}')
case $FEATURES in
*'"unix_connect":"bpf"'*)
	run --policy "$UNIXP" -- /bin/sh -c '/k/probe unix /run/ok.sock; /k/probe unix /run/no.sock'
	if [ "$(oneline "$OUT")" = "ENOENT EPERM" ]; then pass unix_policy; else fail unix_policy "'$(oneline "$OUT")' rc $RC $ERR"; fi ;;
*)
	run --policy "$UNIXP" -- /bin/true
	case "$RC $ERR" in
	"125 "*6.7*) pass unix_policy_refused ;;
	*) fail unix_policy_refused "rc $RC: $ERR" ;;
	esac
	run --allow-degraded --policy "$UNIXP" -- /k/probe unix /run/ok.sock
	if [ "$RC" = 0 ] && [ "$OUT" = EPERM ]; then pass unix_degraded_refuses; else fail unix_degraded_refuses "'$OUT' rc $RC $ERR"; fi ;;
esac

# A SIGKILLed launcher: the job goes with it, the programs refused meanwhile, gc leaves nothing.
N=$((N + 1))
rm -f /w/killed.out /w/killed.pid
timeout -s KILL 60 launch --audit-log /var/log/k/kill.jsonl --name killed --policy "$NONE" -- \
	/bin/sh -c 'echo $$ >killed.pid; sleep 1; /k/probe tcp 127.0.0.2 9 >killed.out; exec sleep 30' \
	>/tmp/kill.out 2>&1 &
lpid=$!
i=0
while [ ! -s /w/killed.out ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 "$lpid"
wait "$lpid" 2>/dev/null
sleep 1
# The job's pid is its namespace's: look for the job by what it runs.
alive=no
for d in /proc/[0-9]*; do
	[ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" = "sleep 30 " ] && alive="yes (${d#/proc/})"
done
t0=$(cut -d' ' -f1 /proc/uptime)
timeout -s KILL 60 launch gc >/tmp/gc.out 2>&1
gcrc=$?
echo "  gc took $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { print b - a }') s"
if [ "$gcrc" != 0 ]; then
	find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d | while read -r d; do
		echo "  cgroup $d: $(oneline "$(cat "$d/cgroup.procs")")"
	done
	for d in /proc/[0-9]*; do
		echo "  ${d#/proc/} $(sed -n 's/^State:\t//p' "$d/status" 2>/dev/null) $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)"
	done | grep -v ' $'
fi
if [ "$(cat /w/killed.out 2>/dev/null)" = EPERM ] && [ "$alive" = no ] && [ "$gcrc" = 0 ] &&
	[ -z "$(find /sys/fs/cgroup -maxdepth 4 -type d -name '*killed*')" ]; then
	pass sigkill_fail_closed
else
	fail sigkill_fail_closed "probe '$(cat /w/killed.out 2>/dev/null)', job alive: $alive, gc $gcrc: $(cat /tmp/gc.out); $(cat /tmp/kill.out)"
fi

# A limit: forks beyond pids_max fail, and the limit line says so.
LIMP=$(policy lim '{"name": "lim", "allow": [], "limits": {"pids_max": 8}}')
run --policy "$LIMP" -- /bin/sh -c 'i=0; while [ $i -lt 16 ]; do sleep 2 & i=$((i + 1)); done; wait'
if [ "$(count "$LOG" '"event":"limit"' '"kind":"pids"')" = 1 ]; then
	pass limit_pids
else
	fail limit_pids "no limit line (rc $RC): $(tail -c 300 "$LOG")"
fi

# A measurement, not a test: the seccomp filter's floor per system call on this kernel.
outside=$(/k/syscall_cost 200000)
run --policy "$NONE" -- /k/syscall_cost 200000
echo "  syscall cost: outside: $outside; inside: $OUT"

echo "launch-kernel: $PASS passed, $FAIL failed"
poweroff -f
