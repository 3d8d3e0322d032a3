#!/usr/bin/env python3
"""A stand-in Campfire for testing campfire-bench end to end without the real server.

It serves the eight benchmark routes, plus a bare Action Cable endpoint (/cable: every
subscription is confirmed, every post is broadcast to every socket), from a seed made by `campfire-bench seed` (any variant):
the login form and sign-in, the busy room page, the messages page, the sidebar, search, an
avatar, a stylesheet, /up, and posts into the write room (really written to the database, with
rich text and search-index rows, so the write audit has something to check).

Usage: fake_campfire.py SEED_DIR PORT      (prints "ready" on stdout once listening)

With FAKE_BUG=missing_message, room pages after the third one leave out one message, which the
load generator's validation must catch.
"""
import base64
import gzip
import hashlib
import struct
import html
import itertools
import json
import os
import re
import socket
import sqlite3
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SEED = sys.argv[1]
PORT = int(sys.argv[2])
LABELS = json.load(open(f"{SEED}/labels.json"))
ROOM, HQ = LABELS["rooms.watercooler"], LABELS["rooms.hq"]
DAVID = LABELS["users.david"]
LOCK = threading.Lock()
CSS = b"body{margin:0}\n"
BUG = os.environ.get("FAKE_BUG", "")
SOCKETS = []
SOCKETS_LOCK = threading.Lock()


def ws_frame(text, deflater=None):
    """One text frame; compressed (RSV1, permessage-deflate with context takeover) with a deflater."""
    data = text.encode()
    first = 0x81
    if deflater is not None:
        data = deflater.compress(data) + deflater.flush(zlib.Z_SYNC_FLUSH)
        data = data[:-4] if data.endswith(b"\x00\x00\xff\xff") else data
        first = 0xC1
    n = len(data)
    head = bytes([first, n]) if n < 126 else (bytes([first, 126]) + struct.pack(">H", n) if n < 65536 else bytes([first, 127]) + struct.pack(">Q", n))
    return head + data


def broadcast(text):
    message = json.dumps({"identifier": json.dumps({"channel": "Turbo::StreamsChannel", "signed_stream_name": "abc--def"}), "message": text})
    with SOCKETS_LOCK:
        for entry in list(SOCKETS):
            w, deflater = entry
            try:
                w.write(ws_frame(message, deflater))
                w.flush()
            except OSError:
                SOCKETS.remove(entry)
ROOM_PAGES = itertools.count(1)


def db():
    c = sqlite3.connect(f"{SEED}/db/production.sqlite3", timeout=10, check_same_thread=False)
    c.execute("PRAGMA journal_mode=WAL")
    return c


def message_html(c, ids):
    out = []
    for mid in ids:
        cmid, body = c.execute(
            "SELECT m.client_message_id, r.body FROM messages m JOIN action_text_rich_texts r "
            "ON r.record_type='Message' AND r.record_id=m.id WHERE m.id=?", (mid,)).fetchone()
        out.append(f'<div id="message_{mid}" class="message" data-message-id="{mid}">{body or ""}</div>\n')
    return "".join(out)


def page(title, inner):
    return (f'<!DOCTYPE html>\n<html><head><title>{title}</title><meta name="csrf-token" content="">'
            f'<link rel="stylesheet" href="/assets/app-0001.css"><script src="/assets/app-0002.js"></script></head>'
            f'<body>{inner}</body></html>\n')


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/html; charset=utf-8", headers=()):
        if isinstance(body, str):
            body = body.encode()
        gz = "gzip" in (self.headers.get("Accept-Encoding") or "") and ctype.startswith("text/")
        if gz:
            body = gzip.compress(body, mtime=0)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if gz:
            self.send_header("Content-Encoding", "gzip")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        c = db()
        try:
            if url.path == "/cable":
                return self.cable()
            if url.path == "/session/new":
                return self.reply(200, page("Sign in", "<form></form>"), headers=[("Set-Cookie", "_campfire_session=s1; path=/")])
            if url.path == "/up":
                return self.reply(200, '<html><body style="background-color: green"></body></html>')
            if url.path.startswith("/assets/") and url.path.endswith(".css"):
                return self.reply(200, CSS, "text/css")
            if "session_token=" not in (self.headers.get("Cookie") or ""):
                return self.reply(302, "", headers=[("Location", "/session/new")])
            if url.path == f"/rooms/{ROOM}":
                ids = [r[0] for r in c.execute("SELECT id FROM messages WHERE room_id=? ORDER BY created_at DESC LIMIT 40", (ROOM,))][::-1]
                if BUG == "missing_message" and next(ROOM_PAGES) > 3:
                    del ids[5]
                src = '<turbo-cable-stream-source channel="Turbo::StreamsChannel" signed-stream-name="abc--def"></turbo-cable-stream-source>'
                return self.reply(200, page("All Talk", src + f'<div id="messages_rooms_closed_{ROOM}">' + message_html(c, ids) + "</div>"))
            if url.path == f"/rooms/{HQ}":
                return self.reply(200, page("HQ", f'<div id="messages_rooms_open_{HQ}"></div>'))
            if url.path == f"/rooms/{ROOM}/messages":
                before = int(q["before"][0])
                ids = [r[0] for r in c.execute(
                    "SELECT id FROM messages WHERE room_id=? AND created_at < (SELECT created_at FROM messages WHERE id=?) "
                    "ORDER BY created_at DESC LIMIT 40", (ROOM, before))][::-1]
                return self.reply(200, message_html(c, ids))
            if url.path == "/users/me/sidebar":
                names = [html.escape(r[0]) for r in c.execute(
                    "SELECT r.name FROM rooms r JOIN memberships m ON m.room_id=r.id WHERE m.user_id=? AND r.name IS NOT NULL", (DAVID,))]
                return self.reply(200, page("Rooms", f'<div id="shared_rooms"><a href="/rooms/{ROOM}">x</a>' + "".join(f"<a>{n}</a>" for n in names) + "</div>"))
            if url.path == "/searches":
                term = re.sub(r"\W", " ", q.get("q", [""])[0])
                ids = [r[0] for r in c.execute(
                    "SELECT m.id FROM messages m JOIN message_search_index i ON i.rowid=m.id WHERE i.body MATCH ? "
                    "AND m.room_id IN (SELECT room_id FROM memberships WHERE user_id=?) ORDER BY m.id DESC LIMIT 100", (term, DAVID))][::-1]
                return self.reply(200, page("Search", message_html(c, ids)))
            if url.path.endswith("/avatar"):
                return self.reply(200, b"\x89PNG fake avatar bytes " * 8, "image/png")
            return self.reply(404, "not found")
        finally:
            c.close()

    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if url.path == "/session":
            return self.reply(302, "", headers=[("Location", "/"), ("Set-Cookie", "session_token=t1; path=/; httponly")])
        if url.path in (f"/rooms/{HQ}/messages", f"/rooms/{ROOM}/messages"):
            room = int(url.path.split("/")[2])
            kind = "open" if room == HQ else "closed"
            text = form["message[body]"][0]
            cmid = form["message[client_message_id]"][0]
            with LOCK:
                c = db()
                cur = c.execute("INSERT INTO messages (room_id, creator_id, client_message_id, created_at, updated_at) "
                                "VALUES (?, ?, ?, datetime('now'), datetime('now'))", (room, DAVID, cmid))
                mid = cur.lastrowid
                c.execute("INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) "
                          "VALUES ('Message', ?, 'body', ?, datetime('now'), datetime('now'))", (mid, f"<p>{html.escape(text)}</p>"))
                c.execute("INSERT INTO message_search_index (rowid, body) VALUES (?, ?)", (mid, text))
                c.commit()
                c.close()
            stream = (f'<turbo-stream action="append" target="messages_rooms_{kind}_{room}"><template>'
                      f'<div id="message_{mid}" data-message-id="{mid}"><p>{html.escape(text)}</p></div></template></turbo-stream>')
            broadcast(stream)
            return self.reply(200, stream, "text/vnd.turbo-stream.html; charset=utf-8")
        return self.reply(404, "not found")


def read_frame(r):
    head = r.read(2)
    if len(head) < 2:
        return None
    n = head[1] & 0x7F
    if n == 126:
        n = struct.unpack(">H", r.read(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", r.read(8))[0]
    mask = r.read(4) if head[1] & 0x80 else b"\0\0\0\0"
    data = bytes(b ^ mask[i % 4] for i, b in enumerate(r.read(n)))
    return head[0] & 0x0F, data


def cable(self):
    key = self.headers.get("Sec-WebSocket-Key", "")
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    deflater = None
    extension = ""
    if "permessage-deflate" in (self.headers.get("Sec-WebSocket-Extensions") or ""):
        deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
        extension = "Sec-WebSocket-Extensions: permessage-deflate\r\n"
    self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: actioncable-v1-json\r\n{extension}\r\n").encode())
    entry = (self.wfile, deflater)
    with SOCKETS_LOCK:
        self.wfile.write(ws_frame('{"type":"welcome"}', deflater))
        self.wfile.flush()
        SOCKETS.append(entry)
    while True:
        frame = read_frame(self.rfile)
        if frame is None or frame[0] == 8:
            break
        command = json.loads(frame[1])
        if command.get("command") == "subscribe":
            with SOCKETS_LOCK:
                self.wfile.write(ws_frame(json.dumps({"identifier": command["identifier"], "type": "confirm_subscription"}), deflater))
                self.wfile.flush()
    with SOCKETS_LOCK:
        if entry in SOCKETS:
            SOCKETS.remove(entry)
    self.close_connection = True


Handler.cable = cable
server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print("ready", flush=True)
server.serve_forever()
