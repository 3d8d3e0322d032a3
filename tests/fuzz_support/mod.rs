//! Shared by the randomised tests (`*_fuzz.rs`, `crypto_hostile.rs`, `richtext_structure.rs`):
//! one deterministic generator, so a failure reproduces exactly, and the budget of a run.
//!
//! A fuzz loop asks its `Budget` whether to go on. By default it runs the loop's fixed count of
//! inputs (seconds in all: what `make test` runs). `CAMPFIRE_FUZZ_SECS=N` gives each test file
//! (one target: one parser) N seconds instead, shared among its loops by `share` (`make fuzz`),
//! and `CAMPFIRE_FUZZ_SEED` (any integer) moves every generator to another sequence, so that
//! runs after the first explore new inputs. Each loop prints one line with its name, the inputs
//! it ran and the seed; a failure reproduces with the same seed (and the same or a longer run).

#![allow(dead_code)] // each test file uses a different part of this helper

use std::time::{Duration, Instant};

/// xorshift64*: small, fast, and good enough to drive generators.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`, moved by `CAMPFIRE_FUZZ_SEED` when that is set.
    pub fn new(seed: u64) -> Rng {
        let s = seed ^ extra_seed().wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Rng(if s == 0 { 0x9E37_79B9_7F4A_7C15 } else { s })
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// Random bytes, fewer than `n` of them.
    pub fn some_bytes(&mut self, n: usize) -> Vec<u8> {
        let len = self.below(n);
        self.bytes(len)
    }
}

fn extra_seed() -> u64 {
    std::env::var("CAMPFIRE_FUZZ_SEED").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

/// How long one fuzz loop runs: `inputs` by default, `CAMPFIRE_FUZZ_SECS` seconds when set.
pub struct Budget {
    name: &'static str,
    inputs: u64,
    until: Option<Instant>,
    done: u64,
    started: Instant,
}

impl Budget {
    pub fn new(name: &'static str, inputs: u64) -> Budget {
        let secs = std::env::var("CAMPFIRE_FUZZ_SECS").ok().and_then(|s| s.trim().parse::<u64>().ok());
        let started = Instant::now();
        Budget { name, inputs, until: secs.map(|s| started + Duration::from_secs(s)), done: 0, started }
    }

    /// In a timed run, this loop gets `percent` of its file's seconds (the file's loops share
    /// them); a counted run is unchanged.
    pub fn share(mut self, percent: u64) -> Budget {
        if let Some(t) = self.until {
            self.until = Some(self.started + (t - self.started) * percent as u32 / 100);
        }
        self
    }

    /// Whether to run one more input (counting it).
    pub fn more(&mut self) -> bool {
        let go = match self.until {
            // The clock is read every 64 inputs: cheap, and a second is plenty of precision.
            Some(t) => !self.done.is_multiple_of(64) || Instant::now() < t,
            None => self.done < self.inputs,
        };
        self.done += go as u64;
        go
    }

    /// Inputs run so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Whether this is a long (`make fuzz`) run.
    pub fn timed(&self) -> bool {
        self.until.is_some()
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            eprintln!(
                "fuzz {}: {} inputs in {:.1} s, 0 failures (CAMPFIRE_FUZZ_SEED={})",
                self.name,
                self.done,
                self.started.elapsed().as_secs_f64(),
                extra_seed()
            );
        }
    }
}

/// Applies 1–4 random edits to `v`: a byte replaced by one of `interesting` or by noise, a byte
/// inserted or deleted, a run duplicated, or a piece of `other` spliced in.
pub fn mutate(r: &mut Rng, v: &mut Vec<u8>, interesting: &[u8], other: &[u8]) {
    for _ in 0..1 + r.below(4) {
        let at = r.below(v.len() + 1);
        match r.below(7) {
            0 if at < v.len() => v[at] = r.pick(interesting),
            1 if at < v.len() => v[at] = r.next() as u8,
            2 => v.insert(at, r.pick(interesting)),
            3 if at < v.len() => {
                v.remove(at);
            }
            4 if at < v.len() => {
                let end = (at + 1 + r.below(16)).min(v.len());
                let run = v[at..end].to_vec();
                v.splice(at..at, run);
            }
            5 if !other.is_empty() => {
                let from = r.below(other.len());
                let end = (from + 1 + r.below(32)).min(other.len());
                v.splice(at..at, other[from..end].iter().copied());
            }
            _ => v.truncate(at),
        }
    }
}
