//! Strip time for a typical 40-line TypeScript cell and a 2,000-line cell, plus the JavaScript
//! path (parse + checks, no stripping) for comparison.
//!
//! Run: `cargo bench -p codemode-ts --bench strip`. Prints min / median / mean per case.

use std::hint::black_box;
use std::time::{Duration, Instant};

use codemode_ts::{Language, StripOptions, strip};

/// A 40-line cell as models write them: interfaces, generics, async tool calls, a class, an enum.
const TYPICAL: &str = r#"interface FileInfo {
  name: string;
  size: number;
  tags?: string[];
}
type Grouped = Record<string, FileInfo[]>;
enum Kind { Code = "code", Docs = "docs", Other = "other" }
class Classifier {
  constructor(private readonly rules: Map<string, Kind>) {}
  kind(f: FileInfo): Kind {
    const ext = f.name.split(".").pop()!;
    return this.rules.get(ext) ?? Kind.Other;
  }
}
async function listAll<T>(id: string, input: unknown): Promise<T[]> {
  const out: T[] = [];
  let page: number | undefined = 0;
  while (page !== undefined) {
    const res = (await tools.callValue(id, { ...(input as object), page })) as { items: T[]; next?: number };
    out.push(...res.items);
    page = res.next;
  }
  return out;
}
const hits = await tools.search("list files", { limit: 3 });
const files = await listAll<FileInfo>(hits[0]!.id, { path: "." });
const classifier = new Classifier(new Map([["ts", Kind.Code], ["md", Kind.Docs]]));
const grouped: Grouped = {};
for (const f of files) {
  const k = classifier.kind(f);
  (grouped[k] ??= []).push(f);
}
const summary = Object.entries(grouped).map(([k, list]: [string, FileInfo[]]) => ({
  kind: k,
  count: list.length,
  bytes: list.reduce((n: number, f: FileInfo) => n + f.size, 0),
}));
text(`found ${files.length} files`);
return summary satisfies Array<{ kind: string; count: number; bytes: number }>;
"#;

fn large() -> String {
    // 50 copies of the typical cell, each in its own block, about 2,000 lines.
    let body: String =
        TYPICAL.lines().filter(|l| !l.starts_with("return")).map(|l| format!("  {l}\n")).collect();
    let body = body.replace("  enum Kind", "  const enum Kind");
    let mut s = String::new();
    for _ in 0..50 {
        s.push_str("{\n");
        s.push_str(&body);
        s.push_str("}\n");
    }
    s.push_str("return 1;\n");
    s
}

fn measure(name: &str, lines: usize, iterations: usize, f: impl Fn()) {
    for _ in 0..iterations / 10 + 1 {
        f();
    }
    let mut times: Vec<Duration> = (0..iterations)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    println!(
        "| {name:<34} | {lines:>6} | {:>10.1?} | {:>10.1?} | {:>10.1?} |",
        times[0],
        times[times.len() / 2],
        mean
    );
}

fn main() {
    let large = large();
    let ts = StripOptions::new(Language::TypeScript);
    let js = StripOptions::new(Language::JavaScript);
    let typical_js = strip(TYPICAL, &ts).code;
    let large_js = strip(&large, &ts).code;
    assert!(strip(TYPICAL, &ts).is_ok() && strip(&large, &ts).is_ok());
    println!("| case                               |  lines |        min |     median |       mean |");
    println!("|------------------------------------|-------:|-----------:|-----------:|-----------:|");
    measure("strip TypeScript, typical cell", TYPICAL.lines().count(), 2000, || {
        black_box(strip(black_box(TYPICAL), &ts));
    });
    measure("strip TypeScript, large cell", large.lines().count(), 100, || {
        black_box(strip(black_box(&large), &ts));
    });
    measure("check JavaScript, typical cell", typical_js.lines().count(), 2000, || {
        black_box(strip(black_box(&typical_js), &js));
    });
    measure("check JavaScript, large cell", large_js.lines().count(), 100, || {
        black_box(strip(black_box(&large_js), &js));
    });
}
