#!/usr/bin/env python3
"""bench/soak.py: the abuse cases of `make soak` (bench/soak.sh runs them against a server in the
15 MB cgroup). Each case prints one line: `soak <case>: <figures> <PASS|FAIL>`. Loopback only.

  soak.py CASE --url http://127.0.0.1:PORT --labels FILE --pid PID [--n N] [--m M] [--secs S]

Cases: probe (the fresh-request probe alone), slowloris (N connections sending a header byte every few seconds), pipeline (N connections
x M pipelined room-page GETs, never read), cable (N WebSocket clients that subscribe and never
read while messages are posted), poster (posts until killed, one acknowledged tag per line to
--out). While a case runs, a probe opens a fresh connection for `/up` every 50 ms and the
server's VmHWM/VmRSS are sampled: the figures printed are those.
"""
import argparse, base64, json, os, re, selectors, socket, sys, threading, time, urllib.parse

def labels(path):
    with open(path) as f:
        return json.load(f)

def mem(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False

def request(addr, raw, timeout=10.0):
    """One request on a fresh connection; returns (status, headers dict, body bytes)."""
    s = socket.create_connection(addr, timeout=timeout)
    s.sendall(raw)
    data = b""
    while True:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        if not b:
            break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = []
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers.append((k.strip().lower(), v.strip()))
    return status, headers, body

def get(host, path, cookie=""):
    c = f"Cookie: {cookie}\r\n" if cookie else ""
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{c}Connection: close\r\n\r\n".encode()

def sign_in(addr, host, lab):
    """Signs in as the bench user; returns (cookie jar string, csrf token, room page html)."""
    jar = {}
    def take(headers):
        for k, v in headers:
            if k == "set-cookie":
                n, _, rest = v.partition("=")
                jar[n] = rest.split(";")[0]
    st, h, body = request(addr, get(host, "/session/new"))
    take(h)
    csrf = re.search(rb'name="csrf-token" content="([^"]*)"', body)
    csrf = csrf.group(1).decode() if csrf else ""
    form = urllib.parse.urlencode({"email_address": lab["emails.david"], "password": lab["passwords.all"], "authenticity_token": csrf})
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    raw = (f"POST /session HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
           f"Sec-Fetch-Site: same-origin\r\nContent-Length: {len(form)}\r\nConnection: close\r\n\r\n{form}").encode()
    st, h, _ = request(addr, raw)
    take(h)
    if st != 302 or "session_token" not in jar:
        sys.exit(f"soak: sign-in failed ({st})")
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    room = lab["rooms.watercooler"]
    st, _, page = request(addr, get(host, f"/rooms/{room}", cookie))
    if st != 200:
        sys.exit(f"soak: room page {st}")
    m = re.search(rb'name="csrf-token" content="([^"]*)"', page)
    return cookie, (m.group(1).decode() if m else csrf), room, page

class Probe(threading.Thread):
    """A fresh connection for GET /up every 50 ms; latencies in ms, errors counted. Also
    samples the server's memory."""
    def __init__(self, addr, host, pid):
        super().__init__(daemon=True)
        self.addr, self.host, self.pid = addr, host, pid
        self.lat, self.errors, self.stop, self.hwm, self.rss = [], 0, False, 0, 0
    def run(self):
        while not self.stop:
            t = time.monotonic()
            try:
                # A slow answer is a latency, not an error: only a refusal or 30 s of nothing is.
                st, _, _ = request(self.addr, get(self.host, "/up"), timeout=30)
                if st != 200:
                    self.errors += 1
            except OSError:
                self.errors += 1
            self.lat.append((time.monotonic() - t) * 1000)
            m = mem(self.pid)
            self.hwm = max(self.hwm, m.get("VmHWM", 0))
            self.rss = max(self.rss, m.get("VmRSS", 0))
            time.sleep(0.05)
    def finish(self):
        self.stop = True
        self.join()
        lat = sorted(self.lat) or [0]
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        return f"fresh /up n={len(self.lat)} p50 {lat[len(lat)//2]:.1f} ms p99 {p99:.1f} ms max {lat[-1]:.1f} ms errors {self.errors}; server max VmRSS {self.rss} KiB VmHWM {self.hwm} KiB"

def connect_many(addr, n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(addr)
        socks.append(s)
    return socks

def closed(s):
    try:
        s.setblocking(False)
        b = s.recv(1 << 16, socket.MSG_PEEK)
        return b == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

def case_slowloris(a, addr, host, lab):
    """N connections each trickling a request head (one header line every 2 s, never ending it).
    The server must close them (request timeout) while fresh requests are served."""
    probe = Probe(addr, host, a.pid); probe.start()
    socks = connect_many(addr, a.n)
    start = time.monotonic()
    for s in socks:
        s.sendall(b"GET /up HTTP/1.1\r\nHost: x\r\n")
    shut = {}
    while len(shut) < len(socks) and time.monotonic() - start < a.secs:
        time.sleep(2)
        for i, s in enumerate(socks):
            if i in shut:
                continue
            if closed(s):
                shut[i] = time.monotonic() - start
                continue
            try:
                s.setblocking(True)
                s.sendall(b"X-a: b\r\n")
            except OSError:
                shut[i] = time.monotonic() - start
    for s in socks:
        s.close()
    t = sorted(shut.values()) or [0]
    ok = len(shut) == len(socks) and probe.errors == 0 and alive(a.pid)
    print(f"soak slowloris {a.n}: closed by the server {len(shut)}/{len(socks)} (median {t[len(t)//2]:.0f} s, last {t[-1]:.0f} s); {probe.finish()} {'PASS' if ok else 'FAIL'}")
    return ok

def case_pipeline(a, addr, host, lab):
    """N connections x M pipelined room-page GETs, never read, held for --secs."""
    cookie, _, room, _ = sign_in(addr, host, lab)
    one = f"GET /rooms/{room} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n".encode()
    probe = Probe(addr, host, a.pid); probe.start()
    socks, sent_err = [], 0
    for _ in range(a.n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(addr)
        s.setblocking(False)
        socks.append([s, one * a.m])
    # Send what the kernel takes, never read.
    end = time.monotonic() + a.secs
    while time.monotonic() < end:
        for item in socks:
            s, rest = item
            if rest:
                try:
                    n = s.send(rest)
                    item[1] = rest[n:]
                except BlockingIOError:
                    pass
                except OSError:
                    item[1] = b""
                    sent_err += 1
        time.sleep(0.05)
    dropped = sum(1 for s, _ in socks if closed(s))
    for s, _ in socks:
        s.close()
    up = alive(a.pid)
    ok = up and probe.errors == 0
    print(f"soak pipeline {a.n}x{a.m}: held {a.secs:.0f} s, connections closed {dropped}, send errors {sent_err}, server {'alive' if up else 'DEAD'}; {probe.finish()} {'PASS' if ok else 'FAIL'}")
    return ok

def ws_connect(addr, host, cookie):
    s = socket.create_connection(addr, timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /cable HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: actioncable-v1-json\r\nOrigin: http://{host}\r\nCookie: {cookie}\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        b = s.recv(4096)
        if not b:
            raise OSError("closed during the handshake")
        data += b
    if b" 101 " not in data.split(b"\r\n")[0]:
        raise OSError(data.split(b"\r\n")[0].decode())
    return s

def ws_text(s, text):
    p = text.encode()
    mask = os.urandom(4)
    n = len(p)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(p)))

def post_message(addr, host, cookie, csrf, room, body, cmid):
    form = urllib.parse.urlencode({"message[body]": body, "message[client_message_id]": cmid})
    raw = (f"POST /rooms/{room}/messages HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n"
           f"Sec-Fetch-Site: same-origin\r\nAccept: text/vnd.turbo-stream.html, text/html\r\n"
           f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(form)}\r\nConnection: close\r\n\r\n{form}").encode()
    return request(addr, raw, timeout=15)[0]

def case_cable(a, addr, host, lab):
    """N WebSocket clients subscribe to the room's streams and never read; messages are posted
    meanwhile (each fans out to all of them)."""
    cookie, csrf, room, page = sign_in(addr, host, lab)
    sources = re.findall(rb'<turbo-cable-stream-source[^>]*channel="([^"]*)"[^>]*signed-stream-name="([^"]*)"', page)
    idents = [json.dumps({"channel": c.decode(), "signed_stream_name": n.decode()}) for c, n in sources]
    idents.append(json.dumps({"channel": "PresenceChannel", "room_id": room}))
    probe = Probe(addr, host, a.pid); probe.start()
    socks, refused = [], 0
    for _ in range(a.n):
        try:
            s = ws_connect(addr, host, cookie)
            for i in idents:
                ws_text(s, json.dumps({"command": "subscribe", "identifier": i}))
            socks.append(s)
        except OSError:
            refused += 1
    posted, failed = 0, 0
    end = time.monotonic() + a.secs
    k = 0
    while time.monotonic() < end:
        k += 1
        st = post_message(addr, host, cookie, csrf, room, f"soak slow consumer {k} " + "x" * 400, f"soak-cable-{k}")
        if st == 200:
            posted += 1
        else:
            failed += 1
        time.sleep(0.05)
    dropped = sum(1 for s in socks if closed(s))
    for s in socks:
        s.close()
    ok = alive(a.pid) and probe.errors == 0 and failed == 0 and refused == 0
    print(f"soak cable slow consumers {a.n}: subscribed {len(socks)} (refused {refused}), {posted} posts ok / {failed} failed in {a.secs:.0f} s, "
          f"consumers dropped by the server {dropped}; {probe.finish()} {'PASS' if ok else 'FAIL'}")
    return ok

def case_poster(a, addr, host, lab):
    """Posts from 4 threads until the server goes away; each acknowledged tag is one line of --out."""
    cookie, csrf, room, _ = sign_in(addr, host, lab)
    out = open(a.out, "a", buffering=1)
    lock = threading.Lock()
    def one(t):
        k = 0
        while True:
            k += 1
            tag = f"{a.tag}t{t}k{k}"
            try:
                st = post_message(addr, host, cookie, csrf, room, f"{tag} soak kill post", tag)
            except OSError:
                return
            if st == 200:
                with lock:
                    out.write(tag + "\n")
    ts = [threading.Thread(target=one, args=(t,), daemon=True) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return True

def case_probe(a, addr, host, lab):
    """Only the fresh-request probe, for --secs (beside a load bench/soak.sh runs)."""
    probe = Probe(addr, host, a.pid); probe.start()
    time.sleep(a.secs)
    line = probe.finish()
    print(line)
    return probe.errors == 0

def main():
    p = argparse.ArgumentParser()
    p.add_argument("case")
    p.add_argument("--url", required=True)
    p.add_argument("--labels", required=True)
    p.add_argument("--pid", type=int, default=0)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--m", type=int, default=50)
    p.add_argument("--secs", type=float, default=20)
    p.add_argument("--out", default="")
    p.add_argument("--tag", default="k")
    a = p.parse_args()
    u = urllib.parse.urlparse(a.url)
    addr, host = (u.hostname, u.port), u.netloc
    case = {"slowloris": case_slowloris, "pipeline": case_pipeline, "cable": case_cable, "poster": case_poster, "probe": case_probe}[a.case]
    sys.exit(0 if case(a, addr, host, labels(a.labels)) else 1)

if __name__ == "__main__":
    main()
