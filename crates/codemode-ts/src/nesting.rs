//! A linear, non-recursive scan that bounds how deeply a cell nests, run before anything
//! recursive (oxc's parser and the AST visitors) sees the cell.
//!
//! The parser and the visitors recurse once per level of nesting, so a few kilobytes of `(((…`
//! would otherwise be enough to exhaust a thread's stack. The scan tokenizes the cell (strings,
//! comments, template literals and regular expressions are skipped like a real lexer does) and
//! keeps a *nesting measure* that over-approximates the depth of every tree built from the cell:
//!
//! - every open bracket counts one level: `(`, `[`, `{`, `${` in a template and, in TypeScript,
//!   `<` (type arguments; a `<` that was a comparison is closed again at the next `;`, `&&`, `||`,
//!   `??` or closing bracket);
//! - inside one bracket level, every token that can nest an expression or a statement counts one
//!   more: operators (binary, unary, assignment, `?`, `:`, `=>`, `.`), a call, index or tagged
//!   template after an expression, `new`/`await`/`typeof`/…, and the statement keywords that nest
//!   the statement after them (`if`, `else`, `while`, `for`, `do`, `with`);
//! - those counts start again where the construct they might nest in must have ended: after `,`
//!   (expressions only), after `;`, a closing `}` or a line break that ends a statement (unless the
//!   statement continues with `else`, or `while` after `do`).
//!
//! Flat code stays far below the bound however long it is: array and object literals reset at
//! every `,`, statements at every `;`. A cell whose measure passes [`MAX_NESTING`] is rejected
//! with a diagnostic pointing at the token that crossed it. The same scan reports the peak of the
//! measure ([`measure`]), from which `strip` picks the stack the parse needs, so every cell is
//! scanned once.

use crate::Language;

/// Deepest nesting measure a cell may reach (see the module docs for how it is counted).
pub const MAX_NESTING: u32 = 1_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Paren { header: bool },
    Bracket,
    Brace,
    Template,
    Angle,
}

/// One open bracket and the counts of its contents so far.
#[derive(Clone, Copy)]
struct Level {
    open: Open,
    /// Operators and prefix keywords since the last `,`, `;` or statement end.
    expr: u32,
    /// Statement keywords (`if`, `else`, ...) since the last statement end.
    stmt: u32,
    /// `do` statements still waiting for their `while`.
    pending_do: u32,
}

impl Level {
    fn new(open: Open) -> Self {
        Level { open, expr: 0, stmt: 0, pending_do: 0 }
    }
}

/// What the previous token was, for the regular expression / division and unary / binary
/// ambiguities and for automatic semicolon insertion.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// Nothing yet, an operator, an opening bracket or a keyword: an expression may start here.
    Start,
    /// The end of an operand (identifier, literal, `)`, `]`, `}`): an operator may follow.
    Operand,
}

/// A statement end seen, applied when the next token shows whether the statement continues.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    None,
    /// After `;`: the statement ended (unless `else` / `while` follows).
    Semicolon,
    /// After a line break following an operand, or a closing `}`: the statement ended if the
    /// next token cannot continue it.
    Maybe,
}

/// Keywords after which an expression starts (so `/` begins a regular expression and `+` is
/// unary). Other identifiers end an operand.
const START_KEYWORDS: &[&str] = &[
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "let",
    "new",
    "of",
    "return",
    "switch",
    "throw",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// Keywords that nest the expression after them.
const PREFIX_KEYWORDS: &[&str] = &["await", "delete", "new", "typeof", "void", "yield", "in", "instanceof"];

/// TypeScript-only keywords that nest the type or expression after them.
const TS_PREFIX_KEYWORDS: &[&str] = &["keyof", "infer", "readonly", "unique", "as", "satisfies", "is"];

/// Keywords that nest the statement after them.
const STATEMENT_KEYWORDS: &[&str] = &["if", "else", "while", "for", "do", "with"];

/// Binary keywords that continue an expression across a line break.
const CONTINUING_KEYWORDS: &[&str] = &["in", "instanceof", "as", "satisfies", "of"];

/// Punctuators, longest first.
const PUNCTUATORS: &[&str] = &[
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=", "<=",
    ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<",
    ">>",
];

/// A word of at most 15 bytes packed with its length into one integer, so the keyword lists are
/// checked by integer comparison rather than a string comparison per entry (the scan runs over
/// every cell; no keyword is longer than 15 bytes, so a longer word is in no list).
const fn pack(word: &[u8]) -> Option<u128> {
    if word.len() > 15 {
        return None;
    }
    let mut key = word.len() as u128;
    let mut i = 0;
    while i < word.len() {
        key |= (word[i] as u128) << (8 * (i + 1));
        i += 1;
    }
    Some(key)
}

/// `list` packed (see [`pack`]); `N` must be its length.
const fn pack_all<const N: usize>(list: &[&str]) -> [u128; N] {
    assert!(list.len() == N);
    let mut out = [0u128; N];
    let mut i = 0;
    while i < N {
        out[i] = match pack(list[i].as_bytes()) {
            Some(key) => key,
            None => panic!("a keyword longer than 15 bytes"),
        };
        i += 1;
    }
    out
}

const START_KEYS: [u128; START_KEYWORDS.len()] = pack_all(START_KEYWORDS);
const PREFIX_KEYS: [u128; PREFIX_KEYWORDS.len()] = pack_all(PREFIX_KEYWORDS);
const TS_PREFIX_KEYS: [u128; TS_PREFIX_KEYWORDS.len()] = pack_all(TS_PREFIX_KEYWORDS);
const STATEMENT_KEYS: [u128; STATEMENT_KEYWORDS.len()] = pack_all(STATEMENT_KEYWORDS);
const CONTINUING_KEYS: [u128; CONTINUING_KEYWORDS.len()] = pack_all(CONTINUING_KEYWORDS);

/// Whether the word packed as `key` (see [`pack`]) is in the packed list `keys`.
fn is_in(keys: &[u128], key: Option<u128>) -> bool {
    key.is_some_and(|key| keys.contains(&key))
}

/// Whether a byte is the first of a [`PUNCTUATORS`] entry.
const STARTS_PUNCTUATOR: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < PUNCTUATORS.len() {
        table[PUNCTUATORS[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    table
};

struct Scan<'s> {
    src: &'s [u8],
    text: &'s str,
    pos: usize,
    typescript: bool,
    levels: Vec<Level>,
    /// The nesting measure: open levels plus every level's counts.
    depth: u32,
    /// The largest `depth` seen after a token.
    peak: u32,
    prev: Prev,
    pending: Pending,
    /// A line break was crossed since the previous token.
    newline: bool,
    /// The previous token was `if`, `while`, `for`, `with` or `catch`/`switch` (their `(` is a
    /// statement header, not a call).
    header_keyword: bool,
}

/// A cell's nesting, from one scan.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Nesting {
    /// Where the cell first nests deeper than [`MAX_NESTING`]: the byte offset of the token that
    /// crossed the bound. `None` when the cell stays within it.
    pub too_deep_at: Option<u32>,
    /// The deepest the measure reached (up to the token that crossed the bound, if one did).
    pub peak: u32,
}

/// Measures `source`'s nesting against [`MAX_NESTING`] (see the module docs).
pub(crate) fn measure(source: &str, language: Language) -> Nesting {
    let mut scan = Scan {
        src: source.as_bytes(),
        text: source,
        pos: 0,
        typescript: language == Language::TypeScript,
        levels: vec![Level::new(Open::Brace)],
        depth: 0,
        peak: 0,
        prev: Prev::Start,
        pending: Pending::None,
        newline: false,
        header_keyword: false,
    };
    let too_deep_at = scan.run(MAX_NESTING).map(|at| u32::try_from(at).unwrap_or(u32::MAX));
    Nesting { too_deep_at, peak: scan.peak }
}

/// Where a cell first nests deeper than [`MAX_NESTING`] (see [`Nesting::too_deep_at`]).
pub(crate) fn too_deep(source: &str, language: Language) -> Option<u32> {
    measure(source, language).too_deep_at
}

impl Scan<'_> {
    fn level(&mut self) -> &mut Level {
        let last = self.levels.len() - 1;
        &mut self.levels[last]
    }

    fn count_expr(&mut self) {
        self.level().expr += 1;
        self.depth += 1;
    }

    fn count_stmt(&mut self) {
        self.level().stmt += 1;
        self.depth += 1;
    }

    fn reset_expr(&mut self) {
        let level = self.level();
        let n = std::mem::take(&mut level.expr);
        self.depth -= n;
    }

    fn reset_stmt(&mut self) {
        self.reset_expr();
        let level = self.level();
        let n = std::mem::take(&mut level.stmt);
        level.pending_do = 0;
        self.depth -= n;
    }

    fn push(&mut self, open: Open) {
        self.levels.push(Level::new(open));
        self.depth += 1;
    }

    /// Pops the innermost level (never the outermost one) and returns what it was.
    fn pop(&mut self) -> Option<Open> {
        if self.levels.len() <= 1 {
            return None;
        }
        let level = self.levels.pop()?;
        self.depth -= 1 + level.expr + level.stmt;
        Some(level.open)
    }

    /// Pops type-argument levels left open on top (a `<` that was a comparison).
    fn pop_angles(&mut self) {
        while self.levels.last().is_some_and(|l| l.open == Open::Angle) && self.levels.len() > 1 {
            self.pop();
        }
    }

    /// Closes the innermost bracket (after stray `<` levels) and returns what it was.
    fn close(&mut self) -> Option<Open> {
        self.pop_angles();
        self.pop()
    }

    /// Applies a pending statement end now that the next token is known.
    fn settle(&mut self, token: Token<'_>) {
        let pending = std::mem::replace(&mut self.pending, Pending::None);
        let pending = match pending {
            Pending::None if self.newline && self.prev == Prev::Operand => Pending::Maybe,
            other => other,
        };
        if pending == Pending::None {
            return;
        }
        let continues_statement = match token {
            Token::Word("else") => true,
            Token::Word("while") => self.levels.last().is_some_and(|l| l.pending_do > 0),
            _ => false,
        };
        if continues_statement {
            self.reset_expr();
            return;
        }
        if pending == Pending::Maybe {
            let ends = match token {
                Token::Word(w) => !is_in(&CONTINUING_KEYS, pack(w.as_bytes())),
                Token::Literal | Token::End => true,
                Token::Punct(p) => matches!(p, "{" | "}" | ";" | "!" | "~" | "++" | "--" | "@" | "#"),
                Token::TemplateStart => false,
            };
            if !ends {
                return;
            }
        }
        self.reset_stmt();
    }

    fn run(&mut self, max: u32) -> Option<usize> {
        loop {
            self.skip_trivia();
            let start = self.pos;
            let Some(&b) = self.src.get(self.pos) else {
                self.settle(Token::End);
                return None;
            };
            // Only `if`, `while`, ... right before a `(` makes it a statement header.
            if b != b'(' && (!is_word_byte(b) || b.is_ascii_digit()) {
                self.header_keyword = false;
            }
            match b {
                b'"' | b'\'' => {
                    self.settle(Token::Literal);
                    self.skip_string(b);
                    self.prev = Prev::Operand;
                }
                b'`' => {
                    self.settle(Token::TemplateStart);
                    if self.prev == Prev::Operand {
                        self.count_expr(); // a tagged template nests its tag
                    }
                    self.pos += 1;
                    if self.template_chars() {
                        self.push(Open::Template);
                        self.prev = Prev::Start;
                    } else {
                        self.prev = Prev::Operand;
                    }
                }
                b'0'..=b'9' => {
                    self.settle(Token::Literal);
                    self.skip_number();
                    self.prev = Prev::Operand;
                }
                b'.' if self.src.get(self.pos + 1).is_some_and(u8::is_ascii_digit) => {
                    self.settle(Token::Literal);
                    self.skip_number();
                    self.prev = Prev::Operand;
                }
                b'/' if self.prev == Prev::Start => {
                    self.settle(Token::Literal);
                    self.skip_regex();
                    self.prev = Prev::Operand;
                }
                c if is_word_byte(c) => {
                    let end = self.word_end(self.pos);
                    let word = &self.text[self.pos..end];
                    self.settle(Token::Word(word));
                    self.pos = end;
                    self.word(word);
                }
                _ => {
                    // (Most punctuation, brackets, `,` and `;` among it, is one byte that
                    // starts no longer punctuator: the list is searched only for the others.)
                    let rest = &self.src[self.pos..];
                    let longer = if STARTS_PUNCTUATOR[usize::from(b)] {
                        PUNCTUATORS.iter().find(|p| p.as_bytes()[0] == b && rest.starts_with(p.as_bytes()))
                    } else {
                        None
                    };
                    let punct = longer.copied().unwrap_or_else(|| &self.text[self.pos..self.pos + 1]);
                    // `?.5` is a conditional followed by a number, not optional chaining.
                    let punct = if punct == "?." && self.src.get(self.pos + 2).is_some_and(u8::is_ascii_digit)
                    {
                        "?"
                    } else {
                        punct
                    };
                    self.settle(Token::Punct(punct));
                    self.pos += punct.len();
                    self.punct(punct);
                }
            }
            self.peak = self.peak.max(self.depth);
            if self.depth > max {
                return Some(start);
            }
        }
    }

    fn word(&mut self, word: &str) {
        // The `while` of a `do` statement ends it; its condition is not a statement header.
        let ends_do = word == "while" && self.levels.last().is_some_and(|l| l.pending_do > 0);
        self.header_keyword =
            !ends_do && matches!(word, "if" | "while" | "for" | "with" | "catch" | "switch");
        let key = pack(word.as_bytes());
        if ends_do {
            self.level().pending_do -= 1;
        } else if is_in(&STATEMENT_KEYS, key) {
            if word == "do" {
                self.level().pending_do += 1;
            }
            self.count_stmt();
        } else if is_in(&PREFIX_KEYS, key) || (self.typescript && is_in(&TS_PREFIX_KEYS, key)) {
            self.count_expr();
        }
        self.prev = if is_in(&START_KEYS, key) { Prev::Start } else { Prev::Operand };
    }

    fn punct(&mut self, p: &str) {
        let header = std::mem::take(&mut self.header_keyword);
        let after_operand = self.prev == Prev::Operand;
        self.prev = Prev::Start;
        match p {
            "(" => {
                if after_operand {
                    self.count_expr(); // a call nests its callee
                }
                self.push(Open::Paren { header });
            }
            "[" => {
                if after_operand {
                    self.count_expr(); // an index nests its object
                }
                self.push(Open::Bracket);
            }
            "{" => self.push(Open::Brace),
            ")" => {
                let was = self.close();
                // The `)` of `if (...)` is followed by a statement, not by an operator.
                self.prev = if matches!(was, Some(Open::Paren { header: true })) {
                    Prev::Start
                } else {
                    Prev::Operand
                };
            }
            "]" => {
                self.close();
                self.prev = Prev::Operand;
            }
            "}" => {
                self.pop_angles();
                if self.levels.last().is_some_and(|l| l.open == Open::Template) {
                    self.pop();
                    if self.template_chars() {
                        self.push(Open::Template);
                        self.prev = Prev::Start;
                    } else {
                        self.prev = Prev::Operand;
                    }
                } else {
                    self.pop();
                    self.prev = Prev::Operand;
                    self.pending = Pending::Maybe;
                }
            }
            ";" => {
                self.pop_angles();
                self.reset_expr();
                self.pending = Pending::Semicolon;
            }
            "," => self.reset_expr(),
            "<" if self.typescript => self.push(Open::Angle),
            ">" | ">>" | ">>>"
                if self.typescript && self.levels.last().is_some_and(|l| l.open == Open::Angle) =>
            {
                for _ in 0..p.len() {
                    if self.levels.last().is_some_and(|l| l.open == Open::Angle) {
                        self.pop();
                    }
                }
                self.prev = Prev::Operand;
            }
            "&&" | "||" | "??" => {
                self.pop_angles();
                self.count_expr();
            }
            "++" | "--" => {
                // Postfix after an operand; prefix otherwise (and then it cannot nest: its operand
                // must be a reference).
                if after_operand {
                    self.prev = Prev::Operand;
                }
            }
            // `!` after an operand is TypeScript's non-null assertion, which nests too.
            "!" if after_operand => {
                self.count_expr();
                self.prev = Prev::Operand;
            }
            "@" | "#" => {}
            _ => self.count_expr(),
        }
    }

    /// Skips whitespace and comments, noting line breaks.
    fn skip_trivia(&mut self) {
        self.newline = false;
        while let Some(&b) = self.src.get(self.pos) {
            match b {
                b'\n' | b'\r' => {
                    self.newline = true;
                    self.pos += 1;
                }
                b' ' | b'\t' | 0x0B | 0x0C => self.pos += 1,
                b'/' if self.src.get(self.pos + 1) == Some(&b'/') => {
                    while self.src.get(self.pos).is_some_and(|&c| c != b'\n' && c != b'\r') {
                        self.pos += 1;
                    }
                }
                b'/' if self.src.get(self.pos + 1) == Some(&b'*') => {
                    let rest = &self.text[self.pos + 2..];
                    let close = rest.find("*/").map_or(self.src.len(), |i| self.pos + 2 + i + 2);
                    if self.text[self.pos..close].contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
                        self.newline = true;
                    }
                    self.pos = close;
                }
                b'#' if self.pos == 0 && self.src.get(1) == Some(&b'!') => {
                    while self.src.get(self.pos).is_some_and(|&c| c != b'\n' && c != b'\r') {
                        self.pos += 1;
                    }
                }
                c if c >= 0x80 => {
                    let Some(ch) = self.text[self.pos..].chars().next() else { return };
                    if ch == '\u{2028}' || ch == '\u{2029}' {
                        self.newline = true;
                        self.pos += ch.len_utf8();
                    } else if ch.is_whitespace() || ch == '\u{FEFF}' {
                        self.pos += ch.len_utf8();
                    } else {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    fn word_end(&self, mut pos: usize) -> usize {
        // Non-ASCII bytes are taken as identifier characters (a rare non-ASCII space inside a
        // word only merges two words, which never lowers the measure by more than one).
        while self.src.get(pos).is_some_and(|&c| is_word_byte(c)) {
            pos += 1;
        }
        pos.max(self.pos + 1).min(self.src.len())
    }

    fn skip_string(&mut self, quote: u8) {
        self.pos += 1;
        while let Some(&c) = self.src.get(self.pos) {
            match c {
                b'\\' => self.pos += 2,
                b'\n' | b'\r' => return,
                c if c == quote => {
                    self.pos += 1;
                    return;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
    }

    fn skip_number(&mut self) {
        let start = self.pos;
        let hex = matches!(self.src.get(start + 1), Some(b'x' | b'X'));
        while let Some(&c) = self.src.get(self.pos) {
            let exponent_sign = !hex
                && matches!(c, b'+' | b'-')
                && self.pos > start
                && matches!(self.src[self.pos - 1], b'e' | b'E');
            if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || exponent_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn skip_regex(&mut self) {
        self.pos += 1;
        let mut class = false;
        while let Some(&c) = self.src.get(self.pos) {
            match c {
                b'\\' => self.pos += 2,
                b'\n' | b'\r' => return,
                b'[' => {
                    class = true;
                    self.pos += 1;
                }
                b']' => {
                    class = false;
                    self.pos += 1;
                }
                b'/' if !class => {
                    self.pos += 1;
                    while self.src.get(self.pos).is_some_and(|&c| is_word_byte(c)) {
                        self.pos += 1;
                    }
                    return;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
    }

    /// Skips template characters up to the closing backtick (returns false) or a `${` (returns
    /// true; the position is after it).
    fn template_chars(&mut self) -> bool {
        while let Some(&c) = self.src.get(self.pos) {
            match c {
                b'\\' => self.pos += 2,
                b'`' => {
                    self.pos += 1;
                    return false;
                }
                b'$' if self.src.get(self.pos + 1) == Some(&b'{') => {
                    self.pos += 2;
                    return true;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
        false
    }
}

#[derive(Clone, Copy)]
enum Token<'a> {
    Word(&'a str),
    Literal,
    TemplateStart,
    Punct(&'a str),
    End,
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'\\' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One scan gives both answers `strip` needs: whether the cell passes the bound, and (when it
    /// does not) whether it is shallow enough for the calling thread's stack.
    #[test]
    fn one_scan_measures_the_peak_and_the_bound() {
        let nested = |n: usize| format!("return {}1{};", "(".repeat(n), ")".repeat(n));
        let flat = measure("return 1 + 1;", Language::JavaScript);
        assert_eq!(flat.too_deep_at, None);
        assert!(flat.peak < 8, "{flat:?}");
        let deep = measure(&nested(100), Language::JavaScript);
        assert_eq!(deep.too_deep_at, None);
        assert!((100..200).contains(&deep.peak), "{deep:?}");
        let past = measure(&nested(MAX_NESTING as usize + 10), Language::JavaScript);
        assert!(past.too_deep_at.is_some(), "{past:?}");
        assert_eq!(past.peak, MAX_NESTING + 1);
    }
}
