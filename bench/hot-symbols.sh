#!/usr/bin/env bash
# bench/hot-symbols.sh: regenerates build/hot-symbols.txt, the linker's symbol ordering file
# (`make` passes it to lld with --symbol-ordering-file).
#
# Why: the kernel maps code in 64 KiB windows around each page it faults in (fault-around), so
# the pages resident for a server at work are set by how widely its executed functions are
# spread over the 5 MB of text, not by how much code runs. Linked in file order, the functions
# the benchmark runs touch about 80% of the text (4–6 MB of RSS); laid out first and together,
# they fill a few hundred KiB and the rest of the binary (TLS, image codecs, bcrypt, DDL) stays
# on disk until used.
#
# How: an unstripped build of the same binary runs under `valgrind --tool=callgrind` through a
# representative session (sign-in, every benchmark route, posts, a small Action Cable fan-out),
# once over plain HTTP and once over HTTPS/wss:// (the server serving its own certificate);
# every function callgrind saw execute after start-up is listed, most instructions first, so the hottest code
# shares the fewest pages. Symbols are the linker's (mangled) names. A function missing from the
# list (new code) is simply placed after the listed ones; re-run this script after large
# changes. Takes a few minutes; loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/throwaway_ca.sh

target=x86_64-unknown-linux-gnu
work=bench/results/tmp-hot
port=${HOT_PORT:-25160}
out=build/hot-symbols.txt

# Symbols as the release build names them: same profile, not stripped, linked without the
# ordering (ordering moves code, it renames nothing).
hot_target=${HOT_TARGET_DIR:-target/hot}
CARGO_TARGET_DIR=$hot_target CARGO_PROFILE_RELEASE_STRIP=false \
  RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --locked --target "$target" --bin campfire-room
cargo build --release --locked -p campfire-bench
server=$hot_target/$target/release/campfire-room
bench=target/release/campfire-bench

rm -rf "$work"
mkdir -p "$work"
"$bench" seed --out "$work/seed" > /dev/null
labels=$work/seed/labels.json
secret=$(sed -n 's/.*"bench.secret_key_base": "\(.*\)".*/\1/p' "$labels")
export DATABASE_PATH=$PWD/$work/seed/db/production.sqlite3 STORAGE_PATH=$PWD/$work/seed \
  SECRET_KEY_BASE=$secret CAMPFIRE_LOOPS=1 CAMPFIRE_LOG=0

# A CA of our own and a `localhost` leaf it signs (P-256, as bench/cgroup.sh), for the HTTPS pass.
throwaway_ca "$work"

# One session under callgrind: plain (http://, ws://) or tls (https://, wss://, the server
# serving its own certificate), each dumping its own profile.
session() {
  local kind=$1 url up tls_args=()
  if [ "$kind" = tls ]; then
    url=https://localhost:$port
    tls_args=(--cacert "$work/ca.pem")
    up=(curl -fsS -o /dev/null --cacert "$work/ca.pem" "$url/up")
    env -u PORT -u DISABLE_SSL SSL_DOMAIN=localhost HTTPS_PORT=$port HTTP_PORT=$((port + 1)) \
      TLS_CERTIFICATE_PATH=$PWD/$work/cert.pem TLS_PRIVATE_KEY_PATH=$PWD/$work/key.pem \
      valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind-$kind.out" "$server" \
      > "$work/server-$kind.log" 2>&1 &
  else
    url=http://127.0.0.1:$port
    up=(curl -fsS -o /dev/null "$url/up")
    PORT=$port DISABLE_SSL=true \
      valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind-$kind.out" "$server" \
      > "$work/server-$kind.log" 2>&1 &
  fi
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 600); do
    "${up[@]}" 2>/dev/null && break
    sleep 0.2
  done
  # Startup (configuration, schema checks) is not counted: its pages are dropped once the loops
  # run (sys::memory::release_startup_code) and should not sit among the hot ones. Everything
  # after the first /up is, warm-up included: a function run once per sign-in or per statement
  # prepared holds its page resident as surely as the hottest loop.
  callgrind_control -z "$pid" > /dev/null
  # Every route of the benchmark once over (validated), then a small fan-out with posts.
  "$bench" run --url "$url" "${tls_args[@]}" --labels "$labels" --clients 16 --secs 2 --warmup-secs 1 --rounds 1 \
    --out "$work/run-$kind.json" > "$work/run-$kind.log" 2>&1
  # Quiet for a while: the idle heap trim (after 1 s) and the 3 s cable heartbeat run too.
  sleep 4
  "$bench" cable --url "$url" "${tls_args[@]}" --labels "$labels" --clients 20 --latency-msgs 5 --interval-ms 100 \
    --posters 2 --tput-secs 2 --out "$work/cable-$kind.json" > "$work/cable-$kind.log" 2>&1
  "$bench" cable --url "$url" "${tls_args[@]}" --labels "$labels" --clients 20 --latency-msgs 5 --interval-ms 100 \
    --posters 2 --tput-secs 2 --deflate 1 --out "$work/cable-deflate-$kind.json" >> "$work/cable-$kind.log" 2>&1
  sleep 4
  callgrind_control -d "$pid" > /dev/null
  kill -TERM "$pid"
  wait "$pid" || true
  trap - EXIT
}
# HTTPS matters as much as plain HTTP: served over TLS, the handshake, the record layer and
# ring's ciphers run on every request and frame, and spread over the text they kept ~2 MB more
# code resident than plain HTTP did (bench/results/2026-12-03-tlsfit.md).
session plain
session tls
dumps=()
for kind in plain tls; do
  dumps+=("$(ls -t "$work"/callgrind-$kind.out.* | head -1)")
done

# callgrind's format names a function once as "fn=(id) name" and later as "fn=(id)"; costs
# follow as "line cost" lines. Sum each function's own instructions per session (ids are per
# file; names are not), then list the plain session's functions by that, and after them those
# only the HTTPS session ran: plain HTTP's hot code stays as compact as before (interleaved by
# cost, the ciphers' heavy functions spread it and a plain server in the 15 MB cgroup thrashed),
# and a TLS server's is the same pages plus the ones right after.
nm --defined-only "$server" > "$work/nm.txt"
python3 - "$out" "$work/nm.txt" "${dumps[@]}" <<'EOF'
import re, sys

def own_costs(dump):
    """Each function's own instructions in one callgrind dump, by symbol."""
    names, cost, current, skip = {}, {}, None, False
    with open(dump, errors="replace") as f:
        for line in f:
            m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                kind, ident, name = m.groups()
                if name:
                    names[ident] = name
                if kind == "fn":
                    current = ident
                    cost.setdefault(ident, 0)
                continue
            if line.startswith("calls="):
                skip = True  # the next cost line is the call's inclusive cost, not the caller's own
                continue
            if current is not None and (line[:1].isdigit() or line[:1] in "+-*"):
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    cost[current] += int(parts[1])
    total = {}
    for ident, c in cost.items():
        # callgrind may append "'2" for recursion levels; the symbol is the part before it.
        name = names.get(ident, "").split("'")[0]
        if c > 0 and name and not name.startswith("0x"):
            total[name] = total.get(name, 0) + c
    return total

# valgrind's virtual CPU lacks SHA-NI, AVX-512 and more, so code that picks a variant by CPU
# feature ran its portable one there; natively the same call runs another function. Add the
# feature variants of every hot family: glibc's __memmove_avx_unaligned_erms & co. when any
# __memmove_* is hot, and a Rust crate's x86_sha/avx2/pclmulqdq/... functions when the crate is.
variant = re.compile(r"x86_sha|shani|avx|evex|pclmul|sse[0-9]|ssse3|erms|rtm|movbe|bmi2|adx")
def family(name):
    m = re.match(r"_ZN(\d+)", name)
    if m:
        return name[: len(m.group(0)) + int(m.group(1))]  # _ZN4sha2: the crate
    m = re.match(r"(_*[a-z0-9]+)_", name)
    return m.group(1) if m else name
with open(sys.argv[2]) as f:
    variants = [p[2] for p in (line.split() for line in f) if len(p) == 3 and p[1] in "tTwW" and variant.search(p[2])]

order, seen = [], set()
def add(name):
    if name not in seen:
        seen.add(name)
        order.append(name)
for dump in sys.argv[3:]:
    total = own_costs(dump)
    ran = sorted(total, key=lambda n: -total[n])
    for name in ran:
        add(name)
    families = {family(n) for n in ran}
    for name in variants:
        if family(name) in families:
            add(name)
with open(sys.argv[1], "w") as o:
    o.write("".join(n + "\n" for n in order))
print(f"{sys.argv[1]}: {len(seen)} functions")
EOF
