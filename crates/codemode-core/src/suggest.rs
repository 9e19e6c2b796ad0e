//! One validation style for every JSON file and config the project reads (`tools.codeMode`, the
//! fixture catalog, the gateway config): an error names the JSON path, says what is allowed, and
//! for a mistyped key suggests the closest allowed one.
//!
//! ```
//! use codemode_core::suggest::unknown_key;
//!
//! assert_eq!(
//!     unknown_key("timeout", &["enabled", "timeoutMs"]),
//!     "unknown key; did you mean `timeoutMs`? allowed keys are enabled, timeoutMs"
//! );
//! ```

/// The message for a key that is not one of `allowed`: a did-you-mean hint when one is close,
/// then the allowed keys.
pub fn unknown_key(key: &str, allowed: &[&str]) -> String {
    let hint = closest(key, allowed).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    format!("unknown key; {hint}allowed keys are {}", allowed.join(", "))
}

/// The allowed key closest to `key`, if it is close enough to be a likely typo.
pub fn closest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let lower = key.to_ascii_lowercase();
    allowed
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
