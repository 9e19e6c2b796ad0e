//! Pre-stems the WordNet fallback table (`src/search/wordnet.txt`) at build time, so no search
//! pays for parsing it: each word is stemmed as the engine stems query words, lemmas that stem
//! alike are merged into one line (their relatives in the table's order, without repeats or the
//! head itself), and the lines are sorted by head, for a binary search over the text. WordNet's
//! license notice (the source's `#` header) heads the output too.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use rust_stemmers::{Algorithm, Stemmer};

#[path = "src/search/stem_rule.rs"]
mod stem_rule;

fn main() {
    let source = "src/search/wordnet.txt";
    println!("cargo::rerun-if-changed={source}");
    println!("cargo::rerun-if-changed=src/search/stem_rule.rs");
    println!("cargo::rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(source).expect("src/search/wordnet.txt is part of the crate");
    let stemmer = Stemmer::create(Algorithm::English);
    let mut stems: HashMap<&str, String> = HashMap::new();
    // Sorted by head: the lookup is a binary search over the lines.
    let mut by_head: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with('#') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        let Some(head) = words.next() else { continue };
        let head = cached(&mut stems, &stemmer, head);
        let terms: Vec<String> = words.map(|w| cached(&mut stems, &stemmer, w)).collect();
        let list = by_head.entry(head.clone()).or_default();
        for term in terms {
            if term != head && !list.contains(&term) {
                list.push(term);
            }
        }
    }
    for (head, list) in &by_head {
        // A head whose relatives all stem like it keeps its line (it is a word WordNet knows).
        out.push_str(head);
        for term in list {
            let _ = write!(out, " {term}");
        }
        out.push('\n');
    }
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(dir.join("wordnet_stemmed.txt"), out).expect("OUT_DIR is writable");
}

/// `word`'s stem, each distinct word stemmed once.
fn cached<'t>(stems: &mut HashMap<&'t str, String>, stemmer: &Stemmer, word: &'t str) -> String {
    stems.entry(word).or_insert_with(|| stem_rule::stem_with(stemmer, word)).clone()
}
