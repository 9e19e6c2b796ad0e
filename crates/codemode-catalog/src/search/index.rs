//! The index build: each entry's fields tokenized into postings, field lengths, the typo and
//! trigram tables, verb classes, adjacent pairs and name terms (the group stages' part is in
//! `groups`).

use rustc_hash::{FxHashMap, FxHashSet};

use super::analysis::{first_chars, split_summary, stem, tool_verb};
use super::entities::shape_terms;
use super::groups::Groups;
use super::lexicon::VerbClass;
use super::typo::{bounded_edit_distance, letter_mask, trigrams};
use super::words::{Emitted, Words};
use super::{B, FIELDS, MAX_DESCRIPTION_CHARS, MAX_PARAM_DESCRIPTION_CHARS, MAX_PARAMS, SUPPRESS, WEIGHTS};

/// The fields that are not parameter text (name, label, owner, summary, description), as a mask.
const CONTENT_MASK: u8 = 0b1_1111;

/// The text of one document, per field.
pub(crate) struct DocText<'a> {
    pub name: &'a str,
    pub label: Option<&'a str>,
    pub owner: Option<&'a str>,
    pub description: &'a str,
    pub params: Vec<&'a str>,
    pub param_descriptions: Vec<&'a str>,
    /// Exact-match key (the id).
    pub id: &'a str,
}

/// A term's frequency per field in one document, as the build counts it.
#[derive(Clone, Debug)]
pub(super) struct RawPosting {
    pub(super) doc: u32,
    pub(super) tf: [f32; FIELDS],
}

/// One document of a term's postings, scored at build: the fields it occurs in and its
/// length-normalized, weighted term frequency (BM25F before saturation) over all fields and over
/// the fields a read ask's state verb still counts in.
#[derive(Clone, Debug)]
pub(super) struct Posting {
    pub(super) doc: u32,
    /// Bit `f`: the term occurs in field `f`.
    pub(super) mask: u8,
    pub(super) all: f64,
    /// Over the fields outside [`SUPPRESS`].
    pub(super) rest: f64,
}

/// An indexed word as a typo target: its term (for a word of a folded vocabulary phrase, the
/// phrase's) and its letter mask (to skip far candidates).
#[derive(Clone, Debug, Default)]
pub(super) struct TypoWord {
    pub(super) word: String,
    pub(super) term: u32,
    pub(super) mask: u64,
}

/// The prebuilt index over one set of entries.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchIndex {
    pub(super) vocab: FxHashMap<String, u32>,
    pub(super) terms: Vec<String>,
    /// Term ids sorted by term, for prefix lookups.
    pub(super) sorted: Vec<u32>,
    pub(super) postings: Vec<Vec<Posting>>,
    /// Per term: how many documents it occurs in outside the parameter fields (all it occurs in
    /// when it occurs only there), for its `idf`.
    pub(super) content_df: Vec<u32>,
    /// The postings as counted, during the build only.
    raw: Vec<Vec<RawPosting>>,
    /// Every indexed word (before stemming) with its term, bucketed by length, for typo matching.
    pub(super) words_by_len: Vec<Vec<TypoWord>>,
    /// Indexed raw words (for "is this query word indexed").
    pub(super) known_words: FxHashMap<String, u32>,
    /// Closed compounds by their tail: an indexed term that is an indexed word followed by at
    /// least 4 more letters (`keyvault` = `key` + `vault`, `containerapp` = `container` + `app`)
    /// under that rest, so a query word can match the compound it ends.
    pub(super) compound_tails: FxHashMap<String, Vec<u32>>,
    pub(super) doc_len: Vec<[f32; FIELDS]>,
    pub(super) avg_len: [f64; FIELDS],
    /// Lower-cased tool name and id per document, for exact matches.
    pub(super) exact: Vec<(String, String)>,
    /// Character trigrams of the lower-cased name and label, for the fallback.
    pub(super) trigrams: Vec<Vec<[u8; 3]>>,
    pub(super) classes: Vec<Option<VerbClass>>,
    /// The term of each document's verb (the first verb of its name).
    pub(super) verb_terms: Vec<Option<u32>>,
    /// Adjacent term pairs of names, labels and summaries -> the documents they occur in.
    pub(super) pairs: FxHashMap<(u32, u32), Vec<u32>>,
    /// The distinct terms of each document's name, with their `idf`.
    pub(super) name_terms: Vec<(u32, f32)>,
    /// Where each document's [`name_terms`](Self::name_terms) start (one more entry than documents).
    pub(super) name_start: Vec<u32>,
    /// The owner stage's groups (servers).
    pub(super) owners: Groups,
    /// The name-family stage's groups.
    pub(super) families: Groups,
}

impl SearchIndex {
    /// The most closed compounds one tail may stand for.
    const MAX_COMPOUNDS_PER_TAIL: usize = 3;

    /// The closed compounds of the index, by tail (see [`compound_tails`](Self::compound_tails)).
    fn compound_tails(&self) -> FxHashMap<String, Vec<u32>> {
        let mut out: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        for (id, term) in self.terms.iter().enumerate() {
            if term.len() < 7 || !term.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            for split in 3..=term.len() - 4 {
                let (Some(head), Some(tail)) = (term.get(..split), term.get(split..)) else { continue };
                if self.known_words.contains_key(head) || self.vocab.contains_key(head) {
                    out.entry(tail.to_owned()).or_default().push(id as u32);
                }
            }
        }
        // A word that ends many compounds is a generic one (`list`, `get`): it says little about
        // which of them the query means, and each would cost a pass over its postings.
        out.retain(|_, ids| ids.len() <= Self::MAX_COMPOUNDS_PER_TAIL);
        out
    }

    pub(crate) fn build(docs: &[DocText<'_>]) -> SearchIndex {
        let mut index = SearchIndex::default();
        let mut totals = [0f64; FIELDS];
        let mut words = Words::default();
        let mut emitted: Vec<Emitted> = Vec::new();
        let mut part_words: FxHashSet<(u32, u32)> = FxHashSet::default();
        for (doc, text) in docs.iter().enumerate() {
            let description = first_chars(text.description, MAX_DESCRIPTION_CHARS);
            let (summary, rest) = split_summary(description);
            let param_docs: Vec<&str> = text
                .param_descriptions
                .iter()
                .take(MAX_PARAMS)
                .map(|d| first_chars(d, MAX_PARAM_DESCRIPTION_CHARS))
                .collect();
            let params: Vec<&str> = text.params.iter().take(MAX_PARAMS).copied().collect();
            let mut tf: FxHashMap<u32, [f32; FIELDS]> = FxHashMap::default();
            let mut len = [0f32; FIELDS];
            let texts: [&[&str]; FIELDS] = [
                &[text.name],
                text.label.as_slice(),
                text.owner.as_slice(),
                &[summary],
                &[rest],
                &params,
                &param_docs,
            ];
            for (f, field_texts) in texts.into_iter().enumerate() {
                for field_text in field_texts {
                    let mut previous: Option<u32> = None;
                    words.tokenize(&mut index, field_text, &mut emitted);
                    for &(id, word, part) in &emitted {
                        if part {
                            // A word of a folded phrase: a typo neighbour of the phrase, no
                            // occurrence of its own.
                            if let Some(w) = word
                                && part_words.insert((w, id))
                            {
                                let word = words.word(w);
                                if word.bytes().all(|b| b.is_ascii_lowercase()) {
                                    index.add_typo_word(word, id);
                                }
                            }
                            continue;
                        }
                        if matches!(f, 0 | 1 | 3) {
                            if let Some(prev) = previous {
                                let docs = index.pairs.entry((prev, id)).or_default();
                                if docs.last() != Some(&(doc as u32)) {
                                    docs.push(doc as u32);
                                }
                            }
                            previous = Some(id);
                        }
                        if let Some(word) = word.and_then(|w| words.first_sight(w))
                            && !index.known_words.contains_key(word)
                        {
                            index.known_words.insert(word.to_owned(), id);
                            index.add_typo_word(word, id);
                        }
                        tf.entry(id).or_insert([0.0; FIELDS])[f] += 1.0;
                        len[f] += 1.0;
                    }
                    // The written forms the description and parameter docs show examples of
                    // (`PROJ-123`), as terms no word makes; not counted in the field's length.
                    if matches!(f, 3 | 4 | 6) {
                        for term in shape_terms(field_text) {
                            let id = index.intern(&term);
                            tf.entry(id).or_insert([0.0; FIELDS])[f] += 1.0;
                        }
                    }
                }
                totals[f] += f64::from(len[f]);
            }
            let start = index.name_terms.len();
            if index.name_start.is_empty() {
                index.name_start.push(0);
            }
            index.name_terms.extend(tf.iter().filter(|(_, t)| t[0] > 0.0).map(|(&id, _)| (id, 0.0)));
            index.name_terms[start..].sort_unstable_by_key(|n| n.0);
            index.name_start.push(index.name_terms.len() as u32);
            let mut sorted: Vec<(u32, [f32; FIELDS])> = tf.into_iter().collect();
            sorted.sort_by_key(|(id, _)| *id);
            for (id, tf) in sorted {
                index.raw[id as usize].push(RawPosting { doc: doc as u32, tf });
            }
            index.doc_len.push(len);
            index.exact.push((text.name.to_ascii_lowercase(), text.id.to_ascii_lowercase()));
            let mut key = text.name.to_ascii_lowercase();
            if let Some(label) = text.label {
                key.push(' ');
                key.push_str(&label.to_ascii_lowercase());
            }
            index.trigrams.push(trigrams(&key));
            let verb = tool_verb(text.name);
            index.classes.push(verb.as_ref().map(|v| v.0));
            index.verb_terms.push(verb.and_then(|(_, word)| index.vocab.get(&stem(&word)).copied()));
        }
        let n = docs.len().max(1) as f64;
        for (avg, total) in index.avg_len.iter_mut().zip(totals) {
            *avg = (total / n).max(1.0);
        }
        let mut sorted: Vec<u32> = (0..index.terms.len() as u32).collect();
        sorted.sort_by(|&a, &b| index.terms[a as usize].cmp(&index.terms[b as usize]));
        index.sorted = sorted;
        index.compound_tails = index.compound_tails();
        let idfs: Vec<f32> = (0..index.raw.len()).map(|id| index.idf(index.raw[id].len()) as f32).collect();
        for (id, idf) in &mut index.name_terms {
            *idf = idfs[*id as usize];
        }
        let raw = std::mem::take(&mut index.raw);
        index.build_groups(docs, &raw);
        index.postings = raw
            .iter()
            .map(|list| {
                list.iter()
                    .map(|p| {
                        let len = &index.doc_len[p.doc as usize];
                        let (mut mask, mut all, mut rest) = (0u8, 0f64, 0f64);
                        // Summed in field order, as the ranker always has.
                        for f in 0..FIELDS {
                            if p.tf[f] > 0.0 {
                                let norm = 1.0 - B[f] + B[f] * f64::from(len[f]) / index.avg_len[f];
                                let w = WEIGHTS[f] * f64::from(p.tf[f]) / norm;
                                all += w;
                                if !SUPPRESS[f] {
                                    rest += w;
                                }
                                mask |= 1 << f;
                            }
                        }
                        Posting { doc: p.doc, mask, all, rest }
                    })
                    .collect()
            })
            .collect();
        index.content_df = index
            .postings
            .iter()
            .map(|list| {
                let content = list.iter().filter(|p| p.mask & CONTENT_MASK != 0).count();
                (if content > 0 { content } else { list.len() }) as u32
            })
            .collect();
        index
    }

    /// Registers `word` as a typo target for `term` (see [`TypoWord`]).
    fn add_typo_word(&mut self, word: &str, term: u32) {
        let n = word.len();
        if self.words_by_len.len() <= n {
            self.words_by_len.resize(n + 1, Vec::new());
        }
        self.words_by_len[n].push(TypoWord { word: word.to_owned(), term, mask: letter_mask(word) });
    }

    /// The typo targets within `max` edits of `form`, with their distances.
    pub(super) fn typo_neighbours<'a>(
        &'a self,
        form: &'a str,
        max: usize,
    ) -> impl Iterator<Item = (&'a TypoWord, usize)> + 'a {
        let lo = form.len().saturating_sub(max);
        let hi = (form.len() + max).min(self.words_by_len.len().saturating_sub(1));
        let mask = letter_mask(form);
        self.words_by_len.get(lo..=hi).into_iter().flatten().flatten().filter_map(move |candidate| {
            // An edit changes at most two of the letters a word has: words that differ in more
            // are too far, without computing the distance.
            if (mask ^ candidate.mask).count_ones() as usize > 2 * max {
                return None;
            }
            bounded_edit_distance(form, &candidate.word, max).map(|d| (candidate, d))
        })
    }

    pub(super) fn intern(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.vocab.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.vocab.insert(term.to_owned(), id);
        self.terms.push(term.to_owned());
        self.raw.push(Vec::new());
        id
    }

    pub(super) fn docs(&self) -> usize {
        self.doc_len.len()
    }

    pub(super) fn idf(&self, df: usize) -> f64 {
        idf_among(self.docs() as f64, df as f64)
    }
}

/// The BM25 `idf` of a term in `df` of `n` entries.
pub(super) fn idf_among(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}
