//! Character-bounded text for messages and rendered files: one cut rule, used by every crate that
//! shortens a string a user or model sees (never a byte count, never a split character).
//!
//! ```
//! use codemode_core::text::{char_prefix, truncate_chars};
//!
//! assert_eq!(truncate_chars("abcdef", 4), "abc…"); // at most 4 characters, `…` included
//! assert_eq!(truncate_chars("abcd", 4), "abcd");
//! assert_eq!(char_prefix("€€€", 2), "€€…"); // 2 characters kept, `…` after them
//! ```

/// `text` cut to at most `max_chars` characters, the last of them `…` when it was cut
/// (`max_chars` 0 gives an empty string).
pub fn truncate_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some(_) if max_chars == 0 => String::new(),
        Some(_) => {
            let end = text.char_indices().nth(max_chars - 1).map_or(text.len(), |(i, _)| i);
            format!("{}…", &text[..end])
        }
    }
}

/// The first `keep` characters of `text`, followed by `…` when there were more.
pub fn char_prefix(text: &str, keep: usize) -> String {
    match text.char_indices().nth(keep) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}
