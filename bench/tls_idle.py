#!/usr/bin/env python3
"""bench/tls_idle.py PID PORT CAFILE COUNT [COOKIE]: the resident cost of idle TLS connections.
CAFILE "-" speaks plain HTTP and ws:// instead, for the comparison.

Opens COUNT HTTPS connections to localhost:PORT (each finishes its handshake and one GET /up, so
every buffer a served connection touches has been used), lets the server go idle, and prints the
growth of the server's VmRSS divided by COUNT. With COOKIE (a session_token value), each
connection is instead a wss:// Action Cable client that got its welcome. Prints JSON.
"""
import json, os, socket, ssl, sys, time

pid, port, cafile, count = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
cookie = sys.argv[5] if len(sys.argv) > 5 else None


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


def settle():
    # The loop trims freed heap after a second without events.
    time.sleep(2.5)
    return rss_kib()


ctx = None
if cafile != "-":
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
scheme = "http" if ctx is None else "https"


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("closed early")
        buf += chunk
    return buf


def open_one():
    raw = socket.create_connection(("127.0.0.1", port))
    s = raw if ctx is None else ctx.wrap_socket(raw, server_hostname="localhost")
    if cookie is None:
        s.sendall(f"GET /up HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
        buf = read_head(s)
        head, _, body = buf.partition(b"\r\n\r\n")
        length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
        while len(body) < length:
            body += s.recv(65536)
    else:
        s.sendall(
            (
                f"GET /cable HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: {scheme}://localhost:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: actioncable-v1-json\r\n"
                f"Cookie: session_token={cookie}\r\n\r\n"
            ).encode()
        )
        buf = read_head(s)
        if not buf.startswith(b"HTTP/1.1 101"):
            raise SystemExit(buf[:200])
        while b"welcome" not in buf:
            buf += s.recv(65536)
    return s


before = settle()
conns = []
t0 = time.time()
for _ in range(count):
    conns.append(open_one())
opened_s = time.time() - t0
after = settle()
print(json.dumps({
    "kind": ("wss_cable" if cookie else "https_keepalive") if ctx else ("ws_cable" if cookie else "http_keepalive"),
    "connections": count,
    "rss_before_kib": before,
    "rss_after_kib": after,
    "kib_per_connection": round((after - before) / count, 2),
    "open_seconds": round(opened_s, 2),
}))
for s in conns:
    s.close()
