#!/usr/bin/env bash
# bench/soak.sh: the standing abuse suite as `make soak` runs it (issue 15). Starts ./campfire-room
# on a fresh copy of the bench seed inside the 15 MB memory cgroup of bench/cgroup.sh (no swap),
# then runs each case against it and prints one line per case with its figures:
#   overload 64/256/1,024/4,096 connections (campfire-bench overload on the room page: errors,
#     p99; beside it a fresh GET /up every 50 ms: its p99), 2,000 slowloris connections,
#   1,000 x 50 pipelined room-page GETs never read, 300 Action Cable slow consumers (subscribed,
#     never reading, while messages are posted), kill -9 mid-post x5 (acknowledged vs found with
#     the sqlite3 CLI, PRAGMA integrity_check, the FTS index's integrity-check).
# Loopback only; bounded in time (about 2 minutes, plus building campfire-bench and the seed). Needs root (the cgroup) and sqlite3.
# Exit status 1 if any case failed, the server died or the cgroup saw an OOM kill.
#
# Environment: CGROUP_LIMIT (15M), SOAK_PORT (25160), CAMPFIRE_LOOPS (1), SERVER_CPU /
# LOADGEN_CPU (0 / 1), BENCH_SERVER (./campfire-room), SOAK_CASES (all: "overload slowloris
# pipeline cable kill").
set -uo pipefail
cd "$(dirname "$0")/.."

limit=${CGROUP_LIMIT:-15M}
port=${SOAK_PORT:-25160}
server_cpu=${SERVER_CPU:-0}
loadgen_cpu=${LOADGEN_CPU:-1}
server_cmd=${BENCH_SERVER:-./campfire-room}
cases=${SOAK_CASES:-overload slowloris pipeline cable kill}
work=bench/results/tmp-soak
url=http://127.0.0.1:$port
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

bytes() { local v=$1; case $v in *K) echo $(( ${v%K} * 1024 )) ;; *M) echo $(( ${v%M} * 1024 * 1024 )) ;; *) echo "$v" ;; esac; }
limit_bytes=$(bytes "$limit")

# The cgroup, as bench/cgroup.sh makes it: v2 if the memory controller is there, else v1.
name=campfire-room-soak-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  ver=2; cg=/sys/fs/cgroup/$name
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || echo +memory > /sys/fs/cgroup/cgroup.subtree_control
  mkdir "$cg"; echo "$limit_bytes" > "$cg/memory.max"
  [ -f "$cg/memory.swap.max" ] && echo 0 > "$cg/memory.swap.max"
elif [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  ver=1; cg=/sys/fs/cgroup/memory/$name
  mkdir "$cg"; echo "$limit_bytes" > "$cg/memory.limit_in_bytes"
  [ -f "$cg/memory.memsw.limit_in_bytes" ] && echo "$limit_bytes" > "$cg/memory.memsw.limit_in_bytes" || true
else
  echo "bench/soak.sh: no cgroup memory controller here" >&2; exit 2
fi
oom_kills() {
  if [ $ver = 2 ]; then awk '$1=="oom_kill"{print $2}' "$cg/memory.events"
  else awk '$1=="oom_kill"{print $2}' "$cg/memory.oom_control"; fi
}
peak_kib() {
  if [ $ver = 2 ]; then echo $(( $(cat "$cg/memory.peak" 2>/dev/null || echo 0) / 1024 ))
  else echo $(( $(cat "$cg/memory.max_usage_in_bytes") / 1024 )); fi
}

cargo build --release --locked -p campfire-bench >/dev/null 2>&1 || { echo "bench/soak.sh: cannot build campfire-bench" >&2; exit 2; }
bench=target/release/campfire-bench
rm -rf "$work"; mkdir -p "$work"
"$bench" seed --out "$work/seed" >/dev/null
copy=$work/copy
cp -a "$work/seed" "$copy"
labels=$copy/labels.json
secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$labels")
db=$PWD/$copy/db/production.sqlite3
export PORT=$port DATABASE_PATH=$db STORAGE_PATH=$PWD/$copy SECRET_KEY_BASE=$secret \
  CAMPFIRE_LOOPS=${CAMPFIRE_LOOPS:-1} DISABLE_SSL=true CAMPFIRE_LOG=0

server_pid=
start_server() {
  taskset -c "$server_cpu" bash -c "echo \$\$ > $cg/cgroup.procs && exec $server_cmd" >> "$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$url/up" 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench/soak.sh: the server did not start; see $work/server.log" >&2
  exit 1
}
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rmdir "$cg" 2>/dev/null || true
}
trap cleanup EXIT
soak() { taskset -c "$loadgen_cpu" python3 bench/soak.py "$@" --url "$url" --labels "$labels" --pid "$server_pid"; }

status=0
fail() { status=1; }
start_server
echo "soak: server pid $server_pid in cgroup v$ver $cg, limit $(( limit_bytes / 1024 )) KiB, CAMPFIRE_LOOPS=$CAMPFIRE_LOOPS"

for case in $cases; do
  case $case in
  overload)
    for c in 64 256 1024 4096; do
      soak probe --secs 6 > "$work/probe-$c.txt" 2>&1 &
      probe=$!
      taskset -c "$loadgen_cpu" "$bench" overload --url "$url" --labels "$labels" --pid "$server_pid" \
        --clients "$c" --routes room_show --secs 4 --warmup-secs 1 --out "$work/overload-$c.json" > "$work/overload-$c.txt" 2>&1
      wait "$probe"
      line=$(grep -E '^server +room_show +c=' "$work/overload-$c.txt" | tail -1)
      errs=$(sed -n 's/.* err \([0-9]*\) invalid \([0-9]*\).*/\1 \2/p' <<< "$line")
      read -r e i <<< "${errs:-x x}"
      verdict=PASS
      [ "$e" = 0 ] && [ "$i" = 0 ] && grep -q 'errors 0;' "$work/probe-$c.txt" || { verdict=FAIL; fail; }
      echo "soak overload $c: ${line#server } | $(cat "$work/probe-$c.txt") $verdict"
    done ;;
  slowloris) soak slowloris --n 2000 --secs 40 || fail ;;
  pipeline) soak pipeline --n 1000 --m 50 --secs 15 || fail ;;
  cable) soak cable --n 300 --secs 15 || fail ;;
  kill)
    acked=$work/acked.txt; : > "$acked"
    for round in 1 2 3 4 5; do
      soak poster --tag "r${round}" --out "$acked" > /dev/null 2>&1 &
      poster=$!
      sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 1.5 + r / 32768 * 2 }')"
      kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null
      wait "$poster"
      start_server
    done
    kill "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=
    sqlite3 "$db" "SELECT body FROM action_text_rich_texts WHERE body LIKE '%soak kill post%'" \
      | grep -o 'r[0-9]t[0-9]*k[0-9]*' | sort -u > "$work/found.txt"
    sort -u "$acked" > "$work/acked-sorted.txt"
    n_acked=$(wc -l < "$work/acked-sorted.txt"); n_found=$(wc -l < "$work/found.txt")
    lost=$(comm -23 "$work/acked-sorted.txt" "$work/found.txt" | wc -l)
    integrity=$(sqlite3 "$db" "PRAGMA integrity_check" | tr '\n' ' ')
    fts=$(sqlite3 "$db" "INSERT INTO message_search_index(message_search_index) VALUES('integrity-check')" 2>&1 && echo ok)
    indexed=$(sqlite3 "$db" "SELECT count(*) FROM message_search_index WHERE message_search_index MATCH '\"soak kill post\"'")
    verdict=PASS
    [ "$lost" = 0 ] && [ "$integrity" = "ok " ] && [ "$fts" = ok ] && [ "$indexed" = "$n_found" ] && [ "$n_acked" -gt 0 ] || { verdict=FAIL; fail; }
    echo "soak kill -9 mid-post x5: acknowledged $n_acked, found $n_found, lost $lost; integrity_check ${integrity% }; FTS integrity-check $fts, search rows $indexed $verdict"
    start_server ;;
  *) echo "bench/soak.sh: unknown case $case" >&2; fail ;;
  esac
  kill -0 "$server_pid" 2>/dev/null || { echo "soak: the server died during $case (cgroup oom_kill=$(oom_kills) so far); restarted"; fail; start_server; }
done

ooms=$(oom_kills)
[ "${ooms:-0}" = 0 ] || fail
echo "soak: cgroup peak $(peak_kib) KiB of $(( limit_bytes / 1024 )) KiB, oom_kill=${ooms:-?}; server VmHWM $(awk '/^VmHWM:/{print $2}' "/proc/$server_pid/status" 2>/dev/null || echo '?') KiB (since its last start)"
[ $status = 0 ] && echo "soak: PASS" || echo "soak: FAIL"
exit $status
