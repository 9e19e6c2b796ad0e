//! Text and query analysis: words, stems, tokens with phrases folded, the action class of a query
//! and of a tool name, split phrasal verbs, what a query names by its form, and a description's
//! first sentence.

use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::MAX_QUERY_TERMS;
use super::lexicon::{VerbClass, lexicon};
use super::typo::bounded_edit_distance;

pub(super) const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "again",
    "all",
    "also",
    "an",
    "and",
    "another",
    "any",
    "anybody",
    "anyone",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "both",
    "by",
    "can",
    "currently",
    "do",
    "does",
    "each",
    "every",
    "everybody",
    "everyone",
    "everything",
    "for",
    "from",
    "he",
    "her",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "me",
    "my",
    "now",
    "of",
    "on",
    "or",
    "other",
    "others",
    "our",
    "please",
    "really",
    "same",
    "she",
    "so",
    "some",
    "somebody",
    "someone",
    "something",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "using",
    "very",
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
    "yet",
    "you",
    "your",
    // What an apostrophe leaves of a contraction or a possessive (`what's`, `don't`, `we're`).
    "aren",
    "couldn",
    "d",
    "didn",
    "doesn",
    "don",
    "isn",
    "ll",
    "m",
    "re",
    "s",
    "shouldn",
    "t",
    "ve",
    "wasn",
    "weren",
    "won",
    "wouldn",
    // Auxiliary and modal verbs and a few more function words. They say nothing about what a
    // tool does, and a description that addresses the model in prose ("you did not have internet
    // access") otherwise matched every question built with them: `what did the page request?`
    // ranked a one-tool server's `fetch` first with all 16 public catalogs loaded.
    "did",
    "done",
    "doing",
    "been",
    "being",
    "were",
    "has",
    "have",
    "had",
    "having",
    "will",
    "would",
    "should",
    "could",
    "might",
    "must",
    "shall",
    "us",
    "whom",
    "although",
    "though",
    "because",
    // Prepositions and pronouns that only relate the ask's words (`anything regarding Kubernetes`).
    "regarding",
    "concerning",
    "toward",
    "towards",
    "upon",
    "whatever",
    "whichever",
    "whoever",
];

/// Whether `word` is one of the [`STOP_WORDS`].
pub(super) fn is_stop_word(word: &str) -> bool {
    static SET: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect()).contains(word)
}

/// Leading words that make a query a question (a read).
pub(super) const QUESTION_WORDS: &[&str] = &[
    "who", "whom", "whose", "what", "whats", "which", "when", "where", "why", "how", "is", "are", "does",
    "do", "did", "has", "have", "was", "were", "can", "could",
];

/// Leading words skipped when looking for a query's verb.
pub(super) const FILLER_WORDS: &[&str] = &[
    "please", "i", "we", "want", "need", "would", "like", "let", "lets", "just", "also", "then", "now", "to",
    // What an apostrophe leaves (`I'd like to`, `we'll`), and asks for help (`help me write ...`).
    "d", "ll", "m", "re", "ve", "help", "me", "us", "gotta", "wanna", "go", "ahead", "kindly", "pls", "plz",
];

/// Calls `f` with each raw lower-case word of `text`: non-alphanumerics separate, camelCase
/// boundaries split (`createIssue`, `HTTPServer` -> `http`, `server`; `PRs` stays one word).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    // Words are ASCII letters and digits only, so bytes serve: a non-ASCII character's bytes are
    // all separators, as the character is.
    let bytes = text.as_bytes();
    let mut current = String::new();
    let mut prev: Option<u8> = None;
    for (i, &c) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
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
            let plural = next == Some(b's') && !bytes.get(i + 2).is_some_and(|n| n.is_ascii_lowercase());
            let acronym_end = p.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && next.is_some_and(|n| n.is_ascii_lowercase())
                && !plural;
            if lower_to_upper || acronym_end {
                f(&current);
                current.clear();
            }
        }
        current.push(char::from(c.to_ascii_lowercase()));
        prev = Some(c);
    }
    if !current.is_empty() {
        f(&current);
    }
}

/// `text` cut to its first `max` characters (no copy).
pub(super) fn first_chars(text: &str, max: usize) -> &str {
    // A text of at most `max` bytes has at most `max` characters.
    if text.len() <= max {
        return text;
    }
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The stem of one lower-case word (words with digits and short words are kept as they are).
pub fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    super::stem_rule::stem_with(STEMMER.get_or_init(|| Stemmer::create(Algorithm::English)), word)
}

/// One token of a text: the raw word(s) and the indexed term.
pub(super) struct Token {
    pub(super) word: String,
    pub(super) term: String,
}

/// The tokens of `text`: words, stop words dropped, stemmed, phrases folded into one term each.
pub(super) fn tokens(text: &str, stems: &mut HashMap<String, String>) -> Vec<Token> {
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
    out.retain(|t| !is_stop_word(&t.word));
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

pub(super) fn fold_phrases(tokens: Vec<Token>) -> Vec<Token> {
    let lexicon = lexicon();
    if tokens.is_empty() || lexicon.phrases.is_empty() {
        return tokens;
    }
    let same =
        |t: &Token, f: &String| &t.term == f || t.word.strip_suffix('s').is_some_and(|w| w == f.as_str());
    let mut out = Vec::with_capacity(tokens.len());
    let mut tokens = tokens.into_iter().map(Some).collect::<Vec<Option<Token>>>();
    let mut i = 0;
    'outer: while i < tokens.len() {
        let Some(token) = tokens[i].as_ref() else { break };
        // The phrases that can start here: those whose first term is the token's term, or its
        // word without a plural `s`.
        let by_term = lexicon.phrase_starts.get(&token.term);
        let by_word = token.word.strip_suffix('s').and_then(|w| lexicon.phrase_starts.get(w));
        let mut candidates: Vec<usize> = by_term.into_iter().chain(by_word).flatten().copied().collect();
        if !candidates.is_empty() {
            candidates.sort_unstable();
            candidates.dedup();
            for p in candidates {
                let (form, canonical) = &lexicon.phrases[p];
                let n = form.len();
                if i + n <= tokens.len()
                    && tokens[i..i + n].iter().zip(form).all(|(t, f)| t.as_ref().is_some_and(|t| same(t, f)))
                {
                    let word = tokens[i..i + n]
                        .iter()
                        .flatten()
                        .map(|t| t.word.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    out.push(Token { word, term: canonical.clone() });
                    i += n;
                    continue 'outer;
                }
            }
        }
        if let Some(token) = tokens[i].take() {
            out.push(token);
        }
        i += 1;
    }
    out
}

/// The class of a query's action: its leading verb (a phrasal verb such as `get rid of` counts as
/// the verb it folds into), or a question word (read). Filler words are skipped. A query that
/// opens with context rather than a verb ("the kb article is obsolete, throw it away") takes the
/// class of the first later clause that opens with one. With none, the ranking reads what the
/// query names ([`stated_class`] last).
pub(super) fn action_class(query: &str) -> Option<VerbClass> {
    leading_class(query).or_else(|| later_clauses(query).find_map(|(_, clause)| leading_class(clause)))
}

/// The class of a query with no action verb ([`action_class`]): a lookup when it names a state or asks.
pub(super) fn stated_class(query: &str) -> Option<VerbClass> {
    // No verb: a past participle of an action verb after the noun names a state ("reviews
    // submitted on a PR", "tickets assigned to me"), so the query looks something up.
    let lexicon = lexicon();
    let mut words: Vec<String> = Vec::new();
    for_each_word(query, |w| words.push(w.to_owned()));
    let first = words
        .iter()
        .find(|w| !FILLER_WORDS.contains(&w.as_str()) && !matches!(w.as_str(), "a" | "an" | "the"));
    let state = words.iter().any(|w| {
        Some(w) != first
            && w.len() >= 5
            && w.ends_with("ed")
            && lexicon.verb_terms.get(&stem(w)).is_some_and(|&c| c != VerbClass::Read)
    });
    // A question with no action verb ("anything about Kubernetes in your memory?") reads.
    (state || query.trim_end().ends_with('?')).then_some(VerbClass::Read)
}

/// The clauses after the first (the text after each `,`, `;`, `:`, ` - `, and each sentence's
/// end: `.`, `?` or `!`), with their byte offsets in the query.
fn later_clauses(query: &str) -> impl Iterator<Item = (usize, &str)> {
    query
        .char_indices()
        .filter(|&(i, c)| {
            matches!(c, ',' | ';' | ':' | '.' | '?' | '!')
                || c == '-' && query[..i].ends_with(' ') && query[i + 1..].starts_with(' ')
        })
        .map(move |(i, c)| (i + c.len_utf8(), &query[i + c.len_utf8()..]))
        .filter(|(_, rest)| rest.starts_with(' '))
}

/// The class of a text's leading verb or question word ([`action_class`] without later clauses).
fn leading_class(query: &str) -> Option<VerbClass> {
    let mut raw: Vec<String> = Vec::new();
    for_each_word(query, |w| {
        if raw.len() < 12 {
            raw.push(w.to_owned());
        }
    });
    // "how do I delete a branch", "can you merge PR 12", "is there a way to star a repo" ask for
    // the action their verb names, not for a fact.
    let opener =
        ACTION_OPENERS.iter().find(|o| raw.len() > o.len() && raw.iter().zip(o.iter()).all(|(w, o)| w == o));
    let rest = &raw[opener.map_or(0, |o| o.len())..];
    let class = verb_class(rest);
    match opener {
        Some(_) => class.or(Some(VerbClass::Read)),
        None => class,
    }
}

/// Openers after which a question asks for an action (see [`leading_class`]).
const ACTION_OPENERS: &[&[&str]] = &[
    &["how", "do", "i"],
    &["how", "do", "we"],
    &["how", "do", "you"],
    &["how", "can", "i"],
    &["how", "can", "we"],
    &["how", "should", "i"],
    &["how", "would", "i"],
    &["how", "to"],
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
    &["can", "i"],
    &["could", "i"],
    &["can", "we"],
    &["may", "i"],
    &["is", "there", "a", "way", "to"],
    &["is", "there", "any", "way", "to"],
    &["is", "it", "possible", "to"],
];

/// The class of the verb leading `raw` (lower-case words), fillers and articles skipped.
fn verb_class(raw: &[String]) -> Option<VerbClass> {
    let lexicon = lexicon();
    let verbs = &lexicon.verbs;
    let mut words: Vec<String> = Vec::new();
    for w in raw {
        let w = w.as_str();
        if words.len() < 4
            && (!words.is_empty() || !FILLER_WORDS.contains(&w) && !matches!(w, "a" | "an" | "the"))
        {
            words.push(w.to_owned());
        }
    }
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
    // A leading word that is a verb only by its stem and ends in -s is a plural noun ("comments
    // on a wiki page", "updates to ..."): an imperative verb takes no -s.
    let plural = first.len() > 3 && first.ends_with('s') && !first.ends_with("ss");
    if !plural && let Some(&class) = verbs.get(&stem(&first)) {
        return Some(class);
    }
    // A misspelled leading verb ("deleet", "creat").
    if first.len() >= 5 && !(plural && verbs.contains_key(first.trim_end_matches('s'))) {
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

/// Particles of split phrasal verbs (`take my star off`, `let the team know`).
pub(super) const PARTICLES: &[&str] = &["off", "over", "out", "away", "back", "up", "down", "know"];

/// The query with a split phrasal verb joined (`take my star off` -> `take off my star`) when
/// the vocabulary has the phrase, else `None`: the verb that leads the query, or else the one
/// that leads a later clause ("the page is obsolete, throw it away").
pub(super) fn join_split_phrasal(query: &str) -> Option<String> {
    if let Some(joined) = join_leading_phrasal(query) {
        return Some(joined);
    }
    later_clauses(query).find_map(|(at, clause)| {
        join_leading_phrasal(clause).map(|joined| format!("{} {joined}", &query[..at]))
    })
}

/// [`join_split_phrasal`] for the verb that leads the text.
fn join_leading_phrasal(query: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for_each_word(query, |w| {
        if words.len() < MAX_QUERY_TERMS * 2 {
            words.push(w.to_owned());
        }
    });
    // `let` is a filler before `me` / `us` (`let me see`) and a verb before anyone else (`let the
    // team know`).
    let verb = (0..words.len()).find(|&i| {
        let w = words[i].as_str();
        (w == "let" && !matches!(words.get(i + 1).map(String::as_str), Some("me" | "us")))
            || (!FILLER_WORDS.contains(&w) && !matches!(w, "a" | "an" | "the"))
    })?;
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

/// The query with its shorthands written out (vocabulary `alias` lines: `mkdir` -> `create
/// directory`), or `None` when it has none. A shorthand is a whole chunk between spaces, trimmed of
/// punctuation, in any case; one the catalog uses itself (`known`: `sha` where tools take a
/// `sha`) stays too, before what it stands for.
pub(super) fn expand_aliases(query: &str, known: &dyn Fn(&str) -> bool) -> Option<String> {
    let aliases = &lexicon().aliases;
    if aliases.is_empty() {
        return None;
    }
    let mut out: Option<String> = None;
    let mut last = 0;
    for chunk in query.split_whitespace() {
        let word = chunk.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        // A possessive or plural of a shorthand (`rg's`) is the shorthand.
        let word = word.strip_suffix("'s").unwrap_or(word);
        if word.is_empty() {
            continue;
        }
        let lower = word.to_ascii_lowercase();
        let Some(expansion) = aliases.get(&lower) else { continue };
        let at = word.as_ptr() as usize - query.as_ptr() as usize;
        let text = out.get_or_insert_with(String::new);
        text.push_str(&query[last..at]);
        if known(&lower) {
            text.push_str(word);
            text.push(' ');
        }
        text.push_str(expansion);
        last = at + word.len();
    }
    let mut text = out?;
    text.push_str(&query[last..]);
    Some(text)
}

/// The query with a creating `open` written as `create`: `open a PR`, `open an issue`, `open a new
/// tab` make something; `open the file`, `open a.txt` or `open a document` read one. `None` when
/// the query has no such `open`.
pub(super) fn creating_open(query: &str) -> Option<String> {
    const READ_OBJECTS: &[&str] =
        &["doc", "document", "file", "files", "folder", "directory", "image", "pdf", "photo", "picture"];
    let chunks: Vec<&str> = query.split_whitespace().collect();
    let word = |i: usize| -> String {
        chunks.get(i).map_or_else(String::new, |c| {
            c.trim_matches(|c: char| !c.is_ascii_alphanumeric()).to_ascii_lowercase()
        })
    };
    let at = (0..chunks.len()).find(|&i| {
        if !chunks[i].eq_ignore_ascii_case("open") || !matches!(word(i + 1).as_str(), "a" | "an" | "new") {
            return false;
        }
        // The object: the word after the article (and after `new`); a file name is read.
        let object = if word(i + 2) == "new" { i + 3 } else { i + 2 };
        let name = word(object);
        !name.is_empty() && !READ_OBJECTS.contains(&name.as_str()) && !chunks[object].contains('.')
    })?;
    let start = chunks[at].as_ptr() as usize - query.as_ptr() as usize;
    Some(format!("{}create{}", &query[..start], &query[start + chunks[at].len()..]))
}

/// The class of a tool and its verb: the first verb of its name.
///
/// A name that ends in a plain CRUD verb is named resource first (`deploy_app_logs_get`,
/// `appconfig_kv_lock_set`, `storage_account_create`): that verb is its action, whatever verbs
/// its resource words also are (`deploy`, `lock`).
pub(super) fn tool_verb(name: &str) -> Option<(VerbClass, String)> {
    const CRUD: &[&str] = &["get", "list", "show", "set", "create", "add", "update", "delete", "remove"];
    let verbs = &lexicon().verbs;
    let mut found = None;
    let mut last = String::new();
    for_each_word(name, |w| {
        if found.is_none() {
            found = verbs.get(w).map(|&class| (class, w.to_owned()));
        }
        w.clone_into(&mut last);
    });
    if CRUD.contains(&last.as_str())
        && let Some(&class) = verbs.get(last.as_str())
    {
        return Some((class, last));
    }
    found
}

/// The description's first sentence (at most 300 bytes, cut at a word) and the rest.
pub(super) fn split_summary(description: &str) -> (&str, &str) {
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
