# campfire-room: `make` builds the static release binary ./campfire-room; `make test` runs every test.
# The host's own target (x86_64 or aarch64 Linux); TARGET=... builds for another one.
TARGET   ?= $(shell rustc -vV | sed -n 's/^host: //p')
RELEASE  := target/$(TARGET)/release/campfire-room
# Static glibc (static-pie): the binary must run in an empty root (FROM scratch).
STATIC   := -C target-feature=+crt-static
# The code a working server runs is laid out first and together (build/hot-symbols.txt, made by
# bench/hot-symbols.sh), so it is resident in a few hundred KiB instead of spread over the whole
# text: the kernel maps code in 64 KiB windows around each fault (issue 7, docs/bench.md "Memory").
# Needs lld, Rust's default linker on x86_64 Linux only, so other targets link in the default
# order; HOT_ORDER= turns it off here too.
ifneq ($(filter x86_64-unknown-linux-gnu,$(TARGET)),)
HOT_ORDER ?= -C link-arg=-Wl,--symbol-ordering-file=$(CURDIR)/build/hot-symbols.txt -C link-arg=-Wl,--no-warn-symbol-ordering
endif

.PHONY: all build test e2e fuzz bench bench-quick bench-cgroup bench-cgroup-https bench-https bench-growth soak clean
all: campfire-room

campfire-room: build
	cp $(RELEASE) ./campfire-room
	@ldd ./campfire-room 2>&1 | grep -Eq 'not a dynamic executable|statically linked' \
		|| { echo "campfire-room is dynamically linked:"; ldd ./campfire-room; exit 1; }

build:
	RUSTFLAGS="$(STATIC) $(HOT_ORDER)" cargo build --release --locked --target $(TARGET) --bin campfire-room

# Integration tests run against the release binary built above; then the empty-root run.
test: campfire-room
	CAMPFIRE_BIN=$(CURDIR)/campfire-room cargo test --locked --workspace
	tests/container.sh $(CURDIR)/campfire-room
	$(MAKE) e2e

# Browser tests: playwright-core drives Debian's Chromium (/usr/bin/chromium) against the binary.
e2e: campfire-room
	cd e2e && { [ -d node_modules/playwright-core ] && [ -d node_modules/ws ] && [ -d node_modules/@rails/actioncable ] || npm ci --no-audit --no-fund; } \
		&& CAMPFIRE_BIN=$(CURDIR)/campfire-room node --test

# Long runs of the fuzz tests (tests/*_fuzz.rs; `make test` runs each for seconds): FUZZ_SECS
# seconds per target (one test file, one parser), one target at a time, built by the `fuzz`
# profile (optimised, overflow checks and debug assertions kept). FUZZ_SEED moves every
# generator to other inputs; each loop prints how many inputs it ran.
FUZZ_SECS ?= 600
FUZZ_SEED ?= 0
FUZZ_TARGETS ?= multipart_fuzz websocket_fuzz cable_fuzz cookies_fuzz envelopes_fuzz http_parser_fuzz richtext_fuzz
fuzz:
	cargo test --locked --profile fuzz --no-run $(addprefix --test ,$(FUZZ_TARGETS))
	for t in $(FUZZ_TARGETS); do \
		CAMPFIRE_FUZZ_SECS=$(FUZZ_SECS) CAMPFIRE_FUZZ_SEED=$(FUZZ_SEED) \
			cargo test --locked --profile fuzz --test $$t -- --test-threads=1 --nocapture || exit 1; \
	done

# The benchmark kit (docs/bench.md): seeds a fresh copy, runs the server pinned to one core.
bench: campfire-room
	bench/run.sh

bench-quick: campfire-room
	bench/run.sh quick

# The memory goal: quick HTTP load and 1,000 cable clients with the server in a 15 MB cgroup (root).
bench-cgroup: campfire-room
	bench/cgroup.sh

# Cost per request as the data grows (issue 18): seeds ×1, ×10, ×100 once (kept for re-runs),
# then cache on/off reads and posts to a 4-member and a ~5,000-member room at each scale.
bench-growth: campfire-room
	bench/growth.sh

# The same suite over HTTPS and wss://, the server serving its own certificate (issue 14 §2).
bench-cgroup-https: campfire-room
	CGROUP_TLS=1 bench/cgroup.sh

# The standing abuse suite (issue 15): overload to 4,096 connections, slowloris, never-read
# pipelines, Cable slow consumers and kill -9 mid-post, against the server in the 15 MB cgroup;
# one line per case (bench/soak.sh). Root, loopback only, about 2 minutes.
soak: campfire-room
	bench/soak.sh

# The HTTPS row: cached room page over TLS and full handshakes, against nginx with the same
# certificate and bytes (docs/bench.md "HTTPS").
bench-https: campfire-room
	bench/https.sh

clean:
	cargo clean
	rm -f campfire-room
