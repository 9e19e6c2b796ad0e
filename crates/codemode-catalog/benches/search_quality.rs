//! Search quality and speed over the 677-tool public catalog (loaded as plugin tools).
//!
//! Run with `cargo bench -p codemode-catalog --bench search_quality` (set `SEARCH_BENCH_VERBOSE=1`
//! to print the top 3 of every labelled query). Prints the intent set's tables
//! (`data/search-intents.json`: top-1, top-3 and MRR per kind and per catalog, one catalog loaded
//! and all 16, beside the word-overlap baseline, for the tuning and the held-out split; the fresh
//! check sets `data/search-intents-fresh.json` to `data/search-intents-fresh18.json` in one line per
//! setting), the older
//! labelled query set's hit rates and misses, then min/median timings of `Catalog::build`, of the
//! first search (which builds the index), of one `search` call per intent, and of the quick index.

#[path = "../tests/all/support.rs"]
mod support;

#[path = "../tests/all/intents.rs"]
mod intents;

use std::time::{Duration, Instant};

use codemode_catalog::{Catalog, CatalogOptions, QuickIndexOptions};

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[0], samples[samples.len() / 2])
}

/// The settings the quality tables are made in: one catalog, all 16, and all 16 with the search
/// scoped to the intent's server (what `API.search(query, { server })` gives a model that picked
/// the right server).
const SETTINGS: [(&str, intents::Setting); 3] = [
    ("one catalog loaded", intents::Setting::OneCatalog),
    ("all 16 loaded", intents::Setting::All16),
    ("all 16 loaded, scoped to the intent's server", intents::Setting::All16Scoped),
];

/// The rankers of a setting: the engine, and word overlap where it differs from one catalog's.
fn rankers(setting: intents::Setting) -> Vec<(&'static str, intents::Ranker)> {
    let mut rankers = vec![("engine", intents::Ranker::Engine)];
    if setting != intents::Setting::All16Scoped {
        rankers.push(("word overlap", intents::Ranker::Overlap));
    }
    rankers
}

fn main() {
    let tools = support::public_plugin_tools();
    let catalog = Catalog::build(tools.clone(), &CatalogOptions::default());
    let all_intents = intents::intents();
    for (split, keep) in [
        ("all intents", (|_: &intents::Intent| true) as fn(&intents::Intent) -> bool),
        ("tuning split", |i: &intents::Intent| !i.holdout()),
        ("held-out split", |i: &intents::Intent| i.holdout()),
    ] {
        for (setting_name, setting) in SETTINGS {
            for (ranker_name, ranker) in rankers(setting) {
                let report = intents::evaluate(&all_intents, setting, ranker, keep);
                let title = format!("### {split}, {setting_name}, {ranker_name}");
                if split == "all intents" {
                    println!("{}", report.table(&title));
                } else {
                    println!("{title}: {}", report.summary());
                }
            }
        }
    }
    // The fresh check sets: `data/search-intents-fresh.json` to `-fresh17.json` (tuning sources
    // since a later set was written) and `-fresh18.json` (blind: never looked at while tuning; see
    // `data/README.md` at the workspace root).
    for (name, set) in intents::FRESH_SETS {
        let (set_name, set) = (format!("{name} set"), set());
        for (setting_name, setting) in SETTINGS {
            for (ranker_name, ranker) in rankers(setting) {
                let report = intents::evaluate(&set, setting, ranker, |_| true);
                println!("### {set_name}, {setting_name}, {ranker_name}: {}", report.summary());
            }
        }
    }
    let (total, top1, top3, misses) = support::hit_rates(&catalog);
    println!("catalog: {} guest entries", catalog.guest_entries().count());
    println!(
        "labelled queries: {total}; top-1 {top1} ({:.1}%); top-3 {top3} ({:.1}%)",
        100.0 * top1 as f64 / total as f64,
        100.0 * top3 as f64 / total as f64
    );
    for (query, got) in &misses {
        println!("  miss: {query:?} -> {got:?}");
    }
    if std::env::var_os("SEARCH_BENCH_VERBOSE").is_some() {
        for q in support::labelled_queries() {
            let got: Vec<String> = catalog.search(&q.query, 3).iter().map(|e| e.id.clone()).collect();
            let mark = if got.first().is_some_and(|id| q.expect.contains(id)) { "1" } else { " " };
            println!("  [{mark}] {:?} -> {got:?}", q.query);
        }
    }

    let mut build = Vec::new();
    for _ in 0..10 {
        let input = tools.clone();
        let start = Instant::now();
        let built = Catalog::build(input, &CatalogOptions::default());
        build.push(start.elapsed());
        std::hint::black_box(built);
    }
    let mut first_search = Vec::new();
    for _ in 0..10 {
        let built = Catalog::build(tools.clone(), &CatalogOptions::default());
        let start = Instant::now();
        std::hint::black_box(built.search("create a pull request", 8));
        first_search.push(start.elapsed());
    }
    let mut hints = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        for spec in &tools {
            std::hint::black_box(codemode_core::hint::input_hint(&spec.parameters, &Default::default()));
            if let Some(output) = &spec.output_schema {
                std::hint::black_box(codemode_core::hint::output_hint(
                    output,
                    &codemode_core::hint::HintOptions::output(),
                ));
            }
        }
        hints.push(start.elapsed());
    }
    let mut search = Vec::new();
    for _ in 0..5 {
        for q in &all_intents {
            let start = Instant::now();
            let results = catalog.search_hits(&q.query, 8);
            search.push(start.elapsed());
            std::hint::black_box(results);
        }
    }
    // Scoped to the intent's server (`API.search(query, { server })`): the same ranking, among fewer.
    let mut scoped = Vec::new();
    for _ in 0..5 {
        for q in &all_intents {
            let start = Instant::now();
            let results = catalog.search_hits_in(&q.query, 8, &[q.catalog.as_str()]);
            scoped.push(start.elapsed());
            std::hint::black_box(results);
        }
    }
    let mut index = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        let text = catalog.quick_index(&QuickIndexOptions::default());
        index.push(start.elapsed());
        std::hint::black_box(text);
    }
    println!("{:<40} {:>12} {:>12}", "operation (677 tools)", "min", "median");
    for (name, samples) in [
        ("Catalog::build", build),
        ("  of which: input/output hints (core)", hints),
        ("first search (builds the index)", first_search),
        ("search (limit 8), per intent", search),
        ("  scoped to the intent's server", scoped),
        ("quick_index", index),
    ] {
        let (min, median) = stats(samples);
        println!("{name:<40} {:>10.1}µs {:>10.1}µs", min.as_secs_f64() * 1e6, median.as_secs_f64() * 1e6);
    }
}
