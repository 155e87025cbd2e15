#!/usr/bin/env python3
"""Start-up A/B of launch builds: tests/bench/ab.py ROUNDS LAUNCH_BIN [LAUNCH_BIN ...] (root).

Every round runs bare /bin/true, `unshare --net`, bubblewrap and each launch build once, in
an order shuffled each round (seeded: a rotation would have each command always follow the
same one, and the one after bubblewrap measured slower), inside a network namespace of its
own (the script re-execs itself under `unshare --net`); prints the medians over bare
/bin/true and launch / bwrap, launch / unshare for each build. Each LAUNCH_BIN needs its launch-init beside it.
docs/design.md quotes its runs."""
import os, sys, time, json, random, statistics, subprocess
if os.environ.get("AB_IN_NS") != "1":
    os.execvp("unshare", ["unshare", "--net", "env", "AB_IN_NS=1", sys.executable] + sys.argv)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
if len(sys.argv) < 3:
    sys.exit(__doc__)
rounds = int(sys.argv[1]); bins = sys.argv[2:]
d = "/run/ab-%d" % os.getpid(); os.makedirs(d)
pol = os.path.join(d, "p.json")
json.dump({"name": "one", "allow": [{"cidr": "127.0.0.1", "ports": [443]}]}, open(pol, "w"))
cmds = [("bare", ["/bin/true"]), ("unshare", ["unshare", "--net", "/bin/true"]),
        ("bwrap", ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "/bin/true"])]
for i, b in enumerate(bins):
    cmds.append(("launch%d" % i, [b, "--policy", pol, "--audit-log", "/dev/null", "--", "/bin/true"]))
try:
    devnull = os.open("/dev/null", os.O_RDWR)
    def run(argv):
        t = time.monotonic()
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, st = os.waitpid(pid, 0)
        dt = (time.monotonic() - t) * 1000
        if st != 0: sys.exit("%s: status %d" % (argv, st))
        return dt
    for _, a in cmds[3:]: run(a)  # warm (programs loaded)
    times = {k: [] for k, _ in cmds}
    rng = random.Random(1)
    for r in range(rounds + 3):
        order = cmds[:]
        rng.shuffle(order)
        for k, a in order:
            dt = run(a)
            if r >= 3: times[k].append(dt)
    med = {k: statistics.median(v) for k, v in times.items()}
    bare = med["bare"]
    print("load %s rounds %d" % (open("/proc/loadavg").read().split()[0], rounds))
    for k, _ in cmds:
        print("%-8s median %7.2f ms  over bare %+7.2f ms" % (k, med[k], med[k] - bare))
    ub, uu = med["bwrap"] - bare, med["unshare"] - bare
    for i, b in enumerate(bins):
        o = med["launch%d" % i] - bare
        print("launch%d %s: /bwrap %.2f  /unshare %.2f" % (i, b, o / ub, o / uu))
finally:
    os.unlink(pol)
    os.rmdir(d)
