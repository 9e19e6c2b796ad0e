//! Search index build and query time as the catalog grows: the 16 public catalogs repeated
//! (owners `<stem>`, `<stem>-2`, ...) to each size, loaded as plugin tools.
//!
//! Run with `cargo bench -p codemode-catalog --bench search_scale` (sizes 677, 1000 and 10000) or
//! `cargo bench -p codemode-catalog --bench search_scale -- 10000` for chosen sizes (`--rounds N`
//! builds per size, default 10, 5 from 5,000 tools; `--passes N` passes over the intents, default 3,
//! 1 from 5,000 tools, 0 for none). Per size it prints the min / median of `Catalog::build`, of the
//! first search (which builds the index), and of one `search` call (limit 8) per labelled intent
//! after the index is built; first, once, the first lookup in the WordNet fallback's table (pre-stemmed at build: no parse).

#[path = "../tests/all/support.rs"]
mod support;

#[path = "../tests/all/intents.rs"]
mod intents;

use std::time::{Duration, Instant};

use codemode_catalog::{Catalog, CatalogOptions};

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[0], samples[samples.len() / 2])
}

fn main() {
    let mut sizes: Vec<usize> = Vec::new();
    let (mut rounds_arg, mut passes_arg): (Option<usize>, Option<usize>) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds_arg = args.next().and_then(|a| a.parse().ok()),
            "--passes" => passes_arg = args.next().and_then(|a| a.parse().ok()),
            other => sizes.extend(other.parse::<usize>().ok()),
        }
    }
    if sizes.is_empty() {
        sizes = vec![677, 1_000, 10_000];
    }
    let queries: Vec<String> = intents::intents().into_iter().map(|i| i.query).collect();
    println!("{:<44} {:>12} {:>12}", "operation", "min", "median");
    // The WordNet fallback's table is pre-stemmed and sorted at build time: the first lookup of
    // a process (a binary search over the compiled-in text) costs what any other does.
    let start = Instant::now();
    std::hint::black_box(codemode_catalog::search::wordnet_relatives("roster").count());
    let first = start.elapsed().as_secs_f64() * 1e6;
    println!("{:<44} {first:>10.1}µs {first:>10.1}µs", "WordNet first lookup (no parse)");
    for size in sizes {
        let tools = support::repeated_set(size);
        let rounds = rounds_arg.unwrap_or(if size >= 5_000 { 5 } else { 10 }).max(1);
        let mut build = Vec::new();
        let mut first = Vec::new();
        for _ in 0..rounds {
            let input = tools.clone();
            let start = Instant::now();
            let catalog = Catalog::build(input, &CatalogOptions::default());
            build.push(start.elapsed());
            let start = Instant::now();
            std::hint::black_box(catalog.search("create a pull request", 8));
            first.push(start.elapsed());
        }
        let catalog = Catalog::build(tools, &CatalogOptions::default());
        std::hint::black_box(catalog.search("warm up", 8));
        let mut search = Vec::new();
        let passes = passes_arg.unwrap_or(if size >= 5_000 { 1 } else { 3 });
        for _ in 0..passes {
            for q in &queries {
                let start = Instant::now();
                std::hint::black_box(catalog.search_hits(q, 8));
                search.push(start.elapsed());
            }
        }
        if search.is_empty() {
            search.push(Duration::ZERO);
        }
        for (name, samples) in [
            (format!("Catalog::build, {size} tools"), build),
            (format!("first search (builds the index), {size} tools"), first),
            (format!("search (limit 8), per intent, {size} tools"), search),
        ] {
            let (min, median) = stats(samples);
            println!("{name:<44} {:>10.1}µs {:>10.1}µs", min.as_secs_f64() * 1e6, median.as_secs_f64() * 1e6);
        }
    }
}
