#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make bench-gateway: the HTTPS gateway (build/helpers/gateway_run) against talking to the
same HTTPS stand-in (tests/standin/server.mjs) directly. Run inside a network namespace of its
own (tests/bench/gateway does): everything is on its loopback.

Prints, direct, through the gateway and through its peers (mitmproxy's mitmdump and squid with
ssl-bump, each an explicit proxy with a CA of its own, the client's CONNECT then TLS to it, when
installed; GW_BENCH_PEERS=0 leaves them out): p50/p95 per request on a reused connection and on
a new connection each, requests/s of 4 client processes on keep-alive connections, MB/s of one
large response (curl), and each proxy's RSS idle and with 100 open connections.
"""
import http.client
import multiprocessing
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
HOST = "api.openai.com"
STANDIN = ("127.0.7.2", 443)
N_REUSED = int(os.environ.get("GW_BENCH_REUSED", 2000))
N_NEW = int(os.environ.get("GW_BENCH_NEW", 300))
RPS_SECONDS = float(os.environ.get("GW_BENCH_RPS_S", 3))
LARGE_BYTES = 200 * 1024 * 1024
# GW_BENCH_PEERS=0: direct and the gateway alone (make bench-gateway's quick look).
PEERS = os.environ.get("GW_BENCH_PEERS", "1") != "0"

POLICY = """{ "name": "bench", "allow": [ { "host": "api.openai.com", "ports": [443],
  "http": { "max_body_bytes": 1048576 } } ],
  "secrets": [ { "name": "BENCH_KEY", "hosts": ["api.openai.com"],
                 "header": "Authorization", "format": "Bearer {}" } ] }"""


def wait_for(path, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if os.path.exists(path) and os.path.getsize(path):
            return
        time.sleep(0.02)
    sys.exit(f"bench: {path} never appeared")


def start(work):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run([os.path.join(ROOT, "tests/standin/make-ca.sh"), f"{work}/ca"], check=True)
    with open(f"{work}/hosts", "w") as f:
        f.write(f"{STANDIN[0]} {HOST}\n")
    procs = [subprocess.Popen(["node", os.path.join(ROOT, "tests/standin/server.mjs"),
                               f"{work}/ca/server.pem", f"{work}/ca/server.key", STANDIN[0],
                               str(STANDIN[1]), f"{work}/standin.ready"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    subprocess.run(["dnsmasq", "--conf-file=/dev/null", "--port=5357", "--listen-address=127.0.0.1",
                    "--bind-interfaces", "--no-resolv", "--no-hosts", f"--pid-file={work}/dns.pid",
                    "--user=root", f"--address=/{HOST}/{STANDIN[0]}"], check=True)
    with open(f"{work}/policy.json", "w") as f:
        f.write(POLICY)
    out = open(f"{work}/gw.out", "w")
    gw = subprocess.Popen([os.path.join(BUILD, "helpers/gateway_run"), "--upstream-ca",
                           f"{work}/ca/ca.pem", "--resolver", "127.0.0.1:5357", "--ca-out",
                           f"{work}/gwca.pem", f"{work}/policy.json"], stdout=out,
                          env=dict(os.environ, BENCH_KEY="sk-bench-value"))
    procs.append(gw)
    wait_for(f"{work}/standin.ready")
    deadline = time.time() + 10
    while "ready" not in open(f"{work}/gw.out").read():
        if time.time() > deadline:
            sys.exit("bench: gateway_run did not start")
        time.sleep(0.02)
    lines = open(f"{work}/gw.out").read().split("\n")
    port = int(next(l for l in lines if l.startswith("ports ")).split()[1])
    ph = next(l for l in lines if l.startswith("placeholder ")).split()[2]
    return procs, gw, port, ph


class _conn(http.client.HTTPSConnection):
    """An HTTPS connection to addr that names HOST in its SNI and certificate check; through an
    HTTP proxy's CONNECT when proxy is set (mitmproxy, squid), as their clients reach them."""

    def __init__(self, ctx, addr, proxy=None):
        super().__init__(HOST, addr[1], context=ctx, timeout=10)
        self._addr = addr
        self._proxy = proxy

    def connect(self):
        sock = socket.create_connection(self._proxy or self._addr, timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._proxy:
            sock.sendall(f"CONNECT {HOST}:443 HTTP/1.1\r\nHost: {HOST}:443\r\n\r\n".encode())
            reply = b""
            while b"\r\n\r\n" not in reply:
                chunk = sock.recv(4096)
                if not chunk:
                    sys.exit("bench: the proxy closed the CONNECT")
                reply += chunk
            if not reply.startswith(b"HTTP/1.1 200") and not reply.startswith(b"HTTP/1.0 200"):
                sys.exit(f"bench: CONNECT: {reply[:40]!r}")
        self.sock = self._context.wrap_socket(sock, server_hostname=HOST)


def connect(target):
    return _conn(ssl.create_default_context(cafile=target["ca"]), target["addr"],
                 target.get("proxy"))


def one(conn, headers):
    conn.request("GET", "/gw/echo", headers=headers)
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"bench: status {r.status}")


def reused(target, n):
    conn = connect(target)
    one(conn, target["headers"])
    times = []
    for _ in range(n):
        t = time.perf_counter()
        one(conn, target["headers"])
        times.append((time.perf_counter() - t) * 1000)
    return times


def fresh(target, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        conn = connect(target)
        one(conn, target["headers"])
        times.append((time.perf_counter() - t) * 1000)
        conn.close()
    return times


def rps_worker(args):
    target, seconds = args
    conn = connect(target)
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        one(conn, target["headers"])
        n += 1
    return n


def cpu_s(pid):
    """User and system CPU time of pid and its descendants so far, seconds."""
    total = 0
    for p in tree(pid):
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(f[11]) + int(f[12])
    return total / os.sysconf("SC_CLK_TCK")


def rps(target, pid=None):
    """Requests/s of 4 clients, and the proxy's CPU microseconds per request (pid's): what
    bounds its requests/s once the clients and the stand-in are not on the same two cores."""
    before = cpu_s(pid) if pid else 0
    with multiprocessing.Pool(4) as pool:
        counts = pool.map(rps_worker, [(target, RPS_SECONDS)] * 4)
    cpu_us = (cpu_s(pid) - before) * 1e6 / sum(counts) if pid else 0
    return sum(counts) / RPS_SECONDS, cpu_us


def curl_args(target):
    if target.get("proxy"):
        return ["--proxy", "http://%s:%d" % target["proxy"]]
    return ["--connect-to", "%s:443:%s:%d" % ((HOST,) + target["addr"])]


def large(target, nbytes=LARGE_BYTES, wait=True):
    args = ["curl", "-s", "--cacert", target["ca"]] + curl_args(target) + [
        "-o", "/dev/null", "-w", "%{speed_download}", f"https://{HOST}/gw/large?bytes={nbytes}"]
    if not wait:
        return subprocess.Popen(args, stdout=subprocess.DEVNULL)
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(out.stdout) / 1e6


def tree(pid):
    """pid and its descendants (squid's certificate helpers)."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def rss_kib(pid):
    """The RSS of pid and of its descendants, KiB."""
    total = 0
    for p in tree(pid):
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def pcts(times):
    q = statistics.quantiles(times, n=20)
    return statistics.median(times), q[18]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"bench: {what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"bench: {what} did not listen on {port}")


def with_hosts(work, argv):
    """argv in a mount namespace of its own where /etc/hosts names the stand-in: the peers
    resolve the CONNECT's name themselves, and the host's /etc/hosts is left alone."""
    return ["unshare", "--mount", "--", "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"',
            f"{work}/hosts"] + argv


def start_mitmproxy(work):
    """mitmdump as an explicit proxy, checking the stand-in against its CA; its own CA is made
    in its confdir at first start. Returns (target, process) or None when not installed."""
    if not shutil.which("mitmdump"):
        return None
    port = free_port()
    os.makedirs(f"{work}/mitm")
    proc = subprocess.Popen(with_hosts(work, [
        "mitmdump", "-q", "--listen-host", "127.0.0.1", "--listen-port", str(port),
        "--set", f"confdir={work}/mitm", "--set", f"ssl_verify_upstream_trusted_ca={work}/ca/ca.pem",
        "--set", "connection_strategy=lazy",
        # Bodies stream past 1 MiB, as the gateway's do: mitmproxy buffers them whole otherwise.
        "--set", "stream_large_bodies=1m"]),
        stdout=subprocess.DEVNULL, stderr=open(f"{work}/mitm.err", "w"))
    wait_port(port, proc, "mitmdump")
    return {"ca": f"{work}/mitm/mitmproxy-ca-cert.pem", "addr": (HOST, 443),
            "proxy": ("127.0.0.1", port), "headers": {}}, proc


SQUID_CONF = """http_port 127.0.0.1:{port} ssl-bump tls-cert={d}/ca.pem tls-key={d}/ca.key \
  generate-host-certificates=on dynamic_cert_mem_cache_size=16MB
sslcrtd_program /usr/lib/squid/security_file_certgen -s {d}/ssl_db -M 16MB
sslcrtd_children 4 startup=1 idle=1
acl step1 at_step SslBump1
ssl_bump peek step1
ssl_bump bump all
tls_outgoing_options cafile={ca}
http_access allow all
cache deny all
cache_mem 8 MB
pid_filename {d}/squid.pid
cache_log {d}/cache.log
access_log none
cache_store_log none
coredump_dir {d}
dns_nameservers 127.0.0.1
hosts_file {hosts}
cache_effective_user proxy
shutdown_lifetime 0 seconds
"""


def start_squid(work):
    """squid (squid-openssl) bumping TLS with a CA of its own, all its files in work/squid, in
    the foreground (-N): its PID is ours to stop. None when not installed."""
    squid = shutil.which("squid") or "/usr/sbin/squid"
    certgen = "/usr/lib/squid/security_file_certgen"
    if not os.access(squid, os.X_OK) or not os.access(certgen, os.X_OK):
        return None
    d = f"{work}/squid"
    os.makedirs(d)
    os.chmod(work, 0o755)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=bench squid CA",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign", "-keyout", f"{d}/ca.key", "-out",
                    f"{d}/ca.pem"], check=True, capture_output=True)
    subprocess.run([certgen, "-c", "-s", f"{d}/ssl_db", "-M", "16MB"], check=True,
                   capture_output=True)
    port = free_port()
    with open(f"{d}/squid.conf", "w") as f:
        f.write(SQUID_CONF.format(port=port, d=d, ca=f"{work}/ca/ca.pem", hosts=f"{work}/hosts"))
    subprocess.run(["chown", "-R", "proxy:proxy", d], check=True)
    proc = subprocess.Popen([squid, "-N", "-f", f"{d}/squid.conf"], stdout=subprocess.DEVNULL,
                            stderr=open(f"{work}/squid.err", "w"))
    wait_port(port, proc, "squid")
    return {"ca": f"{d}/ca.pem", "addr": (HOST, 443), "proxy": ("127.0.0.1", port),
            "headers": {}}, proc


def measure(target, pid):
    r = {"reused": pcts(reused(target, N_REUSED)), "new": pcts(fresh(target, N_NEW))}
    r["rps"], r["cpu_us"] = rps(target, pid)
    r["mbs"] = large(target)
    return r


def rss_open(target, pid, n=100):
    """pid's RSS (with its children) while n connections that each made a request stay open."""
    conns = []
    for _ in range(n):
        c = connect(target)
        one(c, target["headers"])
        conns.append(c)
    rss = rss_kib(pid)
    for c in conns:
        c.close()
    return rss


def table(res, busy_reused, load_start):
    names = list(res)
    print(f"Machine: {os.cpu_count()} vCPU, kernel {os.uname().release}; load average (1 min) "
          f"{load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end: anything above "
          f"the bench's own is other work on the machine.")
    print()
    d = res["direct"]
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))

    def row(label, fmt, get):
        print(f"| {label} | " + " | ".join(fmt(get(res[n]), n) for n in names) + " |")

    def added(i):
        return lambda v, n: (f"{v:.3f}" if n == "direct" else
                             f"{v:.3f} ({v - d[i[0]][i[1]]:+.3f})")

    row("reused connection, p50 ms (added)", added(("reused", 0)), lambda r: r["reused"][0])
    row("reused connection, p95 ms (added)", added(("reused", 1)), lambda r: r["reused"][1])
    row("new connection, p50 ms (added)", added(("new", 0)), lambda r: r["new"][0])
    row("new connection, p95 ms (added)", added(("new", 1)), lambda r: r["new"][1])
    row("requests/s, 4 clients on keep-alive connections", lambda v, n: f"{v:.0f}",
        lambda r: r["rps"])
    row("proxy's CPU per request (those 4 clients), µs",
        lambda v, n: "" if n == "direct" else f"{v:.0f}", lambda r: r["cpu_us"])
    row(f"MB/s, one {LARGE_BYTES >> 20} MiB response", lambda v, n: f"{v:.0f}",
        lambda r: r["mbs"])
    row("RSS idle / with 100 open connections, MiB",
        lambda v, n: "" if n == "direct" else f"{v[0] / 1024:.1f} / {v[1] / 1024:.1f}",
        lambda r: r.get("rss", (0, 0)))
    print(f"| gateway: reused connection during a {4 * LARGE_BYTES >> 20} MiB download, "
          f"p50 / p95 ms | | {busy_reused[0]:.3f} / {busy_reused[1]:.3f} |" +
          " |" * (len(names) - 2))
    g = res["gateway"]
    print()
    for n in names[2:]:
        p = res[n]
        print(f"- gateway against {n}: {g['rps'] / p['rps']:.1f}x its requests/s "
              f"({p['cpu_us'] / g['cpu_us']:.1f}x less CPU per request), "
              f"{g['mbs'] / p['mbs']:.1f}x its MB/s, {p['rss'][1] / g['rss'][1]:.1f}x less RSS "
              f"at 100 connections; added p50 {g['reused'][0] - d['reused'][0]:+.3f} ms against "
              f"{p['reused'][0] - d['reused'][0]:+.3f} ms on a reused connection, "
              f"{g['new'][0] - d['new'][0]:+.3f} ms against {p['new'][0] - d['new'][0]:+.3f} ms "
              f"on a new one")
    missing = [n for n in ("mitmproxy", "squid") if n not in res]
    if missing:
        print(f"- not measured (not installed): {', '.join(missing)}")


def main():
    load_start = os.getloadavg()[0]
    work = tempfile.mkdtemp(prefix="launch-gwbench.")
    procs, gw, port, ph = start(work)
    try:
        targets = {
            "direct": ({"addr": STANDIN, "ca": f"{work}/ca/ca.pem", "headers": {}}, None),
            "gateway": ({"addr": ("127.0.0.1", port), "ca": f"{work}/gwca.pem",
                         "headers": {"Authorization": f"Bearer {ph}"}}, gw),
        }
        for name, starter in (("mitmproxy", start_mitmproxy), ("squid", start_squid)):
            if not PEERS:
                break
            started = starter(work)
            if started:
                procs.append(started[1])
                targets[name] = started
        res = {}
        idle = {name: rss_kib(proc.pid) for name, (_, proc) in targets.items() if proc}
        # One peer at a time on the machine's two cores: the others idle meanwhile.
        for name, (target, proc) in targets.items():
            res[name] = measure(target, proc.pid if proc else None)
            if proc:
                res[name]["rss"] = (idle[name], rss_open(target, proc.pid))
        # Fairness: small requests of one connection while another downloads without pause.
        through = targets["gateway"][0]
        dl = large(through, 4 * LARGE_BYTES, wait=False)
        time.sleep(0.3)
        busy_reused = pcts(reused(through, 300))
        dl.wait()
        table(res, busy_reused, load_start)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        try:
            os.kill(int(open(f"{work}/dns.pid").read()), 15)
        except (OSError, ValueError):
            pass
        shutil.rmtree(work, ignore_errors=True)


main()
