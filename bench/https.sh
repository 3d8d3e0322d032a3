#!/usr/bin/env bash
# bench/https.sh: the HTTPS row (issue 14 §2). Beside bench/run.sh, on the same seed.
# Starts ./campfire-room with its own TLS (an ECDSA P-256 certificate made here, one loop,
# pinned to SERVER_CPU) and Debian's nginx (one process, same CPU, the same certificate, the
# same response bytes), and drives both with wrk pinned to LOADGEN_CPU, alternating rounds:
#   - keep-alive: the signed-in room page over TLS, server CPU µs per request (from
#     /proc/PID/stat) and the ratio to nginx (goal <= 1.5);
#   - handshakes: /up with `Connection: close`, so every request is a new TLS handshake;
#     handshakes per second and the ratio to nginx (goal >= 0.8), and the server CPU per
#     handshake of `openssl s_time -new` (never resumed);
#   - memory: the VmRSS growth of 1,000 idle HTTPS keep-alive connections and of 1,000 idle
#     wss:// Action Cable clients (bench/tls_idle.py), per connection (goal <= 16 KB).
# Writes bench/results/<date>-<commit>-https.json and prints a Markdown table.
# Environment: SECS (8), CLIENTS (16), ROUNDS (3), IDLE (1000), SERVER_CPU (0), LOADGEN_CPU (1).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${SECS:-8}
clients=${CLIENTS:-16}
rounds=${ROUNDS:-3}
idle=${IDLE:-1000}
server_cpu=${SERVER_CPU:-0}
loadgen_cpu=${LOADGEN_CPU:-1}
https_port=${BENCH_HTTPS_PORT:-25443}
http_port=${BENCH_HTTP_PORT:-25080}
nginx_port=${BENCH_NGINX_PORT:-25444}
work=$PWD/bench/results/tmp-https
for tool in wrk nginx openssl curl python3; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || { echo "bench/https.sh: needs $tool" >&2; exit 2; }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x ./campfire-room ] || { echo "bench/https.sh: build ./campfire-room first (make)" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

cargo build --release --locked -p campfire-bench
bench=target/release/campfire-bench
rm -rf "$work"
mkdir -p "$work/nginx"
"$bench" seed --out "$work/seed" > "$work/seed.log" 2>&1
label() { sed -n "s/.*\"$1\": \"\(.*\)\".*/\1/p" "$work/seed/labels.json"; }
secret=$(label bench.secret_key_base)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
  -keyout "$work/key.pem" -out "$work/cert.pem" -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null

c=(curl -fsS --cacert "$work/cert.pem")
server_pid=
nginx_pid=
# Starts a fresh ./campfire-room (one loop, pinned) and waits for its /up.
start_ours() {
  [ -n "$server_pid" ] && { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; }
  env -i PATH="$PATH" HTTPS_PORT=$https_port HTTP_PORT=$http_port TLS_CERTIFICATE_PATH="$work/cert.pem" \
    TLS_PRIVATE_KEY_PATH="$work/key.pem" DATABASE_PATH="$work/seed/db/production.sqlite3" STORAGE_PATH="$work/seed" \
    SECRET_KEY_BASE="$secret" CAMPFIRE_LOOPS=1 CAMPFIRE_LOG=0 \
    taskset -c "$server_cpu" ./campfire-room >> "$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    "${c[@]}" -o /dev/null "https://localhost:$https_port/up" 2>/dev/null && return
    kill -0 "$server_pid" 2>/dev/null || { echo "bench/https.sh: the server exited; see $work/server.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench/https.sh: /up never answered" >&2
  exit 1
}
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
start_ours

# Sign in as David and find his room page, as a browser would.
jar=$work/jar
"${c[@]}" -c "$jar" -b "$jar" -o /dev/null "https://localhost:$https_port/session/new"
status=$("${c[@]}" -c "$jar" -b "$jar" -o /dev/null -w '%{http_code}' -H 'Sec-Fetch-Site: same-origin' \
  --data-urlencode "email_address=$(label emails.david)" --data-urlencode "password=$(label passwords.all)" \
  "https://localhost:$https_port/session")
[ "$status" = 302 ] || { echo "bench/https.sh: sign-in answered $status" >&2; exit 1; }
cookie=$(awk '$6 == "session_token" {print $7}' "$jar")
room=$("${c[@]}" -b "$jar" -L -o /dev/null -w '%{url_effective}' "https://localhost:$https_port/")
room_path=/${room#https://localhost:$https_port/}
"${c[@]}" -H "Cookie: session_token=$cookie" -D "$work/room.head" -o "$work/room.body" "https://localhost:$https_port$room_path"
"${c[@]}" -D "$work/up.head" -o "$work/up.body" "https://localhost:$https_port/up"
ctype() { sed -n 's/^[Cc]ontent-[Tt]ype: \(.*\)\r$/\1/p' "$1" | head -1; }

cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
master_process off;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 120s;
  tcp_nodelay on;
  etag off;
  server_tokens off;
  types { }
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
  server {
    listen 127.0.0.1:$nginx_port ssl backlog=4096;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    location = $room_path { default_type "$(ctype "$work/room.head")"; alias $work/room.body; }
    location = /up { default_type "$(ctype "$work/up.head")"; alias $work/up.body; }
  }
}
CONF
taskset -c "$server_cpu" "$nginx_bin" -c "$work/nginx/nginx.conf" > "$work/nginx/stdout.log" 2>&1 &
nginx_pid=$!
for _ in $(seq 1 100); do
  curl -fsS --cacert "$work/cert.pem" -o /dev/null "https://localhost:$nginx_port/up" 2>/dev/null && break
  sleep 0.1
done
cmp -s "$work/room.body" <(curl -fsS --cacert "$work/cert.pem" "https://localhost:$nginx_port$room_path") \
  || { echo "bench/https.sh: nginx does not serve the same room page bytes" >&2; exit 1; }

tck=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# measure NAME PID URL [wrk args]: prints "rps us_per_req" of one wrk run (after a 2 s warm-up).
measure() {
  local pid=$2 url=$3
  shift 3
  taskset -c "$loadgen_cpu" wrk -t1 -c"$clients" -d2s "$@" "$url" > /dev/null
  local t0 t1 out
  t0=$(ticks "$pid")
  out=$(taskset -c "$loadgen_cpu" wrk -t1 -c"$clients" -d"${secs}s" "$@" "$url")
  t1=$(ticks "$pid")
  echo "$1 $url $*: $out" >> "$work/wrk.log"
  if grep -q 'Non-2xx' <<<"$out"; then
    echo "bench/https.sh: $1 answered errors: $out" >&2
    exit 1
  fi
  local reqs rps
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  awk -v r="$rps" -v n="$reqs" -v d="$((t1 - t0))" -v hz="$tck" 'BEGIN {printf "%s %.2f\n", r, d * 1e6 / hz / n}'
}
# full PID PORT: "handshakes/s µs/handshake" of `openssl s_time -new` (a new session for every
# connection, so certainly full handshakes; TLS 1.3 resumption would still do the key exchange,
# but wrk's reconnects may resume). s_time runs one connection at a time: the rate is the
# client's, the CPU per handshake is the server's.
full() {
  local t0 t1 out n
  t0=$(ticks "$1")
  out=$(taskset -c "$loadgen_cpu" openssl s_time -connect "localhost:$2" -new -time "$secs" -CAfile "$work/cert.pem" 2>&1)
  t1=$(ticks "$1")
  n=$(awk '/connections in .* real seconds/ {print $1}' <<<"$out")
  [ -n "$n" ] && [ "$n" -gt 0 ] || { echo "bench/https.sh: s_time: $out" >&2; exit 1; }
  awk -v n="$n" -v s="$secs" -v d="$((t1 - t0))" -v hz="$tck" 'BEGIN {printf "%.2f %.2f\n", n / s, d * 1e6 / hz / n}'
}
cookie_h="Cookie: session_token=$cookie"
declare -a ours_ka nginx_ka ours_hs nginx_hs ours_full nginx_full
for r in $(seq 1 "$rounds"); do
  ours_ka+=("$(measure ours "$server_pid" "https://localhost:$https_port$room_path" -H "$cookie_h")")
  nginx_ka+=("$(measure nginx "$nginx_pid" "https://localhost:$nginx_port$room_path" -H "$cookie_h")")
  ours_hs+=("$(measure ours "$server_pid" "https://localhost:$https_port/up" -H 'Connection: close')")
  nginx_hs+=("$(measure nginx "$nginx_pid" "https://localhost:$nginx_port/up" -H 'Connection: close')")
  ours_full+=("$(full "$server_pid" "$https_port")")
  nginx_full+=("$(full "$nginx_pid" "$nginx_port")")
done
# median COLUMN VALUES...: the median of field COLUMN (1 = rps, 2 = µs/req) over rounds.
median() { local col=$1; shift; printf '%s\n' "$@" | awk -v c="$col" '{print $c}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ka_us=$(median 2 "${ours_ka[@]}"); ka_us_nginx=$(median 2 "${nginx_ka[@]}")
ka_rps=$(median 1 "${ours_ka[@]}"); ka_rps_nginx=$(median 1 "${nginx_ka[@]}")
hs=$(median 1 "${ours_hs[@]}"); hs_nginx=$(median 1 "${nginx_hs[@]}")
hs_us=$(median 2 "${ours_hs[@]}"); hs_us_nginx=$(median 2 "${nginx_hs[@]}")
full_us=$(median 2 "${ours_full[@]}"); full_us_nginx=$(median 2 "${nginx_full[@]}")

# Idle memory, each kind on a fresh server of ours (nginx stopped, so it does not compete for
# the CPU; a fresh server, so the second kind does not reuse heap the first one freed).
kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
start_ours
idle_https=$(python3 bench/tls_idle.py "$server_pid" "$https_port" "$work/cert.pem" "$idle")
start_ours
idle_wss=$(python3 bench/tls_idle.py "$server_pid" "$https_port" "$work/cert.pem" "$idle" "$cookie")
# The same over plain HTTP (no TLS settings, PORT), for what TLS adds.
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
plain_port=$http_port
start_plain() {
  env -i PATH="$PATH" PORT=$plain_port DATABASE_PATH="$work/seed/db/production.sqlite3" STORAGE_PATH="$work/seed" \
    SECRET_KEY_BASE="$secret" CAMPFIRE_LOOPS=1 CAMPFIRE_LOG=0 DISABLE_SSL=1 \
    taskset -c "$server_cpu" ./campfire-room >> "$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do curl -fsS -o /dev/null "http://127.0.0.1:$plain_port/up" 2>/dev/null && return; sleep 0.1; done
  echo "bench/https.sh: plain /up never answered" >&2
  exit 1
}
start_plain
idle_http=$(python3 bench/tls_idle.py "$server_pid" "$plain_port" - "$idle")
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_plain
idle_ws=$(python3 bench/tls_idle.py "$server_pid" "$plain_port" - "$idle" "$cookie")
kib() { sed -n 's/.*"kib_per_connection": \([0-9.-]*\).*/\1/p' <<<"$1"; }

commit=$(git rev-parse --short HEAD)
out=bench/results/$(date -u +%Y-%m-%d)-$commit-https.json
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
cat > "$out" <<JSON
{
  "commit": "$commit",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "machine": "$(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)",
  "certificate": "ECDSA P-256, self-signed, openssl; TLS 1.3 negotiated by wrk",
  "clients": $clients, "secs": $secs, "rounds": $rounds,
  "room_page": {"path": "$room_path", "bytes": $(stat -c %s "$work/room.body"),
    "rps": $ka_rps, "us_per_req": $ka_us, "nginx_rps": $ka_rps_nginx, "nginx_us_per_req": $ka_us_nginx,
    "ratio_us": $(ratio "$ka_us" "$ka_us_nginx")},
  "handshakes": {"path": "/up", "per_sec": $hs, "us_per_handshake": $hs_us, "nginx_per_sec": $hs_nginx,
    "nginx_us_per_handshake": $hs_us_nginx, "ratio": $(ratio "$hs" "$hs_nginx")},
  "full_handshakes_s_time_new": {"us_per_handshake": $full_us, "nginx_us_per_handshake": $full_us_nginx,
    "ratio_us": $(ratio "$full_us" "$full_us_nginx")},
  "rounds_raw": {"ours_keepalive": "${ours_ka[*]}", "nginx_keepalive": "${nginx_ka[*]}", "ours_handshakes": "${ours_hs[*]}",
    "nginx_handshakes": "${nginx_hs[*]}", "ours_full": "${ours_full[*]}", "nginx_full": "${nginx_full[*]}"},
  "idle_https": $idle_https,
  "idle_wss": $idle_wss,
  "idle_http": $idle_http,
  "idle_ws": $idle_ws
}
JSON
echo "| HTTPS (issue 14) | ours | nginx | ratio | goal |"
echo "| --- | --- | --- | --- | --- |"
echo "| room page, kept alive, CPU µs/req | $ka_us | $ka_us_nginx | $(ratio "$ka_us" "$ka_us_nginx") | ≤ 1.5 |"
echo "| full handshakes/s (/up, Connection: close) | $hs | $hs_nginx | $(ratio "$hs" "$hs_nginx") | ≥ 0.8 |"
echo "| CPU µs per handshake (same wrk runs) | $hs_us | $hs_us_nginx | $(ratio "$hs_us" "$hs_us_nginx") | |"
echo "| CPU µs per full handshake (openssl s_time -new) | $full_us | $full_us_nginx | $(ratio "$full_us" "$full_us_nginx") | |"
echo "| idle HTTPS keep-alive connection, KB RSS (plain HTTP) | $(kib "$idle_https") ($(kib "$idle_http")) | | | ≤ 16 |"
echo "| idle wss:// Cable client, KB RSS (plain ws://) | $(kib "$idle_wss") ($(kib "$idle_ws")) | | | ≤ 16 |"
echo "wrote $out"
