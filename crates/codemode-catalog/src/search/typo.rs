//! Approximate matching: bounded edit distance (typo tolerance), letter masks that skip far
//! candidates, and character trigrams for the nearest-entry fallback.

use super::MAX_QUERY_CHARS;

/// Sorted, deduplicated character trigrams of the ASCII-alphanumeric form of `text`, padded.
pub(super) fn trigrams(text: &str) -> Vec<[u8; 3]> {
    let mut bytes = vec![b' '];
    for c in text.chars().take(MAX_QUERY_CHARS) {
        if c.is_ascii_alphanumeric() {
            bytes.push(c.to_ascii_lowercase() as u8);
        } else if bytes.last() != Some(&b' ') {
            bytes.push(b' ');
        }
    }
    if bytes.last() != Some(&b' ') {
        bytes.push(b' ');
    }
    let mut out: Vec<[u8; 3]> = bytes.windows(3).map(|w| [w[0], w[1], w[2]]).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Jaccard similarity of two sorted trigram sets.
pub(super) fn trigram_similarity(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() + b.len() - common) as f64
}

/// Which ASCII letters and digits a word has, one bit each.
pub(super) fn letter_mask(word: &str) -> u64 {
    word.bytes().fold(0u64, |mask, b| match b {
        b'a'..=b'z' => mask | 1 << (b - b'a'),
        b'0'..=b'9' => mask | 1 << (26 + b - b'0'),
        _ => mask | 1 << 36,
    })
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), over bytes, when it
/// is at most `max`, else `None`. Indexed words are ASCII, so bytes are characters there. Words
/// shorter than 64 bytes (all the typo candidates) are compared without allocating.
pub(crate) fn bounded_edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    const STACK: usize = 64;
    if b.len() < STACK {
        let mut rows = [[0usize; STACK]; 3];
        let [prev2, prev, row] = &mut rows;
        osa(a, b, max, &mut prev2[..=b.len()], &mut prev[..=b.len()], &mut row[..=b.len()])
    } else {
        let width = b.len() + 1;
        osa(a, b, max, &mut vec![0; width], &mut vec![0; width], &mut vec![0; width])
    }
}

/// The rows of [`bounded_edit_distance`], each `b.len() + 1` long.
pub(super) fn osa(
    a: &[u8],
    b: &[u8],
    max: usize,
    prev2: &mut [usize],
    prev: &mut [usize],
    row: &mut [usize],
) -> Option<usize> {
    let (mut prev2, mut prev, mut row) = (prev2, prev, row);
    for (j, cell) in prev.iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        row[0] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut value = (prev[j - 1] + cost).min(prev[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                value = value.min(prev2[j - 2] + 1);
            }
            row[j] = value;
            row_min = row_min.min(value);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    (prev[b.len()] <= max).then_some(prev[b.len()])
}

/// Unbounded edit distance (for suggestions over short strings).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    bounded_edit_distance(a, b, usize::MAX / 2).unwrap_or(usize::MAX)
}
