//! messages/boosts#index/new/create/destroy against the real binary (spec/05
//! boosts_controller_test, spec/02 §4.27).

mod support;
use support::*;

#[test]
fn index_and_new() {
    let s = start();
    let r = s.get(DAVID, "/messages/1/boosts");
    assert_eq!(r.status, 200);
    assert!(r.body.contains(r#"<turbo-frame id="boosting_message_0001">"#));
    assert!(r.body.contains(r#"<div id="boost_1" class="boost boost-item""#));
    let n = s.get(DAVID, "/messages/1/boosts/new");
    assert_eq!(n.status, 200);
    assert!(n.body.contains(r#"<turbo-frame id="new_boost_message_0001">"#));
    assert!(n.body.contains(r#"name="boost[content]""#));
    assert_eq!(s.get(KEVIN, "/messages/4/boosts").status, 404, "Kevin is not in the watercooler");
    assert_eq!(s.get(DAVID, "/messages/999/boosts").status, 404);
}

#[test]
fn create_and_destroy() {
    let s = start();
    let r = s.post(JZ, "/messages/1/boosts", &[("boost[content]", "Nice!")]);
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some("/messages/1/boosts"));
    let id = s.query_int("SELECT max(id) FROM boosts");
    assert_eq!(s.query_text(&format!("SELECT content FROM boosts WHERE id = {id}")), "Nice!");
    assert!(s.get(JZ, "/messages/1/boosts").body.contains(&format!(r#"id="boost_{id}""#)));
    assert!(s.get(JZ, &format!("/rooms/{DESIGNERS}/messages")).body.contains("Nice!"), "the boost touches the message: cached fragment refreshed");
    assert_eq!(s.post(JZ, "/messages/1/boosts", &[]).status, 400);
    assert_eq!(s.post(KEVIN, "/messages/4/boosts", &[("boost[content]", "x")]).status, 404);
    let del = |user: i64, path: &str| s.post(user, path, &[("_method", "delete")]);
    assert_eq!(del(DAVID, &format!("/messages/1/boosts/{id}")).status, 404, "not David's boost");
    assert_eq!(del(JZ, &format!("/messages/2/boosts/{id}")).status, 404, "not on that message");
    assert_eq!(del(JZ, &format!("/messages/1/boosts/{id}")).status, 204);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM boosts WHERE id = {id}")), 0);
}
