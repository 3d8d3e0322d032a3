#!/usr/bin/env bash
# Measures the figures issue 2 asks for (not part of `make test`; timings are reported, never
# asserted): binary size, exec-to-first-/up time, idle RSS, peak RSS and CPU µs per request under
# `wrk -c 256 -d 10 /up`, next to Debian's nginx serving a static file of the same size in the
# same run with the same number of workers. Needs wrk and nginx (apt-get install -y wrk nginx).
# Usage: tests/measure_up.sh [path/to/campfire-room]
set -euo pipefail
bin=$(realpath "${1:-./campfire-room}")
work=$(mktemp -d)
loops=${CAMPFIRE_LOOPS:-2}
port=$(( 10000 + RANDOM % 20000 )); nport=$((port + 1))
trap 'kill $cpid $npid 2>/dev/null || true; rm -rf "$work"' EXIT

cpu_us() { # utime+stime in µs of the given pids
  local t=0; for p in "$@"; do set -- $(sed 's/.*) //' /proc/$p/stat); t=$((t + ${12} + ${13})); done
  echo $((t * 1000000 / $(getconf CLK_TCK)))
}
rss_kb() { local t=0; for p in "$@"; do t=$((t + $(awk '/VmRSS/{print $2}' /proc/$p/status))); done; echo $t; }
peak_rss_during() { # samples RSS of pids while wrk runs; prints the max in kB
  local max=0 r; while kill -0 $wpid 2>/dev/null; do r=$(rss_kb "$@"); ((r > max)) && max=$r; sleep 0.1; done; echo $max
}

echo "binary: $(stat -c %s "$bin") bytes"
t0=$(date +%s%N)
env -i PORT=$port STORAGE_PATH=$work/s DATABASE_PATH=$work/s/db/p.sqlite3 CAMPFIRE_LOG=${CAMPFIRE_LOG:-0} CAMPFIRE_LOOPS=$loops \
  "$bin" >/dev/null 2>&1 & cpid=$!
until curl -sf -o /dev/null http://127.0.0.1:$port/up; do sleep 0.001; done
t1=$(date +%s%N)
echo "exec to first /up 200: $(( (t1 - t0) / 1000 )) us"
sleep 1
echo "campfire idle RSS: $(rss_kb $cpid) kB"

size=$(curl -s http://127.0.0.1:$port/up | wc -c)
mkdir -p $work/www; head -c "$size" /dev/zero | tr '\0' 'x' > $work/www/up
chmod 755 $work $work/www; chmod 644 $work/www/up   # nginx workers run unprivileged
cat > $work/nginx.conf <<CONF
worker_processes $loops;
pid $work/nginx.pid;
error_log $work/nginx.err;
daemon off;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen $nport reuseport; root $work/www; location / { default_type text/html; } } }
CONF
nginx -c $work/nginx.conf -p $work & npid=$!
sleep 0.5
nworkers=$(pgrep -P $npid | tr '\n' ' ')

for name in campfire nginx; do
  if [ $name = campfire ]; then pids="$cpid"; url=http://127.0.0.1:$port/up; else pids="$npid $nworkers"; url=http://127.0.0.1:$nport/up; fi
  c0=$(cpu_us $pids)
  wrk -t 2 -c 256 -d 10 "$url" > $work/wrk.$name & wpid=$!
  peak=$(peak_rss_during $pids)
  wait $wpid
  c1=$(cpu_us $pids)
  reqs=$(awk '/requests in/{print $1}' $work/wrk.$name)
  rps=$(awk '/Requests\/sec/{print $2}' $work/wrk.$name)
  echo "$name: $reqs requests, $rps req/s, CPU $(( (c1 - c0) * 1000 / reqs )) ns/request ($(echo "scale=2; ($c1 - $c0) / $reqs" | bc) us), peak RSS $peak kB, $(grep -E 'Non-2xx|Socket errors' $work/wrk.$name || echo 'no errors')"
done
echo "campfire RSS after load: $(rss_kb $cpid) kB"
