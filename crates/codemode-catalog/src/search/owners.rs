//! The owner stage: each owner (`sourceName`; a server in the gateway) as one document made of all
//! its entries, and each owner's relevance to a query.

use std::collections::HashMap;

use super::expand::Kind;
use super::index::{DocText, SearchIndex};
use super::{FIELDS, OWNER_B, OWNER_K1, OWNER_NAMED_SHARE, OWNER_UNNAMED, OWNER_WEIGHTS};

impl SearchIndex {
    /// The owner stage's index: each owner (server) as one document made of all its entries.
    pub(super) fn build_owners(&mut self, docs: &[DocText<'_>]) {
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

    /// Each owner's relevance to the query, scaled so the best owner is 1 (empty with fewer than
    /// two owners). `expansions` are the query's words' expansions.
    pub(super) fn owner_relevance(&self, expansions: &[Vec<(u32, f64, Kind)>]) -> Vec<f64> {
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
}
