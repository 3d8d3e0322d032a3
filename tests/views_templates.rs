//! The template compiler end to end: tests/fixtures/templates is compiled by build.rs into real
//! Rust (included below) and rendered here; the compiler's parser is also exercised directly
//! for the cases that must fail the build. Also covers `views::Out` escaping and the health page.

use campfire::views::Out;

#[allow(dead_code)]
#[path = "../build/dirs.rs"]
mod dirs;
#[allow(dead_code)]
#[path = "../build/templates.rs"]
mod compiler;

mod fixtures {
    include!(concat!(env!("OUT_DIR"), "/fixture_templates.rs"));
}

fn render_to_string(f: impl FnOnce(&mut Out)) -> String {
    let mut buf = Vec::new();
    f(&mut Out::new(&mut buf));
    String::from_utf8(buf).unwrap()
}

struct Page;
impl fixtures::page::View for Page {
    fn title(&self, o: &mut Out) {
        o.text("Tom & \"Jerry\"");
    }
    fn r#type(&self, o: &mut Out) {
        o.attr("dark");
    }
    fn body(&self, o: &mut Out) {
        o.text("<script>'x'</script>");
    }
}

#[test]
fn top_level_template_renders_holes_comments_and_assets() {
    let html = render_to_string(|o| fixtures::page::render(&Page, o));
    let css = campfire::assets::url("robots.txt").unwrap();
    let expected = format!(
        "\n<html lang=\"en\"><head><title>Tom &amp; &quot;Jerry&quot; · Campfire</title>\n\
         <link rel=\"stylesheet\" href=\"{css}\"></head>\n\
         <body class=\"dark\"><h1>Tom &amp; &quot;Jerry&quot;</h1>\n\
         &lt;script&gt;&#39;x&#39;&lt;/script&gt;\n\
         </body></html>"
    );
    assert_eq!(html, expected);
}

struct Room;
impl fixtures::rooms::show::View for Room {
    fn room_id(&self, o: &mut Out) {
        o.int(-42);
    }
    fn room_name(&self, o: &mut Out) {
        o.attr("a'b");
    }
    fn messages(&self, o: &mut Out) {
        // a hole method renders another (nested) template
        for (id, content) in [(1, "hi"), (2, "<b>")] {
            fixtures::rooms::messages::_message::render(&Msg(id, content), o);
        }
    }
}
struct Msg(i64, &'static str);
impl fixtures::rooms::messages::_message::View for Msg {
    fn id(&self, o: &mut Out) {
        o.int(self.0);
    }
    fn content(&self, o: &mut Out) {
        o.text(self.1);
    }
}

#[test]
fn nested_folders_become_nested_modules() {
    let html = render_to_string(|o| fixtures::rooms::show::render(&Room, o));
    assert_eq!(
        html,
        "<section id=\"room_-42\" data-name=\"a&#39;b\">\
         <div id=\"message_1\">hi</div><div id=\"message_2\">&lt;b&gt;</div></section>"
    );
    struct Form;
    impl fixtures::rooms::edit_form::View for Form {
        fn field(&self, o: &mut Out) {
            o.text("x");
        }
    }
    assert_eq!(render_to_string(|o| fixtures::rooms::edit_form::render(&Form, o)), "<form>x</form>");
}

#[test]
fn holeless_template_is_one_constant_and_keeps_whitespace() {
    assert_eq!(fixtures::plain::r#static::BYTES, b"<pre>\n  kept\n</pre>\n");
    assert_eq!(render_to_string(|o| fixtures::plain::r#static::render(&(), o)), "<pre>\n  kept\n</pre>\n");
}

#[test]
fn health_page_is_the_73_byte_green_page() {
    let up = campfire::views::health::up::BYTES;
    assert_eq!(up, b"<!DOCTYPE html><html><body style=\"background-color: green\"></body></html>");
    assert_eq!(up.len(), 73);
}

#[test]
fn out_escapes_the_five_characters_and_copies_the_rest() {
    let s = render_to_string(|o| o.text("a&b<c>d\"e'f ü €"));
    assert_eq!(s, "a&amp;b&lt;c&gt;d&quot;e&#39;f ü €");
    assert_eq!(render_to_string(|o| o.text("")), "");
    assert_eq!(render_to_string(|o| o.attr("&&")), "&amp;&amp;");
    assert_eq!(render_to_string(|o| o.static_bytes(b"<b>")), "<b>");
}

#[test]
fn out_int_covers_the_whole_range() {
    for n in [0, 7, -7, 10, 1234567890, i64::MAX, i64::MIN] {
        assert_eq!(render_to_string(|o| o.int(n)), n.to_string());
    }
}

#[test]
fn out_appends_after_existing_bytes() {
    let mut buf = b"HTTP".to_vec();
    Out::new(&mut buf).text("<");
    assert_eq!(buf, b"HTTP&lt;");
}

#[test]
fn out_asset_writes_the_fingerprinted_url() {
    let url = campfire::assets::url("robots.txt").unwrap();
    assert_eq!(render_to_string(|o| o.asset("robots.txt")), url);
}

// --- the parser, directly ---

fn no_assets(_: &str) -> Option<String> {
    None
}

fn parse(src: &str) -> Result<Vec<compiler::Piece>, String> {
    compiler::parse(src, "t.html", &no_assets)
}

#[test]
fn parse_keeps_holes_in_order_and_drops_comments_and_final_newline() {
    use compiler::Piece::*;
    let pieces = parse("a{{x}}b{{! gone }}c\n{{y}}{{x}}\n").unwrap();
    assert_eq!(
        pieces,
        vec![
            Static(b"a".to_vec()),
            Hole("x".into(), 1),
            Static(b"bc\n".to_vec()),
            Hole("y".into(), 2),
            Hole("x".into(), 2),
        ]
    );
    assert_eq!(parse("only text\r\n").unwrap(), vec![Static(b"only text".to_vec())]);
    assert_eq!(parse("").unwrap(), vec![]);
}

#[test]
fn parse_rejects_bad_hole_names_with_file_and_line() {
    for (src, line) in [
        ("\n\n{{Title}}", 3),
        ("{{room-name}}", 1),
        ("a\n{{9lives}}", 2),
        ("{{}}", 1),
        ("{{ _ }}", 1),
        ("{{self}}", 1),
        ("{{a b}}", 1),
        ("{{! multi\nline }}\n{{x.y}}", 3),
    ] {
        let err = parse(src).unwrap_err();
        assert!(err.starts_with(&format!("t.html:{}: bad hole name", line)), "{src:?} gave {err}");
    }
}

#[test]
fn parse_rejects_unclosed_holes_and_unknown_assets() {
    assert!(parse("ok\n{{oops").unwrap_err().starts_with("t.html:2: "));
    let err = parse("{{asset:nope.css}}").unwrap_err();
    assert!(err.starts_with("t.html:1: unknown asset \"nope.css\""), "{err}");
    let known = |n: &str| (n == "app.css").then(|| "/assets/app-12345678.css".to_string());
    let pieces = compiler::parse("<a href=\"{{asset: app.css }}\">", "t.html", &known).unwrap();
    assert_eq!(pieces, vec![compiler::Piece::Static(b"<a href=\"/assets/app-12345678.css\">".to_vec())]);
}

#[test]
fn keywords_become_raw_identifiers() {
    assert_eq!(compiler::ident("type"), "r#type");
    assert_eq!(compiler::ident("match"), "r#match");
    assert_eq!(compiler::ident("room"), "room");
}

#[test]
fn byte_literals_escape_what_rust_needs() {
    assert_eq!(compiler::byte_literal(b"a\"\\\n\t\xe2\x82\xac~"), "b\"a\\\"\\\\\\n\\t\\xe2\\x82\\xac~\"");
}
