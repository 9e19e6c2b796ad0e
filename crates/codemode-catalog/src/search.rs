//! Ranked, deterministic search over catalog entries: what `tools.search` (guest-visible entries)
//! and the gateway's `API.search` (MCP entries) run.
//!
//! # Model
//!
//! A lexical BM25F ranker with query expansion, an action-verb prior and a nearest-name fallback.
//! It runs offline with no model files.
//!
//! - **Tokens.** Text is split on every character that is not an ASCII letter or digit (so
//!   snake_case, kebab-case and dotted names split), and at camelCase boundaries (`createIssue`,
//!   `HTTPServer` -> `http`, `server`); tokens are lower-cased, a few English stop words are dropped,
//!   and words are stemmed with the Snowball (Porter2) English stemmer (`issues` -> `issu`,
//!   `creating` / `created` / `create` -> `creat`). Multi-word forms of one concept in the
//!   [vocabulary] (`pull request` / `PR` / `merge request`; phrasal verbs: `get rid of` ->
//!   `delete`, `hand over` -> `assign`) are indexed as one term, on both the entry and the query
//!   side; phrases fold before stop words drop, so `sign in` needs its `in`. The undoing form of a
//!   vocabulary verb also names the verb (`unstar` -> `unstar`, `star`). On the query side a
//!   particle split from the leading verb joins it when the phrase is known (`take my star off`
//!   -> `take off`, a remove).
//! - **Fields** of an entry, with weights: name 3.0, label 2.0, owner (`sourceName`) 1.0, the
//!   description's first sentence 3.0 and the rest of it 0.3 (first 2,000 characters in all),
//!   top-level parameter names 0.6, their descriptions and enumerated values 0.2 (first 300
//!   characters each). Per term, field frequencies are length-normalized (each
//!   field its own `b`), weighted, summed, saturated once (`k1 = 1.2`, BM25F) and multiplied by the
//!   term's `idf` over the indexed entries.
//! - **Expansion.** Each query word also matches, at a discount: its [vocabulary]
//!   synonyms, 0.9; the other read verbs when it is one (`show` ~ `get` / `list` / `view`), 0.3;
//!   the term formed with the next query word when the index knows it (`key vault` ->
//!   `keyvault`), 0.8; vocabulary terms it is a prefix of or that are a prefix of it (both at least
//!   4 characters), 0.5; and, when the word is not indexed at all (a typo of a rare word), the
//!   indexed words within edit distance (adjacent transpositions count 1) 1 (4-7 characters) or 2
//!   (8 and more), 0.7 / 0.45 (candidates that differ in more letters than the distance allows
//!   are skipped unscored). A word's own term and its synonyms and compounds share one `idf`, the
//!   geometric mean of the `idf` over the entries any of them occurs in and the word's own (a rare
//!   word standing for a common synonym keeps some weight); other expansions' `idf` is capped at
//!   that. Per entry a query word counts once, with its best expansion.
//! - **Question words and named things.** What a question word asks for (vocabulary `ask` lines:
//!   `who` -> user, member, collaborator, ...; `how many` -> count, total, usage; `when` -> date,
//!   time) and what the query names by its form (`notes.txt` a file, `https://...` or `example.com`
//!   a URL, `#general` a channel, `@alice` a user, `#42` or `OPS-7` an issue) add, per group, the
//!   entry's best such term at weight 0.7, outside the coverage.
//! - **Coverage.** The sum is scaled by `0.3 + 0.7 * c`, where `c` is the `idf`-weighted share of
//!   the query's words the entry matched; an entry whose name (or id) equals the whole query goes
//!   first.
//! - **Name coverage.** The score is scaled by `0.5 + 0.5 * n`, where `n` is the `idf`-weighted
//!   share of the tool name's terms the query matched (each at its expansion's weight): words every
//!   tool of a server shares (`jira`, `browser`) weigh little, and a name word the query did not ask
//!   for (`link` in `remove_issue_link` for "remove a ticket") costs.
//! - **Adjacency.** Two adjacent query words (own terms or synonyms) that stand side by side in
//!   the entry's name, label or summary scale its score by `1 + 0.2 * w` (`w` the product of the two
//!   expansions' weights); the pairs are indexed at build.
//! - **Owner stage.** With two or more owners (`sourceName`; servers in the gateway) indexed, each
//!   owner is also scored as one document made of all its entries (fields weighted name 3, label 2,
//!   owner 3, summary 1, description and parameter names 0.3, parameter docs 0.1; BM25 over the
//!   owners with `k1 = 10`, `b = 1`, the same expansions plus the named things' terms at 0.7),
//!   scaled so the best owner is 1, and each entry's score is multiplied by `0.2 + 0.8 * r` (`r` its
//!   owner's relevance). A query word that names owners (a term of their `sourceName`: "on
//!   github") and whose owner-document mass is at least half theirs (not `time` or `memory`, words
//!   every server uses) sets their relevance to 1 and scales the others' by 0.2. The server the
//!   intent is about thus wins over incidental word matches in other servers. Owner postings are
//!   precomputed at index build; a query costs one pass over at most one owner list per expansion.
//! - **Action verbs.** The query's leading verb (a phrasal verb counts as the verb it folds into;
//!   a question word reads) and the first verb of the tool's name are classified read / write /
//!   delete. The same class scores x1.15; a read question against a write or delete tool x0.6 (and
//!   the other mismatches x0.7-0.8); a query with no leading verb is a lookup and weighs write and
//!   delete tools x0.92. In a read ask the query's match of a write or delete tool's own verb
//!   counts neither in its name, label and summary nor in its name coverage: the verbs of "who is
//!   assigned" or "who can push" name a state, not the assign or push action.
//! - **Never empty.** When fewer entries match than asked for, the rest are filled with the
//!   nearest entries: by the action-verb factor above (a write ask gets write tools), then by
//!   character-trigram similarity of the query to name and label, then catalog order; they carry
//!   `score: 0` and `match: "nearest"`. A non-empty index therefore always
//!   returns `min(limit, entries)` hits.
//! - **Hits** carry a `score` in `[0, 1]` (`s / (s + q)`: `s` the entry's score, `q` the query's
//!   total `idf`; an exact name match is 1) and a short `match` naming the fields that matched and
//!   the query words matched in each (`~` marks a synonym, verb-class, prefix or typo match), then
//!   the question words and named things that matched: `name: create, issue~; asks: who~`.
//! - **Lazy.** An index is built on the first search of a [`Catalog`](crate::Catalog).
//! - **Determinism.** Ties are broken by catalog order. A query with no usable token lists entries in
//!   catalog order. Queries are cut to 512 characters and 32 words.

use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Longest query text considered, in characters.
pub const MAX_QUERY_CHARS: usize = 512;
/// Most query words considered.
pub const MAX_QUERY_TERMS: usize = 32;
/// Longest [`SearchHit`](crate::SearchHit) `match` text, in characters.
pub const MAX_MATCH_CHARS: usize = 120;
/// Description characters indexed per entry.
const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// Characters indexed per parameter description.
const MAX_PARAM_DESCRIPTION_CHARS: usize = 300;
/// Parameters indexed per entry.
const MAX_PARAMS: usize = 64;

/// Fields, in this order: name, label, owner, summary (the description's first sentence), the rest
/// of the description, parameter names, parameter descriptions.
const FIELDS: usize = 7;
const FIELD_NAMES: [&str; FIELDS] =
    ["name", "label", "owner", "summary", "description", "params", "param docs"];
const WEIGHTS: [f64; FIELDS] = [3.0, 2.0, 1.0, 3.0, 0.3, 0.6, 0.2];
const B: [f64; FIELDS] = [0.3, 0.3, 0.2, 0.5, 0.75, 0.4, 0.6];
const K1: f64 = 1.2;
/// Fields where a read ask's match of a write tool's verb does not count.
const SUPPRESS: [bool; FIELDS] = [true, true, false, true, false, false, false];
/// The share of an entry's score that does not depend on how much of the query it covers.
const COVERAGE_FLOOR: f64 = 0.3;

/// The bonus for two adjacent query words that stand side by side in a name, label or summary.
const ADJACENT_BONUS: f64 = 0.2;
/// The share of a score that does not depend on how much of the tool's name the query matched.
const NAME_COVERAGE_FLOOR: f64 = 0.5;
/// Field weights of an owner document (the owner stage).
const OWNER_WEIGHTS: [f64; FIELDS] = [3.0, 2.0, 3.0, 1.0, 0.3, 0.3, 0.1];
const OWNER_B: f64 = 1.0;
const OWNER_K1: f64 = 10.0;
/// The share of a term's owner-document mass that owners named by it must hold for the term to
/// name them.
const OWNER_NAMED_SHARE: f64 = 0.5;
/// An owner's relevance factor when the query names other owners.
const OWNER_UNNAMED: f64 = 0.2;
/// The share of a tool's score that rests on its owner's relevance.
const OWNER_BLEND: f64 = 0.8;

const SYNONYM_WEIGHT: f64 = 0.9;
/// The weight of what a question word asks for.
const ASK_WEIGHT: f64 = 0.7;
const VERB_WEIGHT: f64 = 0.3;
const COMPOUND_WEIGHT: f64 = 0.8;
const PREFIX_WEIGHT: f64 = 0.5;
const FUZZY1_WEIGHT: f64 = 0.7;
const FUZZY2_WEIGHT: f64 = 0.45;

const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "all",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "every",
    "everything",
    "for",
    "from",
    "how",
    "i",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "my",
    "of",
    "on",
    "or",
    "our",
    "please",
    "some",
    "that",
    "the",
    "their",
    "them",
    "there",
    "this",
    "to",
    "using",
    "via",
    "was",
    "we",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whose",
    "why",
    "with",
    "you",
    "your",
];

/// Leading words that make a query a question (a read).
const QUESTION_WORDS: &[&str] = &[
    "who", "whom", "whose", "what", "whats", "which", "when", "where", "why", "how", "is", "are", "does",
    "do", "did", "has", "have", "was", "were", "can", "could",
];

/// Leading words skipped when looking for a query's verb.
const FILLER_WORDS: &[&str] = &[
    "please", "i", "we", "want", "need", "would", "like", "let", "lets", "just", "also", "then", "now", "to",
];

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

/// What one [vocabulary] group is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupKind {
    /// An action-verb class.
    Verb(VerbClass),
    /// Multi-word forms of one concept (the first is the indexed form).
    Phrase,
    /// Synonyms.
    Synonyms,
    /// What a question word asks for (`who` -> user, member, ...): its forms, words separated by
    /// spaces (`how many`). A query with one of them favours entries about its words, at a
    /// discount, without the words counting as part of the query.
    Ask(Vec<String>),
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
const VOCABULARY_TEXT: &str = include_str!("vocabulary.txt");

/// The search vocabulary: verb classes, phrases and synonym groups, parsed from the crate's
/// `vocabulary.txt`.
pub fn vocabulary() -> &'static [VocabularyGroup] {
    static GROUPS: OnceLock<Vec<VocabularyGroup>> = OnceLock::new();
    GROUPS.get_or_init(|| parse_vocabulary(VOCABULARY_TEXT))
}

fn parse_vocabulary(text: &str) -> Vec<VocabularyGroup> {
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
            "verb delete" => {
                (GroupKind::Verb(VerbClass::Delete), body.split_whitespace().map(str::to_owned).collect())
            }
            head if head.starts_with("ask ") => (
                GroupKind::Ask(head["ask ".len()..].split('|').map(|f| f.trim().to_owned()).collect()),
                body.split_whitespace().map(str::to_owned).collect(),
            ),
            _ => continue,
        };
        let words: Vec<String> = words.into_iter().filter(|w| !w.is_empty()).collect();
        if words.len() >= 2 || matches!(kind, GroupKind::Verb(_)) {
            groups.push(VocabularyGroup { kind, words });
        }
    }
    groups
}

/// The vocabulary, stemmed, in lookup form.
struct Lexicon {
    /// Term -> other terms it expands to, with weights.
    expansions: HashMap<String, Vec<(String, f64)>>,
    /// Raw verb word -> class.
    verbs: HashMap<String, VerbClass>,
    /// Stemmed verb -> class (for phrasal verbs, which fold into a stemmed term).
    verb_terms: HashMap<String, VerbClass>,
    /// Phrase forms as term sequences -> the indexed term, longest first.
    phrases: Vec<(Vec<String>, String)>,
    /// Question forms (raw word sequences) -> the stemmed terms they ask for.
    asks: Vec<(Vec<String>, Vec<String>)>,
}

fn lexicon() -> &'static Lexicon {
    static LEXICON: OnceLock<Lexicon> = OnceLock::new();
    LEXICON.get_or_init(|| {
        let mut lexicon = Lexicon {
            expansions: HashMap::new(),
            verbs: HashMap::new(),
            verb_terms: HashMap::new(),
            phrases: Vec::new(),
            asks: Vec::new(),
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
        lexicon.phrases = phrases;
        lexicon.verbs = verbs;
        lexicon.verb_terms = verb_terms;
        lexicon.asks = asks;
        lexicon
    })
}

/// Calls `f` with each raw lower-case word of `text`: non-alphanumerics separate, camelCase
/// boundaries split (`createIssue`, `HTTPServer` -> `http`, `server`; `PRs` stays one word).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut current = String::new();
    let mut prev: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
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
            // `HTTPServer` splits before `S`; a plural acronym (`PRs`, `URLs`) does not.
            let plural = next == Some('s') && !chars.get(i + 2).is_some_and(|n| n.is_ascii_lowercase());
            let acronym_end = p.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && next.is_some_and(|n| n.is_ascii_lowercase())
                && !plural;
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

/// The stem of one lower-case word (words with digits and short words are kept as they are).
pub fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    if word.len() <= 2 || word.bytes().any(|b| b.is_ascii_digit()) {
        return word.to_owned();
    }
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English)).stem(word).into_owned()
}

/// One token of a text: the raw word(s) and the indexed term.
struct Token {
    word: String,
    term: String,
}

/// The tokens of `text`: words, stop words dropped, stemmed, phrases folded into one term each.
fn tokens(text: &str, stems: &mut HashMap<String, String>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for_each_word(text, |word| {
        let term = match stems.get(word) {
            Some(term) => term.clone(),
            None => {
                let term = stem(word);
                stems.insert(word.to_owned(), term.clone());
                term
            }
        };
        out.push(Token { word: word.to_owned(), term });
    });
    let mut out = fold_phrases(out);
    out.retain(|t| !STOP_WORDS.contains(&t.word.as_str()));
    // The undoing form of a verb also names the verb (`unstar` -> `star`, `unassign` -> `assign`).
    let verbs = &lexicon().verbs;
    let mut i = 0;
    while i < out.len() {
        if let Some(rest) = out[i].word.strip_prefix("un")
            && rest.len() >= 3
            && verbs.contains_key(rest)
        {
            let token = Token { word: rest.to_owned(), term: stem(rest) };
            out.insert(i + 1, token);
            i += 1;
        }
        i += 1;
    }
    out
}

fn fold_phrases(tokens: Vec<Token>) -> Vec<Token> {
    let phrases = &lexicon().phrases;
    if tokens.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    'outer: while i < tokens.len() {
        for (form, canonical) in phrases {
            let n = form.len();
            let same = |t: &Token, f: &String| {
                &t.term == f || t.word.strip_suffix('s').is_some_and(|w| w == f.as_str())
            };
            if i + n <= tokens.len() && tokens[i..i + n].iter().zip(form).all(|(t, f)| same(t, f)) {
                let word = tokens[i..i + n].iter().map(|t| t.word.as_str()).collect::<Vec<_>>().join(" ");
                out.push(Token { word, term: canonical.clone() });
                i += n;
                continue 'outer;
            }
        }
        out.push(Token { word: tokens[i].word.clone(), term: tokens[i].term.clone() });
        i += 1;
    }
    out
}

/// The class of a query: its leading verb (a phrasal verb such as `get rid of` counts as the verb
/// it folds into), or a question word (read). Filler words are skipped.
fn query_class(query: &str) -> Option<VerbClass> {
    let lexicon = lexicon();
    let verbs = &lexicon.verbs;
    let mut words: Vec<String> = Vec::new();
    for_each_word(query, |w| {
        if words.len() < 4
            && (!words.is_empty() || !FILLER_WORDS.contains(&w) && !matches!(w, "a" | "an" | "the"))
        {
            words.push(w.to_owned());
        }
    });
    let first = words.first()?.clone();
    if QUESTION_WORDS.contains(&first.as_str()) {
        return Some(VerbClass::Read);
    }
    // A phrasal verb at the start: its canonical term's class.
    let mut stems = HashMap::new();
    if let Some(token) = tokens(&words.join(" "), &mut stems).first()
        && token.word.contains(' ')
        && token.word.starts_with(first.as_str())
        && let Some(&class) = lexicon.verb_terms.get(&token.term)
    {
        return Some(class);
    }
    if let Some(&class) = verbs.get(&first) {
        return Some(class);
    }
    if let Some(&class) = verbs.get(&stem(&first)) {
        return Some(class);
    }
    // A misspelled leading verb ("deleet", "creat").
    if first.len() >= 5 {
        let mut best: Option<(usize, VerbClass, &str)> = None;
        for (verb, &class) in verbs {
            if verb.len() >= 5
                && let Some(d) = bounded_edit_distance(&first, verb, 2)
                && best.is_none_or(|(bd, _, bv)| (d, verb.as_str()) < (bd, bv))
            {
                best = Some((d, class, verb));
            }
        }
        if let Some((d, class, _)) = best
            && d <= if first.len() >= 7 { 2 } else { 1 }
        {
            return Some(class);
        }
    }
    None
}

/// Particles of split phrasal verbs (`take my star off`).
const PARTICLES: &[&str] = &["off", "over", "out", "away", "back", "up", "down"];

/// The query with a split phrasal verb joined (`take my star off` -> `take off my star`) when
/// the vocabulary has the phrase, else `None`.
fn join_split_phrasal(query: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for_each_word(query, |w| {
        if words.len() < MAX_QUERY_TERMS * 2 {
            words.push(w.to_owned());
        }
    });
    let verb = words
        .iter()
        .position(|w| !FILLER_WORDS.contains(&w.as_str()) && !matches!(w.as_str(), "a" | "an" | "the"))?;
    let phrases = &lexicon().phrases;
    let verb_term = stem(&words[verb]);
    for at in (verb + 2)..words.len().min(verb + 6) {
        let particle = words[at].as_str();
        if !PARTICLES.contains(&particle) {
            continue;
        }
        let form = [verb_term.clone(), stem(particle)];
        if phrases.iter().any(|(f, _)| f.as_slice() == form) {
            let particle = words.remove(at);
            words.insert(verb + 1, particle);
            return Some(words.join(" "));
        }
    }
    None
}

/// The class of a tool and its verb: the first verb of its name.
fn tool_verb(name: &str) -> Option<(VerbClass, String)> {
    let verbs = &lexicon().verbs;
    let mut found = None;
    for_each_word(name, |w| {
        if found.is_none() {
            found = verbs.get(w).map(|&class| (class, w.to_owned()));
        }
    });
    found
}

fn verb_factor(query: Option<VerbClass>, tool: Option<VerbClass>) -> f64 {
    use VerbClass::*;
    match (query, tool) {
        (_, None) => 1.0,
        (None, Some(Read)) => 1.0,
        (None, Some(_)) => 0.92,
        (Some(q), Some(t)) if q == t => 1.15,
        (Some(Read), Some(_)) => 0.6,
        (Some(_), Some(Read)) => 0.8,
        (Some(_), Some(_)) => 0.7,
    }
}

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

#[derive(Clone, Debug)]
struct Posting {
    doc: u32,
    tf: [f32; FIELDS],
}

/// A ranked document: index, score in `[0, 1)`, match text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ranked {
    pub doc: usize,
    pub score: f64,
    pub matched: String,
}

/// How an expansion relates to the query word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The word's own term, or the compound it forms with the next word.
    Exact,
    /// A vocabulary synonym: part of the word's concept.
    Synonym,
    /// Another verb of its class, a prefix, or a typo neighbour.
    Near,
}

/// The prebuilt index over one set of entries.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchIndex {
    vocab: HashMap<String, u32>,
    terms: Vec<String>,
    /// Term ids sorted by term, for prefix lookups.
    sorted: Vec<u32>,
    postings: Vec<Vec<Posting>>,
    /// Every indexed word (before stemming) with its term, bucketed by length, for typo matching.
    words_by_len: Vec<Vec<(String, u32, u64)>>,
    /// Indexed raw words (for "is this query word indexed").
    known_words: HashMap<String, u32>,
    doc_len: Vec<[f32; FIELDS]>,
    avg_len: [f64; FIELDS],
    /// Lower-cased tool name and id per document, for exact matches.
    exact: Vec<(String, String)>,
    /// Character trigrams of the lower-cased name and label, for the fallback.
    trigrams: Vec<Vec<[u8; 3]>>,
    classes: Vec<Option<VerbClass>>,
    /// The term of each document's verb (the first verb of its name).
    verb_terms: Vec<Option<u32>>,
    /// Adjacent term pairs of names, labels and summaries -> the documents they occur in.
    pairs: HashMap<(u32, u32), Vec<u32>>,
    /// The distinct terms of each document's name, with their `idf`.
    name_terms: Vec<Vec<(u32, f32)>>,
    /// Owner (server) group of each document.
    owner_of: Vec<u16>,
    /// Number of owner groups (the owner stage runs only with two or more).
    owners: usize,
    /// Per term: `(owner, weighted term frequency)` over the owner's documents.
    owner_postings: Vec<Vec<(u16, f32)>>,
    /// Per term: the owners whose name has it.
    owner_named: Vec<Vec<u16>>,
    /// Weighted length of each owner document.
    owner_len: Vec<f32>,
    /// Average weighted owner-document length.
    owner_avg_len: f64,
}

impl SearchIndex {
    pub(crate) fn build(docs: &[DocText<'_>]) -> SearchIndex {
        let mut index = SearchIndex::default();
        let mut totals = [0f64; FIELDS];
        let mut stems: HashMap<String, String> = HashMap::new();
        for (doc, text) in docs.iter().enumerate() {
            let description: String = text.description.chars().take(MAX_DESCRIPTION_CHARS).collect();
            let (summary, rest) = split_summary(&description);
            let param_docs: Vec<String> = text
                .param_descriptions
                .iter()
                .take(MAX_PARAMS)
                .map(|d| d.chars().take(MAX_PARAM_DESCRIPTION_CHARS).collect())
                .collect();
            let param_docs: Vec<&str> = param_docs.iter().map(String::as_str).collect();
            let params: Vec<&str> = text.params.iter().take(MAX_PARAMS).copied().collect();
            let mut tf: HashMap<u32, [f32; FIELDS]> = HashMap::new();
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
                    for token in tokens(field_text, &mut stems) {
                        let id = index.intern(&token.term);
                        if matches!(f, 0 | 1 | 3) {
                            if let Some(prev) = previous {
                                let docs = index.pairs.entry((prev, id)).or_default();
                                if docs.last() != Some(&(doc as u32)) {
                                    docs.push(doc as u32);
                                }
                            }
                            previous = Some(id);
                        }
                        if !token.word.contains(' ') && !index.known_words.contains_key(&token.word) {
                            index.known_words.insert(token.word.clone(), id);
                            let n = token.word.len();
                            if index.words_by_len.len() <= n {
                                index.words_by_len.resize(n + 1, Vec::new());
                            }
                            let mask = letter_mask(&token.word);
                            index.words_by_len[n].push((token.word, id, mask));
                        }
                        tf.entry(id).or_insert([0.0; FIELDS])[f] += 1.0;
                        len[f] += 1.0;
                    }
                }
                totals[f] += f64::from(len[f]);
            }
            let mut names: Vec<(u32, f32)> =
                tf.iter().filter(|(_, t)| t[0] > 0.0).map(|(&id, _)| (id, 0.0)).collect();
            names.sort_unstable_by_key(|n| n.0);
            index.name_terms.push(names);
            let mut sorted: Vec<(u32, [f32; FIELDS])> = tf.into_iter().collect();
            sorted.sort_by_key(|(id, _)| *id);
            for (id, tf) in sorted {
                index.postings[id as usize].push(Posting { doc: doc as u32, tf });
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
        let idfs: Vec<f32> =
            (0..index.postings.len()).map(|id| index.idf(index.postings[id].len()) as f32).collect();
        for names in &mut index.name_terms {
            for (id, idf) in names.iter_mut() {
                *idf = idfs[*id as usize];
            }
        }
        index.build_owners(docs);
        index
    }

    /// The owner stage's index: each owner (server) as one document made of all its entries.
    fn build_owners(&mut self, docs: &[DocText<'_>]) {
        let mut groups: HashMap<&str, u16> = HashMap::new();
        for text in docs {
            let next = groups.len() as u16;
            let group = *groups.entry(text.owner.unwrap_or("")).or_insert(next);
            self.owner_of.push(group);
        }
        self.owners = groups.len();
        if self.owners < 2 {
            return;
        }
        self.owner_len = vec![0.0; self.owners];
        for (doc, len) in self.doc_len.iter().enumerate() {
            let owner = self.owner_of[doc] as usize;
            self.owner_len[owner] += (0..FIELDS).map(|f| OWNER_WEIGHTS[f] as f32 * len[f]).sum::<f32>();
        }
        self.owner_avg_len =
            (self.owner_len.iter().map(|&l| f64::from(l)).sum::<f64>() / self.owners as f64).max(1.0);
        self.owner_postings = self
            .postings
            .iter()
            .map(|postings| {
                let mut tf = vec![0f32; self.owners];
                for p in postings {
                    tf[self.owner_of[p.doc as usize] as usize] +=
                        (0..FIELDS).map(|f| OWNER_WEIGHTS[f] as f32 * p.tf[f]).sum::<f32>();
                }
                tf.into_iter().enumerate().filter(|(_, t)| *t > 0.0).map(|(o, t)| (o as u16, t)).collect()
            })
            .collect();
        self.owner_named = self
            .postings
            .iter()
            .map(|postings| {
                let mut named: Vec<u16> = postings
                    .iter()
                    .filter(|p| p.tf[2] > 0.0)
                    .map(|p| self.owner_of[p.doc as usize])
                    .collect();
                named.sort_unstable();
                named.dedup();
                named
            })
            .collect();
    }

    /// How much of the document's name the query accounts for: `floor + (1 - floor) * share`,
    /// the share `idf`-weighted over the name's terms, so words every entry of a server shares
    /// (`jira`, `browser`) weigh little and an unmatched head noun (`link` in
    /// `remove_issue_link` for "remove a ticket") costs.
    fn name_coverage(&self, doc: usize, matched: &HashMap<u32, f64>, state: Option<u32>) -> f64 {
        let (mut total, mut hit) = (0f64, 0f64);
        let state = state.filter(|_| self.classes[doc] != Some(VerbClass::Read));
        for &(id, idf) in &self.name_terms[doc] {
            total += f64::from(idf);
            if Some(id) != state {
                hit += f64::from(idf) * matched.get(&id).copied().unwrap_or(0.0);
            }
        }
        if total <= 0.0 {
            return 1.0;
        }
        NAME_COVERAGE_FLOOR + (1.0 - NAME_COVERAGE_FLOOR) * hit / total
    }

    /// Each owner's relevance to the query, scaled so the best owner is 1 (empty with fewer than
    /// two owners). `expansions` are the query's words' expansions.
    fn owner_relevance(&self, expansions: &[Vec<(u32, f64, Kind)>]) -> Vec<f64> {
        if self.owners < 2 {
            return Vec::new();
        }
        let n = self.owners as f64;
        let mut total = vec![0f64; self.owners];
        let mut best = vec![0f64; self.owners];
        for word in expansions {
            for &(id, weight, _) in word {
                let postings = &self.owner_postings[id as usize];
                let df = postings.len() as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                for &(owner, tf) in postings {
                    let o = owner as usize;
                    let norm = 1.0 - OWNER_B + OWNER_B * f64::from(self.owner_len[o]) / self.owner_avg_len;
                    let tf = f64::from(tf) / norm;
                    best[o] = best[o].max(weight * idf * tf / (OWNER_K1 + tf));
                }
            }
            for (t, b) in total.iter_mut().zip(best.iter_mut()) {
                *t += *b;
                *b = 0.0;
            }
        }
        let max = total.iter().copied().fold(0.0, f64::max);
        if max > 0.0 {
            for t in &mut total {
                *t /= max;
            }
        }
        // A query word that names owners ("on github") and is mostly theirs (not `time` or
        // `memory`, words every server uses) picks them.
        let mut named = vec![false; self.owners];
        for word in expansions {
            for &(id, weight, kind) in word {
                let owners = &self.owner_named[id as usize];
                if kind != Kind::Exact || weight < 1.0 || owners.is_empty() {
                    continue;
                }
                let (mut theirs, mut all) = (0f64, 0f64);
                for &(owner, tf) in &self.owner_postings[id as usize] {
                    all += f64::from(tf);
                    if owners.contains(&owner) {
                        theirs += f64::from(tf);
                    }
                }
                if all > 0.0 && theirs / all >= OWNER_NAMED_SHARE {
                    for &o in owners {
                        named[o as usize] = true;
                    }
                }
            }
        }
        if named.contains(&true) {
            for (t, named) in total.iter_mut().zip(named) {
                *t = if named { 1.0 } else { *t * OWNER_UNNAMED };
            }
        }
        total
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

    fn idf(&self, df: usize) -> f64 {
        let n = self.docs() as f64;
        (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln()
    }

    /// Expansions of one query token (and the next one, for compounds): `(term id, weight, kind)`.
    fn expand(&self, token: &Token, next: Option<&Token>) -> Vec<(u32, f64, Kind)> {
        let mut out: Vec<(u32, f64, Kind)> = Vec::new();
        let mut add = |id: u32, weight: f64, kind: Kind| match out.iter_mut().find(|(i, _, _)| *i == id) {
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
            add(id, 1.0, Kind::Exact);
        }
        if let Some(expansions) = lexicon().expansions.get(term) {
            for (other, weight) in expansions {
                if let Some(&id) = self.vocab.get(other) {
                    add(id, *weight, if *weight >= SYNONYM_WEIGHT { Kind::Synonym } else { Kind::Near });
                }
            }
        }
        if let Some(next) = next
            && !token.word.contains(' ')
            && !next.word.contains(' ')
        {
            let joined = stem(&format!("{}{}", token.word, next.word));
            if let Some(&id) = self.vocab.get(&joined) {
                add(id, COMPOUND_WEIGHT, Kind::Exact);
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
                    add(id, PREFIX_WEIGHT, Kind::Near);
                }
            }
            // Indexed terms this one starts with.
            for end in 4..term.len() {
                if let Some(prefix) = term.get(..end)
                    && let Some(&id) = self.vocab.get(prefix)
                {
                    add(id, PREFIX_WEIGHT, Kind::Near);
                }
            }
        }
        let word = token.word.as_str();
        let word_len = word.len();
        let alphabetic = word.bytes().all(|b| b.is_ascii_lowercase());
        if exact.is_none() && !self.known_words.contains_key(word) && word_len >= 4 && alphabetic {
            let max = if word_len >= 8 { 2 } else { 1 };
            let lo = word_len.saturating_sub(max);
            let hi = (word_len + max).min(self.words_by_len.len().saturating_sub(1));
            let mask = letter_mask(word);
            for bucket in self.words_by_len.get(lo..=hi).into_iter().flatten() {
                for (candidate, id, candidate_mask) in bucket {
                    // An edit changes at most two of the letters a word has: words that differ
                    // in more are too far, without computing the distance.
                    if (mask ^ candidate_mask).count_ones() as usize > 2 * max {
                        continue;
                    }
                    if let Some(d) = bounded_edit_distance(word, candidate, max) {
                        add(*id, if d <= 1 { FUZZY1_WEIGHT } else { FUZZY2_WEIGHT }, Kind::Near);
                    }
                }
            }
        }
        out
    }

    /// Adds what the query's question words ask for (`who` -> user, member, ...) and what the
    /// things it names are ([`entity_words`]: `notes.txt` is a file): per document and per such
    /// group its best term, at [`ASK_WEIGHT`], outside the coverage.
    fn add_asks(&self, query: &str, scores: &mut [f64]) -> HashMap<usize, Vec<String>> {
        let asks = &lexicon().asks;
        let mut words: Vec<String> = Vec::new();
        for_each_word(query, |w| {
            if words.len() < MAX_QUERY_TERMS * 2 {
                words.push(w.to_owned());
            }
        });
        let mut groups: Vec<(String, Vec<String>)> = asks
            .iter()
            .filter(|(form, _)| words.windows(form.len()).any(|w| w == form.as_slice()))
            .map(|(form, terms)| (form.join(" "), terms.clone()))
            .collect();
        groups.extend(entity_words(query).into_iter().map(|w| (w.to_owned(), vec![stem(w)])));
        let mut best: HashMap<usize, f64> = HashMap::new();
        let mut asked: HashMap<usize, Vec<String>> = HashMap::new();
        for (label, terms) in groups {
            best.clear();
            for term in &terms {
                let Some(&id) = self.vocab.get(term) else { continue };
                let postings = &self.postings[id as usize];
                let idf = self.idf(postings.len());
                for p in postings {
                    let doc = p.doc as usize;
                    let len = &self.doc_len[doc];
                    let mut tf = 0f64;
                    for f in 0..FIELDS {
                        if p.tf[f] > 0.0 {
                            let norm = 1.0 - B[f] + B[f] * f64::from(len[f]) / self.avg_len[f];
                            tf += WEIGHTS[f] * f64::from(p.tf[f]) / norm;
                        }
                    }
                    let score = ASK_WEIGHT * idf * tf / (K1 + tf);
                    let b = best.entry(doc).or_insert(0.0);
                    *b = b.max(score);
                }
            }
            for (&doc, &bonus) in &best {
                scores[doc] += bonus;
                asked.entry(doc).or_default().push(label.clone());
            }
        }
        asked
    }

    /// Documents, best first, exactly `min(limit, documents)` of them.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<Ranked> {
        let limit = limit.min(self.docs());
        if limit == 0 {
            return Vec::new();
        }
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let joined = join_split_phrasal(&query);
        let text = joined.as_deref().unwrap_or(&query);
        let mut stems = HashMap::new();
        let mut query_tokens = tokens(text, &mut stems);
        let mut seen: Vec<String> = Vec::new();
        query_tokens.retain(|t| {
            let fresh = !seen.contains(&t.term);
            seen.push(t.term.clone());
            fresh
        });
        query_tokens.truncate(MAX_QUERY_TERMS);
        if query_tokens.is_empty() {
            return (0..limit).map(|doc| Ranked { doc, score: 0.0, matched: String::new() }).collect();
        }
        let docs = self.docs();
        let mut scores = vec![0f64; docs];
        let mut covered = vec![0f64; docs];
        // Per doc: per field, the query tokens that matched there (bit i = token i) and whether near.
        let mut fields_hit: Vec<[u32; FIELDS]> = vec![[0; FIELDS]; docs];
        let mut near_hit: Vec<u32> = vec![0; docs];
        let mut best = vec![0f64; docs];
        let mut best_fields = vec![0u8; docs];
        let mut best_near = vec![false; docs];
        let mut touched: Vec<usize> = Vec::new();
        let mut total_idf = 0f64;
        let mut stamp = vec![u32::MAX; docs];
        let all_expansions: Vec<Vec<(u32, f64, Kind)>> =
            query_tokens.iter().enumerate().map(|(i, t)| self.expand(t, query_tokens.get(i + 1))).collect();
        // What the query names by form (`#general`: a channel) also says which server it is about.
        let entities: Vec<Vec<(u32, f64, Kind)>> = entity_words(&query)
            .into_iter()
            .filter_map(|w| self.vocab.get(&stem(w)).map(|&id| vec![(id, ASK_WEIGHT, Kind::Near)]))
            .collect();
        let owner_relevance = if entities.is_empty() {
            self.owner_relevance(&all_expansions)
        } else {
            let mut words = all_expansions.clone();
            words.extend(entities);
            self.owner_relevance(&words)
        };
        let class = query_class(text);
        let read_ask = class == Some(VerbClass::Read);
        // Each expanded term's best weight, for the name's coverage.
        let mut matched_terms: HashMap<u32, f64> = HashMap::new();
        for word in &all_expansions {
            for &(id, weight, _) in word {
                let w = matched_terms.entry(id).or_insert(0.0);
                *w = w.max(weight);
            }
        }
        for (i, expansions) in all_expansions.iter().enumerate() {
            // The word's concept (its own term, compounds, synonyms) shares one idf: between the
            // idf of the entries any of them occurs in and the word's own. A rare literal word
            // does not fully outweigh the common synonym it stands for, and a synonym never
            // outweighs the word.
            let mut concept_df = 0usize;
            for &(id, _, kind) in expansions {
                if kind != Kind::Near {
                    for p in &self.postings[id as usize] {
                        if stamp[p.doc as usize] != i as u32 {
                            stamp[p.doc as usize] = i as u32;
                            concept_df += 1;
                        }
                    }
                }
            }
            let own_df = expansions
                .iter()
                .find(|e| e.2 == Kind::Exact && e.1 >= 1.0)
                .map_or(concept_df, |&(id, _, _)| self.postings[id as usize].len());
            // The geometric mean with the word's own idf: a rare word (`tab`) standing for a
            // common synonym (`page`) keeps some of its weight.
            let concept_idf =
                (concept_df > 0).then(|| (self.idf(concept_df) * self.idf(own_df.max(1))).sqrt());
            let mut query_idf = concept_idf.unwrap_or(0.0);
            for &(id, weight, kind) in expansions {
                let postings = &self.postings[id as usize];
                let idf = match (kind, concept_idf) {
                    (Kind::Near, Some(cap)) => self.idf(postings.len()).min(cap),
                    (Kind::Near, None) => {
                        let idf = self.idf(postings.len());
                        query_idf = query_idf.max(idf);
                        idf
                    }
                    (_, cap) => cap.unwrap_or_else(|| self.idf(postings.len())),
                };
                for p in postings {
                    let doc = p.doc as usize;
                    let len = &self.doc_len[doc];
                    let mut tf = 0f64;
                    let mut mask = 0u8;
                    // A read ask's verbs name a state ("who is assigned"), not the action of
                    // a write tool's name.
                    let state = read_ask
                        && self.verb_terms[doc] == Some(id)
                        && self.classes[doc] != Some(VerbClass::Read);
                    for f in 0..FIELDS {
                        if state && SUPPRESS[f] {
                            continue;
                        }
                        if p.tf[f] > 0.0 {
                            let norm = 1.0 - B[f] + B[f] * f64::from(len[f]) / self.avg_len[f];
                            tf += WEIGHTS[f] * f64::from(p.tf[f]) / norm;
                            mask |= 1 << f;
                        }
                    }
                    let score = weight * idf * tf / (K1 + tf);
                    if best[doc] == 0.0 {
                        touched.push(doc);
                    }
                    if score > best[doc] {
                        best[doc] = score;
                        best_fields[doc] = mask;
                        best_near[doc] = kind != Kind::Exact;
                    }
                }
            }
            if query_idf == 0.0 {
                // Not indexed and no expansion: weigh it like a word seen once.
                query_idf = self.idf(1);
            }
            total_idf += query_idf;
            for &doc in &touched {
                if best[doc] > 0.0 {
                    scores[doc] += best[doc];
                    covered[doc] += query_idf;
                    for (f, hit) in fields_hit[doc].iter_mut().enumerate() {
                        if best_fields[doc] & (1 << f) != 0 {
                            *hit |= 1 << i;
                        }
                    }
                    if best_near[doc] {
                        near_hit[doc] |= 1 << i;
                    }
                }
                best[doc] = 0.0;
            }
            touched.clear();
        }
        let asked = self.add_asks(&query, &mut scores);
        let whole = query.trim().to_ascii_lowercase();
        // Adjacent query words that stand side by side in a name, label or summary.
        let mut adjacent = vec![0f64; docs];
        for pair in all_expansions.windows(2) {
            for &(a, wa, ka) in &pair[0] {
                for &(b, wb, kb) in &pair[1] {
                    if ka == Kind::Near || kb == Kind::Near {
                        continue;
                    }
                    for &doc in self.pairs.get(&(a, b)).into_iter().flatten() {
                        let w = &mut adjacent[doc as usize];
                        *w = w.max(wa * wb);
                    }
                }
            }
        }
        let mut ranked: Vec<(f64, usize)> = Vec::new();
        for doc in 0..docs {
            if scores[doc] <= 0.0 {
                continue;
            }
            let coverage = if total_idf > 0.0 { covered[doc] / total_idf } else { 0.0 };
            let score = scores[doc]
                * (COVERAGE_FLOOR + (1.0 - COVERAGE_FLOOR) * coverage)
                * verb_factor(class, self.classes[doc])
                * self.name_coverage(doc, &matched_terms, if read_ask { self.verb_terms[doc] } else { None })
                * (1.0 + ADJACENT_BONUS * adjacent[doc]);
            ranked.push((score, doc));
        }
        if !owner_relevance.is_empty() {
            for (score, doc) in &mut ranked {
                *score *= 1.0 - OWNER_BLEND + OWNER_BLEND * owner_relevance[self.owner_of[*doc] as usize];
            }
        }
        for (score, doc) in &mut ranked {
            let (name, id) = &self.exact[*doc];
            if !whole.is_empty() && (*name == whole || *id == whole) {
                *score += 1.0e6;
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.truncate(limit);
        let norm = total_idf.max(1e-9);
        let mut out: Vec<Ranked> = ranked
            .iter()
            .map(|&(score, doc)| Ranked {
                doc,
                score: round3(score.min(1.0e5) / (score.min(1.0e5) + norm)),
                matched: match_text(&query_tokens, &fields_hit[doc], near_hit[doc], asked.get(&doc)),
            })
            .collect();
        if out.len() < limit {
            let grams = trigrams(&query.to_ascii_lowercase());
            let mut rest: Vec<(f64, usize)> = (0..docs)
                .filter(|&doc| scores[doc] <= 0.0)
                .map(|doc| {
                    // The query's action still tells: a write ask prefers write tools.
                    let similarity = trigram_similarity(&grams, &self.trigrams[doc]);
                    (verb_factor(class, self.classes[doc]) + similarity.min(0.99) * 0.01, doc)
                })
                .collect();
            rest.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            out.extend(rest.into_iter().take(limit - out.len()).map(|(_, doc)| Ranked {
                doc,
                score: 0.0,
                matched: "nearest".to_owned(),
            }));
        }
        out
    }
}

/// What the things a query names are, by their form: a file name with an extension
/// (`notes.txt`, `.rs`) is a file, an address (`https://...`, `www.`, `example.com`) a URL, `#name` a channel,
/// `@name` a user, and `#42` or a key like `OPS-7` an issue.
fn entity_words(query: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let mut push = |w: &'static str| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    for chunk in query.split_whitespace().take(MAX_QUERY_TERMS * 2) {
        let chunk = chunk.trim_matches(|c: char| "\"'`()[]{}<>,;:!?".contains(c)).trim_end_matches('.');
        let lower = chunk.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("www.") {
            push("url");
            continue;
        }
        if let Some(rest) = chunk.strip_prefix('#') {
            if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                push("issue");
            } else if rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()) {
                push("channel");
            }
            continue;
        }
        if chunk
            .strip_prefix('@')
            .is_some_and(|rest| rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()))
        {
            push("user");
            continue;
        }
        if let Some((key, number)) = chunk.split_once('-')
            && key.len() >= 2
            && key.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && key.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
        {
            push("issue");
            continue;
        }
        if let Some((stem, ext)) = chunk.rsplit_once('.')
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
            && stem.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-/.~".contains(&b))
            && !stem.contains("..")
        {
            // A host name (`example.com`) is an address, not a file.
            push(if matches!(ext, "com" | "org" | "net" | "io" | "dev" | "app") { "url" } else { "file" });
        }
    }
    out
}

/// The description's first sentence (at most 300 bytes, cut at a word) and the rest.
fn split_summary(description: &str) -> (&str, &str) {
    let bytes = description.as_bytes();
    let mut end = description.len();
    for (i, &b) in bytes.iter().enumerate() {
        let sentence_end =
            (b == b'.' || b == b'!' || b == b'?') && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if sentence_end || b == b'\n' {
            end = i;
            break;
        }
    }
    if end > 300 {
        end = description[..300].rfind(' ').unwrap_or(0);
        while !description.is_char_boundary(end) {
            end -= 1;
        }
    }
    (&description[..end], &description[end..])
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `name: create, issue~; description: bug; asks: who~`, at most [`MAX_MATCH_CHARS`] characters.
fn match_text(tokens: &[Token], fields: &[u32; FIELDS], near: u32, asked: Option<&Vec<String>>) -> String {
    let mut out = String::new();
    for (f, &mask) in fields.iter().enumerate() {
        if mask == 0 {
            continue;
        }
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(FIELD_NAMES[f]);
        out.push_str(": ");
        let mut first = true;
        for (i, token) in tokens.iter().enumerate() {
            if mask & (1 << i) != 0 {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                out.push_str(&token.word);
                if near & (1 << i) != 0 {
                    out.push('~');
                }
            }
        }
    }
    if let Some(asked) = asked {
        // What question words and the things the query names matched: `asks: who~, channel~`.
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str("asks: ");
        out.push_str(&asked.iter().map(|a| format!("{a}~")).collect::<Vec<_>>().join(", "));
    }
    if out.chars().count() > MAX_MATCH_CHARS {
        out = out.chars().take(MAX_MATCH_CHARS - 1).collect();
        out.push('…');
    }
    out
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
    common as f64 / (a.len() + b.len() - common) as f64
}

/// Which ASCII letters and digits a word has, one bit each.
fn letter_mask(word: &str) -> u64 {
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
fn osa(
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
