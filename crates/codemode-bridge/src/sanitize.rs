//! Host and tool error messages, made safe to show to guest code (and through it, to the model).

/// Longest message [`sanitize_error`] returns, in characters (plus a trailing `…` when cut).
pub const MAX_ERROR_CHARS: usize = 400;

/// What a message becomes when nothing is left after sanitizing.
pub const EMPTY_ERROR: &str = "the tool failed";

/// Only this much of a message is looked at (bounded work on a hostile or huge message).
const SCAN_BYTES: usize = 16 * 1024;

/// Words that mark the value after them (`key=value`, `key: value`) as a secret (case-insensitive,
/// matched as a substring of the key; a key ending in `key` counts as well).
const SECRET_KEYS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "apikey",
    "api_key",
    "api-key",
    "authorization",
    "auth",
    "credential",
    "cookie",
    "session",
    "private_key",
    "private-key",
    "signature",
];

/// Prefixes of well-known credential formats (OpenAI, GitHub, Slack, AWS, Google, GitLab).
const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "AKIA",
    "AIza",
    "glpat-",
];

/// Makes a host or tool error message safe for the guest.
///
/// What it does, in order:
/// 1. looks at the first 16 KiB only;
/// 2. drops error chains and traces: everything from a line starting with `Caused by:`,
///    `Stack backtrace:`, `Backtrace:` or `Traceback (most recent call last)` on, and every line that
///    looks like a stack frame (`at …`, `12: …`, `File "…"`, a `RUST_BACKTRACE` note);
/// 3. joins the remaining lines into one line and collapses whitespace;
/// 4. replaces absolute paths (`/x…`, `~/…`, `C:\…`, `C:/…`, `file://…`, also after `=`, `(`, quotes)
///    with `<path>`;
/// 5. replaces secrets with `[redacted]`: the value of `key=value` and `key: value` when the key
///    contains a secret word (`token`, `secret`, `password`, `apikey`, `authorization`, `cookie`,
///    `session`, `key`, …), the word after `Bearer`/`Basic`, the user info of URLs
///    (`https://user:pass@host`), tokens with a well-known credential prefix (`sk-`, `ghp_`, `xoxb-`,
///    `AKIA`, …) and opaque tokens of 40+ characters mixing letters and digits;
/// 6. cuts the result to [`MAX_ERROR_CHARS`] characters; an empty result becomes `EMPTY_ERROR` ("the tool failed").
///
/// It is a best-effort filter for accidental leaks, not a guarantee: hosts should not put secrets in
/// error messages in the first place.
pub fn sanitize_error(message: &str) -> String {
    let scanned = match message.char_indices().take_while(|(i, _)| *i < SCAN_BYTES).last() {
        Some((i, c)) if i + c.len_utf8() < message.len() => &message[..i + c.len_utf8()],
        _ => message,
    };
    let mut kept = Vec::new();
    for line in scanned.lines() {
        let t = line.trim();
        if [
            "Caused by:",
            "Stack backtrace:",
            "stack backtrace:",
            "Backtrace:",
            "Traceback (most recent call last)",
        ]
        .iter()
        .any(|p| t.starts_with(p))
        {
            break;
        }
        if is_frame_line(t) {
            continue;
        }
        kept.push(t);
    }
    let joined = kept.join(" ");
    let mut out: Vec<String> = Vec::new();
    let mut redact_next = false;
    for token in joined.split_whitespace() {
        let lower = token.to_ascii_lowercase();
        let bare = lower.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-');
        if redact_next {
            if bare == "bearer" || bare == "basic" {
                out.push(token.to_owned());
                continue;
            }
            redact_next = false;
            out.push("[redacted]".into());
            continue;
        }
        if bare == "bearer" || bare == "basic" || (lower.ends_with(':') && is_secret_key(bare)) {
            out.push(token.to_owned());
            redact_next = true;
            continue;
        }
        out.push(clean_token(token));
    }
    let line = out.join(" ");
    let result = match line.char_indices().nth(MAX_ERROR_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    };
    if result.is_empty() { EMPTY_ERROR.to_owned() } else { result }
}

fn is_frame_line(t: &str) -> bool {
    if t.starts_with("at ") || t.starts_with("File \"") || t.contains("RUST_BACKTRACE") {
        return true;
    }
    // Rust backtrace frames: `12: module::function`.
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t[digits..].starts_with(": ") && t[digits + 2..].contains("::")
}

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    !key.is_empty() && (key.ends_with("key") || SECRET_KEYS.iter().any(|w| key.contains(w)))
}

/// Cleans one whitespace-free token.
fn clean_token(token: &str) -> String {
    // Whole-token credentials.
    let bare =
        token.trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | ')' | '[' | ']' | ',' | ';' | '.'));
    if looks_like_credential(bare) {
        return token.replacen(bare, "[redacted]", 1);
    }
    let mut out = String::with_capacity(token.len());
    let chars: Vec<char> = token.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let boundary =
            i == 0 || matches!(chars[i - 1], '=' | '(' | '"' | '\'' | '[' | '<' | '{' | ',' | ':' | '`');
        if boundary && let Some(len) = path_len(&chars[i..]) {
            out.push_str("<path>");
            i += len;
            continue;
        }
        if c == '@'
            && let Some(start) = userinfo_start(&out)
        {
            out.truncate(start);
            out.push_str("[redacted]@");
            i += 1;
            continue;
        }
        if c == '=' || (c == ':' && i + 1 < chars.len() && chars[i + 1] != '/') {
            let key: String = out
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if is_secret_key(&key) {
                out.push(c);
                out.push_str("[redacted]");
                i += 1;
                while i < chars.len() && !matches!(chars[i], '&' | ',' | ';' | '"' | '\'' | ')' | ']' | '}') {
                    i += 1;
                }
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Length (in chars) of an absolute path starting at `s[0]`, if one starts there.
fn path_len(s: &[char]) -> Option<usize> {
    let starts = match s {
        ['/', c, ..] => c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-'),
        ['~', '/', ..] => true,
        [d, ':', '\\' | '/', ..] => d.is_ascii_alphabetic(),
        ['f', 'i', 'l', 'e', ':', '/', '/', ..] => true,
        _ => false,
    };
    if !starts {
        return None;
    }
    let len =
        s.iter().take_while(|c| !matches!(c, '"' | '\'' | ')' | ']' | '>' | '}' | ',' | ';' | '`')).count();
    // A trailing `:` or `.` belongs to the sentence (`open /x/y: denied`), not to the path.
    Some(s[..len].iter().rev().skip_while(|c| matches!(c, ':' | '.')).count().max(1))
}

/// If `out` ends with `scheme://user[:pass]`, the index where the user info starts.
fn userinfo_start(out: &str) -> Option<usize> {
    let scheme_end = out.rfind("://")? + 3;
    let info = &out[scheme_end..];
    (!info.is_empty() && !info.contains('/')).then_some(scheme_end)
}

fn looks_like_credential(t: &str) -> bool {
    if t.len() >= 16 && SECRET_PREFIXES.iter().any(|p| t.starts_with(p)) {
        return t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    }
    t.len() >= 40
        && t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '='))
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().any(|c| c.is_ascii_alphabetic())
        && !t.starts_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_chains_frames_paths_and_secrets() {
        let cases = [
            ("plain failure", "plain failure"),
            ("", EMPTY_ERROR),
            ("   \n  ", EMPTY_ERROR),
            (
                "Error: boom\n    at run (/home/alice/app/index.js:10:5)\n    at next (node:internal)",
                "Error: boom",
            ),
            ("read failed\n\nCaused by:\n    0: /etc/shadow: permission denied", "read failed"),
            ("cannot open /home/alice/.ssh/id_rsa: denied", "cannot open <path>: denied"),
            ("cannot open \"/var/lib/x.db\"", "cannot open \"<path>\""),
            ("config at C:\\Users\\bob\\cfg.json is bad", "config at <path> is bad"),
            ("see file:///opt/x/y.txt", "see <path>"),
            ("path=~/secrets/x failed", "path=<path> failed"),
            ("request failed: api_key=abc123&user=bob", "request failed: api_key=[redacted]&user=bob"),
            ("Authorization: Bearer abc.def.ghi", "Authorization: Bearer [redacted]"),
            ("header bearer xyz rejected", "header bearer [redacted] rejected"),
            ("GET https://bob:hunter2@example.com/x 401", "GET https://[redacted]@example.com/x 401"),
            ("token sk-abcdefghijklmnop1234 invalid", "token [redacted] invalid"),
            ("using ghp_0123456789abcdefABCDEF0123456789abcd", "using [redacted]"),
            ("password: hunter2 rejected", "password: [redacted] rejected"),
            ("ratio 1/2 and and/or stay", "ratio 1/2 and and/or stay"),
            ("https://example.com/a/b stays", "https://example.com/a/b stays"),
            ("thread 'main' panicked\nstack backtrace:\n 0: std::x", "thread 'main' panicked"),
            ("x\n   3: core::panicking::panic\ny", "x y"),
        ];
        for (input, expected) in cases {
            assert_eq!(sanitize_error(input), expected, "{input:?}");
        }
    }

    #[test]
    fn long_messages_are_bounded() {
        let long = "word ".repeat(10_000);
        let s = sanitize_error(&long);
        assert_eq!(s.chars().count(), MAX_ERROR_CHARS + 1);
        assert!(s.ends_with('…'));
        let huge = "é".repeat(100_000);
        assert!(sanitize_error(&huge).chars().count() <= MAX_ERROR_CHARS + 1);
        let opaque = format!("id {} end", "a1".repeat(25));
        assert_eq!(sanitize_error(&opaque), "id [redacted] end");
    }
}
