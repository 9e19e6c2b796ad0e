//! Query expansion: what each query word also matches (synonyms, read verbs, compounds, prefixes,
//! WordNet relatives of otherwise unmatched words, typo neighbours), with weights.

use super::analysis::{Token, stem};
use super::index::SearchIndex;
use super::lexicon::lexicon;
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
        if exact.is_none() && !self.known_words.contains_key(word) && word_len >= 4 && alphabetic {
            // The word as written, and its stem: a typo in an inflected word (`asigned`) is one
            // edit from the form the catalog has (`assign`) only once both lose the ending.
            // One edit on the stem, of five letters or more.
            let stemmed = (term != word && term.len() >= 5 && term.bytes().all(|b| b.is_ascii_lowercase()))
                .then_some(term);
            let english = wordnet::wordnet_relatives(term).next().is_some();
            for form in std::iter::once(word).chain(stemmed) {
                let max = if form == word && word_len >= 8 { 2 } else { 1 };
                let lo = form.len().saturating_sub(max);
                let hi = (form.len() + max).min(self.words_by_len.len().saturating_sub(1));
                let mask = letter_mask(form);
                for bucket in self.words_by_len.get(lo..=hi).into_iter().flatten() {
                    for (candidate, id, candidate_mask, part) in bucket {
                        // A word of a folded phrase is the neighbour only of a word English does
                        // not have (`consle`, not `black` for the `back` of `go back`).
                        if *part && english {
                            continue;
                        }
                        // An edit changes at most two of the letters a word has: words that
                        // differ in more are too far, without computing the distance.
                        if (mask ^ candidate_mask).count_ones() as usize > 2 * max {
                            continue;
                        }
                        if let Some(d) = bounded_edit_distance(form, candidate, max) {
                            let weight = if d <= 1 { FUZZY1_WEIGHT } else { FUZZY2_WEIGHT };
                            add(&mut out, *id, weight, Kind::Near);
                        }
                    }
                }
            }
        }
        out
    }
}
