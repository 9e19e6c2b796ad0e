//! Scoring and ranking: BM25F per query word over its expansions, coverage, name coverage,
//! adjacency, question words, the action-verb prior, the owner stage's blend, exact names, the
//! nearest-entry fallback, and the hits' `score` and `match` text.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use super::analysis::{
    Token, action_class, creating_open, expand_aliases, for_each_word, join_split_phrasal, stated_class,
    stem, tokens,
};
use super::entities::{Named, shape_term};
use super::expand::Kind;
use super::index::{SearchIndex, idf_among};
use super::lexicon::{VerbClass, lexicon};
use super::typo::{trigram_similarity, trigrams};
use super::{
    ADJACENT_BONUS, ASK_OWNER_WEIGHT, ASK_WEIGHT, COVERAGE_FLOOR, FAMILY_BLEND, FIELD_NAMES, FIELDS, K1,
    MAX_MATCH_CHARS, MAX_QUERY_CHARS, MAX_QUERY_TERMS, NAME_COVERAGE_FLOOR, NO_ARGUMENTS_FACTOR, OWNER_BLEND,
    OWNER_IDF_SHARE, PARAMS_FIELD, SUPPRESS, UNNAMED_KIND_FACTOR,
};

/// A query word's expansions: `(term id, weight, kind)` ([`SearchIndex::expand`]).
type Expansions = Vec<(u32, f64, Kind)>;

/// The factor of a tool that makes a new thing for an ask to change one, and the reverse.
const KIND_FACTOR: f64 = 0.85;

/// The [`SUPPRESS`] fields as a field mask.
const SUPPRESS_MASK: u8 = {
    let mut mask = 0u8;
    let mut f = 0;
    while f < FIELDS {
        if SUPPRESS[f] {
            mask |= 1 << f;
        }
        f += 1;
    }
    mask
};

/// A ranked document: index, score in `[0, 1)`, match text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ranked {
    pub doc: usize,
    pub score: f64,
    pub matched: String,
}

pub(super) fn verb_factor(query: Option<VerbClass>, tool: Option<VerbClass>) -> f64 {
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

impl SearchIndex {
    /// Whether the index knows a lower-case word (its stem is a term).
    fn knows(&self, word: &str) -> bool {
        self.vocab.contains_key(&stem(word))
    }

    /// A term's document frequency for its `idf`: the entries it occurs in outside parameter
    /// text (all entries it occurs in when it occurs only there). Parameter names and descriptions
    /// repeat across a server's tools (`subscription`, `auth-method`, "access key"), so they say
    /// little about how rare a word is among what the tools do.
    pub(super) fn df(&self, id: u32) -> usize {
        self.content_df[id as usize] as usize
    }

    /// How much of the document's name the query accounts for: `floor + (1 - floor) * share`,
    /// the share `idf`-weighted over the name's terms, so words every entry of a server shares
    /// (`jira`, `browser`) weigh little and an unmatched head noun (`link` in
    /// `remove_issue_link` for "remove a ticket") costs.
    pub(super) fn name_coverage(&self, doc: usize, matched: &FxHashMap<u32, f64>, state: Option<u32>) -> f64 {
        let (mut total, mut hit) = (0f64, 0f64);
        let state = state.filter(|_| self.classes[doc] != Some(VerbClass::Read));
        let terms = &self.name_terms[self.name_start[doc] as usize..self.name_start[doc + 1] as usize];
        for &(id, idf) in terms {
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

    /// The vocabulary's question forms in the query (`who` -> user, member, ...): each form and
    /// the stemmed terms it asks for.
    pub(super) fn ask_groups(query: &str) -> Vec<(String, Vec<String>)> {
        let lexicon = lexicon();
        let asks = &lexicon.asks;
        let mut words: Vec<String> = Vec::new();
        for_each_word(query, |w| {
            if words.len() < MAX_QUERY_TERMS * 2 {
                words.push(w.to_owned());
            }
        });
        // The forms that occur, in the vocabulary's order: only those a query word starts are
        // compared.
        let mut found: Vec<usize> = Vec::new();
        for (i, word) in words.iter().enumerate() {
            for &a in lexicon.ask_starts.get(word).map_or(&[][..], Vec::as_slice) {
                if words[i..].starts_with(&asks[a].0) {
                    found.push(a);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        let mut groups: Vec<(String, Vec<String>)> =
            found.into_iter().map(|a| (asks[a].0.join(" "), asks[a].1.clone())).collect();
        // "who restarted", "who has deleted": the past of any action verb asks who did it, as
        // the vocabulary's `who changed` does.
        let verbs = &lexicon.verb_terms;
        let acted = words.iter().enumerate().filter(|(_, w)| *w == "who").any(|(i, _)| {
            let mut next = words[i + 1..].iter().skip_while(|w| matches!(w.as_str(), "has" | "had" | "just"));
            next.next().is_some_and(|past| {
                past.len() >= 5
                    && past.ends_with("ed")
                    && verbs.get(&stem(past)).is_some_and(|&c| c != VerbClass::Read)
            })
        });
        if acted
            && let Some((form, terms)) = asks.iter().find(|(form, _)| form == &["who", "changed"])
            && !groups.iter().any(|(_, t)| t == terms)
        {
            groups.push((form.join(" "), terms.clone()));
        }
        groups
    }

    /// Adds what the query's question forms ask for (`groups`, [`Self::ask_groups`]) and what the
    /// things it names are (`kinds`, [`Named::kinds`]: `notes.txt` is a file): per document and
    /// per such group its best term, at [`ASK_WEIGHT`], outside the coverage.
    pub(super) fn add_asks(
        &self,
        mut groups: Vec<(String, Vec<String>)>,
        kinds: &[&str],
        scores: &mut [f64],
    ) -> HashMap<usize, Vec<String>> {
        groups.extend(kinds.iter().map(|&w| (w.to_owned(), vec![stem(w)])));
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
                    let tf = p.all;
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

    /// A negated word is not a word of the ask. `not` / `without` / `never` before a word whose
    /// un-form is indexed is that form (`not staged` -> `unstaged`, `not resolved` ->
    /// `unresolve`); `without` before any other word drops it (`close a PR without merging`
    /// asks for no merge). `not` before another word stays as written (`closed as not
    /// planned` names a state). A query is never negated away.
    fn negate(&self, tokens: &mut Vec<Token>) {
        let mut i = 0;
        while i + 1 < tokens.len() {
            let negator = tokens[i].word.as_str();
            if !matches!(negator, "not" | "without" | "never") {
                i += 1;
                continue;
            }
            let undone = format!("un{}", tokens[i + 1].word);
            let term = stem(&undone);
            if self.vocab.contains_key(&term) {
                tokens[i + 1] = Token { word: undone, term };
                tokens.remove(i);
            } else if negator == "without" && tokens.len() > 2 {
                tokens.drain(i..i + 2);
            } else {
                i += 1;
            }
        }
    }

    /// Documents, best first, exactly `min(limit, documents)` of them.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<Ranked> {
        self.search_in(query, limit, None)
    }

    /// [`SearchIndex::search`] over the documents `scope` allows (all when `None`): exactly
    /// `min(limit, allowed documents)` of them. The ranking is the whole index's (its `idf`, its
    /// owner stage), so an allowed document ranks as it does unscoped, among fewer others.
    pub(crate) fn search_in(&self, query: &str, limit: usize, scope: Option<&[bool]>) -> Vec<Ranked> {
        let allowed = |doc: usize| scope.is_none_or(|s| s.get(doc).copied().unwrap_or(false));
        let limit =
            limit.min(scope.map_or(self.docs(), |s| s.iter().take(self.docs()).filter(|&&a| a).count()));
        if limit == 0 {
            return Vec::new();
        }
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let query = self.correct_typos(&query).unwrap_or(query);
        let expanded = expand_aliases(&query, &|w| self.knows(w));
        let query = expanded.unwrap_or(query);
        let query = creating_open(&query).unwrap_or(query);
        let joined = join_split_phrasal(&query);
        let text = joined.as_deref().unwrap_or(&query);
        let mut stems = HashMap::new();
        // The words of what the query names by form (`notes.txt`, `#general`) are names, not
        // words of the ask; what the things are still counts (`add_asks`, the group stages).
        let known = |w: &str| self.knows(w);
        // Found before a split phrasal verb is joined: the join rebuilds the text from its words,
        // which drops the forms (`#random`).
        let named = Named::find(&query, &known);
        let kinds = named.kinds();
        let stripped = named.stripped();
        let joined_ask = join_split_phrasal(&stripped);
        let mut query_tokens = tokens(joined_ask.as_deref().unwrap_or(&stripped), &mut stems);
        // Nothing but named things: their words are the ask (`release-notes.md`, [`Named::stripped`]).
        let only_named = query_tokens.is_empty() || (!kinds.is_empty() && stripped == query.as_str());
        if query_tokens.is_empty() {
            // A query of named things only ("3pm in New York is what in Berlin") asks about what
            // they are.
            query_tokens = tokens(&kinds.join(" "), &mut stems);
        }
        let mut seen: Vec<String> = Vec::new();
        query_tokens.retain(|t| {
            let fresh = !seen.contains(&t.term);
            seen.push(t.term.clone());
            fresh
        });
        self.negate(&mut query_tokens);
        query_tokens.truncate(MAX_QUERY_TERMS);
        if query_tokens.is_empty() {
            return (0..self.docs())
                .filter(|&doc| allowed(doc))
                .take(limit)
                .map(|doc| Ranked { doc, score: 0.0, matched: String::new() })
                .collect();
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
        // The share of the word's idf the best match counts in the coverage.
        let mut best_credit = vec![1f64; docs];
        let mut touched: Vec<usize> = Vec::new();
        let mut total_idf = 0f64;
        let mut stamp = vec![u32::MAX; docs];
        let all_expansions: Vec<Vec<(u32, f64, Kind)>> =
            query_tokens.iter().enumerate().map(|(i, t)| self.expand(t, query_tokens.get(i + 1))).collect();
        // What the query names by form (`#general`: a channel) also says which server it is about.
        let entities: Vec<Vec<(u32, f64, Kind)>> = kinds
            .iter()
            .filter_map(|w| self.vocab.get(&stem(w)).map(|&id| vec![(id, ASK_WEIGHT, Kind::Near)]))
            .collect();
        // How it is written (`OPS-7`) names the server whose tools show most examples of that form.
        let shapes: Vec<Vec<(u32, f64, Kind)>> = named
            .shapes()
            .into_iter()
            .filter_map(|s| self.vocab.get(&shape_term(s)).map(|&id| vec![(id, 1.0, Kind::Exact)]))
            .collect();
        // What the query's question forms ask for (`who` -> user, member) also says which server
        // it is about, a little less than a word of it does.
        let asks = Self::ask_groups(&query);
        let asked_words: Vec<Expansions> = asks
            .iter()
            .map(|(_, terms)| {
                terms
                    .iter()
                    .filter_map(|t| self.vocab.get(t).map(|&id| (id, ASK_OWNER_WEIGHT, Kind::Near)))
                    .collect()
            })
            .filter(|word: &Vec<_>| !word.is_empty())
            .collect();
        let (owner_relevance, family_relevance) =
            if entities.is_empty() && shapes.is_empty() && asked_words.is_empty() {
                (self.owners.relevance(&all_expansions), self.families.relevance(&all_expansions))
            } else {
                let mut words = all_expansions.clone();
                words.extend(entities);
                let families = self.families.relevance(&words);
                words.extend(shapes);
                words.extend(asked_words);
                (self.owners.relevance(&words), families)
            };
        // With no verb, a setting assigned a value (`max_connections=500`) asks to set it and a
        // move to a status (`over to In Progress`) to make the transition.
        let class = action_class(text)
            .or_else(|| {
                kinds.iter().any(|k| matches!(*k, "parameter" | "transition")).then_some(VerbClass::Write)
            })
            .or_else(|| stated_class(text));
        let read_ask = class == Some(VerbClass::Read);
        // A write ask makes a new thing or changes one: the query's first verb says which (not a
        // later `new` of `the new checkout`).
        let lexicon = lexicon();
        let ask_kind = (class == Some(VerbClass::Write))
            .then(|| query_tokens.iter().find(|t| lexicon.verb_terms.contains_key(&t.term)))
            .flatten()
            .and_then(|t| lexicon.write_kinds.get(&t.term));
        // Each expanded term's best weight, for the name's coverage.
        let mut matched_terms: FxHashMap<u32, f64> = FxHashMap::default();
        for word in &all_expansions {
            for &(id, weight, _) in word {
                let w = matched_terms.entry(id).or_insert(0.0);
                *w = w.max(weight);
            }
        }
        // Per owner: the entries a term occurs in, for its idf among that owner's entries.
        let mut owner_df = vec![0u32; self.owners.size.len()];
        let mut owner_factor = vec![1f64; self.owners.size.len()];
        // What the query names by form (`:tada:` a reaction, `U024BE7LH` a user) also counts as
        // a word of the ask, at a word's weight (fixed on the tuning sources; 0.3-1.0 tried) but
        // outside the coverage: the ask is about such a thing, but an entry need not say so.
        // The named things' kinds as words, each with its expansions (once per query: the
        // unnamed-kind factor below reads them too).
        let kind_words: Vec<(Token, Expansions)> = tokens(&kinds.join(" "), &mut stems)
            .into_iter()
            .map(|k| {
                let expansions = self.expand(&k, None);
                (k, expansions)
            })
            .collect();
        let named_words = kind_words
            .iter()
            .filter(|(k, _)| !query_tokens.iter().any(|t| t.term == k.term))
            .map(|(_, expansions)| expansions);
        let words = all_expansions.len();
        for (i, expansions) in all_expansions.iter().chain(named_words).enumerate() {
            // A word of the query: it counts in the coverage and in the match text.
            let counts = i < words;
            // The word's concept (its own term, compounds, synonyms) shares one idf: between the
            // idf of the entries any of them occurs in and the word's own. A rare literal word
            // does not fully outweigh the common synonym it stands for, and a synonym never
            // outweighs the word.
            let mut concept_df = 0usize;
            for &(id, _, kind) in expansions {
                if !kind.is_near() {
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
                .map_or(concept_df, |&(id, _, _)| self.df(id));
            // The geometric mean with the word's own idf: a rare word (`tab`) standing for a
            // common synonym (`page`) keeps some of its weight.
            let concept_idf =
                (concept_df > 0).then(|| (self.idf(concept_df) * self.idf(own_df.max(1))).sqrt());
            let mut query_idf = concept_idf.unwrap_or(0.0);
            for &(id, weight, kind) in expansions {
                let postings = &self.postings[id as usize];
                let idf = match (kind, concept_idf) {
                    (Kind::Near | Kind::Related, Some(cap)) => self.idf(self.df(id)).min(cap),
                    (Kind::Near | Kind::Related, None) => {
                        let idf = self.idf(self.df(id));
                        query_idf = query_idf.max(idf);
                        idf
                    }
                    (_, cap) => cap.unwrap_or_else(|| self.idf(self.df(id))),
                };
                // Per owner, the term's weight factor there (1 for a one-tool server: it has no
                // choice among its tools for the word to make).
                if !owner_df.is_empty() {
                    owner_df.iter_mut().for_each(|c| *c = 0);
                    for p in postings {
                        owner_df[self.owners.of[p.doc as usize] as usize] += 1;
                    }
                    let global_idf = idf_among(docs as f64, postings.len() as f64);
                    for (o, factor) in owner_factor.iter_mut().enumerate() {
                        let size = self.owners.size[o];
                        *factor = if size >= 2.0 && owner_df[o] > 0 {
                            (idf_among(size, f64::from(owner_df[o])) / global_idf).powf(OWNER_IDF_SHARE)
                        } else {
                            1.0
                        };
                    }
                }
                for p in postings {
                    let doc = p.doc as usize;
                    let owner_factor = owner_factor.get(self.owners.of[doc] as usize).copied().unwrap_or(1.0);
                    // A read ask's verbs name a state ("who is assigned"), not the action of
                    // a write tool's name.
                    let state = read_ask
                        && self.verb_terms[doc] == Some(id)
                        && self.classes[doc] != Some(VerbClass::Read);
                    let (tf, mask) = if state { (p.rest, p.mask & !SUPPRESS_MASK) } else { (p.all, p.mask) };
                    let score = weight * idf * owner_factor * tf / (K1 + tf);
                    if best[doc] == 0.0 {
                        touched.push(doc);
                    }
                    if score > best[doc] {
                        best[doc] = score;
                        best_fields[doc] = mask;
                        best_near[doc] = kind != Kind::Exact;
                        best_credit[doc] = if kind == Kind::Related { weight } else { 1.0 };
                    }
                }
            }
            if query_idf == 0.0 {
                // Not indexed and no expansion: weigh it like a word seen once.
                query_idf = self.idf(1);
            }
            if counts {
                total_idf += query_idf;
            }
            for &doc in &touched {
                if best[doc] > 0.0 {
                    scores[doc] += best[doc];
                    if counts {
                        covered[doc] += query_idf * best_credit[doc];
                        for (f, hit) in fields_hit[doc].iter_mut().enumerate() {
                            if best_fields[doc] & (1 << f) != 0 {
                                *hit |= 1 << i;
                            }
                        }
                        if best_near[doc] {
                            near_hit[doc] |= 1 << i;
                        }
                    }
                }
                best[doc] = 0.0;
            }
            touched.clear();
        }
        let asked = self.add_asks(asks, &kinds, &mut scores);
        let whole = query.trim().to_ascii_lowercase();
        // Adjacent query words that stand side by side in a name, label or summary.
        let mut adjacent = vec![0f64; docs];
        for pair in all_expansions.windows(2) {
            for &(a, wa, ka) in &pair[0] {
                for &(b, wb, kb) in &pair[1] {
                    if ka.is_near() || kb.is_near() {
                        continue;
                    }
                    for &doc in self.pairs.get(&(a, b)).into_iter().flatten() {
                        let w = &mut adjacent[doc as usize];
                        *w = w.max(wa * wb);
                    }
                }
            }
        }
        let names_things = !only_named && kinds.iter().any(|k| *k != "multiple");
        // Which entries say what the query's named things are (a VM, a file), in a word or a
        // synonym: not a person, who goes by many words (a reviewer, an assignee, a member).
        // Empty when the catalog has no word for any of them, or the query is only named things.
        let mut says_kind: Vec<bool> = Vec::new();
        if !only_named {
            let not_things = [stem("multiple"), stem("user")];
            for (_, expansions) in kind_words.iter().filter(|(k, _)| !not_things.contains(&k.term)) {
                for &(id, _, kind) in expansions {
                    if matches!(kind, Kind::Exact | Kind::Synonym) {
                        if says_kind.is_empty() {
                            says_kind = vec![false; docs];
                        }
                        for p in &self.postings[id as usize] {
                            says_kind[p.doc as usize] = true;
                        }
                    }
                }
            }
        }
        let mut ranked: Vec<(f64, usize)> = Vec::new();
        for doc in 0..docs {
            if scores[doc] <= 0.0 || !allowed(doc) {
                continue;
            }
            let coverage = if total_idf > 0.0 { covered[doc] / total_idf } else { 0.0 };
            let score = scores[doc]
                * (COVERAGE_FLOOR + (1.0 - COVERAGE_FLOOR) * coverage)
                * verb_factor(class, self.classes[doc])
                * self.name_coverage(doc, &matched_terms, if read_ask { self.verb_terms[doc] } else { None })
                * (1.0 + ADJACENT_BONUS * adjacent[doc]);
            let tool_kind = ask_kind
                .and(self.verb_terms[doc])
                .and_then(|id| lexicon.write_kinds.get(&self.terms[id as usize]));
            let score = match (ask_kind, tool_kind) {
                (Some(a), Some(t)) if a != t => score * KIND_FACTOR,
                _ => score,
            };
            // A tool that takes no arguments cannot act on a thing the query names (`logo.png`).
            let score = if names_things && self.doc_len[doc][PARAMS_FIELD] == 0.0 {
                score * NO_ARGUMENTS_FACTOR
            } else {
                score
            };
            // Nor is an entry that says nothing of what those things are (a VM, a file) likely.
            let score =
                if !says_kind.is_empty() && !says_kind[doc] { score * UNNAMED_KIND_FACTOR } else { score };
            ranked.push((score, doc));
        }
        if !self.owners.size_prior.is_empty() {
            for (score, doc) in &mut ranked {
                *score *= self.owners.size_prior[self.owners.of[*doc] as usize];
            }
        }
        if !owner_relevance.is_empty() {
            for (score, doc) in &mut ranked {
                *score *= 1.0 - OWNER_BLEND + OWNER_BLEND * owner_relevance[self.owners.of[*doc] as usize];
            }
        }
        if !family_relevance.is_empty() {
            for (score, doc) in &mut ranked {
                *score *=
                    1.0 - FAMILY_BLEND + FAMILY_BLEND * family_relevance[self.families.of[*doc] as usize];
            }
        }
        for (score, doc) in &mut ranked {
            let (name, id) = &self.exact[*doc];
            if !whole.is_empty() && (*name == whole || *id == whole) {
                *score += 1.0e6;
            }
        }
        // Best first, ties in catalog order (a total order): the best `limit` selected, then sorted.
        let order = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if ranked.len() > limit {
            ranked.select_nth_unstable_by(limit - 1, order);
            ranked.truncate(limit);
        }
        ranked.sort_by(order);
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
                .filter(|&doc| scores[doc] <= 0.0 && allowed(doc))
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

pub(super) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `name: create, issue~; description: bug; asks: who~`, at most [`MAX_MATCH_CHARS`] characters.
pub(super) fn match_text(
    tokens: &[Token],
    fields: &[u32; FIELDS],
    near: u32,
    asked: Option<&Vec<String>>,
) -> String {
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
