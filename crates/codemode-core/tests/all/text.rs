//! The one character-bounded cut rule (`codemode_core::text`).

use codemode_core::text::{char_prefix, truncate_chars};

#[test]
fn truncate_chars_keeps_at_most_the_bound_including_the_ellipsis() {
    assert_eq!(truncate_chars("abcd", 4), "abcd", "at the bound: unchanged");
    assert_eq!(truncate_chars("abcde", 4), "abc…", "one past: cut to the bound");
    assert_eq!(truncate_chars("€€€€€", 3), "€€…", "counts characters, never splits one");
    assert_eq!(truncate_chars("abc", 0), "");
    assert_eq!(truncate_chars("", 0), "");
    assert_eq!(truncate_chars("ab", 1), "…");
    for max in 0..8 {
        assert!(truncate_chars("ü€𝄞abcdefgh", max).chars().count() <= max);
    }
}

#[test]
fn char_prefix_keeps_the_first_characters_then_an_ellipsis() {
    assert_eq!(char_prefix("abc", 3), "abc");
    assert_eq!(char_prefix("abcd", 3), "abc…");
    assert_eq!(char_prefix("𝄞𝄞𝄞𝄞", 2), "𝄞𝄞…");
}
