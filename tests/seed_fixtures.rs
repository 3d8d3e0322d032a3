//! The shared fixture builder itself: the seeded database holds spec/05 §F's facts and every
//! fixture person is signed in by their jar.

mod support;
use support::*;

#[test]
fn the_seed_holds_the_fixture_facts_and_signs_people_in() {
    let s = start();
    assert_eq!(s.query_int("SELECT count(*) FROM users"), 5);
    assert_eq!(s.query_int("SELECT count(*) FROM rooms"), 7);
    assert_eq!(s.query_int("SELECT count(*) FROM memberships"), 19);
    assert_eq!(s.query_int("SELECT count(*) FROM messages"), 13);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {WATERCOOLER}")), 10);
    assert_eq!(s.query_int("SELECT count(*) FROM message_search_index WHERE message_search_index MATCH 'cuckoo'"), 1);
    assert_eq!(s.query_text(&format!("SELECT name FROM rooms WHERE id = {DESIGNERS}")), "Designers");
    assert_eq!(s.query_int("SELECT max(room_id) FROM memberships WHERE user_id = 127326141"), DAVID_AND_KEVIN);
    assert_eq!(session_cookie(VECTOR_TOKEN).len(), VECTOR_COOKIE.len());
    // Signed in, `/` goes to the person's original room; signed out, to sign-in.
    for user in [DAVID, JASON, JZ, KEVIN] {
        let r = s.get(user, "/");
        assert_eq!(r.status, 302, "user {user}: {r:?}\n{}", s.srv.stderr());
        assert!(r.location().unwrap_or("").starts_with("/rooms/"), "{r:?}");
    }
    let r = s.srv.send(&Request::get("/"));
    assert_eq!(r.location(), Some("/session/new"));
}
