//! STAND-IN on the `build` branch only: the richtext helper's module replaces this file at merge.
//! It declares just the `Safe` type that `views::Out::html` accepts, with the signature from
//! docs/architecture.md, so the view layer compiles before the sanitizer exists.

/// HTML that came out of the sanitizer and may be written without escaping.
pub struct Safe(String);

impl Safe {
    /// The sanitized HTML.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
