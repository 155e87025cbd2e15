#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A two-name TLS stand-in: one address serving two names by SNI, the way a CDN edge does.

usage: sni_server.py CERT KEY ADDR PORT LOG READY_FILE

On TCP ADDR:PORT it serves HTTPS for every name its certificate holds (chosen by the client's
server_name through sni_callback), answers a plain HTTP request on the same port, and accepts
TCP Fast Open. On UDP ADDR:PORT it answers any datagram (a QUIC-like client's first flight).
It writes READY_FILE once both sockets are bound.

LOG gets one JSON line per TCP connection when it ends, and per datagram:
  {"proto": "tcp", "bytes": N, "kind": "tls"|"http"|"none", "names": [...], "sni": ...,
   "host": ..., "path": ..., "status": ...}
"bytes" counts every application byte that reached this server, so "bytes": 0 proves that
nothing but the TCP handshake arrived. "names" are the server names the ClientHello carried.

A ClientHello with several host names is served as its last name, the others removed before
OpenSSL (which refuses a list of more than one) sees it: a client that adds an allowed name in
front of the one it wants is then served, as by a server that takes the last entry. The
transcript stays the client's if the client added the extra names after OpenSSL wrote the
ClientHello (tests/helpers/tls_evade.c does exactly that).
"""
import json
import os
import socket
import ssl
import struct
import sys
import threading

# A ClientHello larger than this is not one a real client sends.
CLIENT_HELLO_MAX = 65536
IDLE_TIMEOUT_S = 5
TCP_FASTOPEN_QUEUE = 16
LOG_LOCK = threading.Lock()


def log(path, entry):
    line = json.dumps(entry, separators=(",", ":")) + "\n"
    with LOG_LOCK:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)


class Conn:
    """One TCP connection: what arrived, and what it was served."""

    def __init__(self, sock):
        self.sock = sock
        self.raw = b""
        self.entry = {"proto": "tcp", "bytes": 0, "kind": "none", "names": [], "sni": None,
                      "host": None, "path": None, "status": None}

    def recv(self):
        data = self.sock.recv(65536)
        self.entry["bytes"] += len(data)
        return data

    def fill(self, n):
        while len(self.raw) < n:
            data = self.recv()
            if not data:
                return False
            self.raw += data
        return True


def read_client_hello(conn):
    """Reads TLS records until one whole handshake message is there; returns (message, rest)."""
    message = b""
    offset = 0
    while True:
        if not conn.fill(offset + 5):
            return None, b""
        ctype, _, length = struct.unpack("!BHH", conn.raw[offset:offset + 5])
        if ctype != 22 or not conn.fill(offset + 5 + length):
            return None, b""
        message += conn.raw[offset + 5:offset + 5 + length]
        offset += 5 + length
        if len(message) >= 4:
            need = 4 + int.from_bytes(message[1:4], "big")
            if need > CLIENT_HELLO_MAX:
                return None, b""
            if len(message) >= need:
                return message[:need], message[need:] + conn.raw[offset:]


def sni_offsets(hello):
    """(start, end) of the server_name extension's body in a ClientHello message, or None."""
    p = 4 + 2 + 32
    p += 1 + hello[p]
    p += 2 + int.from_bytes(hello[p:p + 2], "big")
    p += 1 + hello[p]
    end = p + 2 + int.from_bytes(hello[p:p + 2], "big")
    p += 2
    while p + 4 <= end:
        etype, elen = struct.unpack("!HH", hello[p:p + 4])
        if etype == 0:
            return p + 4, p + 4 + elen
        p += 4 + elen
    return None


def server_names(body):
    names = []
    p = 2
    while p + 3 <= len(body):
        ntype, nlen = body[p], int.from_bytes(body[p + 1:p + 3], "big")
        if ntype == 0:
            names.append(body[p + 3:p + 3 + nlen].decode("ascii", "replace"))
        p += 3 + nlen
    return names


def keep_last_name(hello, start, end, names):
    """The ClientHello with only its last host name, every length that holds it adjusted."""
    last = names[-1].encode()
    body = struct.pack("!HBH", 3 + len(last), 0, len(last)) + last
    delta = len(body) - (end - start)
    out = bytearray(hello[:start - 2]) + struct.pack("!H", len(body)) + body + hello[end:]
    # The extensions block's length sits just before the first extension.
    p = 4 + 2 + 32
    p += 1 + out[p]
    p += 2 + int.from_bytes(out[p:p + 2], "big")
    p += 1 + out[p]
    out[p:p + 2] = (int.from_bytes(out[p:p + 2], "big") + delta).to_bytes(2, "big")
    out[1:4] = (len(out) - 4).to_bytes(3, "big")
    return bytes(out)


def records(message):
    out = b""
    for i in range(0, len(message), 16384):
        chunk = message[i:i + 16384]
        out += struct.pack("!BHH", 22, 0x0301, len(chunk)) + chunk
    return out


def http_reply(conn, send, request):
    head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    parts = lines[0].split(" ")
    conn.entry["path"] = parts[1] if len(parts) > 1 else None
    for line in lines[1:]:
        if line.lower().startswith("host:"):
            conn.entry["host"] = line[5:].strip()
    served = conn.entry["sni"] or conn.entry["host"] or "-"
    body = f"served {served}\n".encode()
    conn.entry["status"] = 200
    send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def serve_plain(conn):
    conn.entry["kind"] = "http"
    data = conn.raw
    while b"\r\n\r\n" not in data and len(data) < CLIENT_HELLO_MAX:
        more = conn.recv()
        if not more:
            return
        data += more
    http_reply(conn, conn.sock.sendall, data)


def serve_tls(conn, ctx):
    conn.entry["kind"] = "tls"
    hello, rest = read_client_hello(conn)
    if hello is None or hello[0] != 1:
        return
    where = sni_offsets(hello)
    if where:
        conn.entry["names"] = server_names(hello[where[0]:where[1]])
        if len(conn.entry["names"]) > 1:
            hello = keep_last_name(hello, where[0], where[1], conn.entry["names"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_side=True)
    tls.entry = conn.entry
    incoming.write(records(hello) + rest)

    def pump(step):
        while True:
            try:
                result = step()
                conn.sock.sendall(outgoing.read())
                return result
            except ssl.SSLWantReadError:
                conn.sock.sendall(outgoing.read())
                data = conn.recv()
                if not data:
                    raise ConnectionError("EOF")
                incoming.write(data)

    pump(tls.do_handshake)
    request = b""
    while b"\r\n\r\n" not in request:
        request += pump(lambda: tls.read(65536))

    def send(data):
        tls.write(data)
        conn.sock.sendall(outgoing.read())

    http_reply(conn, send, request)
    try:
        tls.unwrap()
    except (ssl.SSLError, ssl.SSLWantReadError):
        pass
    conn.sock.sendall(outgoing.read())


def handle(sock, ctx, path):
    conn = Conn(sock)
    sock.settimeout(IDLE_TIMEOUT_S)
    try:
        if conn.fill(1):
            if conn.raw[0] == 22:
                serve_tls(conn, ctx)
            else:
                serve_plain(conn)
    except (OSError, ssl.SSLError, ValueError, IndexError, struct.error) as e:
        conn.entry["error"] = type(e).__name__
    finally:
        sock.close()
        log(path, conn.entry)


def on_sni(tls, name, _ctx):
    tls.entry["sni"] = name


def serve_udp(sock, path):
    while True:
        data, peer = sock.recvfrom(65536)
        names = [n for n in ("api.openai.com", "evil.example") if n.encode() in data]
        log(path, {"proto": "udp", "bytes": len(data), "kind": "datagram", "names": names,
                   "sni": names[-1] if names else None, "host": None,
                   "path": "key" if b"sk_live_" in data else None, "status": None})
        sock.sendto(f"served {names[-1] if names else '-'}\n".encode(), peer)


def main():
    cert, key, addr, port, path, ready = sys.argv[1:7]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.sni_callback = on_sni
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, TCP_FASTOPEN_QUEUE)
    tcp.bind((addr, int(port)))
    tcp.listen(64)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((addr, int(port)))
    threading.Thread(target=serve_udp, args=(udp, path), daemon=True).start()
    with open(ready + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(ready + ".tmp", ready)
    while True:
        sock, _ = tcp.accept()
        threading.Thread(target=handle, args=(sock, ctx, path), daemon=True).start()


if __name__ == "__main__":
    main()
