#!/usr/bin/env bash
# Per-request audit (issue 7, docs/bench.md "Per-request audit"): what one cached hit of the
# benchmark's room page (David, signed in, gzip, one keep-alive connection, the request bytes
# campfire-bench sends) costs the server, measured exactly rather than timed:
#   - system calls per request: `strace -c` attached to the loop thread for N requests;
#   - instructions per request: the server under `valgrind --tool=callgrind`, counters zeroed
#     after warming up and dumped after N requests (`callgrind_control -z` / `-d`).
# Usage: bench/audit.sh [server binary, default ./campfire-room]. Env: AUDIT_PORT (a free one),
# AUDIT_REQUESTS (1000), AUDIT_PATH (the room page), AUDIT_SKIP_CALLGRIND=1, AUDIT_HEADERS
# (extra request header lines, one per line, e.g. a browser's), AUDIT_POST=1 (each request
# posts a new message to AUDIT_PATH, e.g. /rooms/<hq>/messages, as the benchmark's post does).
# AUDIT_SEED (a seed directory to copy, e.g. a `make bench-growth` seed, instead of the public
# seed). The server inherits the environment: CAMPFIRE_CACHE_BYTES=0 audits misses.
# Needs strace, valgrind and python3. Loopback only; leaves its files in bench/results/audit/.
set -euo pipefail
cd "$(dirname "$0")/.."

server=$(realpath "${1:-./campfire-room}")
port=${AUDIT_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
n=${AUDIT_REQUESTS:-1000}
work=bench/results/audit

cargo build --release --locked -p campfire-bench -q
rm -rf "$work"
mkdir -p "$work"
if [ -n "${AUDIT_SEED:-}" ]; then
  cp -r "$AUDIT_SEED" "$work/seed"
else
  target/release/campfire-bench seed --out "$work/seed" > /dev/null 2>&1
fi
labels=$work/seed/labels.json
secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$labels")
room=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rooms.watercooler"])' "$labels")
path=${AUDIT_PATH:-/rooms/$room}
method=GET
[ -n "${AUDIT_POST:-}" ] && method=POST
export PORT=$port DATABASE_PATH=$PWD/$work/seed/db/production.sqlite3 STORAGE_PATH=$PWD/$work/seed \
  SECRET_KEY_BASE=$secret CAMPFIRE_LOOPS=1 DISABLE_SSL=true

pid=
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=; }
trap stop EXIT
wait_up() {
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/up" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "audit: the server never answered /up" >&2
  exit 1
}

# client.py signin -> prints the cookie jar; client.py run N JAR PATH -> N keep-alive GETs.
client=$work/client.py
cat > "$client" <<'EOF'
import json, os, socket, sys, re
port = int(sys.argv[1])
def conn():
    return socket.create_connection(("127.0.0.1", port))
def exchange(s, req):
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d: raise SystemExit("closed")
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    need = int(m.group(1)) if m else 0
    while len(rest) < need:
        d = s.recv(65536)
        if not d: raise SystemExit("closed")
        rest += d
    return head.decode("latin-1"), rest
host = "127.0.0.1:%d" % port
if sys.argv[2] == "signin":
    labels = json.load(open(sys.argv[3]))
    email, pw = labels["emails.david"], labels["passwords.all"]
    from urllib.parse import quote_plus
    body = ("email_address=%s&password=%s" % (quote_plus(email), quote_plus(pw))).encode()
    req = ("POST /session HTTP/1.1\r\nhost: %s\r\ncontent-type: application/x-www-form-urlencoded\r\n"
           "sec-fetch-site: same-origin\r\ncontent-length: %d\r\n\r\n" % (host, len(body))).encode() + body
    head, _ = exchange(conn(), req)
    m = re.search(r"(?i)\r\nset-cookie: (session_token=[^;]+)", head)
    if not m: raise SystemExit("sign-in failed: " + head.split("\r\n")[0])
    print(m.group(1))
else:
    count, jar, path = int(sys.argv[3]), sys.argv[4], sys.argv[5]
    extra = "".join(l.strip() + "\r\n" for l in os.environ.get("AUDIT_HEADERS", "").split("\n") if l.strip())
    req = ("GET %s HTTP/1.1\r\nhost: %s\r\ncookie: %s\r\naccept-encoding: gzip\r\n%s\r\n" % (path, host, jar, extra)).encode()
    s = conn()
    for i in range(count):
        if os.environ.get("AUDIT_POST"):
            nonce = "%x%x" % (os.getpid(), i)
            body = ("message%%5Bbody%%5D=bench+write+%s&message%%5Bclient_message_id%%5D=%s" % (nonce, nonce)).encode()
            req = ("POST %s HTTP/1.1\r\nhost: %s\r\ncookie: %s\r\ncontent-type: application/x-www-form-urlencoded\r\n"
                   "accept: text/vnd.turbo-stream.html, text/html, application/xhtml+xml\r\nsec-fetch-site: same-origin\r\n"
                   "accept-encoding: gzip\r\n%scontent-length: %d\r\n\r\n" % (path, host, jar, extra, len(body))).encode() + body
        head, body = exchange(s, req)
        if not head.startswith("HTTP/1.1 200"): raise SystemExit("not a 200: " + head.split("\r\n")[0])
EOF

# 1. System calls.
"$server" > "$work/server.log" 2>&1 &
pid=$!
wait_up
jar=$(python3 "$client" "$port" signin "$labels")
python3 "$client" "$port" run 50 "$jar" "$path"
sleep 1  # the first views' writes (marking the room read) and their checkpoint settle
# The loop thread only: the writer and checkpointer may still be finishing the warm-up's
# writes, which is not what a hit costs.
loop_tid=$(grep -l '^loop-0$' /proc/"$pid"/task/*/comm | head -1 | cut -d/ -f5)
strace -c -q -o "$work/strace.txt" -p "$loop_tid" &
tracer=$!
sleep 1
python3 "$client" "$port" run "$n" "$jar" "$path"
sleep 0.5
kill -INT "$tracer"
wait "$tracer" 2>/dev/null || true
stop
echo "== system calls of the loop thread for $n $method $path (strace -c), per request:"
awk -v n="$n" '$1 ~ /^[0-9.]+$/ && NF >= 5 { name = $NF; calls = $4; printf "  %-16s %8.3f\n", name, calls / n }' "$work/strace.txt"

# 2. Instructions.
if [ "${AUDIT_SKIP_CALLGRIND:-}" != 1 ]; then
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out.%p" "$server" > "$work/valgrind.log" 2>&1 &
  pid=$!
  wait_up
  python3 "$client" "$port" run 50 "$jar" "$path"
  callgrind_control -z "$pid" > /dev/null
  python3 "$client" "$port" run "$n" "$jar" "$path"
  callgrind_control -d "$pid" > /dev/null
  sleep 1
  stop
  dump=$(ls "$work"/callgrind.out.*.1 | head -1)
  total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
  echo "== instructions for $n $method $path (callgrind, whole process): $total, per request: $(( total / n ))"
  echo "   top functions: callgrind_annotate $dump | head -40"
fi
