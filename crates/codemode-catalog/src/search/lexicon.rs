//! The search vocabulary: `vocabulary.txt` parsed into groups ([`vocabulary`]) and,
//! stemmed, into the lookup form the ranker uses (expansions, verb classes, phrases, question forms).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::analysis::{for_each_word, stem};
use super::{POLYSEMY_EXPONENT, SYNONYM_WEIGHT, VERB_WEIGHT};

/// The action class of a verb.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VerbClass {
    /// Reads, lists, searches, shows.
    Read,
    /// Creates, adds, updates, sets, edits.
    Write,
    /// Deletes, removes, forgets.
    Delete,
}

/// What a write verb does to the thing it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteKind {
    /// Makes a new one (create, add, open, file).
    Create,
    /// Changes one that exists (update, rename, set, move).
    Change,
}

/// What one [vocabulary] group is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupKind {
    /// An action-verb class.
    Verb(VerbClass),
    /// Write verbs of one [`WriteKind`] (each also in the write class).
    WriteKind(WriteKind),
    /// Multi-word forms of one concept (the first is the indexed form).
    Phrase,
    /// Synonyms.
    Synonyms,
    /// What a question word asks for (`who` -> user, member, ...): its forms, words separated by
    /// spaces (`how many`). A query with one of them favours entries about its words, at a
    /// discount, without the words counting as part of the query.
    Ask(Vec<String>),
    /// What a shorthand of the query side stands for (`mkdir` -> create directory, `rg` ->
    /// resource group): its forms (single words), replaced in a query by the group's words.
    Alias(Vec<String>),
}

/// One group of the search [vocabulary].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VocabularyGroup {
    /// What the group is.
    pub kind: GroupKind,
    /// Its words (phrases: each form, words separated by spaces), unstemmed, as written.
    pub words: Vec<String>,
}

/// The vocabulary as data (`vocabulary.txt` in this crate's sources).
pub(super) const VOCABULARY_TEXT: &str = include_str!("vocabulary.txt");

/// The search vocabulary: verb classes, phrases and synonym groups, parsed from the crate's
/// `vocabulary.txt`.
pub fn vocabulary() -> &'static [VocabularyGroup] {
    static GROUPS: OnceLock<Vec<VocabularyGroup>> = OnceLock::new();
    GROUPS.get_or_init(|| parse_vocabulary(VOCABULARY_TEXT))
}

pub(super) fn parse_vocabulary(text: &str) -> Vec<VocabularyGroup> {
    let mut groups = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((head, body)) = line.split_once(':') else { continue };
        let (kind, words): (GroupKind, Vec<String>) = match head.trim() {
            "phrase" => (GroupKind::Phrase, body.split('|').map(|w| w.trim().to_owned()).collect()),
            "syn" => (GroupKind::Synonyms, body.split_whitespace().map(str::to_owned).collect()),
            "verb read" => {
                (GroupKind::Verb(VerbClass::Read), body.split_whitespace().map(str::to_owned).collect())
            }
            "verb write" => {
                (GroupKind::Verb(VerbClass::Write), body.split_whitespace().map(str::to_owned).collect())
            }
            "write create" => (
                GroupKind::WriteKind(WriteKind::Create),
                body.split_whitespace().map(str::to_owned).collect(),
            ),
            "write change" => (
                GroupKind::WriteKind(WriteKind::Change),
                body.split_whitespace().map(str::to_owned).collect(),
            ),
            "verb delete" => {
                (GroupKind::Verb(VerbClass::Delete), body.split_whitespace().map(str::to_owned).collect())
            }
            head if head.starts_with("alias ") => (
                GroupKind::Alias(head["alias ".len()..].split('|').map(|f| f.trim().to_owned()).collect()),
                body.split_whitespace().map(str::to_owned).collect(),
            ),
            head if head.starts_with("ask ") => (
                GroupKind::Ask(head["ask ".len()..].split('|').map(|f| f.trim().to_owned()).collect()),
                body.split_whitespace().map(str::to_owned).collect(),
            ),
            _ => continue,
        };
        let words: Vec<String> = words.into_iter().filter(|w| !w.is_empty()).collect();
        if words.len() >= 2
            || matches!(
                kind,
                GroupKind::Verb(_) | GroupKind::WriteKind(_) | GroupKind::Alias(_) | GroupKind::Ask(_)
            )
        {
            groups.push(VocabularyGroup { kind, words });
        }
    }
    groups
}

/// The vocabulary, stemmed, in lookup form.
pub(super) struct Lexicon {
    /// Term -> other terms it expands to, with weights.
    pub(super) expansions: HashMap<String, Vec<(String, f64)>>,
    /// Raw verb word -> class.
    pub(super) verbs: HashMap<String, VerbClass>,
    /// Stemmed verb -> class (for phrasal verbs, which fold into a stemmed term).
    pub(super) verb_terms: HashMap<String, VerbClass>,
    /// Phrase forms as term sequences -> the indexed term, longest first.
    pub(super) phrases: Vec<(Vec<String>, String)>,
    /// A phrase form's first term -> the indexes of the [`phrases`](Self::phrases) that start with
    /// it, longest first.
    pub(super) phrase_starts: HashMap<String, Vec<usize>>,
    /// Question forms (raw word sequences) -> the stemmed terms they ask for.
    pub(super) asks: Vec<(Vec<String>, Vec<String>)>,
    /// A question form's first word -> the indexes of the [`asks`](Self::asks) that start with it,
    /// in order (a query looks up only the forms its words start).
    pub(super) ask_starts: HashMap<String, Vec<usize>>,
    /// Shorthands (lower-case words) -> the words they stand for.
    pub(super) aliases: HashMap<String, String>,
    /// Stemmed write verb -> what it does to its thing.
    pub(super) write_kinds: HashMap<String, WriteKind>,
}

pub(super) fn lexicon() -> &'static Lexicon {
    static LEXICON: OnceLock<Lexicon> = OnceLock::new();
    LEXICON.get_or_init(|| {
        let mut lexicon = Lexicon {
            expansions: HashMap::new(),
            verbs: HashMap::new(),
            verb_terms: HashMap::new(),
            phrases: Vec::new(),
            phrase_starts: HashMap::new(),
            asks: Vec::new(),
            ask_starts: HashMap::new(),
            aliases: HashMap::new(),
            write_kinds: HashMap::new(),
        };
        let mut add = |from: &str, to: &str, weight: f64| {
            if from == to {
                return;
            }
            let list = lexicon.expansions.entry(from.to_owned()).or_default();
            match list.iter_mut().find(|(t, _)| t == to) {
                Some(existing) => existing.1 = existing.1.max(weight),
                None => list.push((to.to_owned(), weight)),
            }
        };
        let mut phrases = Vec::new();
        let mut verbs = HashMap::new();
        let mut verb_terms = HashMap::new();
        let mut asks = Vec::new();
        let mut aliases = HashMap::new();
        // How many synonym groups (senses) each word is in: a word of several (`alert`: a
        // notification, a finding, a dialog) matches each group's words at a discount and outside
        // its concept (a near expansion), so no one sense's words pool their `idf` with it.
        // Counted per word as written: words that only stem alike (`document`, `documentation`)
        // are not one word of several senses.
        let mut written: HashMap<&str, usize> = HashMap::new();
        for group in vocabulary() {
            if group.kind == GroupKind::Synonyms {
                for w in &group.words {
                    *written.entry(w.as_str()).or_insert(0) += 1;
                }
            }
        }
        let mut senses: HashMap<String, usize> = HashMap::new();
        for (w, &n) in &written {
            let k = senses.entry(stem(w)).or_insert(0);
            *k = (*k).max(n);
        }
        for group in vocabulary() {
            match &group.kind {
                GroupKind::Synonyms | GroupKind::Verb(_) => {
                    // Read verbs stand in for each other (`show` ~ `get` / `list`); write verbs do
                    // not (`approve` is no `merge`): their class only weighs the ranking.
                    let weight = match group.kind {
                        GroupKind::Synonyms => SYNONYM_WEIGHT,
                        GroupKind::Verb(VerbClass::Read) => VERB_WEIGHT,
                        _ => 0.0,
                    };
                    let terms: Vec<String> = group.words.iter().map(|w| stem(w)).collect();
                    if weight > 0.0 {
                        for a in &terms {
                            let senses = match group.kind {
                                GroupKind::Synonyms => senses.get(a).copied().unwrap_or(1).max(1),
                                _ => 1,
                            };
                            let weight = weight * (senses as f64).powf(-POLYSEMY_EXPONENT);
                            for b in &terms {
                                add(a, b, weight);
                            }
                        }
                    }
                    if let GroupKind::Verb(class) = group.kind {
                        for w in &group.words {
                            verbs.entry(w.clone()).or_insert(class);
                            verb_terms.entry(stem(w)).or_insert(class);
                        }
                    }
                }
                GroupKind::Ask(forms) => {
                    let terms: Vec<String> = group.words.iter().map(|w| stem(w)).collect();
                    for form in forms {
                        let words: Vec<String> = form.split_whitespace().map(str::to_owned).collect();
                        if !words.is_empty() {
                            asks.push((words, terms.clone()));
                        }
                    }
                }
                GroupKind::WriteKind(kind) => {
                    for w in &group.words {
                        lexicon.write_kinds.insert(stem(w), *kind);
                    }
                }
                GroupKind::Alias(forms) => {
                    for form in forms {
                        aliases.insert(form.to_lowercase(), group.words.join(" "));
                    }
                }
                GroupKind::Phrase => {
                    let mut forms = group.words.iter().map(|form| {
                        let mut terms = Vec::new();
                        // Stop words stay in a form (`sign in`, `get rid of`): phrases fold
                        // before stop words drop.
                        for_each_word(form, |w| terms.push(stem(w)));
                        terms
                    });
                    let Some(first) = forms.next() else { continue };
                    let canonical = first.concat();
                    if first.len() > 1 {
                        phrases.push((first, canonical.clone()));
                    }
                    for form in forms {
                        if !form.is_empty() && form != [canonical.clone()] {
                            phrases.push((form, canonical.clone()));
                        }
                    }
                }
            }
        }
        phrases.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        // An ask's words that are a phrase's form (`authenticated`, or `audit log` side by side)
        // also ask for the phrase, which the index holds as one term.
        for (_, terms) in &mut asks {
            for (form, canonical) in &phrases {
                if !terms.contains(canonical) && terms.windows(form.len()).any(|w| w == form.as_slice()) {
                    terms.push(canonical.clone());
                }
            }
        }
        for (i, (form, _)) in phrases.iter().enumerate() {
            if let Some(first) = form.first() {
                lexicon.phrase_starts.entry(first.clone()).or_default().push(i);
            }
        }
        lexicon.phrases = phrases;
        lexicon.verbs = verbs;
        lexicon.verb_terms = verb_terms;
        for (i, (form, _)) in asks.iter().enumerate() {
            if let Some(first) = form.first() {
                lexicon.ask_starts.entry(first.clone()).or_default().push(i);
            }
        }
        lexicon.asks = asks;
        lexicon.aliases = aliases;
        lexicon
    })
}
