//! Diagnostics as data: a kind, a message written for a model to act on, a 1-based position in the
//! user's source and a short code frame.

use std::fmt;

/// What a [`Diagnostic`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// The source does not parse as JavaScript or TypeScript.
    Syntax,
    /// The source uses module syntax (`import`, `export`, `import()`, `import.meta`, `require(...)`).
    ModuleSyntax,
    /// The source looks like a shell command line rather than a program.
    ShellLike,
    /// Valid TypeScript that Code Mode does not run (for example a namespace holding values).
    Unsupported,
    /// The source nests deeper than [`crate::MAX_NESTING`] levels.
    TooDeep,
}

/// One problem found in a cell, positioned in the user's source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// What kind of problem this is.
    pub kind: DiagnosticKind,
    /// A message written for a model to act on.
    pub message: String,
    /// 1-based line in the user's source.
    pub line: u32,
    /// 1-based column in the user's source, counted in Unicode scalar values.
    pub column: u32,
    /// A few lines of the source around the position with a caret under it.
    pub code_frame: String,
}

impl Diagnostic {
    /// Builds a diagnostic for the byte offset `offset` of `source`.
    pub(crate) fn at(kind: DiagnosticKind, message: impl Into<String>, source: &str, offset: u32) -> Self {
        let (line, column) = LineIndex::new(source).position(source, offset);
        Self { kind, message: message.into(), line, column, code_frame: code_frame(source, line, column) }
    }

    /// Builds a diagnostic at a 1-based (line, column) of `source`.
    pub(crate) fn at_position(
        kind: DiagnosticKind,
        message: impl Into<String>,
        source: &str,
        (line, column): (u32, u32),
    ) -> Self {
        Self { kind, message: message.into(), line, column, code_frame: code_frame(source, line, column) }
    }

    /// Renders the diagnostic as `file:line:column: message` followed by the code frame.
    pub fn render(&self, file_name: &str) -> String {
        format!("{file_name}:{}:{}: {}\n{}", self.line, self.column, self.message, self.code_frame)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Byte offsets of line starts, for offset -> (line, column) conversion.
pub(crate) struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub(crate) fn new(source: &str) -> Self {
        let mut starts = vec![0];
        let bytes = source.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(to_u32(i + 1)),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(to_u32(i + 1)),
                // U+2028 and U+2029 (E2 80 A8 / E2 80 A9) are line terminators in JavaScript.
                0xE2 if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) => {
                    starts.push(to_u32(i + 3));
                    i += 2;
                }
                _ => {}
            }
            i += 1;
        }
        Self { starts }
    }

    /// 1-based (line, column) of a byte offset; the column counts Unicode scalar values.
    pub(crate) fn position(&self, source: &str, offset: u32) -> (u32, u32) {
        let offset = offset.min(to_u32(source.len()));
        let line_idx = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts[line_idx] as usize;
        let mut end = offset as usize;
        while end > start && !source.is_char_boundary(end) {
            end -= 1;
        }
        let column = source.get(start..end).map_or(0, |s| s.chars().count());
        (to_u32(line_idx + 1), to_u32(column + 1))
    }
}

/// [`LineIndex::position`] for offsets that mostly grow: each call counts characters only from
/// the previous offset when it lies on the same line, so a pass over a long line is linear rather
/// than quadratic.
pub(crate) struct PositionCursor {
    index: LineIndex,
    /// The last offset looked up and its (line, column).
    last: Option<(u32, (u32, u32))>,
}

impl PositionCursor {
    pub(crate) fn new(source: &str) -> Self {
        Self { index: LineIndex::new(source), last: None }
    }

    /// 1-based (line, column) of a byte offset, as [`LineIndex::position`].
    pub(crate) fn position(&mut self, source: &str, offset: u32) -> (u32, u32) {
        let offset = offset.min(to_u32(source.len()));
        let line_idx = self.index.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let line_start = self.index.starts[line_idx];
        let found = match self.last {
            Some((last, (line, column)))
                if last <= offset && last >= line_start && source.is_char_boundary(last as usize) =>
            {
                let mut end = offset as usize;
                while end > last as usize && !source.is_char_boundary(end) {
                    end -= 1;
                }
                let more = source.get(last as usize..end).map_or(0, |s| s.chars().count());
                (line, column + to_u32(more))
            }
            _ => self.index.position(source, offset),
        };
        self.last = Some((offset, found));
        found
    }
}

pub(crate) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn split_lines(source: &str) -> Vec<&str> {
    source.split(['\n', '\u{2028}', '\u{2029}']).map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// At most two lines before the position, the line itself and a caret line.
fn code_frame(source: &str, line: u32, column: u32) -> String {
    const MAX_LINE_CHARS: usize = 160;
    let lines = split_lines(source);
    let line = line as usize;
    let first = line.saturating_sub(2).max(1);
    let width = line.to_string().len();
    let mut out = String::new();
    for n in first..=line.min(lines.len()) {
        let text: String = lines[n - 1].chars().take(MAX_LINE_CHARS).collect();
        out.push_str(&format!("{n:>width$} | {}\n", text.trim_end()));
    }
    let caret_at = (column as usize).saturating_sub(1).min(MAX_LINE_CHARS);
    out.push_str(&format!("{:>width$} | {}^", "", " ".repeat(caret_at)));
    out
}
