//! Pre-stems the WordNet fallback table (`src/search/wordnet.txt`) at build time, so no search
//! pays for parsing it: each word is stemmed as the engine stems query words, lemmas that stem
//! alike are merged into one line (their relatives in the table's order, without repeats or the
//! head itself), and the lines are sorted by head, for a binary search over the text. WordNet's
//! license notice (the source's `#` header) heads the output too.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use rust_stemmers::{Algorithm, Stemmer};

fn main() {
    let source = "src/search/wordnet.txt";
    println!("cargo::rerun-if-changed={source}");
    println!("cargo::rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(source).expect("src/search/wordnet.txt is part of the crate");
    let stemmer = Stemmer::create(Algorithm::English);
    // The engine's `search::stem`: short words and words with digits stay as they are.
    let mut stems: HashMap<&str, String> = HashMap::new();
    let stem = |word: &'_ str| -> String {
        if word.len() <= 2 || word.bytes().any(|b| b.is_ascii_digit()) {
            return word.to_owned();
        }
        stemmer.stem(word).into_owned()
    };
    let mut order: Vec<String> = Vec::new();
    let mut by_head: HashMap<String, Vec<String>> = HashMap::new();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with('#') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        let Some(head) = words.next() else { continue };
        let head = stems.entry(head).or_insert_with_key(|w| stem(w)).clone();
        let list = by_head.entry(head.clone()).or_insert_with(|| {
            order.push(head.clone());
            Vec::new()
        });
        for word in words {
            let term = stems.entry(word).or_insert_with_key(|w| stem(w));
            if *term != head && !list.contains(term) {
                list.push(term.clone());
            }
        }
    }
    order.sort_unstable();
    for head in order {
        // A head whose relatives all stem like it keeps its line (it is a word WordNet knows).
        let list = &by_head[&head];
        out.push_str(&head);
        for term in list {
            let _ = write!(out, " {term}");
        }
        out.push('\n');
    }
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(dir.join("wordnet_stemmed.txt"), out).expect("OUT_DIR is writable");
}
