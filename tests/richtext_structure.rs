//! Structural fidelity: what we emit is exactly the tree a browser builds from it. 40,000
//! generated tag soups (misnested blocks, implied end tags, stray table parts, scope-bounding
//! elements that get unwrapped or dropped) go through both policies, and html5ever's
//! re-serialization of our output must equal our output.

mod richtext_common;

use campfire::richtext::{render_body, sanitize};
use richtext_common::*;

const PIECES: &[&str] = &[
    "<p>", "<div>", "</p>", "<button>", "<li>", "<ul>", "<ol>", "</li>", "</ul>", "<pre>", "\n", "x",
    "<a href=/x>", "</a>", "<b>", "</b>", "<table>", "<td>", "<tr>", "<h1>", "<h2>", "</h1>", "<dl>",
    "<dd>", "<dt>", "<font>", "<svg>", "</svg>", "<action-text-attachment>", "<figure>",
    "<figcaption>", "<br>", "</br>", "</div>", "<blockquote>", "</blockquote>", "<select>",
    "<option>", "<object>", "<marquee>", "<caption>", "<span>", "</span>", "<em>", "<code>",
    "<img src=/i.png>", "<hr>", "<!-- c -->", "<script>s</script>", "&amp;", "<u>", "</u>",
];

mod fuzz_support;
use fuzz_support::Rng;

#[test]
fn our_output_is_what_a_browser_builds_from_it() {
    let mut rng = Rng::new(0x0123456789ABCDEF);
    let mut failures = Vec::new();
    for _ in 0..40_000 {
        let case: String = (0..12).map(|_| rng.pick(PIECES)).collect();
        for out in [sanitize(&case).into_string(), render_body(&case, &users).into_string()] {
            let browser = browser_reserialized(&out);
            if browser != normalise_ours(&out) && failures.len() < 10 {
                failures.push(format!("{case:?}\n ours:    {out:?}\n browser: {browser:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
