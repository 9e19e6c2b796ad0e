//! Query expansion: what each query word also matches (synonyms, read verbs, compounds, prefixes,
//! WordNet relatives of otherwise unmatched words, typo neighbours), with weights; and, before the
//! query is tokenized, typos of vocabulary words read as the words.

use std::sync::OnceLock;

use super::analysis::{Token, is_stop_word, stem};
use super::index::{SearchIndex, TypoWord};
use super::lexicon::{GroupKind, lexicon, vocabulary};
use super::typo::{bounded_edit_distance, letter_mask};
use super::wordnet;
use super::{COMPOUND_WEIGHT, FUZZY1_WEIGHT, FUZZY2_WEIGHT, PREFIX_WEIGHT, SYNONYM_WEIGHT, WORDNET_WEIGHT};

/// How an expansion relates to the query word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The word's own term, or the compound it forms with the next word.
    Exact,
    /// A vocabulary synonym: part of the word's concept.
    Synonym,
    /// Another verb of its class, a prefix, or a typo neighbour.
    Near,
    /// A WordNet relative of a word that matches nothing else in the catalog: outside the word's
    /// concept, and counted in the coverage only at its weight.
    Related,
}

impl Kind {
    /// Whether the expansion is outside the word's concept (near or related).
    pub(super) fn is_near(self) -> bool {
        matches!(self, Kind::Near | Kind::Related)
    }
}

impl SearchIndex {
    /// Expansions of one query token (and the next one, for compounds): `(term id, weight, kind)`.
    pub(super) fn expand(&self, token: &Token, next: Option<&Token>) -> Vec<(u32, f64, Kind)> {
        let mut out: Vec<(u32, f64, Kind)> = Vec::new();
        let add = |out: &mut Vec<(u32, f64, Kind)>, id: u32, weight: f64, kind: Kind| match out
            .iter_mut()
            .find(|(i, _, _)| *i == id)
        {
            Some(existing) => {
                if weight > existing.1 {
                    existing.1 = weight;
                    existing.2 = kind;
                }
            }
            None => out.push((id, weight, kind)),
        };
        let term = token.term.as_str();
        let exact = self.vocab.get(term).copied();
        if let Some(id) = exact {
            add(&mut out, id, 1.0, Kind::Exact);
        }
        if let Some(expansions) = lexicon().expansions.get(term) {
            for (other, weight) in expansions {
                if let Some(&id) = self.vocab.get(other) {
                    add(
                        &mut out,
                        id,
                        *weight,
                        if *weight >= SYNONYM_WEIGHT { Kind::Synonym } else { Kind::Near },
                    );
                }
            }
        }
        if let Some(next) = next
            && !token.word.contains(' ')
            && !next.word.contains(' ')
        {
            let joined = stem(&format!("{}{}", token.word, next.word));
            if let Some(&id) = self.vocab.get(&joined) {
                add(&mut out, id, COMPOUND_WEIGHT, Kind::Exact);
            }
        }
        if term.len() >= 4 && !term.bytes().any(|b| b.is_ascii_digit()) {
            // Indexed terms that start with this one.
            let start = self.sorted.partition_point(|&id| self.terms[id as usize].as_str() < term);
            for &id in &self.sorted[start..] {
                let candidate = &self.terms[id as usize];
                if !candidate.starts_with(term) {
                    break;
                }
                if candidate != term {
                    add(&mut out, id, PREFIX_WEIGHT, Kind::Near);
                }
            }
            // Closed compounds this one ends (`vault` -> `keyvault`).
            if let Some(ids) = self.compound_tails.get(term) {
                for &id in ids {
                    add(&mut out, id, PREFIX_WEIGHT, Kind::Near);
                }
            }
            // Indexed terms this one starts with.
            for end in 4..term.len() {
                if let Some(prefix) = term.get(..end)
                    && let Some(&id) = self.vocab.get(prefix)
                {
                    add(&mut out, id, PREFIX_WEIGHT, Kind::Near);
                }
            }
        }
        if out.is_empty() {
            // Nothing in the catalog for the word itself: its WordNet relatives that are.
            for other in wordnet::wordnet_relatives(term) {
                if let Some(&id) = self.vocab.get(other) {
                    add(&mut out, id, WORDNET_WEIGHT, Kind::Related);
                }
            }
        }
        let word = token.word.as_str();
        let word_len = word.len();
        let alphabetic = word.bytes().all(|b| b.is_ascii_lowercase());
        // A word English has is taken as written: one edit from another word, it is most often
        // that word all the same (`last` is no `list`, `sitting` no `setting`, `black` no `back`).
        if exact.is_none()
            && !self.known_words.contains_key(word)
            && word_len >= 4
            && alphabetic
            && wordnet::wordnet_relatives(term).next().is_none()
        {
            // The word as written, and its stem: a typo in an inflected word (`asigned`) is one
            // edit from the form the catalog has (`assign`) only once both lose the ending.
            // One edit on the stem, of five letters or more.
            let stemmed = (term != word && term.len() >= 5 && term.bytes().all(|b| b.is_ascii_lowercase()))
                .then_some(term);
            for form in std::iter::once(word).chain(stemmed) {
                let max = if form == word && word_len >= 8 { 2 } else { 1 };
                for (candidate, d) in self.typo_neighbours(form, max) {
                    let weight = if d <= 1 { FUZZY1_WEIGHT } else { FUZZY2_WEIGHT };
                    add(&mut out, candidate.term, weight, Kind::Near);
                }
            }
        }
        out
    }
}

/// The vocabulary's words (group words, phrase words, question and shorthand forms) of four
/// letters or more, lower-case, each with its letter mask: the words a typo of a vocabulary word
/// is corrected to.
fn vocabulary_words() -> &'static [(String, u64)] {
    static WORDS: OnceLock<Vec<(String, u64)>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mut words: Vec<String> = Vec::new();
        for group in vocabulary() {
            let forms = match &group.kind {
                GroupKind::Ask(forms) | GroupKind::Alias(forms) => forms.as_slice(),
                _ => &[],
            };
            for text in group.words.iter().chain(forms) {
                words.extend(
                    text.split_whitespace()
                        .filter(|w| w.len() >= 4 && w.bytes().all(|b| b.is_ascii_lowercase()))
                        .map(str::to_owned),
                );
            }
        }
        words.sort_unstable();
        words.dedup();
        words
            .into_iter()
            .map(|w| {
                let mask = letter_mask(&w);
                (w, mask)
            })
            .collect()
    })
}

/// The nearest of `candidates` (each with its distance), its distance, and whether another as
/// near is not `same` as it (the first found is the one kept).
fn nearest<T: Copy>(
    candidates: impl Iterator<Item = (T, usize)>,
    same: impl Fn(T, T) -> bool,
) -> Option<(usize, T, bool)> {
    let mut best: Option<(usize, T, bool)> = None;
    for (candidate, d) in candidates {
        match &mut best {
            Some((bd, _, _)) if d > *bd => {}
            Some((bd, first, tied)) if d == *bd => *tied |= !same(*first, candidate),
            _ => best = Some((d, candidate, false)),
        }
    }
    best
}

/// The vocabulary word nearest to `lower` (within `max` edits, with its first letter), with its
/// distance, when only one is that near.
fn nearest_vocabulary_word(lower: &str, max: usize) -> Option<(usize, &'static str)> {
    let mask = letter_mask(lower);
    // A typo keeps the first letter: `online` is no `inline`, `upstream` no `stream`.
    let candidates = vocabulary_words()
        .iter()
        .filter(|(candidate, candidate_mask)| {
            candidate.as_bytes()[0] == lower.as_bytes()[0]
                && candidate.len().abs_diff(lower.len()) <= max
                && (mask ^ candidate_mask).count_ones() as usize <= 2 * max
        })
        .filter_map(|(candidate, _)| {
            bounded_edit_distance(lower, candidate, max).map(|d| (candidate.as_str(), d))
        });
    nearest(candidates, |a, b| stem(a) == stem(b)).filter(|&(_, _, tied)| !tied).map(|(d, word, _)| (d, word))
}

impl SearchIndex {
    /// The catalog's word within `max` edits of `form` (`Some(Some(word))` when the nearest ones
    /// are forms of one term that is the word's own, `Some(None)` when they are of several or the
    /// word is one of a phrase, `None` when none is that near).
    fn nearest_catalog_word<'a>(&'a self, form: &'a str, max: usize) -> Option<Option<&'a str>> {
        // A typo keeps the first letter, as for the vocabulary's words.
        let first = form.as_bytes().first();
        let candidates = self.typo_neighbours(form, max).filter(|(c, _)| c.word.as_bytes().first() == first);
        let (_, word, tied) = nearest(candidates, |a: &TypoWord, b: &TypoWord| a.term == b.term)?;
        // A word of a folded phrase (`messages` of `console messages`) is no term as written: the
        // typo stays, a near match of the phrase.
        Some((!tied && self.terms[word.term as usize] == stem(&word.word)).then_some(word.word.as_str()))
    }

    /// The one catalog word (in any inflection) that is `lower` with two adjacent letters after
    /// the first swapped (`teir` -> `tier`, `fiel` -> `file`), if exactly one is.
    fn transposed_catalog_word(&self, lower: &str) -> Option<String> {
        let mut found: Option<String> = None;
        let bytes = lower.as_bytes();
        for i in 1..bytes.len() - 1 {
            if bytes[i] == bytes[i + 1] {
                continue;
            }
            let mut swapped = bytes.to_vec();
            swapped.swap(i, i + 1);
            let swapped = String::from_utf8(swapped).ok()?;
            if self.known_words.contains_key(&swapped) || self.vocab.contains_key(&stem(&swapped)) {
                if found.as_ref().is_some_and(|f| *f != swapped) {
                    return None;
                }
                found = Some(swapped);
            }
        }
        found
    }

    /// The correction of a typo of five letters or more ([`correct_typos`](Self::correct_typos)):
    /// the nearest vocabulary or catalog word, or `None` when there is no single one. `word` is
    /// as written at byte `at` of `query`, `lower` its lower case, `before` the stem of the word
    /// before it.
    fn nearest_word<'a>(
        &'a self,
        query: &str,
        word: &str,
        lower: &'a str,
        at: usize,
        before: &str,
    ) -> Option<&'a str> {
        let lexicon = lexicon();
        let max = if lower.len() >= 8 { 2 } else { 1 };
        // Of six letters or more for a vocabulary word, of five for one of the catalog.
        let vocabulary = (lower.len() >= 6).then(|| nearest_vocabulary_word(lower, max)).flatten();
        // The vocabulary word wins over a catalog word as near when it ends a phrase the word
        // before starts (`pull requets`) or is a verb (`chnage` -> `change`: the query's action
        // is read from its words).
        let preferred = vocabulary.filter(|&(_, correction)| {
            let term = stem(correction);
            lexicon.verb_terms.contains_key(&term)
                || lexicon
                    .phrase_starts
                    .get(before)
                    .is_some_and(|starts| starts.iter().any(|&p| lexicon.phrases[p].0.get(1) == Some(&term)))
        });
        match preferred {
            Some((_, correction)) => Some(correction),
            None => {
                // The catalog's words as near, when they are one word (`subscritpions`); a
                // capitalised word inside a sentence is a name (`Marco` is no `macro`).
                let before_word = query[..at].trim_end();
                let sentence_start =
                    before_word.is_empty() || before_word.ends_with(['.', '?', '!', ':', ';']);
                let named = word != lower && !sentence_start;
                let catalog = (!named)
                    .then(|| self.nearest_catalog_word(lower, vocabulary.map_or(max, |(d, _)| d)))
                    .flatten();
                match (vocabulary, catalog) {
                    (_, Some(Some(word))) => Some(word),
                    (Some((_, correction)), None) => Some(correction),
                    _ => None,
                }
            }
        }
    }

    /// The query with typos written as the words they are of, so that they fold into phrases and
    /// expand as the words do; `None` when there is none. A word (also one of a hyphenated
    /// compound: `double-clikc`) of five letters or more that is
    /// no English or stop word and no word of the catalog or the vocabulary becomes the one word
    /// of the catalog nearest to it (one edit; two from eight letters; with its first letter;
    /// forms of one term count as one: `subscritpions`, `acess`; not a capitalised word inside a
    /// sentence, a name: `Marco`), or, from six letters, the one vocabulary word nearest to it
    /// when no catalog word is as near, or when that word is a verb or ends a phrase the word
    /// before starts (`decomission`, `chnage`, `pull requets`). A word with several nearest
    /// catalog words stays as written, for [`expand`](Self::expand)'s typo neighbours.
    pub(super) fn correct_typos(&self, query: &str) -> Option<String> {
        let mut out: Option<String> = None;
        let mut last = 0;
        let mut previous = String::new();
        for chunk in query.split(|c: char| c.is_whitespace() || c == '-').filter(|c| !c.is_empty()) {
            let word = chunk.trim_matches(|c: char| !c.is_ascii_alphanumeric());
            let before = std::mem::replace(&mut previous, stem(&word.to_ascii_lowercase()));
            if word.len() < 4 || !word.bytes().skip(1).all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            let lower = word.to_ascii_lowercase();
            if !lower.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            let term = stem(&lower);
            let lexicon = lexicon();
            if is_stop_word(&lower)
                || self.known_words.contains_key(&lower)
                || self.vocab.contains_key(&term)
                || lexicon.expansions.contains_key(&term)
                || lexicon.phrase_starts.contains_key(&term)
                || wordnet::wordnet_relatives(&term).next().is_some()
                || vocabulary_words().binary_search_by(|(w, _)| w.as_str().cmp(&lower)).is_ok()
            {
                continue;
            }
            let at = word.as_ptr() as usize - query.as_ptr() as usize;
            let correction = if lower.len() == 4 {
                // Four letters: only two letters swapped past the first, into one catalog word
                // (`teir`, `fiel`); other edits of so short a word make too many words. Not in a
                // compound (`snet-hpc` is a name) or capitalised (`Ehns`).
                let compound = query[..at].ends_with('-') || query[at + word.len()..].starts_with('-');
                (!compound && word == lower)
                    .then(|| self.transposed_catalog_word(&lower))
                    .flatten()
                    .map(std::borrow::Cow::Owned)
            } else {
                self.nearest_word(query, word, &lower, at, &before).map(std::borrow::Cow::Borrowed)
            };
            let Some(correction) = correction else { continue };
            let text = out.get_or_insert_with(String::new);
            text.push_str(&query[last..at]);
            text.push_str(&correction);
            last = at + word.len();
        }
        let mut text = out?;
        text.push_str(&query[last..]);
        Some(text)
    }
}
