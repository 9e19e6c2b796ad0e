//! The index build's tokenizer: the same tokens as [`tokens`](super::analysis::tokens) (words,
//! phrases folded, stop words dropped, undoing verbs), with each distinct word analysed once per
//! build (stem, stop word, phrase start, undoing form) and tokens handed out as term ids, so a
//! text costs one hash lookup per word and no allocation per token.

use rustc_hash::FxHashMap;

use super::analysis::{for_each_word, is_stop_word, stem};
use super::index::SearchIndex;
use super::lexicon::lexicon;

/// What one distinct word is.
struct WordInfo {
    word: String,
    term: String,
    /// The term's id once the word has been emitted (terms are interned only when they get a
    /// posting).
    term_id: Option<u32>,
    stop: bool,
    /// Whether a vocabulary phrase can start at the word (its term, or its word without a plural
    /// `s`, starts one).
    phrase: bool,
    /// The verb an undoing form names (`unstar` -> `star`), as a word id.
    undo: Option<u32>,
    /// Whether the word has been registered as an indexed word.
    known: bool,
}

/// One token of a text after phrase folding.
#[derive(Clone, Copy)]
enum Tok {
    Word(u32),
    /// Phrase index, number of words, where its first word is in the text's words.
    Phrase(usize, usize, usize),
}

/// The build's word table; see the module docs.
#[derive(Default)]
pub(super) struct Words {
    ids: FxHashMap<String, u32>,
    info: Vec<WordInfo>,
    /// Per vocabulary phrase: its canonical term's id once emitted.
    phrase_terms: FxHashMap<usize, u32>,
    buf: Vec<u32>,
    folded: Vec<Tok>,
}

/// One emitted token: its term id, its raw word's id when it is one word, and whether it is a
/// word of a folded phrase rather than a token of the text (see [`Words::tokenize`]).
pub(super) type Emitted = (u32, Option<u32>, bool);

impl Words {
    fn id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let lexicon = lexicon();
        let term = stem(word);
        let phrase = lexicon.phrase_starts.contains_key(&term)
            || word.strip_suffix('s').is_some_and(|w| lexicon.phrase_starts.contains_key(w));
        let undo = word
            .strip_prefix("un")
            .filter(|rest| rest.len() >= 3 && lexicon.verbs.contains_key(*rest))
            .map(str::to_owned);
        let id = self.info.len() as u32;
        self.info.push(WordInfo {
            word: word.to_owned(),
            term,
            term_id: None,
            stop: is_stop_word(word),
            phrase,
            undo: None,
            known: false,
        });
        self.ids.insert(word.to_owned(), id);
        if let Some(rest) = undo {
            let rest = self.id(&rest);
            self.info[id as usize].undo = Some(rest);
        }
        id
    }

    /// The tokens of `text` into `out` (cleared first), as [`tokens`](super::analysis::tokens)
    /// gives them.
    pub(super) fn tokenize(&mut self, index: &mut SearchIndex, text: &str, out: &mut Vec<Emitted>) {
        out.clear();
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        for_each_word(text, |w| buf.push(self.id(w)));
        let lexicon = lexicon();
        let mut folded = std::mem::take(&mut self.folded);
        folded.clear();
        let mut i = 0;
        'outer: while i < buf.len() {
            let first = &self.info[buf[i] as usize];
            if first.phrase {
                let by_term = lexicon.phrase_starts.get(&first.term);
                let by_word = first.word.strip_suffix('s').and_then(|w| lexicon.phrase_starts.get(w));
                let mut candidates: Vec<usize> =
                    by_term.into_iter().chain(by_word).flatten().copied().collect();
                candidates.sort_unstable();
                candidates.dedup();
                for p in candidates {
                    let form = &lexicon.phrases[p].0;
                    let n = form.len();
                    let same = |w: u32, f: &String| {
                        let info = &self.info[w as usize];
                        &info.term == f || info.word.strip_suffix('s').is_some_and(|w| w == f.as_str())
                    };
                    if i + n <= buf.len() && buf[i..i + n].iter().zip(form).all(|(&w, f)| same(w, f)) {
                        folded.push(Tok::Phrase(p, n, i));
                        i += n;
                        continue 'outer;
                    }
                }
            }
            folded.push(Tok::Word(buf[i]));
            i += 1;
        }
        for &tok in &folded {
            let single = match tok {
                Tok::Word(w) => Some(w),
                Tok::Phrase(_, 1, start) => Some(buf[start]),
                Tok::Phrase(..) => None,
            };
            if single.is_some_and(|w| self.info[w as usize].stop) {
                continue;
            }
            let term = match tok {
                Tok::Word(w) => self.term_id(index, w),
                Tok::Phrase(p, _, _) => match self.phrase_terms.get(&p) {
                    Some(&id) => id,
                    None => {
                        let id = index.intern(&lexicon.phrases[p].1);
                        self.phrase_terms.insert(p, id);
                        id
                    }
                },
            };
            out.push((term, single, false));
            if let Some(rest) = single.and_then(|w| self.info[w as usize].undo) {
                let term = self.term_id(index, rest);
                out.push((term, Some(rest), false));
            }
            // The words of a folded phrase, each with the phrase's term: a typo in one of them
            // (`consle` for the `console` of `console messages`) still finds the phrase.
            if let Tok::Phrase(_, n, start) = tok
                && n > 1
            {
                for &w in &buf[start..start + n] {
                    if !self.info[w as usize].stop {
                        out.push((term, Some(w), true));
                    }
                }
            }
        }
        self.buf = buf;
        self.folded = folded;
    }

    fn term_id(&mut self, index: &mut SearchIndex, word: u32) -> u32 {
        let info = &mut self.info[word as usize];
        match info.term_id {
            Some(id) => id,
            None => {
                let id = index.intern(&info.term);
                info.term_id = Some(id);
                id
            }
        }
    }

    /// The raw word of `word`.
    pub(super) fn word(&self, word: u32) -> &str {
        &self.info[word as usize].word
    }

    /// The raw word of `word` the first time it is asked for (registration as an indexed word),
    /// then `None`.
    pub(super) fn first_sight(&mut self, word: u32) -> Option<&str> {
        let info = &mut self.info[word as usize];
        if info.known {
            return None;
        }
        info.known = true;
        Some(&info.word)
    }
}
