#!/usr/bin/env bash
# bench/pipeline_flood.sh: clients that pipeline requests and never read (issue 15's first
# acceptance line). Starts ./campfire-room on a copy of the seeded bench database inside a memory
# cgroup capped at 15 MB with no swap (as bench/cgroup.sh does), signs in, opens FLOOD_CONNS
# connections that each write FLOOD_PIPELINE pipelined room-page GETs and never read, and while
# they hold a prober times a fresh `GET /up` every 10 ms. Prints one summary line per figure and
# a final `pipeline_flood:` line: server VmHWM, OOM kills, drops logged, /up p99.
#
# Usage (root, for the cgroup):  bench/pipeline_flood.sh
#   FLOOD_CONNS      connections (default 1000)
#   FLOOD_PIPELINE   GETs written on each (default 50)
#   FLOOD_HOLD_SECS  how long they stay open after the last was written (default 5)
#   FLOOD_GZIP       set: the GETs ask for gzip (default: no Accept-Encoding, the whole page)
#   CGROUP_LIMIT     the cap (default 15M; K/M/G suffix)
#   BENCH_PORT       port (default 25160)
#   CAMPFIRE_LOOPS   loops for the server (default 1)
#   BENCH_SERVER     the server binary (default ./campfire-room)
#   SERVER_CPU / LOADGEN_CPU  cores to pin to (default 0 and 1)
# Other CAMPFIRE_* variables in the environment (CAMPFIRE_OUT_BUDGET...) reach the server.
# Exit status 1 if the server died or the cgroup saw an OOM kill. Goals: VmHWM <= 12 MB, 0 OOM,
# /up p99 <= 50 ms.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=${CGROUP_LIMIT:-15M}
port=${BENCH_PORT:-25160}
server_cpu=${SERVER_CPU:-0}
loadgen_cpu=${LOADGEN_CPU:-1}
server_cmd=${BENCH_SERVER:-./campfire-room}
work=bench/results/tmp-flood

bytes() {
  local v=$1
  case $v in
    *K) echo $(( ${v%K} * 1024 )) ;;
    *M) echo $(( ${v%M} * 1024 * 1024 )) ;;
    *G) echo $(( ${v%G} * 1024 * 1024 * 1024 )) ;;
    *) echo "$v" ;;
  esac
}
limit_bytes=$(bytes "$limit")

name=campfire-room-flood-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  ver=2
  cg=/sys/fs/cgroup/$name
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || echo +memory > /sys/fs/cgroup/cgroup.subtree_control
  mkdir "$cg"
  echo "$limit_bytes" > "$cg/memory.max"
  [ -f "$cg/memory.swap.max" ] && echo 0 > "$cg/memory.swap.max"
elif [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  ver=1
  cg=/sys/fs/cgroup/memory/$name
  mkdir "$cg"
  echo "$limit_bytes" > "$cg/memory.limit_in_bytes"
  [ -f "$cg/memory.memsw.limit_in_bytes" ] && echo "$limit_bytes" > "$cg/memory.memsw.limit_in_bytes" || true
else
  echo "bench/pipeline_flood.sh: no cgroup memory controller here" >&2
  exit 2
fi
cg_peak() { if [ $ver = 2 ]; then cat "$cg/memory.peak" 2>/dev/null || echo 0; else cat "$cg/memory.max_usage_in_bytes"; fi; }
cg_oom_kills() {
  if [ $ver = 2 ]; then awk '$1=="oom_kill"{print $2}' "$cg/memory.events"; else awk '$1=="oom_kill"{print $2}' "$cg/memory.oom_control"; fi
}

cargo build --release --locked -p campfire-bench
bench=target/release/campfire-bench
rm -rf "$work"
mkdir -p "$work"
"$bench" seed --out "$work/seed" >/dev/null
copy=$work/copy
cp -a "$work/seed" "$copy"
secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$copy/labels.json")
export PORT=$port DATABASE_PATH=$PWD/$copy/db/production.sqlite3 STORAGE_PATH=$PWD/$copy \
  SECRET_KEY_BASE=$secret CAMPFIRE_LOOPS=${CAMPFIRE_LOOPS:-1} DISABLE_SSL=true CAMPFIRE_LOG=0
server_bin=${server_cmd%% *}
if [ -f "$server_bin" ]; then
  sync "$server_bin"
  dd if="$server_bin" iflag=nocache count=0 status=none
fi
ulimit -n 65536 2>/dev/null || true
taskset -c "$server_cpu" bash -c "echo \$\$ > $cg/cgroup.procs && exec $server_cmd" > "$work/server.log" 2>&1 &
server_pid=$!
cleanup() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rmdir "$cg" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 300); do
  curl -fsS -o /dev/null "http://127.0.0.1:$port/up" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "bench/pipeline_flood.sh: the server exited; see $work/server.log" >&2; exit 1; }
  sleep 0.1
done
sleep 1
echo "cgroup v$ver, limit $(( limit_bytes / 1024 )) KiB, CAMPFIRE_LOOPS=$CAMPFIRE_LOOPS, server $server_cmd"

status=0
taskset -c "$loadgen_cpu" "$bench" flood --url "http://127.0.0.1:$port" --labels "$copy/labels.json" --pid "$server_pid" \
  ${FLOOD_GZIP:+--gzip} --conns "${FLOOD_CONNS:-1000}" --pipeline "${FLOOD_PIPELINE:-50}" --hold-secs "${FLOOD_HOLD_SECS:-5}" \
  | tee "$work/flood.txt" || status=1
alive=yes
kill -0 "$server_pid" 2>/dev/null || { alive=no; status=1; echo "the server died during the flood"; }
hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$server_pid/status" 2>/dev/null || echo '?')
kills=$(cg_oom_kills)
[ "${kills:-0}" = 0 ] || status=1
drops=$(grep -c 'CAMPFIRE_OUT_BUDGET' "$work/server.log" || true)
p99=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' "$work/flood.txt")
echo "cgroup peak $(( $(cg_peak) / 1024 )) KiB of $(( limit_bytes / 1024 )) KiB"
echo "pipeline_flood: VmHWM ${hwm} KiB, oom_kill ${kills:-?}, server alive ${alive}, ${drops} connections dropped over the budget, fresh /up p99 ${p99:-?} ms"
exit $status
