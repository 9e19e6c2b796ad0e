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
//! - **Name-family stage.** Within an owner, entries whose names share their first word that is
//!   not a verb (`jira_*` / `confluence_*` in one server, `storage_*` / `compute_*` in another;
//!   families of at least 3 entries, other entries each their own group) are scored the same way as
//!   owners, scaled so each owner's best family is 1, and each entry's score is multiplied by
//!   `0.7 + 0.3 * r`: the query's evidence about a product area of a server (a wiki page, a
//!   container registry) lifts that family over incidental matches in the server's other families.
//! - **Action verbs.** The query's leading verb (a phrasal verb counts as the verb it folds into;
//!   a question word reads) and the first verb of the tool's name are classified read / write /
//!   delete. The same class scores x1.15; a read question against a write or delete tool x0.6 (and
//!   the other mismatches x0.7-0.8); a query with no leading verb is a lookup and weighs write and
//!   delete tools x0.92; a verb-less query with a past participle of a write or delete verb after
//!   its noun ("reviews submitted on a PR") is a read. In a read ask the query's match of a write
//!   or delete tool's own verb counts neither in its name, label and summary nor in its name coverage: the verbs of "who is
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
//! - **Lazy.** An index is built on the first search of a [`Catalog`](crate::Catalog). The build
//!   is linear in the catalog's text: each distinct word is analysed once (stem, stop word, phrase
//!   start, undoing form) and a phrase is tried only where one of its forms can start; each posting
//!   keeps its field mask and its length-normalized, weighted term frequency (over all fields and
//!   over the fields a state verb counts in), so a query does no per-field arithmetic.
//! - **Determinism.** Ties are broken by catalog order. A query with no usable token lists entries in
//!   catalog order. Queries are cut to 512 characters and 32 words.
//!
//! # Layout
//!
//! `lexicon` loads the vocabulary, `analysis` turns text into tokens and classifies verbs, `words`
//! tokenizes for the index build (the same tokens, by term id), `index` builds the index (`groups`
//! its owner and name-family stages), `expand` expands query words, `typo` holds the approximate
//! matching, and `rank` scores and ranks.

mod analysis;
mod expand;
mod groups;
mod index;
mod lexicon;
mod rank;
mod typo;
mod wordnet;
mod words;

pub use analysis::stem;
pub(crate) use index::{DocText, SearchIndex};
pub use lexicon::{GroupKind, VerbClass, VocabularyGroup, vocabulary};
pub use wordnet::{WORDNET_TABLE, wordnet_relatives, wordnet_word_count};
pub(crate) use rank::Ranked;
pub(crate) use typo::edit_distance;

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
/// The share of a tool's score that rests on its name family's relevance.
const FAMILY_BLEND: f64 = 0.3;

const SYNONYM_WEIGHT: f64 = 0.9;
/// The weight of what a question word asks for.
const ASK_WEIGHT: f64 = 0.7;
const VERB_WEIGHT: f64 = 0.3;
const COMPOUND_WEIGHT: f64 = 0.8;
const PREFIX_WEIGHT: f64 = 0.5;
const FUZZY1_WEIGHT: f64 = 0.7;
const FUZZY2_WEIGHT: f64 = 0.45;
/// The weight of a WordNet relative of a query word that matches nothing else (fixed on the tuning
/// split of the intent set).
const WORDNET_WEIGHT: f64 = 0.25;
