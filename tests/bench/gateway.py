#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make bench-gateway: the HTTPS gateway (build/helpers/gateway_run) against talking to the
same HTTPS stand-in (tests/standin/server.mjs) directly. Run inside a network namespace of its
own (tests/bench/gateway does): everything is on its loopback.

Prints, direct and through the gateway: p50/p90 per request on a reused connection and on a new
connection each, requests/s of 4 client processes on keep-alive connections, MB/s of one large
response (curl), and the gateway's RSS idle and with 100 open connections.
"""
import http.client
import multiprocessing
import os
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
    """An HTTPS connection to addr that names HOST in its SNI and certificate check."""

    def __init__(self, ctx, addr):
        super().__init__(HOST, addr[1], context=ctx, timeout=10)
        self._addr = addr

    def connect(self):
        sock = socket.create_connection(self._addr, timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=HOST)


def connect(cafile, addr):
    return _conn(ssl.create_default_context(cafile=cafile), addr)


def one(conn, headers):
    conn.request("GET", "/gw/echo", headers=headers)
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"bench: status {r.status}")


def reused(cafile, addr, headers, n):
    conn = connect(cafile, addr)
    one(conn, headers)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        one(conn, headers)
        times.append((time.perf_counter() - t) * 1000)
    return times


def fresh(cafile, addr, headers, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        conn = connect(cafile, addr)
        one(conn, headers)
        times.append((time.perf_counter() - t) * 1000)
        conn.close()
    return times


def rps_worker(args):
    cafile, addr, headers, seconds = args
    conn = connect(cafile, addr)
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        one(conn, headers)
        n += 1
    return n


def rps(cafile, addr, headers):
    with multiprocessing.Pool(4) as pool:
        counts = pool.map(rps_worker, [(cafile, addr, headers, RPS_SECONDS)] * 4)
    return sum(counts) / RPS_SECONDS


def large(cafile, addr):
    out = subprocess.run(["curl", "-s", "--cacert", cafile, "--connect-to",
                          f"{HOST}:443:{addr[0]}:{addr[1]}", "-o", "/dev/null", "-w",
                          "%{speed_download}", f"https://{HOST}/gw/large?bytes={LARGE_BYTES}"],
                         capture_output=True, text=True, check=True)
    return float(out.stdout) / 1e6


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pcts(times):
    q = statistics.quantiles(times, n=10)
    return statistics.median(times), q[8]


def main():
    work = tempfile.mkdtemp(prefix="launch-gwbench.")
    procs, gw, port, ph = start(work)
    try:
        direct = ((STANDIN[0], STANDIN[1]), f"{work}/ca/ca.pem", {})
        through = (("127.0.0.1", port), f"{work}/gwca.pem", {"Authorization": f"Bearer {ph}"})
        res = {}
        for name, (addr, ca, headers) in (("direct", direct), ("gateway", through)):
            res[name] = {
                "reused": pcts(reused(ca, addr, headers, N_REUSED)),
                "new": pcts(fresh(ca, addr, headers, N_NEW)),
                "rps": rps(ca, addr, headers),
                "mbs": large(ca, addr),
            }
        # Fairness: small requests of one connection while another downloads without pause.
        ca, addr = through[1], through[0]
        dl = subprocess.Popen(["curl", "-s", "--cacert", ca, "--connect-to",
                               f"{HOST}:443:{addr[0]}:{addr[1]}", "-o", "/dev/null",
                               f"https://{HOST}/gw/large?bytes={4 * LARGE_BYTES}"])
        time.sleep(0.3)
        busy_reused = pcts(reused(ca, addr, through[2], 300))
        dl.wait()
        idle = rss_kib(gw.pid)
        conns = []
        for _ in range(100):
            c = connect(through[1], through[0])
            one(c, through[2])
            conns.append(c)
        busy = rss_kib(gw.pid)
        for c in conns:
            c.close()
        d, g = res["direct"], res["gateway"]
        print("| | direct | gateway | added |")
        print("|---|---|---|---|")
        print(f"| reused connection, p50 ms | {d['reused'][0]:.3f} | {g['reused'][0]:.3f} | "
              f"{g['reused'][0] - d['reused'][0]:+.3f} |")
        print(f"| reused connection, p90 ms | {d['reused'][1]:.3f} | {g['reused'][1]:.3f} | "
              f"{g['reused'][1] - d['reused'][1]:+.3f} |")
        print(f"| new connection, p50 ms | {d['new'][0]:.3f} | {g['new'][0]:.3f} | "
              f"{g['new'][0] - d['new'][0]:+.3f} |")
        print(f"| new connection, p90 ms | {d['new'][1]:.3f} | {g['new'][1]:.3f} | "
              f"{g['new'][1] - d['new'][1]:+.3f} |")
        print(f"| reused connection during a {4 * LARGE_BYTES >> 20} MiB download, p50 / p90 ms | | "
              f"{busy_reused[0]:.3f} / {busy_reused[1]:.3f} | |")
        print(f"| requests/s, 4 clients | {d['rps']:.0f} | {g['rps']:.0f} | |")
        print(f"| MB/s, one {LARGE_BYTES >> 20} MiB response | {d['mbs']:.0f} | {g['mbs']:.0f} | |")
        print(f"| gateway RSS, idle / 100 open connections | | {idle / 1024:.1f} / "
              f"{busy / 1024:.1f} MiB | |")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        try:
            os.kill(int(open(f"{work}/dns.pid").read()), 15)
        except (OSError, ValueError):
            pass


main()
