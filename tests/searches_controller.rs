//! searches#index/create/clear against the real binary (spec/05 searches_controller_test,
//! spec/02 §4.29, bench/workloads.md §4.1 "search").

mod support;
use support::*;

fn ids_in(body: &str) -> Vec<i64> {
    body.split("data-message-id=\"").skip(1).filter_map(|s| s.split('"').next()?.parse().ok()).collect()
}

#[test]
fn search_page_lists_matches_in_reachable_rooms() {
    let s = start();
    let empty = s.get(DAVID, "/searches");
    assert_eq!(empty.status, 200);
    assert!(empty.body.starts_with("<!doctype html>") && empty.body.trim_end().ends_with("</html>"));
    assert!(ids_in(&empty.body).is_empty(), "no .message without a query");
    assert!(empty.body.contains(r#"href="/searches?q=pizza">“pizza”</a>"#), "recent searches");
    let r = s.get(DAVID, "/searches?q=charm");
    assert_eq!(ids_in(&r.body), vec![3]);
    assert!(r.body.contains("s a charm.</div>"));
    assert!(r.body.contains(">Designers</a>"), "search results show the room name");
    assert!(r.body.contains("“charm” 1"), "the pill");
    assert!(r.body.contains(r#"value="charm""#));
    assert_eq!(s.get(DAVID, "/searches?q=charm").body, r.body, "byte-stable");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM searches WHERE user_id = {DAVID}")), 1, "GET records nothing");
    // Words are ANDed, operators are words, stems match.
    assert_eq!(ids_in(&s.get(DAVID, "/searches?q=quotes%20OR%20charm").body), Vec::<i64>::new());
    assert_eq!(ids_in(&s.get(DAVID, "/searches?q=stories").body), vec![6, 7], "porter: story and stories");
    // Not a member: no results.
    assert_eq!(ids_in(&s.get(KEVIN, "/searches?q=charm").body), vec![3], "Kevin is in Designers");
    s.srv.sql(&format!("DELETE FROM memberships WHERE room_id = {DESIGNERS} AND user_id = {KEVIN}"));
    assert!(ids_in(&s.get(KEVIN, "/searches?q=charm").body).is_empty());
}

#[test]
fn create_records_and_redirects_clear_forgets() {
    let s = start();
    let r = s.post(DAVID, "/searches", &[("q", "coffee & tea!")]);
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some("/searches?q=coffee+++tea+"));
    assert_eq!(s.query_text(&format!("SELECT query FROM searches WHERE user_id = {DAVID} ORDER BY updated_at DESC, id DESC LIMIT 1")), "coffee   tea ");
    for i in 0..12 {
        assert_eq!(s.post(DAVID, "/searches", &[("q", &format!("q{i}"))]).status, 302);
    }
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM searches WHERE user_id = {DAVID}")), 10, "the last ten");
    assert_eq!(s.post(DAVID, "/searches", &[]).status, 400);
    assert_eq!(s.post(DAVID, "/searches", &[("q", "!!")]).location(), Some("/searches"));
    let c = s.post(DAVID, "/searches/clear", &[("_method", "delete")]);
    assert_eq!(c.status, 302);
    assert_eq!(c.location(), Some("/searches"));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM searches WHERE user_id = {DAVID}")), 0);
}
