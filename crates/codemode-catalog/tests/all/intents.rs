//! The labelled intent set (`data/search-intents.json`) and its evaluation: top-1, top-3 and MRR
//! per kind and per catalog, with one catalog loaded and with all 16, beside a word-overlap
//! baseline. Shared with `benches/search_quality.rs` through `#[path]`.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use codemode_catalog::{Catalog, CatalogOptions};
use codemode_core::{ToolOrigin, ToolSpec};
use serde_json::Value;

use crate::support::{catalog_names, load};

/// One labelled intent.
#[derive(Clone, Debug)]
pub struct Intent {
    /// The catalog the intent was written for.
    pub catalog: String,
    /// paraphrase / task / typo / parameter / ambiguous.
    pub kind: String,
    /// The natural-language query.
    pub query: String,
    /// Acceptable tools as `catalog:tool`, any of which is a hit.
    pub expect: Vec<String>,
}

impl Intent {
    /// Whether the intent is in the held-out split (a hash of its text; about one in four).
    pub fn holdout(&self) -> bool {
        is_holdout(&self.query)
    }
}

/// Whether an intent's query text puts it in the held-out split (FNV-1a hash; about one in four).
pub fn is_holdout(query: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in query.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.is_multiple_of(4)
}

/// The intent set.
pub fn intents() -> Vec<Intent> {
    load_intents("search-intents.json")
}

/// The fresh check set (`data/search-intents-fresh.json`): intents written after the main set's
/// tuning, over all 16 catalogs, without running the engine on them; a second held-out set that
/// is not looked at while tuning.
pub fn fresh_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh.json")
}

/// The second fresh check set (`data/search-intents-fresh2.json`): written after the first fresh
/// set became a tuning source, in other phrasing styles, without running the engine on it; its
/// misses are never looked at.
pub fn fresh2_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh2.json")
}

/// The third fresh check set (`data/search-intents-fresh3.json`): written after the second fresh
/// set became a tuning source, over all 16 catalogs, without running the engine on it; a tuning
/// source since the fourth set was written.
pub fn fresh3_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh3.json")
}

/// The fourth fresh check set (`data/search-intents-fresh4.json`): written after the third fresh
/// set became a tuning source, from the catalogs alone, by hands that never saw the engine's
/// source or ran it; its misses are never looked at.
pub fn fresh4_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh4.json")
}

/// The fifth fresh check set (`data/search-intents-fresh5.json`): written like the fourth, from the
/// catalogs alone by hands that never saw the engine's source or ran it, after the fourth had been
/// measured many times; its misses are never looked at.
pub fn fresh5_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh5.json")
}

/// The sixth fresh check set (`data/search-intents-fresh6.json`): written like the fifth, from the
/// catalogs alone by hands that never saw the engine's source or ran it, after the fifth had been
/// used to choose between settings; a tuning source since the eighth set was written.
pub fn fresh6_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh6.json")
}

/// The seventh fresh check set (`data/search-intents-fresh7.json`): written like the sixth, from
/// the catalogs alone, after the fifth became a tuning source; a tuning source since the eighth set
/// was written.
pub fn fresh7_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh7.json")
}

/// The eighth fresh check set (`data/search-intents-fresh8.json`): written like the seventh, from
/// the catalogs alone by hands that never saw the engine's source or ran it, before the sixth and
/// seventh became tuning sources; a tuning source since the ninth set was written.
pub fn fresh8_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh8.json")
}

/// The ninth fresh check set (`data/search-intents-fresh9.json`): written like the eighth, from
/// the catalogs alone by hands that never saw the engine's source or ran it, before the eighth
/// became a tuning source; a tuning source since the tenth set was written.
pub fn fresh9_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh9.json")
}

/// The tenth fresh check set (`data/search-intents-fresh10.json`): written like the ninth, from
/// the catalogs alone by hands that never saw the engine's source or ran it, before the ninth
/// became a tuning source; a tuning source since the eleventh set was written.
pub fn fresh10_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh10.json")
}

/// The eleventh fresh check set (`data/search-intents-fresh11.json`): written like the tenth,
/// from the catalogs alone by hands that never saw the engine's source or ran it, before the
/// tenth became a tuning source; a tuning source since the twelfth set was written.
pub fn fresh11_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh11.json")
}

/// The twelfth fresh check set (`data/search-intents-fresh12.json`): written like the eleventh,
/// from the catalogs alone by hands that never saw the engine's source or ran it, before the
/// eleventh became a tuning source; a tuning source since the thirteenth set was written.
pub fn fresh12_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh12.json")
}

/// The thirteenth fresh check set (`data/search-intents-fresh13.json`): written like the twelfth,
/// from the catalogs alone by hands that never saw the engine's source or ran it, before the
/// twelfth became a tuning source; a tuning source since the fourteenth set was written.
pub fn fresh13_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh13.json")
}

/// The fourteenth fresh check set (`data/search-intents-fresh14.json`): written from the catalogs
/// alone by hands that never saw the engine's source or ran it, in the natural mix of wording a
/// new user writes (about half share no content word with their tool's name or title), before the
/// thirteenth became a tuning source; a tuning source since the fifteenth set was written.
pub fn fresh14_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh14.json")
}

/// The fifteenth fresh check set (`data/search-intents-fresh15.json`): written like the
/// fourteenth, in natural wording and other voices, before the fourteenth became a tuning source;
/// a tuning source since the sixteenth set was written.
pub fn fresh15_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh15.json")
}

/// The sixteenth fresh check set (`data/search-intents-fresh16.json`): written like the
/// fifteenth, in natural wording and yet other voices (support tickets, one-line delegations,
/// non-native English, on-call, new hires), before the fifteenth became a tuning source; a
/// tuning source since the seventeenth set was written.
pub fn fresh16_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh16.json")
}

/// The seventeenth fresh check set (`data/search-intents-fresh17.json`): written like the
/// sixteenth, in natural wording and yet other voices (on-call at night, billing, QA, security
/// review, dictation without punctuation, terse fragments, forwarded requests), before the
/// sixteenth became a tuning source; a tuning source since the eighteenth set was written.
pub fn fresh17_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh17.json")
}

/// The eighteenth fresh check set (`data/search-intents-fresh18.json`): written like the
/// seventeenth, in natural wording and yet other voices (product managers, support agents relaying
/// customers, interns, contractors handing over, compliance, phone autocorrect, symptoms instead
/// of actions), before the seventeenth became a tuning source; its misses are never looked at.
pub fn fresh18_intents() -> Vec<Intent> {
    load_intents("search-intents-fresh18.json")
}

/// A loader of one intent set.
pub type IntentSet = fn() -> Vec<Intent>;

/// The fresh check sets by their `SEARCH_SPLIT` name, in the order they were written (every one
/// but the last is a tuning source now).
pub const FRESH_SETS: [(&str, IntentSet); 18] = [
    ("fresh", fresh_intents),
    ("fresh2", fresh2_intents),
    ("fresh3", fresh3_intents),
    ("fresh4", fresh4_intents),
    ("fresh5", fresh5_intents),
    ("fresh6", fresh6_intents),
    ("fresh7", fresh7_intents),
    ("fresh8", fresh8_intents),
    ("fresh9", fresh9_intents),
    ("fresh10", fresh10_intents),
    ("fresh11", fresh11_intents),
    ("fresh12", fresh12_intents),
    ("fresh13", fresh13_intents),
    ("fresh14", fresh14_intents),
    ("fresh15", fresh15_intents),
    ("fresh16", fresh16_intents),
    ("fresh17", fresh17_intents),
    ("fresh18", fresh18_intents),
];

/// The intents of `data/<file>`.
fn load_intents(file: &str) -> Vec<Intent> {
    let path = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../data")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    value
        .as_array()
        .expect("array")
        .iter()
        .map(|q| Intent {
            catalog: q["catalog"].as_str().expect("catalog").to_owned(),
            kind: q["kind"].as_str().expect("kind").to_owned(),
            query: q["query"].as_str().expect("query").to_owned(),
            expect: q["expect"]
                .as_array()
                .expect("expect")
                .iter()
                .map(|v| v.as_str().expect("id").to_owned())
                .collect(),
        })
        .collect()
}

/// `catalog:tool` keys of every public tool.
pub fn tool_keys() -> HashSet<String> {
    catalog_names()
        .iter()
        .flat_map(|c| {
            crate::support::raw_tools(c)
                .into_iter()
                .map(move |t| format!("{c}:{}", t["name"].as_str().unwrap_or_default()))
        })
        .collect()
}

/// The ids acceptable for `intent` when all 16 catalogs are loaded: its own, plus the same tool in
/// the overlapping catalogs (a `github` tool and the `github-legacy-npm` tool of the same name; an
/// `azure-all` command and its `azure-namespace` router tool, the longest name prefix at a `_`, and
/// the other way round).
pub fn acceptable_all(intent: &Intent, keys: &HashSet<String>) -> HashSet<String> {
    let mut out: HashSet<String> = intent.expect.iter().cloned().collect();
    for key in &intent.expect {
        let (catalog, tool) = key.split_once(':').expect("catalog:tool");
        let twin = match catalog {
            "github" => Some(format!("github-legacy-npm:{tool}")),
            "github-legacy-npm" => Some(format!("github:{tool}")),
            _ => None,
        };
        if let Some(twin) = twin.filter(|t| keys.contains(t)) {
            out.insert(twin);
        }
        if catalog == "azure-namespace" {
            // A router tool stands for the commands under it.
            let prefix = format!("azure-all:{tool}_");
            out.extend(
                keys.iter().filter(|k| k.starts_with(&prefix) || **k == format!("azure-all:{tool}")).cloned(),
            );
        }
        if catalog == "azure-all" {
            let mut prefix = tool;
            loop {
                let candidate = format!("azure-namespace:{prefix}");
                if keys.contains(&candidate) {
                    out.insert(candidate);
                    break;
                }
                match prefix.rfind('_') {
                    Some(at) => prefix = &prefix[..at],
                    None => break,
                }
            }
        }
    }
    out
}

/// Hits of one group: count, top-1, top-3, reciprocal-rank sum (rank within the top 10).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Intents.
    pub n: usize,
    /// Correct first.
    pub top1: usize,
    /// Correct in the first three.
    pub top3: usize,
    /// Sum of 1/rank of the first correct hit in the first ten.
    pub rr: f64,
}

impl Tally {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(rank) = rank {
            if rank == 0 {
                self.top1 += 1;
            }
            if rank < 3 {
                self.top3 += 1;
            }
            self.rr += 1.0 / (rank + 1) as f64;
        }
    }

    /// Top-3 rate.
    pub fn top3_rate(&self) -> f64 {
        self.top3 as f64 / self.n.max(1) as f64
    }

    fn row(&self, label: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "| {label:<22} | {:>4} | {:>5.1}% | {:>5.1}% | {:.3} |",
            self.n,
            100.0 * self.top1 as f64 / n,
            100.0 * self.top3 as f64 / n,
            self.rr / n
        )
    }
}

/// Per-kind and per-catalog tallies of one setting, plus the misses.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Everything.
    pub all: Tally,
    /// By kind.
    pub kinds: BTreeMap<String, Tally>,
    /// By catalog.
    pub catalogs: BTreeMap<String, Tally>,
    /// Intents not in the top 3: (catalog, query, top 3 keys, rank of the first correct hit in
    /// the top 10).
    pub misses: Vec<(String, String, Vec<String>, Option<usize>)>,
}

impl Report {
    fn add(&mut self, intent: &Intent, top: &[String], acceptable: &HashSet<String>) {
        let rank = top.iter().take(10).position(|k| acceptable.contains(k));
        self.all.add(rank);
        self.kinds.entry(intent.kind.clone()).or_default().add(rank);
        self.catalogs.entry(intent.catalog.clone()).or_default().add(rank);
        if rank.is_none_or(|r| r >= 3) {
            self.misses.push((
                intent.catalog.clone(),
                intent.query.clone(),
                top.iter().take(3).cloned().collect(),
                rank.map(|r| r + 1),
            ));
        }
    }

    /// One line: n, top-1, top-3, MRR.
    pub fn summary(&self) -> String {
        let n = self.all.n.max(1) as f64;
        format!(
            "n {}, top-1 {:.1}%, top-3 {:.1}%, MRR {:.3}",
            self.all.n,
            100.0 * self.all.top1 as f64 / n,
            100.0 * self.all.top3 as f64 / n,
            self.all.rr / n
        )
    }

    /// Markdown table rows: all, per kind, per catalog.
    pub fn table(&self, title: &str) -> String {
        let mut out =
            format!("{title}\n\n| group | n | top-1 | top-3 | MRR |\n| --- | ---: | ---: | ---: | ---: |\n");
        out.push_str(&self.all.row("**all**"));
        out.push('\n');
        for (kind, t) in &self.kinds {
            out.push_str(&t.row(&format!("kind: {kind}")));
            out.push('\n');
        }
        for (catalog, t) in &self.catalogs {
            out.push_str(&t.row(catalog));
            out.push('\n');
        }
        out
    }
}

/// The setting a ranker runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Only the intent's own catalog is loaded.
    OneCatalog,
    /// All 16 catalogs are loaded.
    All16,
    /// All 16 catalogs are loaded and the search names the intent's server
    /// (`Catalog::search_hits_in`, what `API.search(query, { server })` runs): what a model gets
    /// when it picks the right server from the listed ones.
    All16Scoped,
}

/// Which ranker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranker {
    /// `Catalog::search`.
    Engine,
    /// Word overlap of query and tool text (name, label, description), ties in catalog order.
    Overlap,
}

fn key_of(id: &str) -> String {
    // "openclaw:<owner>:<name>" -> "<owner>:<name>"
    id.split_once(':').map_or(id, |(_, rest)| rest).to_owned()
}

fn overlap_words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Per tool: its `catalog:tool` key and its words.
type OverlapIndex = Vec<(String, HashSet<String>)>;

/// The word-overlap baseline over `tools`: top `n` keys.
fn overlap_rank(tools: &[(String, HashSet<String>)], query: &str, n: usize) -> Vec<String> {
    let q = overlap_words(query);
    let mut scored: Vec<(usize, usize)> =
        tools.iter().enumerate().map(|(i, (_, words))| (q.intersection(words).count(), i)).collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(n).map(|(_, i)| tools[i].0.clone()).collect()
}

fn overlap_index(tools: &[ToolSpec]) -> Vec<(String, HashSet<String>)> {
    tools
        .iter()
        .map(|t| {
            let text = format!(
                "{} {} {}",
                t.name.replace(['_', '-'], " "),
                t.label.as_deref().unwrap_or(""),
                t.description
            );
            (format!("{}:{}", t.owner, t.name), overlap_words(&text))
        })
        .collect()
}

/// Runs `intents` (those with `keep(intent)`) in one setting with one ranker.
pub fn evaluate(
    intents: &[Intent],
    setting: Setting,
    ranker: Ranker,
    keep: impl Fn(&Intent) -> bool,
) -> Report {
    let keys = tool_keys();
    let mut report = Report::default();
    let mut catalogs: HashMap<String, (Catalog, OverlapIndex)> = HashMap::new();
    let all_tools: Vec<ToolSpec> =
        catalog_names().iter().flat_map(|c| load(c, ToolOrigin::BundledPlugin, c)).collect();
    let all = (Catalog::build(all_tools.clone(), &CatalogOptions::default()), overlap_index(&all_tools));
    for intent in intents.iter().filter(|i| keep(i)) {
        let (catalog, overlap) = match (setting, ranker) {
            (Setting::All16, _) | (Setting::All16Scoped, Ranker::Engine) => (&all.0, &all.1),
            (Setting::OneCatalog | Setting::All16Scoped, _) => {
                let entry = catalogs.entry(intent.catalog.clone()).or_insert_with(|| {
                    let tools = load(&intent.catalog, ToolOrigin::BundledPlugin, &intent.catalog);
                    (Catalog::build(tools.clone(), &CatalogOptions::default()), overlap_index(&tools))
                });
                (&entry.0, &entry.1)
            }
        };
        // Scoped: only the intent's own server (no owner named: every owner).
        let scope = if setting == Setting::All16Scoped { &[intent.catalog.as_str()][..] } else { &[] };
        let top: Vec<String> = match ranker {
            Ranker::Engine => catalog
                .search_hits_in(&intent.query, 10, scope)
                .iter()
                .map(|hit| key_of(&hit.entry.id))
                .collect(),
            Ranker::Overlap => overlap_rank(overlap, &intent.query, 10),
        };
        let acceptable: HashSet<String> = match setting {
            Setting::All16 => acceptable_all(intent, &keys),
            Setting::OneCatalog | Setting::All16Scoped => intent
                .expect
                .iter()
                .filter(|k| k.split_once(':').is_some_and(|(c, _)| c == intent.catalog))
                .cloned()
                .collect(),
        };
        report.add(intent, &top, &acceptable);
    }
    report
}
