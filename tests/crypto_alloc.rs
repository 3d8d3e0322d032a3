//! The per-request crypto path must not allocate once warm: verifying the
//! `session_token` cookie, a Turbo stream name or a signed id with a reused `Scratch`.
//! A counting global allocator checks it; this file holds a single test so no other test
//! thread allocates while it counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use campfire::crypto::{cookies, signed_id, time, turbo, Keys, Scratch};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; we only count.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn warm_verification_does_not_allocate() {
    let keys = Keys::derive(b"dummy");
    let now = time::now_ms();
    let mut set_cookie = Vec::new();
    cookies::set_session_token(
        &keys,
        b"AxJs94fteQ5Autv2VrKsH68c",
        now,
        true,
        &mut set_cookie,
    );
    let value = set_cookie[b"session_token=".len()..]
        .split(|&c| c == b';')
        .next()
        .unwrap()
        .to_vec();
    let mut stream = Vec::new();
    turbo::sign_stream_name(&keys, b"rooms", &mut stream);
    let mut avatar = Vec::new();
    signed_id::avatar_token(&keys, 42, &mut avatar);
    let mut name = Vec::with_capacity(64);

    let mut scratch = Scratch::default();
    let run = |scratch: &mut Scratch, name: &mut Vec<u8>| {
        let t = cookies::read_session_token(&keys, &value, now, scratch).expect("valid cookie");
        assert_eq!(t.as_bytes(), b"AxJs94fteQ5Autv2VrKsH68c");
        name.clear();
        assert!(turbo::verify_stream_name(
            &keys, &stream, now, scratch, name
        ));
        assert_eq!(
            signed_id::verify(&keys, &avatar, signed_id::AVATAR, now, scratch),
            Some(42)
        );
    };
    run(&mut scratch, &mut name);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..100 {
        run(&mut scratch, &mut name);
    }
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed) - before, 0);
}
