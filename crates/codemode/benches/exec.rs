//! End-to-end `exec` latency: a trivial cell, 10 sequential nested calls, 10 parallel nested calls.
//!
//! Run with `cargo bench -p codemode --bench exec`. Prints min/median per case and, with
//! `CODEMODE_BENCH_WRITE=1`, rewrites the table of the `## Runtime` section of `/work/main/BENCHMARKS.md`
//! (or the file named by `CODEMODE_BENCHMARKS_MD`), keeping the notes below it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{
    CodeMode, CodeModeConfig, ExecInput, NestedCall, RunScope, ToolError, ToolHost, ToolOutcome, ToolSpec,
};

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

const ITERATIONS: usize = 200;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let cm = CodeMode::builder(CodeModeConfig::enabled())
        .tools(vec![ToolSpec::core("echo")])
        .host(Arc::new(Echo))
        .namespaces(codemode::NamespaceRegistry::new())
        .build()
        .unwrap();
    let scope = RunScope::new("bench", "bench");
    let cases = [
        ("trivial cell (`return 1 + 1`)", "return 1 + 1;"),
        (
            "10 sequential nested calls",
            "let n = 0; for (let i = 0; i < 10; i++) { n += (await tools.echo({ i })).i; } return n;",
        ),
        (
            "10 parallel nested calls",
            "const r = await Promise.all([0,1,2,3,4,5,6,7,8,9].map((i) => tools.echo({ i }))); return r.length;",
        ),
    ];
    let mut rows = Vec::new();
    for (name, code) in cases {
        let mut samples: Vec<Duration> = Vec::with_capacity(ITERATIONS);
        for i in 0..ITERATIONS + 10 {
            let started = Instant::now();
            let result = runtime.block_on(cm.exec(&scope, ExecInput::code(code)));
            let elapsed = started.elapsed();
            assert_eq!(result.status(), "completed", "{name}: {:?}", result.to_json());
            if i >= 10 {
                samples.push(elapsed);
            }
        }
        samples.sort();
        let (min, median) = (samples[0], samples[samples.len() / 2]);
        println!("{name:<40} min {:>9.1} µs   median {:>9.1} µs", micros(min), micros(median));
        rows.push(format!("| {name} | {:.1} | {:.1} |", micros(min), micros(median)));
    }
    if std::env::var_os("CODEMODE_BENCH_WRITE").is_some() {
        let path =
            std::env::var("CODEMODE_BENCHMARKS_MD").unwrap_or_else(|_| "/work/main/BENCHMARKS.md".into());
        write_section(&path, &rows);
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn write_section(path: &str, rows: &[String]) {
    let existing = std::fs::read_to_string(path).unwrap_or_default();
    let section = format!(
        "## Runtime\n\nEnd-to-end `CodeMode::exec` (validate, strip, VM thread, boot, evaluate, nested calls through an \
         immediate async `ToolHost`, result), {ITERATIONS} iterations after 10 warm-up runs, `cargo bench -p codemode --bench exec`.\n\n\
         | case | min µs | median µs |\n| --- | --- | --- |\n{}\n",
        rows.join("\n")
    );
    let updated = match existing.find("## Runtime") {
        Some(start) => {
            let rest = &existing[start + 2..];
            let end = rest.find("\n## ").map(|i| start + 2 + i + 1).unwrap_or(existing.len());
            // Notes written below the table are kept.
            let old = &existing[start..end];
            let notes = old
                .find("\n| ")
                .and_then(|t| old[t + 1..].find("\n\n").map(|n| &old[t + 1 + n + 1..]))
                .unwrap_or("");
            format!(
                "{}{}{}{}",
                &existing[..start],
                section,
                if notes.is_empty() { "\n" } else { notes },
                &existing[end..]
            )
        }
        None if existing.is_empty() => format!("# Benchmarks\n\n{section}"),
        None => format!("{}\n{section}", existing.trim_end_matches('\n').to_owned() + "\n"),
    };
    std::fs::write(path, updated).unwrap();
}
