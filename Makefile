# campfire-room: `make` builds the static release binary ./campfire-room; `make test` runs every test.
TARGET   := x86_64-unknown-linux-gnu
RELEASE  := target/$(TARGET)/release/campfire-room
# Static glibc: the binary must run in an empty root (FROM scratch).
STATIC   := -C target-feature=+crt-static

.PHONY: all build test clean
all: campfire-room

campfire-room: build
	cp $(RELEASE) ./campfire-room

build:
	RUSTFLAGS="$(STATIC)" cargo build --release --locked --target $(TARGET) --bin campfire-room

test: campfire-room
	CAMPFIRE_BIN=$(CURDIR)/campfire-room cargo test --locked --workspace

clean:
	cargo clean
	rm -f campfire-room
