//! The group stages: entries grouped, each group scored as one document made of all its entries,
//! and each entry's score weighed by its group's relevance to the query. Two groupings run: by
//! owner (`sourceName`; a server in the gateway) and, within an owner, by name family (the first
//! name word that is not a verb, shared by at least [`MIN_FAMILY`] entries: `jira_*` and
//! `confluence_*` in one server, `storage_*` and `compute_*` in another).

use std::collections::HashMap;

use super::analysis::{for_each_word, stem};
use super::entities::is_shape_term;
use super::expand::Kind;
use super::index::{DocText, RawPosting, SearchIndex};
use super::lexicon::lexicon;
use super::{
    FIELDS, OWNER_B, OWNER_K1, OWNER_NAMED_SHARE, OWNER_SIZE_EXPONENT, OWNER_UNNAMED, OWNER_WEIGHTS,
};

/// Entries a name family needs; smaller families are not grouped (each entry is its own group).
pub(super) const MIN_FAMILY: usize = 3;

/// One grouping of the entries, indexed for the group stage.
#[derive(Clone, Debug, Default)]
pub(super) struct Groups {
    /// Group of each document.
    pub(super) of: Vec<u32>,
    /// Number of groups (the stage runs only with two or more).
    pub(super) count: usize,
    /// Per term: `(group, weighted term frequency)` over the group's documents.
    postings: Vec<Vec<(u32, f32)>>,
    /// Per term: the groups the term names.
    named: Vec<Vec<u32>>,
    /// Weighted length of each group document.
    len: Vec<f32>,
    /// Average weighted group-document length.
    avg_len: f64,
    /// The owner of each group, when groups are scaled per owner (name families).
    parent: Vec<u32>,
    /// Per group: `(entries / mean entries per group)^-OWNER_SIZE_EXPONENT` (owners only).
    pub(super) size_prior: Vec<f64>,
    /// Per group: its entries (owners only).
    pub(super) size: Vec<f64>,
}

impl Groups {
    /// Groups `of` (one id per document, ids dense from 0) over the index's postings; a term names
    /// the groups for which `names(term, posting)` holds for one of their documents.
    fn build(
        postings: &[Vec<RawPosting>],
        doc_len: &[[f32; FIELDS]],
        of: Vec<u32>,
        count: usize,
        names: impl Fn(u32, &RawPosting, u32) -> bool,
    ) -> Groups {
        let mut groups = Groups { of, count, ..Groups::default() };
        if count < 2 {
            return groups;
        }
        groups.len = vec![0.0; count];
        for (doc, len) in doc_len.iter().enumerate() {
            let g = groups.of[doc] as usize;
            groups.len[g] += (0..FIELDS).map(|f| OWNER_WEIGHTS[f] as f32 * len[f]).sum::<f32>();
        }
        groups.avg_len = (groups.len.iter().map(|&l| f64::from(l)).sum::<f64>() / count as f64).max(1.0);
        let mut tf = vec![0f32; count];
        let mut touched: Vec<u32> = Vec::new();
        for (term, list) in postings.iter().enumerate() {
            let mut named: Vec<u32> = Vec::new();
            for p in list {
                let g = groups.of[p.doc as usize];
                if tf[g as usize] == 0.0 {
                    touched.push(g);
                }
                tf[g as usize] += (0..FIELDS).map(|f| OWNER_WEIGHTS[f] as f32 * p.tf[f]).sum::<f32>();
                if names(term as u32, p, g) {
                    named.push(g);
                }
            }
            touched.sort_unstable();
            groups.postings.push(touched.iter().map(|&g| (g, std::mem::take(&mut tf[g as usize]))).collect());
            touched.clear();
            named.sort_unstable();
            named.dedup();
            groups.named.push(named);
        }
        groups
    }

    /// Each group's relevance to the query, scaled so the best group is 1 (empty with fewer than
    /// two groups). `expansions` are the query's words' expansions.
    pub(super) fn relevance(&self, expansions: &[Vec<(u32, f64, Kind)>]) -> Vec<f64> {
        if self.count < 2 {
            return Vec::new();
        }
        let n = self.count as f64;
        let idf_of = |id: u32| {
            let df = self.postings[id as usize].len() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        };
        let mut total = vec![0f64; self.count];
        let mut best = vec![0f64; self.count];
        for word in expansions {
            // The word's own term's group idf, when it is indexed.
            let own = word
                .iter()
                .find(|&&(id, weight, kind)| {
                    kind == Kind::Exact && weight >= 1.0 && !self.postings[id as usize].is_empty()
                })
                .map(|&(id, _, _)| idf_of(id));
            for &(id, weight, kind) in word {
                let postings = &self.postings[id as usize];
                let mut idf = idf_of(id);
                // An expansion never counts for more than the geometric mean of its own idf and
                // the word's: a rare synonym (`text` ~ `sms`) does not make the few groups that
                // hold it look more relevant than the word itself does.
                if let Some(own) = own.filter(|_| kind != Kind::Exact || weight < 1.0) {
                    idf = idf.min((idf * own).sqrt());
                }
                for &(group, tf) in postings {
                    let g = group as usize;
                    let norm = 1.0 - OWNER_B + OWNER_B * f64::from(self.len[g]) / self.avg_len;
                    let tf = f64::from(tf) / norm;
                    best[g] = best[g].max(weight * idf * tf / (OWNER_K1 + tf));
                }
            }
            for (t, b) in total.iter_mut().zip(best.iter_mut()) {
                *t += *b;
                *b = 0.0;
            }
        }
        if self.parent.is_empty() {
            let max = total.iter().copied().fold(0.0, f64::max);
            if max > 0.0 {
                for t in &mut total {
                    *t /= max;
                }
            }
        } else {
            // Per owner: the owner's best group is 1 (the owner stage weighs the owners).
            let owners = self.parent.iter().copied().max().map_or(0, |m| m as usize + 1);
            let mut max = vec![0f64; owners];
            for (g, &t) in total.iter().enumerate() {
                let m = &mut max[self.parent[g] as usize];
                *m = m.max(t);
            }
            for (g, t) in total.iter_mut().enumerate() {
                let m = max[self.parent[g] as usize];
                *t = if m > 0.0 { *t / m } else { 1.0 };
            }
        }
        // A query word that names groups ("on github") and is mostly theirs (not `time` or
        // `memory`, words every server uses) picks them.
        let mut named = vec![false; self.count];
        for word in expansions {
            for &(id, weight, kind) in word {
                let groups = &self.named[id as usize];
                if kind != Kind::Exact || weight < 1.0 || groups.is_empty() {
                    continue;
                }
                let (mut theirs, mut all) = (0f64, 0f64);
                for &(group, tf) in &self.postings[id as usize] {
                    all += f64::from(tf);
                    if groups.binary_search(&group).is_ok() {
                        theirs += f64::from(tf);
                    }
                }
                if all > 0.0 && theirs / all >= OWNER_NAMED_SHARE {
                    for &g in groups {
                        named[g as usize] = true;
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
}

impl SearchIndex {
    /// The group stages' indexes: owners, and name families within an owner.
    pub(super) fn build_groups(&mut self, docs: &[DocText<'_>], raw: &[Vec<RawPosting>]) {
        let mut owners: HashMap<&str, u32> = HashMap::new();
        let owner_of: Vec<u32> = docs
            .iter()
            .map(|text| {
                let next = owners.len() as u32;
                *owners.entry(text.owner.unwrap_or("")).or_insert(next)
            })
            .collect();
        self.owners = Groups::build(raw, &self.doc_len, owner_of, owners.len(), |_, p, _| p.tf[2] > 0.0);
        if self.owners.count >= 2 {
            let mut size = vec![0f64; self.owners.count];
            for &o in &self.owners.of {
                size[o as usize] += 1.0;
            }
            let mean = docs.len() as f64 / self.owners.count as f64;
            self.owners.size_prior = size.iter().map(|&s| (s / mean).powf(-OWNER_SIZE_EXPONENT)).collect();
            self.owners.size = size;
        }
        // A written form (`PROJ-123`) that one server's tools show most of the examples of
        // names that server, as its name would.
        if self.owners.count >= 2 {
            for (id, term) in self.terms.iter().enumerate() {
                if !is_shape_term(term) {
                    continue;
                }
                let list = &self.owners.postings[id];
                let all: f32 = list.iter().map(|&(_, tf)| tf).sum();
                self.owners.named[id] = list
                    .iter()
                    .filter(|&&(_, tf)| f64::from(tf) >= OWNER_NAMED_SHARE * f64::from(all))
                    .map(|&(g, _)| g)
                    .collect();
            }
        }
        // Name families: the first name word that is not a verb, per owner.
        let verbs = &lexicon().verbs;
        let keys: Vec<Option<(u32, u32)>> = docs
            .iter()
            .enumerate()
            .map(|(doc, text)| {
                let mut words = 0;
                let mut key = None;
                for_each_word(text.name, |w| {
                    words += 1;
                    if key.is_none() && !verbs.contains_key(w) {
                        key = Some(stem(w));
                    }
                });
                // A one-word name has no family.
                let key = key.filter(|_| words >= 2)?;
                let term = *self.vocab.get(&key)?;
                Some((self.owners.of[doc], term))
            })
            .collect();
        let mut size: HashMap<(u32, u32), usize> = HashMap::new();
        for key in keys.iter().flatten() {
            *size.entry(*key).or_insert(0) += 1;
        }
        let mut ids: HashMap<(u32, u32), u32> = HashMap::new();
        let mut family_term: Vec<Option<u32>> = Vec::new();
        let family_of: Vec<u32> = keys
            .iter()
            .map(|key| match key.filter(|k| size[k] >= MIN_FAMILY) {
                Some(key) => *ids.entry(key).or_insert_with(|| {
                    family_term.push(Some(key.1));
                    family_term.len() as u32 - 1
                }),
                None => {
                    family_term.push(None);
                    family_term.len() as u32 - 1
                }
            })
            .collect();
        let count = family_term.len();
        let mut parent = vec![0u32; count];
        for (doc, &family) in family_of.iter().enumerate() {
            parent[family as usize] = self.owners.of[doc];
        }
        // Families only help where there are several; one family is the whole catalog.
        if ids.len() >= 2 {
            self.families = Groups::build(raw, &self.doc_len, family_of, count, |term, p, g| {
                p.tf[0] > 0.0 && family_term[g as usize] == Some(term)
            });
            self.families.parent = parent;
        }
    }
}
