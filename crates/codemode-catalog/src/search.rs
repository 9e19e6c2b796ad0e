//! Ranked, deterministic search over the guest-visible catalog entries.
//!
//! # Model
//!
//! A small BM25-style ranker over weighted fields, with query expansion, and a character-trigram
//! fallback:
//!
//! - **Tokens.** Text is split on every character that is not an ASCII letter or digit (so
//!   snake_case, kebab-case and dotted names split), and at camelCase boundaries (`createIssue`,
//!   `HTTPServer` -> `http`, `server`); tokens are lower-cased, a few English stop words are dropped,
//!   and a light suffix stemmer folds plurals and verb forms (`issues` -> `issu`, `creating` /
//!   `created` / `create` -> `creat`).
//! - **Fields** of an entry, with weights: tool name 4.0, label 2.5, owner (`sourceName`) 1.5,
//!   description 1.0 (first 2,000 characters), top-level parameter names 0.75. Each field's term
//!   frequency is length-normalized with its own `b` and saturated (`k1 = 1.2`); the weighted field
//!   scores are summed and multiplied by the term's `idf` (computed over the guest-visible entries).
//! - **Expansion.** Each query term also matches, at a discount: a few generic synonyms (`open`,
//!   `new`, `make` ~ `create`; `remove` ~ `delete`; `find` ~ `search`; `ticket` ~ `issue`; ...), 0.6;
//!   vocabulary terms it is a prefix of or that are a prefix of it (both at least 4 characters), 0.5;
//!   and, when the term is not in the vocabulary at all, the terms of indexed words within edit
//!   distance (with adjacent transpositions) 1 of the query word (words of 4-7 characters) or 2 (8
//!   and more), 0.7 / 0.45. An expansion's `idf` is capped at the query term's own `idf` when the
//!   term is indexed (a synonym never outweighs the word it stands for). Per entry a query term
//!   counts once, with its best expansion.
//! - **Coordination.** The sum is scaled by `0.35 + 0.65 * matched / terms` so that entries matching
//!   more of the query win; an entry whose tool name (or id) equals the whole query goes first.
//! - **Fallback.** When no entry scores, entries are ranked by character-trigram similarity between
//!   the query and the tool name (at least two shared trigrams); no similar name means no result.
//! - **Lazy.** The index is built on the first search of a [`Catalog`](crate::Catalog).
//! - **Determinism.** Ties are broken by catalog order. A query with no usable token lists entries in
//!   catalog order. Queries are cut to 512 characters and 32 terms.

use std::collections::HashMap;

/// Longest query text considered, in characters.
pub const MAX_QUERY_CHARS: usize = 512;
/// Most query terms considered.
pub const MAX_QUERY_TERMS: usize = 32;
/// Description characters indexed per entry.
const MAX_DESCRIPTION_CHARS: usize = 2_000;

/// Fields, in this order: tool name, label, owner, description, parameter names.
const FIELDS: usize = 5;

const WEIGHTS: [f64; FIELDS] = [4.0, 2.5, 1.5, 1.0, 0.75];
const B: [f64; FIELDS] = [0.5, 0.5, 0.3, 0.75, 0.5];
const K1: f64 = 1.2;

const SYNONYM_WEIGHT: f64 = 0.6;
const PREFIX_WEIGHT: f64 = 0.5;
const FUZZY1_WEIGHT: f64 = 0.7;
const FUZZY2_WEIGHT: f64 = 0.45;

/// Generic verb/noun synonym groups (unstemmed; every word of a group expands to the others).
const SYNONYMS: &[&[&str]] = &[
    &["create", "new", "make", "open"],
    &["delete", "remove", "erase", "destroy"],
    &["get", "fetch", "retrieve", "read", "show", "view", "details", "info"],
    &["list", "enumerate", "all", "show"],
    &["update", "edit", "modify", "change", "set", "rename"],
    &["search", "find", "look", "query", "lookup"],
    &["send", "post", "message", "notify"],
    &["run", "execute", "trigger", "start", "launch"],
    &["stop", "cancel", "abort", "kill"],
    &["close", "shut"],
    &["write", "save", "store", "put"],
    &["comment", "reply"],
    &["navigate", "goto", "visit", "url"],
    &["screenshot", "capture", "snapshot"],
    &["repository", "repo"],
    &["pr", "pull"],
    &["directory", "folder", "dir"],
    &["file", "document"],
    &["user", "member", "person", "people"],
    &["time", "clock", "timezone"],
    &["issue", "ticket", "bug"],
    &["multiple", "several", "many", "batch", "bulk"],
];

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for", "from", "i", "in", "into",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "some", "that", "the", "their", "them",
    "this", "to", "using", "via", "we", "what", "which", "with", "you", "your",
];

/// Calls `f` with each raw lower-case word of `text`: non-alphanumerics separate, camelCase
/// boundaries split (`createIssue`, `HTTPServer` -> `http`, `server`).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut current = String::new();
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                f(&current);
                current.clear();
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let lower_to_upper = p.is_ascii_lowercase() && c.is_ascii_uppercase();
            let acronym_end = p.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && chars.peek().is_some_and(|n| n.is_ascii_lowercase());
            if lower_to_upper || acronym_end {
                f(&current);
                current.clear();
            }
        }
        current.push(c.to_ascii_lowercase());
        prev = Some(c);
    }
    if !current.is_empty() {
        f(&current);
    }
}

/// Splits text into raw lower-case words (see [`for_each_word`]).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_owned()));
    out
}

/// A light suffix stemmer: folds plurals and `-ing` / `-ed` forms, then a final `e`.
pub(crate) fn stem(word: &str) -> String {
    let mut w = word.to_owned();
    if w.len() <= 3 || w.bytes().any(|b| b.is_ascii_digit()) {
        return w;
    }
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if ["sses", "ches", "shes", "xes", "zes"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.truncate(w.len() - 1);
    }
    if w.len() > 5 && w.ends_with("ing") {
        w.truncate(w.len() - 3);
    } else if w.len() > 4 && w.ends_with("ed") && !w.ends_with("eed") {
        w.truncate(w.len() - 2);
    }
    if w.len() > 4 && w.ends_with('e') {
        w.truncate(w.len() - 1);
    }
    w
}

/// Words -> `(word, term)` pairs: stop words dropped, terms stemmed.
pub(crate) fn word_terms(text: &str) -> Vec<(String, String)> {
    words(text)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| {
            let term = stem(&w);
            (w, term)
        })
        .collect()
}

/// The text of one document, per field.
pub(crate) struct DocText<'a> {
    pub name: &'a str,
    pub label: Option<&'a str>,
    pub owner: Option<&'a str>,
    pub description: &'a str,
    pub params: Vec<&'a str>,
    /// Exact-match keys (lower-cased tool name and id).
    pub id: &'a str,
}

#[derive(Clone, Debug)]
struct Posting {
    doc: u32,
    tf: [f32; FIELDS],
}

/// The prebuilt index over the guest-visible entries of a catalog.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchIndex {
    vocab: HashMap<String, u32>,
    terms: Vec<String>,
    postings: Vec<Vec<Posting>>,
    /// Every indexed word (before stemming) with its term, for typo matching.
    words: Vec<(String, u32)>,
    doc_len: Vec<[f32; FIELDS]>,
    avg_len: [f64; FIELDS],
    /// Lower-cased tool name and id per document, for exact matches.
    exact: Vec<(String, String)>,
    /// Character trigrams of the lower-cased tool name, for the fallback.
    trigrams: Vec<Vec<[u8; 3]>>,
    synonyms: HashMap<String, Vec<String>>,
}

impl SearchIndex {
    pub(crate) fn build(docs: &[DocText<'_>]) -> SearchIndex {
        let mut index = SearchIndex::default();
        let mut totals = [0f64; FIELDS];
        let mut word_ids: HashMap<String, u32> = HashMap::new();
        for (doc, text) in docs.iter().enumerate() {
            let description: String = text.description.chars().take(MAX_DESCRIPTION_CHARS).collect();
            let mut tf: HashMap<u32, [f32; FIELDS]> = HashMap::new();
            let mut len = [0f32; FIELDS];
            let texts: [&[&str]; FIELDS] = [
                &[text.name],
                text.label.as_slice(),
                text.owner.as_slice(),
                &[description.as_str()],
                &text.params,
            ];
            for (f, field_texts) in texts.into_iter().enumerate() {
                for field_text in field_texts {
                    for_each_word(field_text, |word| {
                        if STOP_WORDS.contains(&word) {
                            return;
                        }
                        // Most words repeat: stem each distinct word once.
                        let id = match word_ids.get(word) {
                            Some(&id) => id,
                            None => {
                                let id = index.intern(&stem(word));
                                index.words.push((word.to_owned(), id));
                                word_ids.insert(word.to_owned(), id);
                                id
                            }
                        };
                        tf.entry(id).or_insert([0.0; FIELDS])[f] += 1.0;
                        len[f] += 1.0;
                    });
                }
                totals[f] += f64::from(len[f]);
            }
            let mut sorted: Vec<(u32, [f32; FIELDS])> = tf.into_iter().collect();
            sorted.sort_by_key(|(id, _)| *id);
            for (id, tf) in sorted {
                index.postings[id as usize].push(Posting { doc: doc as u32, tf });
            }
            index.doc_len.push(len);
            index.exact.push((text.name.to_ascii_lowercase(), text.id.to_ascii_lowercase()));
            index.trigrams.push(trigrams(&text.name.to_ascii_lowercase()));
        }
        let n = docs.len().max(1) as f64;
        for (avg, total) in index.avg_len.iter_mut().zip(totals) {
            *avg = (total / n).max(1.0);
        }
        for group in SYNONYMS {
            for word in *group {
                let from = stem(word);
                let list = index.synonyms.entry(from.clone()).or_default();
                for other in *group {
                    let to = stem(other);
                    if to != from && !list.contains(&to) {
                        list.push(to);
                    }
                }
            }
        }
        index
    }

    fn intern(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.vocab.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.vocab.insert(term.to_owned(), id);
        self.terms.push(term.to_owned());
        self.postings.push(Vec::new());
        id
    }

    fn docs(&self) -> usize {
        self.doc_len.len()
    }

    /// Expansions of one query word and its term: `(term id, weight)`.
    fn expand(&self, word: &str, term: &str) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = Vec::new();
        let mut add = |id: u32, weight: f64| match out.iter_mut().find(|(i, _)| *i == id) {
            Some(existing) => existing.1 = existing.1.max(weight),
            None => out.push((id, weight)),
        };
        let exact = self.vocab.get(term).copied();
        if let Some(id) = exact {
            add(id, 1.0);
        }
        if let Some(synonyms) = self.synonyms.get(term) {
            for s in synonyms {
                if let Some(&id) = self.vocab.get(s) {
                    add(id, SYNONYM_WEIGHT);
                }
            }
        }
        if term.len() >= 4 {
            for (id, candidate) in self.terms.iter().enumerate() {
                let prefix = candidate.len() >= 4
                    && candidate != term
                    && (candidate.starts_with(term) || term.starts_with(candidate.as_str()));
                if prefix {
                    add(id as u32, PREFIX_WEIGHT);
                }
            }
        }
        let word_len = word.chars().count();
        if exact.is_none() && word_len >= 4 {
            let max = if word_len >= 8 { 2 } else { 1 };
            for (candidate, id) in &self.words {
                if let Some(d) = bounded_edit_distance(word, candidate, max) {
                    add(*id, if d <= 1 { FUZZY1_WEIGHT } else { FUZZY2_WEIGHT });
                }
            }
        }
        out
    }

    /// Document indices, best first, at most `limit`.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        if limit == 0 || self.docs() == 0 {
            return Vec::new();
        }
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let mut query_terms = word_terms(&query);
        let mut seen = Vec::new();
        query_terms.retain(|(_, t)| {
            let fresh = !seen.contains(t);
            seen.push(t.clone());
            fresh
        });
        query_terms.truncate(MAX_QUERY_TERMS);
        if query_terms.is_empty() {
            return (0..self.docs().min(limit)).collect();
        }
        let n = self.docs() as f64;
        let mut scores = vec![0f64; self.docs()];
        let mut matched = vec![0u32; self.docs()];
        let mut best = vec![0f64; self.docs()];
        let idf_of = |df: usize| (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        for (word, term) in &query_terms {
            best.iter_mut().for_each(|b| *b = 0.0);
            // An expansion stands for the query term: it is never worth more than the term itself.
            let term_idf = self.vocab.get(term).map(|&id| idf_of(self.postings[id as usize].len()));
            for (id, weight) in self.expand(word, term) {
                let postings = &self.postings[id as usize];
                let idf = idf_of(postings.len());
                let idf = term_idf.map_or(idf, |cap| idf.min(cap));
                for p in postings {
                    let doc = p.doc as usize;
                    let len = &self.doc_len[doc];
                    let mut field_sum = 0f64;
                    for f in 0..FIELDS {
                        if p.tf[f] > 0.0 {
                            let norm = 1.0 - B[f] + B[f] * f64::from(len[f]) / self.avg_len[f];
                            let tf = f64::from(p.tf[f]) / norm;
                            field_sum += WEIGHTS[f] * tf / (K1 + tf);
                        }
                    }
                    let score = weight * idf * field_sum;
                    if score > best[doc] {
                        best[doc] = score;
                    }
                }
            }
            for doc in 0..self.docs() {
                if best[doc] > 0.0 {
                    scores[doc] += best[doc];
                    matched[doc] += 1;
                }
            }
        }
        let total = query_terms.len() as f64;
        let whole = query.trim().to_ascii_lowercase();
        let mut ranked: Vec<(f64, usize)> = Vec::new();
        for doc in 0..self.docs() {
            let (name, id) = &self.exact[doc];
            let exact = !whole.is_empty() && (*name == whole || *id == whole);
            let mut score = scores[doc] * (0.35 + 0.65 * f64::from(matched[doc]) / total);
            if exact {
                score += 1.0e6;
            }
            if score > 0.0 {
                ranked.push((score, doc));
            }
        }
        if ranked.is_empty() {
            let grams = trigrams(&query.to_ascii_lowercase());
            for doc in 0..self.docs() {
                let similarity = trigram_similarity(&grams, &self.trigrams[doc]);
                if similarity > 0.0 {
                    ranked.push((similarity, doc));
                }
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.into_iter().take(limit).map(|(_, doc)| doc).collect()
    }
}

/// Sorted, deduplicated character trigrams of the ASCII-alphanumeric form of `text`, padded.
fn trigrams(text: &str) -> Vec<[u8; 3]> {
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
fn trigram_similarity(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
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
    // Only shared *inner* trigrams count as evidence; a lone shared padding gram is noise.
    if common < 2 {
        return 0.0;
    }
    common as f64 / (a.len() + b.len() - common) as f64
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), over bytes, when it
/// is at most `max`, else `None`. Indexed words are ASCII, so bytes are characters there.
pub(crate) fn bounded_edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let width = b.len() + 1;
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut row = vec![0usize; width];
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
