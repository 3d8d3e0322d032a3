#!/usr/bin/env bash
# bench/cgroup.sh: the memory goal as `make bench-cgroup` runs it (issue 7). Starts ./campfire-room
# inside a memory cgroup capped at 15 MB with no swap, then puts the quick HTTP load (the eight
# validated routes, 16 clients, with the write audit) and a 1,000-client Action Cable run on it,
# and reports the cgroup's peak and OOM counts beside the process's RSS split (anonymous vs
# file-backed) idle, after the HTTP load and during the cable run. Exit status 1 if the server
# died, the cgroup saw an OOM kill, or a run failed.
#
# With CGROUP_TLS=1 (`make bench-cgroup-https`) the same suite runs over HTTPS and wss://: a
# throw-away CA and a `localhost` certificate signed by it are made here (openssl), the server
# serves them itself (TLS_CERTIFICATE_PATH/TLS_PRIVATE_KEY_PATH, SSL_DOMAIN=localhost,
# HTTPS_PORT=BENCH_PORT, HTTP_PORT=BENCH_HTTP_PORT; no DISABLE_SSL, so cookies are Secure and
# no proxy is trusted), and the load generator trusts the CA (--cacert).
#
# Needs root: a cgroup v2 hierarchy with the memory controller (memory.max, memory.peak,
# memory.events) or, failing that, the v1 memory controller (memory.limit_in_bytes,
# memory.max_usage_in_bytes, memory.oom_control). The cgroup's charge includes the page cache
# the server brings in (database and WAL pages it reads or writes); the kernel reclaims that under
# the cap, so an OOM means anonymous memory (heap, stacks, socket state) did not fit.
#
# Environment:
#   CGROUP_LIMIT     the cap (default 15M; a number with K/M suffix).
#   CABLE_CLIENTS    cable clients (default 1000; 0 skips the cable run).
#   BENCH_PORT       port (default 25150; not make bench's 25130/25140); with TLS the HTTPS port.
#   BENCH_HTTP_PORT  with TLS, the plain port that redirects to HTTPS (default 25151).
#   CGROUP_TLS       1: over HTTPS/wss:// (see above).
#   CAMPFIRE_LOOPS   loops for the server (default 1, like bench/run.sh).
#   HTTP_ARGS        load options for `campfire-bench run` (default: bench/run.sh quick's,
#                    "--clients 16 --secs 2 --warmup-secs 1 --rounds 1").
#   BENCH_SERVER     the server binary (default ./campfire-room).
#   CGROUP_SEED      a seed folder to copy instead of seeding afresh, e.g. bench/growth.sh's ×100
#                    (/var/tmp/campfire-growth-seeds/<hash>/x100): its first start, which builds
#                    the missing indexes, then runs inside the cgroup too.
#   SERVER_CPU / LOADGEN_CPU  cores to pin to (default 0 and 1).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/throwaway_ca.sh

limit=${CGROUP_LIMIT:-15M}
clients=${CABLE_CLIENTS:-1000}
port=${BENCH_PORT:-25150}
http_port=${BENCH_HTTP_PORT:-25151}
tls=${CGROUP_TLS:-0}
server_cpu=${SERVER_CPU:-0}
loadgen_cpu=${LOADGEN_CPU:-1}
work=bench/results/tmp-cgroup
read -r -a http_args <<< "${HTTP_ARGS:---clients 16 --secs 2 --warmup-secs 1 --rounds 1}"
server_cmd=${BENCH_SERVER:-./campfire-room}

bytes() { # 15M -> 15728640
  local v=$1
  case $v in
    *K) echo $(( ${v%K} * 1024 )) ;;
    *M) echo $(( ${v%M} * 1024 * 1024 )) ;;
    *) echo "$v" ;;
  esac
}
limit_bytes=$(bytes "$limit")

# The cgroup: v2 if the memory controller is there, else v1.
name=campfire-room-bench-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  ver=2
  cg=/sys/fs/cgroup/$name
  # A child gets memory.* files only if its parent hands the controller down.
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control \
    || echo +memory > /sys/fs/cgroup/cgroup.subtree_control
  mkdir "$cg"
  echo "$limit_bytes" > "$cg/memory.max"
  [ -f "$cg/memory.swap.max" ] && echo 0 > "$cg/memory.swap.max"
elif [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  ver=1
  cg=/sys/fs/cgroup/memory/$name
  mkdir "$cg"
  echo "$limit_bytes" > "$cg/memory.limit_in_bytes"
  # No swap either: memory+swap capped at the same figure (absent when swap accounting is off).
  [ -f "$cg/memory.memsw.limit_in_bytes" ] && echo "$limit_bytes" > "$cg/memory.memsw.limit_in_bytes" || true
else
  echo "bench/cgroup.sh: no cgroup memory controller here (v2 memory or v1 memory); try" \
       "systemd-run --scope -p MemoryMax=$limit ./campfire-room by hand" >&2
  exit 2
fi

cg_current() { if [ $ver = 2 ]; then cat "$cg/memory.current"; else cat "$cg/memory.usage_in_bytes"; fi; }
cg_peak() {
  if [ $ver = 2 ]; then cat "$cg/memory.peak" 2>/dev/null || echo "?"; else cat "$cg/memory.max_usage_in_bytes"; fi
}
cg_ooms() { # "oom=<n> oom_kill=<n> max=<n>"
  if [ $ver = 2 ]; then
    awk '{a[$1]=$2} END {printf "oom=%d oom_kill=%d max=%d", a["oom"], a["oom_kill"], a["max"]}' "$cg/memory.events"
  else
    awk '{a[$1]=$2} END {printf "oom_kill=%d under_oom=%d", a["oom_kill"], a["under_oom"]}' "$cg/memory.oom_control"
    printf ' failcnt=%s' "$(cat "$cg/memory.failcnt")"
  fi
}
cg_split() { # anon and file charge, KiB
  if [ $ver = 2 ]; then
    awk '$1=="anon"{a=$2} $1=="file"{f=$2} END {printf "anon %d KiB, file %d KiB", a/1024, f/1024}' "$cg/memory.stat"
  else
    awk '$1=="total_rss"{a=$2} $1=="total_cache"{f=$2} END {printf "anon %d KiB, file %d KiB", a/1024, f/1024}' "$cg/memory.stat"
  fi
}
proc_mem() { # VmRSS / RssAnon / RssFile / VmHWM of the server, KiB
  awk '/^(VmHWM|VmRSS|RssAnon|RssFile):/ {printf "%s %s ", $1, $2} END {print ""}' "/proc/$server_pid/status"
}
kib() { echo $(( $1 / 1024 )); }

cargo build --release --locked -p campfire-bench
bench=target/release/campfire-bench

rm -rf "$work"
mkdir -p "$work"
seed=${CGROUP_SEED:-$work/seed}
[ -n "${CGROUP_SEED:-}" ] || "$bench" seed --out "$seed" >/dev/null
# The copy's page cache is charged to this shell's cgroup, not the server's.
copy=$work/copy
cp -a "$seed" "$copy"
secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$copy/labels.json")
export DATABASE_PATH=$PWD/$copy/db/production.sqlite3 STORAGE_PATH=$PWD/$copy \
  SECRET_KEY_BASE=$secret CAMPFIRE_LOOPS=${CAMPFIRE_LOOPS:-1} CAMPFIRE_LOG=0
tls_args=()
if [ "$tls" = 1 ]; then
  # The generator trusts only the CA, as with an operator's certificate.
  throwaway_ca "$work"
  export TLS_CERTIFICATE_PATH=$PWD/$work/cert.pem TLS_PRIVATE_KEY_PATH=$PWD/$work/key.pem SSL_DOMAIN=localhost \
    HTTPS_PORT=$port HTTP_PORT=$http_port
  unset PORT DISABLE_SSL
  url=https://localhost:$port
  tls_args=(--cacert "$work/ca.pem")
  up=(curl -fsS -o /dev/null --cacert "$work/ca.pem" "$url/up")
else
  export PORT=$port DISABLE_SSL=true
  url=http://127.0.0.1:$port
  up=(curl -fsS -o /dev/null "$url/up")
fi

# As in a fresh container, the executable is read from disk inside the cgroup: its page cache is
# written back and dropped first. A binary just built or copied sits in the page cache in large
# folios charged to whoever wrote it; the server's RssFile then depended on how the file was last
# written (2.8 vs 4.3 MB of code mapped), and its pages escaped the cgroup's reclaim altogether,
# which hid that a 4 MB WAL left too little room for them (cable fan-out fell to 8 msgs/s).
server_bin=${server_cmd%% *}
if [ -f "$server_bin" ]; then
  sync "$server_bin"
  dd if="$server_bin" iflag=nocache count=0 status=none
fi

# The server enters the cgroup before it execs, so everything it allocates is charged there.
taskset -c "$server_cpu" bash -c "echo \$\$ > $cg/cgroup.procs && exec $server_cmd" \
  > "$work/server.log" 2>&1 &
server_pid=$!
sampler_pid=
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rmdir "$cg" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 300); do
  "${up[@]}" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "bench/cgroup.sh: the server exited; see $work/server.log" >&2; exit 1; }
  sleep 0.1
done
"${up[@]}" || { echo "bench/cgroup.sh: /up never answered" >&2; exit 1; }
sleep 1

echo "cgroup v$ver $cg, limit $(kib "$limit_bytes") KiB, CAMPFIRE_LOOPS=$CAMPFIRE_LOOPS, $url"
echo "idle:        $(proc_mem)| cgroup $(kib "$(cg_current)") KiB ($(cg_split))"

status=0
taskset -c "$loadgen_cpu" "$bench" run --url "$url" "${tls_args[@]}" --labels "$copy/labels.json" \
  --pid "$server_pid" "${http_args[@]}" \
  --out "$work/http.json" > "$work/http.txt" 2>&1 || { status=1; echo "HTTP run failed: see $work/http.txt"; }
kill -0 "$server_pid" 2>/dev/null || { echo "the server died during the HTTP run"; status=1; }
[ $status = 0 ] && echo "after HTTP:  $(proc_mem)| cgroup $(kib "$(cg_current)") KiB ($(cg_split))"
sleep 2
[ $status = 0 ] && echo "+2 s idle:   $(proc_mem)| cgroup $(kib "$(cg_current)") KiB ($(cg_split))"

if [ $status = 0 ] && [ "$clients" -gt 0 ]; then
  # RssAnon/RssFile are not kept as high-water marks by the kernel: sample them.
  ( max_anon=0; max_file=0
    while kill -0 "$server_pid" 2>/dev/null; do
      read -r a f < <(awk '/^RssAnon:/{a=$2} /^RssFile:/{f=$2} END {print a+0, f+0}' "/proc/$server_pid/status" 2>/dev/null || echo "0 0")
      [ "$a" -gt "$max_anon" ] && max_anon=$a
      [ "$f" -gt "$max_file" ] && max_file=$f
      echo "$max_anon $max_file" > "$work/rss-max"
      sleep 0.2
    done ) &
  sampler_pid=$!
  taskset -c "$loadgen_cpu" "$bench" cable --url "$url" "${tls_args[@]}" --labels "$copy/labels.json" \
    --pid "$server_pid" --clients "$clients" --out "$work/cable.json" > "$work/cable.txt" 2>&1 \
    || { status=1; echo "cable run failed: see $work/cable.txt"; }
  kill -0 "$server_pid" 2>/dev/null || { echo "the server died during the cable run"; status=1; }
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=
  if [ $status = 0 ]; then
    echo "after cable: $(proc_mem)| cgroup $(kib "$(cg_current)") KiB ($(cg_split))"
    sleep 2
    echo "+2 s idle:   $(proc_mem)| cgroup $(kib "$(cg_current)") KiB ($(cg_split))"
    read -r ma mf < "$work/rss-max"
    echo "cable run, sampled every 200 ms: max RssAnon $ma KiB, max RssFile $mf KiB"
    grep -E '^\||^saturated|^cable:' "$work/cable.txt" || true
    grep -q '^cable: run not clean' "$work/cable.txt" && status=1
  fi
fi
ooms=$(cg_ooms)
echo "cgroup peak $(kib "$(cg_peak)") KiB of $(kib "$limit_bytes") KiB; $ooms"
case $ooms in
  *oom_kill=0*) ;;
  *) status=1 ;;
esac
echo "server VmHWM $(awk '/^VmHWM:/{print $2}' "/proc/$server_pid/status" 2>/dev/null || echo '?') KiB"
[ $status = 0 ] && echo "PASS: the suite ran inside the $limit cgroup" || echo "FAIL"
exit $status
