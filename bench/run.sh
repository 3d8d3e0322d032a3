#!/usr/bin/env bash
# bench/run.sh [quick | mixed | cable [CLIENTS]]: the benchmark as `make bench` / `make bench-quick` run it;
# `mixed` runs only the mixed profile (3 rounds); `cable` runs the Action Cable fan-out workload
# instead (default 1,000 clients, no floor).
# Seeds a fresh copy of the harness seed, starts ./campfire-room pinned to CPU 0 on it, runs the
# load generator pinned to CPU 1 (validated warm-ups and samples, nginx floor on CPU 0, write
# audit), and writes bench/results/<date>-<commit>.json plus a Markdown table on stdout.
#
# Environment:
#   CAMPFIRE_FIXTURE_FILES  folder with the Rails test fixture files (moon.jpg, black_hole.jpg,
#                           alpha-centuri.mov, pixel.bmp); otherwise they are read from a git
#                           copy of basecamp/once-campfire named by RAILS_REPO (a .git dir or a
#                           bare mirror). With neither, the seed writes its own stand-in media
#                           (docs/bench.md), so no environment is needed at all.
#   BENCH_SEED=synthetic-c  use the C port's lighter synthetic seed (no fixture files needed).
#   BENCH_SERVER            the command that starts the server (default ./campfire-room); it gets
#                           PORT, DATABASE_PATH, STORAGE_PATH, SECRET_KEY_BASE, CAMPFIRE_LOOPS=1.
#   BENCH_PORT              port for the server (default 25130).
#   SERVER_CPU / LOADGEN_CPU  cores to pin to (default 0 and 1).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-full}
work=bench/results/tmp
port=${BENCH_PORT:-25130}
server_cpu=${SERVER_CPU:-0}
loadgen_cpu=${LOADGEN_CPU:-1}
server_cmd=${BENCH_SERVER:-./campfire-room}
if [ "$mode" = quick ]; then
  args=(--clients 16 --secs 2 --warmup-secs 1 --rounds 1)
elif [ "$mode" = mixed ]; then
  args=()
elif [ "$mode" = cable ]; then
  args=(--clients "${2:-1000}" ${CABLE_EXTRA:-})
  # A thousand sockets on each side.
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
else
  args=(--clients 1,16,64 --secs 8 --warmup-secs 2 --rounds 3)
fi

cargo build --release --locked -p campfire-bench
bench=target/release/campfire-bench

rm -rf "$work"
mkdir -p "$work"
seed=$work/seed
if [ "${BENCH_SEED:-}" = synthetic-c ]; then
  "$bench" seed --synthetic-c --out "$seed"
else
  files=${CAMPFIRE_FIXTURE_FILES:-}
  repo=${RAILS_REPO:-}
  if [ -z "$files" ] && [ -n "$repo" ]; then
    if ! git --git-dir="$repo" rev-parse HEAD >/dev/null 2>&1; then
      echo "bench/run.sh: RAILS_REPO=$repo is not a git copy of basecamp/once-campfire" >&2
      exit 2
    fi
    files=$work/fixture-files
    mkdir -p "$files"
    for f in moon.jpg black_hole.jpg alpha-centuri.mov pixel.bmp; do
      git --git-dir="$repo" show "HEAD:test/fixtures/files/$f" > "$files/$f"
    done
  fi
  if [ -n "$files" ]; then
    "$bench" seed --out "$seed" --files "$files"
  else
    echo "bench/run.sh: no CAMPFIRE_FIXTURE_FILES or RAILS_REPO; seeding with stand-in media" >&2
    "$bench" seed --out "$seed"
  fi
fi
pristine_sha=$(sha256sum "$seed/db/production.sqlite3" | cut -d' ' -f1)

# The server runs on a copy; the seed itself must come out unchanged.
copy=$work/copy
cp -a "$seed" "$copy"
secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$copy/labels.json")
export PORT=$port DATABASE_PATH=$PWD/$copy/db/production.sqlite3 STORAGE_PATH=$PWD/$copy \
  SECRET_KEY_BASE=$secret CAMPFIRE_LOOPS=${BENCH_LOOPS:-1} DISABLE_SSL=true
# Exec to the first /up 200 (issue 7's startup goal), 20 starts on the copy, pinned like the run.
if [ "$mode" != cable ]; then
  "$bench" startup --server "exec taskset -c $server_cpu $server_cmd" --port "$port" --runs 20
fi
taskset -c "$server_cpu" bash -c "exec $server_cmd" > "$work/server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 900); do
  curl -fsS -o /dev/null "http://127.0.0.1:$port/up" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "bench/run.sh: the server exited; see $work/server.log" >&2; exit 1; }
  sleep 0.1
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/up" || { echo "bench/run.sh: /up never answered" >&2; exit 1; }

status=0
if [ "$mode" = cable ]; then
  taskset -c "$loadgen_cpu" "$bench" cable --url "http://127.0.0.1:$port" --labels "$copy/labels.json" \
    --pid "$server_pid" "${args[@]}" || status=$?
elif [ "$mode" != mixed ]; then
  taskset -c "$loadgen_cpu" "$bench" run --url "http://127.0.0.1:$port" --labels "$copy/labels.json" \
    --pid "$server_pid" --floor --floor-cpu "$server_cpu" "${args[@]}" || status=$?
fi

# Mixed profile (workloads.md §6): the room page at 16 clients without and with a paced writer
# posting 10/s to HQ, alternated per round so both sides see the same machine; the ratio of the
# medians is the issue-7 figure (goal >= 0.9).
if [ "$status" = 0 ] && { [ "$mode" = full ] || [ "$mode" = quick ] || [ "$mode" = mixed ]; }; then
  mixed_rounds=3; mixed_secs=8
  [ "$mode" = quick ] && { mixed_rounds=1; mixed_secs=2; }
  for r in $(seq 1 "$mixed_rounds"); do
    for side in plain mixed; do
      extra=(); [ "$side" = mixed ] && extra=(--mixed-write-rate 10)
      taskset -c "$loadgen_cpu" "$bench" run --url "http://127.0.0.1:$port" --labels "$copy/labels.json" \
        --pid "$server_pid" --routes room_show --clients 16 --secs "$mixed_secs" --warmup-secs 1 --rounds 1 \
        "${extra[@]}" --out "$work/mixed-$side-$r.json" > "$work/mixed-$side-$r.log" 2>&1 || status=$?
    done
  done
  median() { sed -n 's/.*"rps": \([0-9.]*\).*/\1/p' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  plain=$(median "$work"/mixed-plain-*.json); mixed=$(median "$work"/mixed-mixed-*.json)
  if [ -n "$plain" ] && [ -n "$mixed" ]; then
    echo "mixed profile: room_show at 16 clients $plain rps alone, $mixed rps with 10 posts/s to HQ: ratio $(awk -v a="$mixed" -v b="$plain" 'BEGIN {printf "%.3f", a/b}')"
  else
    echo "bench/run.sh: the mixed profile produced no figures; see $work/mixed-*.log" >&2
    status=1
  fi
fi

if [ "$(sha256sum "$seed/db/production.sqlite3" | cut -d' ' -f1)" != "$pristine_sha" ]; then
  echo "bench/run.sh: the pristine seed changed during the run" >&2
  status=1
fi
exit $status
