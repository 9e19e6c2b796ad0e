//! Fuzz checks: thin `fuzz/fuzz_targets/*.rs` glue calls these; each panics only on a real bug.

use serde_json::Value;

use crate::hint::{self, HintOptions, MIN_HINT_CHARS, RenderOptions};
use crate::ident;

/// Arbitrary bytes -> if they are JSON, every hint of them (as a schema, and of each of its direct
/// sub-schemas against it as root) never panics, never exceeds its budget, is deterministic, and
/// an output hint is exactly the complete rendering.
pub fn check_schema_hint(data: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else { return };
    check_schema_value(&schema);
}

/// [`check_schema_hint`] on an already parsed value.
pub fn check_schema_value(schema: &Value) {
    for max_chars in [0, MIN_HINT_CHARS, 40, hint::INPUT_HINT_MAX_CHARS] {
        let options = HintOptions::input().with_max_chars(max_chars);
        let budget = max_chars.max(MIN_HINT_CHARS);
        let input = hint::input_hint(schema, &options);
        assert!(input.chars().count() <= budget, "input hint over budget {budget}: {input}");
        assert!(!input.is_empty());
        assert_eq!(input, hint::input_hint(schema, &options), "input hint not deterministic");
        if let Some(output) = hint::output_hint(schema, &options) {
            assert!(output.chars().count() <= budget, "output hint over budget {budget}: {output}");
            let rendered =
                hint::render_type(schema, schema, &RenderOptions::default().with_max_chars(max_chars));
            assert!(rendered.complete, "output hint for an incomplete rendering: {output}");
            assert_eq!(rendered.text, output);
            assert_eq!(input, output, "a complete type must not be shortened as input");
        }
    }
    let options = RenderOptions::default().with_max_chars(120).with_max_depth(3);
    if let Value::Object(map) = schema {
        for sub in map.values() {
            let rendered = hint::render_type(sub, schema, &options);
            assert!(rendered.text.chars().count() <= 120);
            assert!(!(rendered.complete && rendered.degraded));
        }
    }
}

/// Arbitrary bytes -> if UTF-8, both normalizers yield identifiers, are idempotent, and
/// [`ident::is_identifier`] agrees with its parts.
pub fn check_identifier(data: &[u8]) {
    let Ok(name) = std::str::from_utf8(data) else { return };
    let snake = ident::to_snake_identifier(name);
    let camel = ident::to_camel_identifier(name);
    assert!(ident::is_identifier(&snake), "snake {name:?} -> {snake:?}");
    assert!(ident::is_identifier(&camel), "camel {name:?} -> {camel:?}");
    assert_eq!(ident::to_snake_identifier(&snake), snake, "snake not idempotent");
    assert_eq!(ident::to_camel_identifier(&camel), camel, "camel not idempotent");
    assert_eq!(ident::is_identifier(name), ident::is_identifier_name(name) && !ident::is_reserved_word(name));
    if ident::is_identifier(name) {
        assert_eq!(snake, name, "snake changed an identifier");
    }
}

/// The small deterministic generator the stable-Rust fuzz drivers of every crate share
/// (xorshift64 with shifts 13, 7, 17): no dependency, the same sequence on every platform.
///
/// ```
/// use codemode_core::fuzz::XorShift;
///
/// let mut rng = XorShift::new(XorShift::DEFAULT_SEED);
/// let (a, b) = (rng.next_u64(), rng.next_u64());
/// assert_ne!(a, b);
/// assert_eq!(XorShift::new(XorShift::DEFAULT_SEED).next_u64(), a);
/// assert!(rng.below(10) < 10);
/// assert_eq!(rng.pick(&["only"]), "only");
/// ```
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// The seed most drivers start from (the 64-bit golden ratio).
    pub const DEFAULT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

    /// A generator starting at `seed`; a zero seed (which xorshift never leaves) becomes
    /// [`DEFAULT_SEED`](Self::DEFAULT_SEED).
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 { Self::DEFAULT_SEED } else { seed })
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`0` when `n` is `0`); `next_u64() % n`, so slightly biased, which is
    /// fine for test inputs.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items`, chosen by [`below`](Self::below).
    ///
    /// # Panics
    ///
    /// If `items` is empty.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}
