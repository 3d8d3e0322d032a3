//! The per-request crypto path must not allocate once warm: verifying the
//! `session_token` cookie, a Turbo stream name or a signed id with a reused `Scratch`.
//! A counting global allocator checks it; this file holds a single test so no other test
//! thread allocates while it counts.

mod alloc_support;

use campfire::crypto::{cookies, signed_id, time, turbo, Keys, Scratch};

#[global_allocator]
static GLOBAL: alloc_support::Counting = alloc_support::Counting;

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
    let before = alloc_support::allocations();
    for _ in 0..100 {
        run(&mut scratch, &mut name);
    }
    assert_eq!(alloc_support::allocations() - before, 0);
}
