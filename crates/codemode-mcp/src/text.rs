//! Untrusted text -> text that is safe inside a `/** ... */` comment or a string literal.
//!
//! Rules of [`comment_text`] (applied in order):
//! 1. control, invisible and direction-changing characters (C0/C1 controls, zero-width and bidi
//!    marks, line/paragraph separators U+2028/U+2029, BOM, tag characters) become spaces;
//! 2. each line loses leading markdown block markers (`#` headings, `>` quotes) and the lines are
//!    joined with single spaces; runs of whitespace collapse to one space;
//! 3. runs of three or more backticks (code fences) are removed;
//! 4. `*/` becomes `*\/` (the comment cannot be closed), `/*` becomes `/\*`, and `@` becomes `\@`
//!    (no JSDoc tag can be injected);
//! 5. the result is cut to a character budget, ending in `…` when cut.

/// Whether `c` is a control, invisible or direction-changing character.
pub(crate) fn is_invisible(c: char) -> bool {
    // Fast path: printable ASCII (almost every character of a real description).
    if (' '..='~').contains(&c) {
        return false;
    }
    matches!(c,
        '\u{00}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{ad}' | '\u{061c}' | '\u{180e}'
        | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}'
        | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}

/// The first line of `text` that has visible content, neutralized and cut to `max_chars`.
pub(crate) fn first_line(text: &str, max_chars: usize) -> String {
    text.split(['\n', '\r', '\u{2028}', '\u{2029}'])
        .map(|line| comment_text(line, max_chars))
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

/// `text` as one plain line for a model-facing list: control, invisible and direction-changing
/// characters become spaces, whitespace collapses, and the result is cut to `max_chars` (ending
/// in `…` when cut). Reads a bounded prefix only.
pub(crate) fn plain_line(text: &str, max_chars: usize) -> String {
    let scan_limit = max_chars.saturating_mul(8).saturating_add(64);
    let mut out = String::new();
    let mut chars = 0usize;
    let mut pending_space = false;
    for c in text.chars().take(scan_limit) {
        if is_invisible(c) || c.is_whitespace() {
            pending_space = chars > 0;
            continue;
        }
        if chars > max_chars {
            break;
        }
        if std::mem::take(&mut pending_space) {
            out.push(' ');
            chars += 1;
        }
        out.push(c);
        chars += 1;
    }
    truncate_chars(&out, max_chars)
}

/// The first sentence of the first visible line of `text` (up to the first `.`, `!` or `?`
/// followed by a space, or the whole line), neutralized and cut to `max_chars`.
pub(crate) fn first_sentence(text: &str, max_chars: usize) -> String {
    let line = first_line(text, max_chars.saturating_mul(2).max(max_chars));
    let mut end = line.len();
    let mut previous: Option<char> = None;
    for (at, c) in line.char_indices() {
        if c == ' ' && matches!(previous, Some('.' | '!' | '?')) {
            end = at;
            break;
        }
        previous = Some(c);
    }
    let sentence = line[..end].trim_end();
    truncate_chars(sentence, max_chars)
}

/// `text` flattened to one neutralized line of at most `max_chars` characters (see the module docs).
///
/// One pass, one allocation: it reads at most a bounded prefix of `text` (hostile strings may be
/// megabytes long) and stops as soon as the budget is exceeded.
pub(crate) fn comment_text(text: &str, max_chars: usize) -> String {
    let scan_limit = max_chars.saturating_mul(8).saturating_add(64);
    let capacity = text.len().min(max_chars.saturating_add(2).saturating_mul(2));
    let mut out = Writer {
        out: String::with_capacity(capacity),
        chars: 0,
        limit: max_chars.saturating_add(1),
        pending_space: false,
        last: None,
    };
    let mut at_line_start = true;
    let mut backticks = 0usize;
    for c in text.chars().take(scan_limit) {
        if out.full() {
            break;
        }
        let c = if is_invisible(c) && !is_line_break(c) { ' ' } else { c };
        if c == '`' {
            backticks += 1;
            at_line_start = false;
            continue;
        }
        out.backticks(backticks);
        backticks = 0;
        if is_line_break(c) {
            at_line_start = true;
            out.space();
            continue;
        }
        if at_line_start && (c.is_whitespace() || c == '#' || c == '>') {
            continue;
        }
        at_line_start = false;
        if c.is_whitespace() {
            out.space();
        } else {
            out.push(c);
        }
    }
    out.backticks(backticks);
    let Writer { out, chars, .. } = out;
    if chars <= max_chars {
        return out;
    }
    truncate_chars(&out, max_chars)
}

fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Output of [`comment_text`]: collapses spaces and escapes `@`, `*/` and `/*` as it writes.
struct Writer {
    out: String,
    chars: usize,
    limit: usize,
    pending_space: bool,
    /// The last character written (`out`'s last), kept so `push` need not decode it again.
    last: Option<char>,
}

impl Writer {
    fn full(&self) -> bool {
        self.chars > self.limit
    }

    fn space(&mut self) {
        self.pending_space = !self.out.is_empty();
    }

    fn backticks(&mut self, n: usize) {
        // Runs of three or more are code fences: dropped.
        if n < 3 {
            for _ in 0..n {
                self.push('`');
            }
        }
    }

    fn push(&mut self, c: char) {
        if std::mem::take(&mut self.pending_space) {
            self.raw(' ');
        }
        match (self.last, c) {
            (_, '@') | (Some('*'), '/') | (Some('/'), '*') => self.raw('\\'),
            _ => {}
        }
        self.raw(c);
    }

    fn raw(&mut self, c: char) {
        self.out.push(c);
        self.chars += 1;
        self.last = Some(c);
    }
}

/// `text` cut to at most `max_chars` characters, the last one `…` when cut; never splits a `\`
/// escape from the character it escapes.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> String {
    let mut out = codemode_core::text::truncate_chars(text, max_chars);
    if out != text && out.pop().is_some() {
        // Dropping trailing backslashes keeps a cut from separating `\` from what it escaped.
        while out.ends_with('\\') {
            out.pop();
        }
        out.push('…');
    }
    out
}
