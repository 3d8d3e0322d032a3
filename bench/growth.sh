#!/usr/bin/env bash
# bench/growth.sh (`make bench-growth`): how the cost of a request grows with the data (issue 18).
# For each scale (GROWTH_SCALES, default "1 10 100") it seeds `campfire-bench seed --scale N` once
# into GROWTH_SEEDS (default /var/tmp/campfire-growth-seeds/<hash of the seed code>/xN, reused by
# later runs: ×100 takes minutes to write), then on a fresh copy of it:
#   - the first start (exec to the first /up 200, and the log), which on a Rails-made database
#     builds the indexes the server needs;
#   - the four read routes with the response cache on and with it off (CAMPFIRE_CACHE_BYTES=0),
#     GROWTH_CLIENTS (16) clients, GROWTH_SECS (3) s samples after 1 s warm-ups;
#   - search at 1 client, cache off (the p99 goal);
#   - posts to HQ (~50·N members) and to a 4-member room (HQ itself at ×1, `rooms.crew` above);
#   - the write audit (inside `campfire-bench run`) and `PRAGMA integrity_check` on the copy.
# The server is pinned to SERVER_CPU (0), the load generator to LOADGEN_CPU (1), one loop.
# Prints CPU µs per request per route and scale, and the growth ratio to ×1; results in
# bench/results/tmp/growth/ (JSON per run) and bench/results/tmp/growth/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."

scales=${GROWTH_SCALES:-"1 10 100"}
clients=${GROWTH_CLIENTS:-16}
secs=${GROWTH_SECS:-3}
port=${BENCH_PORT:-25160}
server_cpu=${SERVER_CPU:-0}
loadgen_cpu=${LOADGEN_CPU:-1}
server_cmd=${BENCH_SERVER:-./campfire-room}
work=bench/results/tmp/growth

cargo build --release --locked -p campfire-bench
bench=$PWD/target/release/campfire-bench
kit=$(cat bench/src/seed.rs bench/src/seed_scale.rs bench/src/schema.sql bench/src/media.rs | sha256sum | cut -c1-12)
seeds=${GROWTH_SEEDS:-/var/tmp/campfire-growth-seeds}/$kit
mkdir -p "$seeds"
for n in $scales; do
  if [ ! -f "$seeds/x$n/labels.json" ]; then
    echo "bench/growth.sh: seeding ×$n into $seeds/x$n" >&2
    rm -rf "$seeds/x$n.tmp"
    "$bench" seed --out "$seeds/x$n.tmp" --scale "$n" >&2
    mv "$seeds/x$n.tmp" "$seeds/x$n"
  fi
done

rm -rf "$work"
mkdir -p "$work"
server_pid=
stop() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
trap stop EXIT

# start DIR LOG [ENV...]: the server on DIR's database, pinned, waiting for /up.
start() {
  local dir=$1 log=$2
  shift 2
  local secret
  secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$dir/labels.json")
  env PORT="$port" DATABASE_PATH="$PWD/$dir/db/production.sqlite3" STORAGE_PATH="$PWD/$dir" SECRET_KEY_BASE="$secret" \
    CAMPFIRE_LOOPS=1 DISABLE_SSL=true "$@" taskset -c "$server_cpu" $server_cmd > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 3000); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/up" 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "bench/growth.sh: the server exited; see $log" >&2; exit 1; }
    sleep 0.05
  done
  echo "bench/growth.sh: /up never answered; see $log" >&2
  exit 1
}

# run DIR OUT ARGS...: one validated campfire-bench run against the started server.
run() {
  local dir=$1 out=$2
  shift 2
  taskset -c "$loadgen_cpu" "$bench" run --url "http://127.0.0.1:$port" --labels "$dir/labels.json" --pid "$server_pid" \
    --warmup-secs 1 --secs "$secs" --rounds 1 --out "$out" "$@" > "${out%.json}.log" 2>&1 ||
    { echo "bench/growth.sh: run failed; see ${out%.json}.log" >&2; tail -5 "${out%.json}.log" >&2; exit 1; }
}

for n in $scales; do
  copy=$work/x$n
  echo "bench/growth.sh: ×$n" >&2
  cp -a "$seeds/x$n" "$copy"
  secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$copy/labels.json")
  # The first start on the untouched copy: exec to the first /up 200 (once: it builds what is missing).
  PORT=$port DATABASE_PATH=$PWD/$copy/db/production.sqlite3 STORAGE_PATH=$PWD/$copy SECRET_KEY_BASE=$secret \
    CAMPFIRE_LOOPS=1 DISABLE_SSL=true "$bench" startup --server "exec taskset -c $server_cpu $server_cmd" --port "$port" --runs 1 \
    > "$work/x$n-first-start.log" 2>&1 || { cat "$work/x$n-first-start.log" >&2; exit 1; }
  small=rooms.hq
  [ "$n" != 1 ] && small=rooms.crew
  for cache in on off; do
    extra=()
    [ "$cache" = off ] && extra=(CAMPFIRE_CACHE_BYTES=0)
    start "$copy" "$work/x$n-$cache-server.log" "${extra[@]}"
    run "$copy" "$work/x$n-$cache-reads.json" --routes room_show,messages_page,sidebar,search --clients "$clients"
    if [ "$cache" = off ]; then
      run "$copy" "$work/x$n-off-search1.json" --routes search --clients 1
    else
      run "$copy" "$work/x$n-post-hq.json" --routes post_message --clients "$clients"
      run "$copy" "$work/x$n-post-small.json" --routes post_message --clients "$clients" --post-room "$small"
    fi
    stop
  done
  check=$(sqlite3 "$copy/db/production.sqlite3" "PRAGMA integrity_check" 2>&1 || true)
  echo "$check" > "$work/x$n-integrity.txt"
  [ "$check" = ok ] || { echo "bench/growth.sh: integrity_check on ×$n: $check" >&2; exit 1; }
  rm -rf "$copy"
done

python3 - "$work" $scales <<'EOF' | tee "$work/table.md"
import json, re, sys, os
work, scales = sys.argv[1], sys.argv[2:]
def cells(path):
    if not os.path.exists(path):
        return {}
    d = json.load(open(path))
    return {s["route"]: s for s in d["samples"]}
def first_start(n):
    t = open(f"{work}/x{n}-first-start.log").read()
    m = re.search(r"median ([0-9.]+) ms", t)
    return float(m.group(1)) if m else None
rows = []
for label, file, route, key in [
    ("room page, cache on", "on-reads", "room_show", "cpu_us_per_req"),
    ("messages page, cache on", "on-reads", "messages_page", "cpu_us_per_req"),
    ("sidebar, cache on", "on-reads", "sidebar", "cpu_us_per_req"),
    ("search, cache on", "on-reads", "search", "cpu_us_per_req"),
    ("room page, cache off", "off-reads", "room_show", "cpu_us_per_req"),
    ("messages page, cache off", "off-reads", "messages_page", "cpu_us_per_req"),
    ("sidebar, cache off", "off-reads", "sidebar", "cpu_us_per_req"),
    ("search, cache off", "off-reads", "search", "cpu_us_per_req"),
    ("search p99 ms, 1 client, cache off", "off-search1", "search", "p99_ms"),
    ("sidebar wire bytes", "off-reads", "sidebar", "wire_bytes"),
    ("post to HQ", "post-hq", "post_message", "cpu_us_per_req"),
    ("post to a 4-member room", "post-small", "post_message", "cpu_us_per_req"),
]:
    vals = [cells(f"{work}/x{n}-{file}.json").get(route, {}).get(key) for n in scales]
    rows.append((label, vals))
rows.append(("first start: exec to /up, ms", [first_start(n) for n in scales]))
unit = lambda l: "" if ("ms" in l or "bytes" in l) else " (CPU µs/req)"
print("| measure | " + " | ".join(f"×{n}" for n in scales) + f" | ×{scales[-1]}/×{scales[0]} |")
print("| --- |" + " ---: |" * (len(scales) + 1))
for label, vals in rows:
    ratio = f"{vals[-1] / vals[0]:.2f}" if vals[0] and vals[-1] is not None else ""
    print(f"| {label}{unit(label)} | " + " | ".join("" if v is None else f"{v:,.1f}" for v in vals) + f" | {ratio} |")
hq = [cells(f"{work}/x{n}-post-hq.json").get("post_message", {}).get("cpu_us_per_req") for n in scales]
sm = [cells(f"{work}/x{n}-post-small.json").get("post_message", {}).get("cpu_us_per_req") for n in scales]
if hq[-1] and sm[-1]:
    print(f"\npost to HQ ÷ post to a 4-member room at ×{scales[-1]}: {hq[-1] / sm[-1]:.2f}")
EOF
