#!/usr/bin/env bash
# The FROM-scratch image, proven without Docker: run the static binary in an otherwise empty
# root (only the binary and an empty data/ folder; no shell, no libc, no /proc, no /dev) and
# fetch /up from outside. Then SIGTERM it and expect exit 0 and a database folder in data/.
# Usage: tests/container.sh [path/to/campfire-room]   (default ./campfire-room)
set -euo pipefail
bin=${1:-./campfire-room}
root=$(mktemp -d)
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$root"' EXIT
cp "$bin" "$root/campfire-room"
mkdir "$root/data"
port=$(( 10000 + (RANDOM % 20000) ))
if unshare -r true 2>/dev/null; then
  runner=(unshare -r --root="$root")
elif [ "$(id -u)" = 0 ]; then
  runner=(chroot "$root")
else
  echo "container.sh: neither unprivileged user namespaces nor root; cannot build an empty root" >&2
  exit 1
fi
env -i PORT=$port STORAGE_PATH=/data DATABASE_PATH=/data/db/production.sqlite3 CAMPFIRE_LOG=0 \
  "${runner[@]}" /campfire-room 2>"$root.err" &
pid=$!
for _ in $(seq 1 200); do
  if (: <>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then break; fi
  sleep 0.01
done
exec 3<>/dev/tcp/127.0.0.1/$port
printf 'GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
reply=$(cat <&3)
exec 3<&-
case "$reply" in
  "HTTP/1.1 200 OK"*"background-color: green"*) ;;
  *) echo "container.sh: unexpected reply from the empty root: $reply" >&2; cat "$root.err" >&2; exit 1 ;;
esac
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ "$rc" = 0 ] || { echo "container.sh: exit code $rc after SIGTERM" >&2; cat "$root.err" >&2; exit 1; }
[ -d "$root/data/db" ] && [ -s "$root/data/secret_key_base" ] || { echo "container.sh: data/ not populated" >&2; exit 1; }
rm -f "$root.err"
echo "container.sh: empty-root run served /up and exited 0 ($(stat -c %s "$bin") byte binary)"
