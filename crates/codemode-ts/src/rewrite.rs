//! Applies a list of edits to the source while keeping every line where it was, and records the
//! segments needed to map an output position back to the user's source.

use crate::diagnostic::{PositionCursor, to_u32};

/// One change to the source.
#[derive(Debug)]
pub(crate) enum EditKind {
    /// Replace every character with a space, keeping line terminators.
    Blank,
    /// Like [`EditKind::Blank`], but the first character becomes `;` so that removing a whole
    /// statement or class member cannot glue its neighbours together.
    BlankWithSemicolon,
    /// Replace the range with generated text; missing line breaks are appended so that the
    /// following source keeps its line.
    Replace(String),
}

#[derive(Debug)]
pub(crate) struct Edit {
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) kind: EditKind,
}

/// A run of output that starts at `out` and came from `src` (1-based line, column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) out: (u32, u32),
    pub(crate) src: (u32, u32),
    /// Generated text maps, as a whole, to the position it replaced.
    pub(crate) generated: bool,
}

/// Output code plus its position map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rewritten {
    pub(crate) code: String,
    pub(crate) segments: Vec<Segment>,
}

impl Rewritten {
    /// The identity: output equals source.
    pub(crate) fn identity(source: &str) -> Self {
        Self {
            code: source.to_owned(),
            segments: vec![Segment { out: (1, 1), src: (1, 1), generated: false }],
        }
    }

    /// Maps a 1-based output position to the user's source.
    pub(crate) fn map(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        if line == 0 || column == 0 {
            return None;
        }
        let idx = self.segments.partition_point(|s| s.out <= (line, column));
        let seg = self.segments.get(idx.checked_sub(1)?)?;
        if seg.generated {
            return Some(seg.src);
        }
        if seg.out.0 == line {
            Some((seg.src.0, seg.src.1 + (column - seg.out.1)))
        } else {
            Some((seg.src.0 + (line - seg.out.0), column))
        }
    }
}

struct Writer<'s> {
    source: &'s str,
    index: PositionCursor,
    out: Rewritten,
    line: u32,
    column: u32,
}

impl Writer<'_> {
    fn mark(&mut self, src_offset: u32, generated: bool) {
        let src = self.index.position(self.source, src_offset);
        let seg = Segment { out: (self.line, self.column), src, generated };
        // A later mark at the same output position supersedes the earlier one.
        if let Some(last) = self.out.segments.last_mut()
            && last.out == seg.out
        {
            *last = seg;
            return;
        }
        self.out.segments.push(seg);
    }

    fn push_char(&mut self, c: char, next: Option<char>) {
        self.out.code.push(c);
        match c {
            '\n' | '\u{2028}' | '\u{2029}' => {
                self.line += 1;
                self.column = 1;
            }
            '\r' if next != Some('\n') => {
                self.line += 1;
                self.column = 1;
            }
            '\r' => {}
            _ => self.column += 1,
        }
    }

    fn push_str(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            self.push_char(c, next);
        }
    }

    fn copy(&mut self, from: u32, to: u32) {
        if from >= to {
            return;
        }
        self.mark(from, false);
        let source = self.source;
        self.push_str(&source[from as usize..to as usize]);
    }

    fn blank(&mut self, from: u32, to: u32, semicolon: bool) {
        if from >= to {
            return;
        }
        self.mark(from, false);
        let source = self.source;
        let mut semicolon = semicolon;
        let mut chars = source[from as usize..to as usize].chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            if is_line_terminator(c) {
                self.push_char(c, next);
            } else if semicolon {
                semicolon = false;
                self.push_char(';', next);
            } else {
                self.push_char(' ', next);
            }
        }
    }

    fn generate(&mut self, from: u32, to: u32, text: &str) {
        self.mark(from, true);
        self.push_str(text);
        let (from_line, _) = self.index.position(self.source, from);
        let (to_line, _) = self.index.position(self.source, to);
        let wanted = to_line - from_line;
        let have = to_u32(text.chars().filter(|&c| is_line_terminator(c)).count());
        for _ in have..wanted {
            self.push_char('\n', None);
        }
    }
}

pub(crate) fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Applies `edits` to `source`. Edits nested in an earlier edit are dropped; a blank that
/// overlaps an earlier edit is trimmed to what remains.
pub(crate) fn apply(source: &str, mut edits: Vec<Edit>) -> Rewritten {
    edits.sort_by_key(|e| (e.start, e.end != e.start));
    let mut w = Writer {
        source,
        index: PositionCursor::new(source),
        out: Rewritten { code: String::with_capacity(source.len() + 64), segments: Vec::new() },
        line: 1,
        column: 1,
    };
    w.mark(0, false);
    let len = to_u32(source.len());
    let mut cursor = 0u32;
    for edit in edits {
        let end = edit.end.min(len);
        let mut start = edit.start.min(end);
        if start < cursor {
            match edit.kind {
                EditKind::Blank | EditKind::BlankWithSemicolon if end > cursor => start = cursor,
                _ => continue,
            }
        }
        w.copy(cursor, start);
        match &edit.kind {
            EditKind::Blank => w.blank(start, end, false),
            EditKind::BlankWithSemicolon => w.blank(start, end, true),
            EditKind::Replace(text) => w.generate(start, end, text),
        }
        cursor = cursor.max(end);
    }
    w.copy(cursor, len);
    w.out
}
