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
//!   `HTTPServer` -> `http`, `server`); tokens are lower-cased, English stop words (pronouns, determiners, prepositions,
//!   auxiliary and modal verbs) are dropped,
//!   and words are stemmed with the Snowball (Porter2) English stemmer (`issues` -> `issu`,
//!   `creating` / `created` / `create` -> `creat`). Multi-word forms of one concept in the
//!   [vocabulary] (`pull request` / `PR` / `merge request`; phrasal verbs: `get rid of` ->
//!   `delete`, `hand over` -> `assign`) are indexed as one term, on both the entry and the query
//!   side; phrases fold before stop words drop, so `sign in` needs its `in`. The undoing form of a
//!   vocabulary verb also names the verb (`unstar` -> `unstar`, `star`). On the query side a
//!   particle split from the leading verb joins it when the phrase is known (`take my star off`
//!   -> `take off`, a remove). Most of the vocabulary is everyday wording of what the catalogs
//!   do, written from the catalogs' concepts area by area (`about to commit` -> staged, `the
//!   accessibility outline` -> snapshot, an S3 bucket -> blob container), not from any intent
//!   set's misses.
//! - **Fields** of an entry, with weights: name 3.0, label 2.0, owner (`sourceName`) 1.0, the
//!   description's first sentence 3.0 and the rest of it 0.3 (first 2,000 characters in all),
//!   top-level parameter names 0.6, their descriptions and enumerated values 0.2 (first 300
//!   characters each; paging controls such as `page`, `perPage`, `cursor` or `offset` are left
//!   out: they say nothing of what a tool does, and `page` would answer questions about wiki pages). Per term, field frequencies are length-normalized (each
//!   field its own `b`), weighted, summed, saturated once (`k1 = 1.2`, BM25F) and multiplied by the
//!   term's `idf` over the indexed entries. A term's document frequency counts the entries it
//!   occurs in outside parameter text (all of them when it occurs only there): parameter names
//!   and descriptions repeat across a server's tools (`subscription`, "access key"), so they say
//!   little about how rare a word is among what the tools do.
//! - **Expansion.** Each query word also matches, at a discount: its [vocabulary]
//!   synonyms, 0.9 (a word of `k >= 2` synonym groups, several senses such as `alert`, matches
//!   them at `0.9 * k^-0.25` and as near expansions, outside its concept); the other read verbs when it is one (`show` ~ `get` / `list` / `view`), 0.3;
//!   the term formed with the next query word when the index knows it (`key vault` ->
//!   `keyvault`), 0.8; vocabulary terms it is a prefix of or that are a prefix of it (both at least
//!   4 characters), 0.5; the closed compounds it ends (an indexed word followed by at least 4 more
//!   letters: `vault` -> `keyvault`, `insights` -> `applicationinsights`; a tail that ends more
//!   than 3 compounds is generic and stands for none), 0.5; and, when the word is not indexed at all (a typo of a rare word), the
//!   indexed words within edit distance (adjacent transpositions count 1) 1 (4-7 characters) or 2
//!   (8 and more), 0.7 / 0.45 (candidates that differ in more letters than the distance allows
//!   are skipped unscored). A word's own term and its synonyms and compounds share one `idf`, the
//!   geometric mean of the `idf` over the entries any of them occurs in and the word's own (a rare
//!   word standing for a common synonym keeps some weight); other expansions' `idf` is capped at
//!   that. Per entry a query word counts once, with its best expansion. Before the query is
//!   tokenized, a word of five letters or more that is no English, stop, catalog or vocabulary
//!   word is rewritten as the one catalog word nearest to it (same first letter; forms of one
//!   term count as one: `subscritpions`, `acess`; a capitalised word inside a sentence is a name
//!   and stays), or, from six letters, as the one nearest
//!   vocabulary word when it is a verb, ends a phrase the word before starts, or no catalog word
//!   is as near (`chnage`, `pull requets`, `decomission`): the typo then reads as the word,
//!   with its synonyms, phrases and action class. A word of a hyphenated compound is read the
//!   same way (`double-clikc`); a four-letter word only when it is one catalog word with two
//!   letters after the first swapped (`teir`, `fiel`), and not in a compound or capitalised
//!   (`snet-hpc`, `Ehns` are names).
//! - **WordNet fallback.** A query word that matches nothing in the index (no own term, synonym,
//!   compound or prefix) matches its WordNet 3.1 relatives that are indexed, at 0.25 (fixed on the
//!   tuning split of the intent set): the other lemmas of its first three noun and verb senses,
//!   the lemmas one hypernym level above them and their derivational links (`kettle` -> `pot`,
//!   `roster` -> `list`). Such a match is outside the word's concept (its `idf` is capped like a
//!   near expansion's; it forms no adjacent pair) and counts in the coverage at its weight, so it
//!   never outranks an entry that matched the word. The table (`wordnet.txt`, 51,849 lemmas, with
//!   WordNet's license notice as its header; generated by `xtask/wordnet/gen.py`) is stemmed,
//!   merged per stem and sorted by the crate's build script and compiled in; a lookup is a binary
//!   search over that text, so no query pays a parse, and the index build does not touch it.
//! - **Question words and named things.** What a question word asks for (vocabulary `ask` lines:
//!   `who` -> user, member, collaborator, ...; `how many` -> count, total, usage; `when` -> date,
//!   time; `who changed` -> history, audit, and so does `who` before the past of any write or
//!   delete verb, "who restarted"; `what do you know` -> knowledge, memory) and what the query names by its form (`notes.txt` a file, and `cover.png` an image,
//!   `talk.mp3` audio, `logs.tgz` an archive by the extension; `*.log` a pattern, `https://...` or
//!   `example.com` a URL, `#general` a channel, `@alice` a user, `#42` or `OPS-7` an issue,
//!   a number after a noun of numbered things one of them (`PR 42`, `discussion 58`; `epic #12`
//!   an issue), `docker/Dockerfile` or `Makefile` a file,
//!   `~/src` or `./out` or `a/b/c` a directory, `/var/log` a path, `owner/repo` a repository
//!   (not a dotted namespace and type, `Microsoft.Web/sites`),
//!   `hotfix/1.2`, `develop`, `master` or `trunk` a branch, `abc1234` a commit, `3pm` or `15:30` a time, `PST` or `UTC` a time
//!   zone, `USD` or `$0.40` a price, and in a question about the time, with a word such as `time`, `now` or `morning`, a
//!   place: `Sydney`, `New York`, `Japan`, from `places.txt`, zone cities of the IANA database,
//!   countries, US states and big cities, but not one followed by a compass word, a cloud region
//!   such as `australia east`; `Dana's` a user, when the catalog does not know the word, which
//!   would make it a product: `GitHub's`; `:tada:` a reaction; `+4915112345678`, `+44 7700900123`
//!   or `555-010-9999` a phone; a chat id, `U024BE7LH` a user and `C01ABCDEF9` a channel; `1280x720`,
//!   `1280 by 720` or `390 wide` a width and a height; `#d73a4a` a colour (not a channel);
//!   `Checkout:RetryCount` (capitalised sections joined by colons) a setting;
//!   `bob@corp.io` a user and an email; `10.4.0.0/24` an IP; `2025-01-15` a date; `Done` or `In Review` a workflow status, a
//!   move to one (`to Done`, `over to in progress`) a transition (with no verb, an ask to make it); a setting assigned a value,
//!   `max_connections=500` or `wait_timeout = 600`, a parameter (with no verb, an ask to set it); `CVE-2024-3094`
//!   or `GHSA-4xqg-8q7f-2m3v` an advisory; a resource name that follows the cloud naming
//!   conventions, `kv-shop-prod` a key vault, `rg-web` a resource group, `pg-analytics` a
//!   PostgreSQL server, `sss-corp` a storage sync service, `lt-perf` a load testing resource;
//!   a cloud endpoint, `myregistry.azurecr.io` a registry, not a page; a filter
//!   in a query language, `assignee = currentUser() AND status = Open` JQL, `space = DEV AND
//!   title ~ x` CQL, `T | where ...` KQL, `select ... from` a query, and search qualifiers such
//!   as `is:open label:bug` a search, whose field names are not words of the ask) add, per
//!   group, the entry's best such term at a word's weight (1.0, fixed on the tuning sources),
//!   outside the coverage; what a named thing is (`user` for `U024BE7LH`) is also matched
//!   against the entries like a word of the query, at a word's weight (fixed on the tuning
//!   sources) but outside the coverage, unless the query says it already. When the query has
//!   words of its own beside them, an entry that takes no arguments is scaled by 0.4 (it cannot
//!   act on a named thing), and one with no word or vocabulary synonym for what any named thing
//!   is (a VM, a file, an issue or ticket; not a person, who goes by many words) by 0.6 (both
//!   fixed on the tuning sources).
//!   The words of a named thing are names, not words of the ask:
//!   `notes` of `notes.txt` or `general` of `#general` are not query words. Nor are names of
//!   things: a hyphenated or snake_case chunk with a digit (`web-01`), a deployment word
//!   (`kv-prod`; alone, `prod`, `preprod`, `stg`, `uat`: "the prod subscription", where `prod`
//!   would otherwise be a prefix of `product`) or a one-letter part (`feature-x`), a hyphenated chunk beside a word that says
//!   what it names (`vm`, `server`, `branch`, `rollout`, ...: `the new-checkout rollout`) unless
//!   it is made of such words (`resource-group`), and the value of `key=value`. A query of named
//!   things only ("3pm in New York is what in Berlin") searches what they are; one with nothing
//!   else left searches its own words.
//! - **Shorthands.** Vocabulary `alias` lines write out shell commands and jargon on the query side
//!   (`mkdir` -> create directory, `ls` -> list directory, `rg` -> resource group, `nuke` ->
//!   delete, `lgtm` -> approve); a shorthand the catalog uses itself stays too, before what it
//!   stands for. What an apostrophe leaves (`s` of `what's`, `don` of `don't`) is a stop word.
//! - **Written forms.** How a named thing is written (a key `OPS-7`, a number `#42`, a URL, a
//!   `#channel`, an `@handle`) is also a term: the index build gives an entry the form's term
//!   (`=key`, a term no word makes) for each form its description or parameter docs show an
//!   example of (`e.g. 'PROJ-123'`), and the owner stage lets a query's form name the server that
//!   holds at least half of that term's owner-document mass, as a word of its name would (below).
//!   File and host names are not looked for in tool text: in prose they are mostly abbreviations
//!   and product names (`e.g.`, `Node.js`).
//! - **Negation.** `not`, `without` or `never` before a word whose un-form is indexed is that form
//!   (`not staged` -> `unstaged`); `without` before any other word drops it ("close a PR without
//!   merging" asks for no merge); `not` before another word stays ("closed as not planned" names
//!   a state). A query is never negated away.
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
//!   owners with `k1 = 10`, `b = 1`, the same expansions plus the named things' terms at 1.0
//!   and what the query's question forms ask for at 0.6: "what's saved about" is the memory
//!   server's knowledge whatever else the ask names),
//!   scaled so the best owner is 1, and each entry's score is multiplied by `0.2 + 0.8 * r` (`r` its
//!   owner's relevance). An expansion's owner `idf` is capped at the geometric mean of its own and
//!   that of the word's own term: a rare synonym (`text` ~ `sms`) does not make the few servers
//!   that hold it look more relevant than the word itself does (the name-family stage too). Each
//!   entry's score is also multiplied by `(s / m)^-0.2` (`s` its owner's entries, `m` the mean per
//!   owner): a big server's best match for a query is the best of many, so more often a chance
//!   match, and a small single-purpose server (a fetcher, a memory) is not crowded out by
//!   incidental word hits in a server of hundreds of tools. A term's weight in an entry is also
//!   multiplied by `(idf_o / idf)^0.3`, `idf_o` its `idf` among the entries of the entry's own owner
//!   (owners of two or more entries): a word every tool of a server uses (`deploy` in a deployment
//!   server) picks none of them, as when that server is searched alone, while the owner stage
//!   still says which server the query is about. A query word that names owners (a term of their `sourceName`: "on
//!   github") and whose owner-document mass is at least half theirs (not `time` or `memory`, words
//!   every server uses) sets their relevance to 1 and scales the others' by 0.2; so does a written
//!   form of the query for the server holding at least half of its mass (`OPS-7` where one
//!   server's docs show `PROJ-123`). The server the
//!   intent is about thus wins over incidental word matches in other servers. Owner postings are
//!   precomputed at index build; a query costs one pass over at most one owner list per expansion.
//! - **Name-family stage.** Within an owner, entries whose names share their first word that is
//!   not a verb (`jira_*` / `confluence_*` in one server, `storage_*` / `compute_*` in another;
//!   families of at least 3 entries, other entries each their own group) are scored the same way as
//!   owners, scaled so each owner's best family is 1, and each entry's score is multiplied by
//!   `0.7 + 0.3 * r`: the query's evidence about a product area of a server (a wiki page, a
//!   container registry) lifts that family over incidental matches in the server's other families.
//! - **Action verbs.** The query's leading verb (a phrasal verb counts as the verb it folds into;
//!   a question word reads; a query that opens with context, "the page is obsolete, throw it
//!   away", takes the verb or question word that opens its first later clause after a `,`, `;`,
//!   `:`, ` - ` or the end of a sentence (`.`, `?`, `!`: "Nightly backup finished. Put it in the
//!   archive"), where a split particle joins its verb too) and the first verb of the tool's name are classified read / write /
//!   delete; a leading word that is a verb only by its stem and ends in -s is a plural noun, not
//!   a verb ("comments on a page" looks comments up). An opener that asks for an action ("how do
//!   I", "how to", "can you", "could I", "is there a way to") gives the class of the verb after it
//!   (a read when none follows); fillers (`please`, `I'd like to`, `help me`) are skipped; `open`
//!   before `a`, `an` or `new` creates (`open a PR`, `open a new tab`) unless its object is a file
//!   or document; `show me`, `give me`, `tell me` and `let me see` read. A tool's verb is the first
//!   verb of its name, or its last word when that is a plain CRUD verb (`get`, `list`, `set`,
//!   `create`, `update`, `delete`, ...): a resource-first name (`deploy_app_logs_get`) reads,
//!   whatever verbs its resource words also are. The same class scores x1.15; a read question against a write or delete tool x0.6 (and
//!   the other mismatches x0.7-0.8); a query with no leading verb is a lookup and weighs write and
//!   delete tools x0.92; a verb-less query with a past participle of a write or delete verb after
//!   its noun ("reviews submitted on a PR") is a read, and so is one that ends with a question mark
//!   ("anything noisy in the console?"). In a read ask the query's match of a write
//!   or delete tool's own verb counts neither in its name, label and summary nor in its name coverage: the verbs of "who is
//!   assigned" or "who can push" name a state, not the assign or push action.
//! - **Never empty.** When fewer entries match than asked for, the rest are filled with the
//!   nearest entries: by the action-verb factor above (a write ask gets write tools), then by
//!   character-trigram similarity of the query to name and label, then catalog order; they carry
//!   `score: 0` and `match: "nearest"`. A non-empty index therefore always
//!   returns `min(limit, entries)` hits.
//! - **Hits** carry a `score` in `[0, 1]` (`s / (s + q)`: `s` the entry's score, `q` the query's
//!   total `idf`; an exact name match is 1) and a short `match` naming the fields that matched and
//!   the query words matched in each (`~` marks a synonym, verb-class, prefix, WordNet or typo match), then
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
//! `lexicon` loads the vocabulary, `analysis` turns text into tokens and classifies verbs,
//! `entities` finds what a query names by its form (`name_words` holds its word lists, with
//! `places.txt`; `forms` tells one chunk's form alone: addresses, dates, ids, endpoints, query
//! languages), `words`
//! tokenizes for the index build (the same tokens, by term id), `index` builds the index (`groups`
//! its owner and name-family stages), `expand` expands query words (`wordnet` holds the WordNet
//! fallback table), `typo` holds the approximate matching, and `rank` scores and ranks.

mod analysis;
mod entities;
mod expand;
mod forms;
mod groups;
mod index;
mod lexicon;
mod name_words;
mod rank;
mod spans;
mod stem_rule;
mod typo;
mod wordnet;
mod words;

pub use analysis::stem;
pub(crate) use index::{DocText, SearchIndex};
pub use lexicon::{GroupKind, VerbClass, VocabularyGroup, WriteKind, vocabulary};
pub(crate) use typo::edit_distance;
pub use wordnet::{WORDNET_STEMMED, WORDNET_TABLE, wordnet_relatives, wordnet_word_count};

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
/// The parameter-names field.
const PARAMS_FIELD: usize = 5;
const WEIGHTS: [f64; FIELDS] = [3.0, 2.0, 1.0, 3.0, 0.3, 0.6, 0.2];
const B: [f64; FIELDS] = [0.3, 0.3, 0.2, 0.5, 0.75, 0.4, 0.6];
const K1: f64 = 1.2;
/// Fields where a read ask's match of a write tool's verb does not count.
const SUPPRESS: [bool; FIELDS] = [true, true, false, true, false, false, false];
/// The factor of a tool that takes no arguments when the query names things (a file, a user, an
/// issue: fixed on the tuning sources, 0.1-0.8 tried).
const NO_ARGUMENTS_FACTOR: f64 = 0.4;
/// The factor of an entry that has none of the words for what the query's named things are (a
/// `vm-web-01` is a VM, `notes.txt` a file: fixed on the tuning sources, 0.4-0.8 tried).
const UNNAMED_KIND_FACTOR: f64 = 0.6;
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
/// With several owners, each entry's score is multiplied by `(s / m)^-OWNER_SIZE_EXPONENT`, `s`
/// its owner's entries and `m` the mean per owner: a big server's best match is the best of many
/// and so more often a chance match (fixed on the tuning split of the intent set).
const OWNER_SIZE_EXPONENT: f64 = 0.2;
/// With several owners, a term's weight in an entry is its `idf` over all entries times
/// `(idf_o / idf)^OWNER_IDF_SHARE`, `idf_o` its `idf` among the entries of the entry's own owner
/// (an owner of two or more entries): how rare a word is among what one server's tools do says
/// which of them it picks, as when that server is searched alone (chosen on the fourth and fifth
/// fresh sets; see BENCHMARKS.md).
const OWNER_IDF_SHARE: f64 = 0.3;

const SYNONYM_WEIGHT: f64 = 0.9;
/// A word of `k` synonym groups matches their words at `SYNONYM_WEIGHT * k^-POLYSEMY_EXPONENT`
/// (below [`SYNONYM_WEIGHT`] for `k >= 2`: a near expansion, outside the word's concept; fixed
/// on the tuning split of the intent set).
const POLYSEMY_EXPONENT: f64 = 0.25;
/// The weight of what a question word asks for.
const ASK_WEIGHT: f64 = 1.0;
/// The weight of what a question form asks for as a word of the query in the owner stage (fixed
/// on the tuning sources: 0.3-1.5 tried).
const ASK_OWNER_WEIGHT: f64 = 0.6;
const VERB_WEIGHT: f64 = 0.3;
const COMPOUND_WEIGHT: f64 = 0.8;
const PREFIX_WEIGHT: f64 = 0.5;
const FUZZY1_WEIGHT: f64 = 0.7;
const FUZZY2_WEIGHT: f64 = 0.45;
/// The weight of a WordNet relative of a query word that matches nothing else (fixed on the tuning
/// split of the intent set).
const WORDNET_WEIGHT: f64 = 0.25;
