//! Bench tables for `BENCHMARKS.md`, shared by the benches of every crate (included with
//! `#[path]`).
//!
//! A bench prints its tables and, when asked, writes them into `BENCHMARKS.md`: each table sits
//! between `<!-- bench-table: KEY -->` and `<!-- /bench-table -->` lines, and only that part is
//! replaced (the notes around it are kept). A table whose markers are not in the file yet goes
//! at the end of the section named by its heading (a new `## heading` section at the end of the
//! file if there is none).
//!
//! Where to write: `CODEMODE_BENCHMARKS_MD=<path>` (what `cargo xtask bench` sets), or the
//! argument `--write [<path>]` (`cargo bench -p <crate> --bench <name> -- --write`), or
//! `CODEMODE_BENCH_WRITE=1`; without a path, the `BENCHMARKS.md` at the workspace root.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// One table of a bench.
pub struct Table {
    /// Marker key, unique in the file (`exec`, `sandbox`, `scale`, ...).
    pub key: &'static str,
    /// The `## ` section the table belongs to.
    pub heading: &'static str,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(key: &'static str, heading: &'static str, header: &[&str]) -> Table {
        Table { key, heading, header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as Markdown (no markers).
    pub fn markdown(&self) -> String {
        let mut out = format!("| {} |\n", self.header.join(" | "));
        let align: Vec<&str> =
            self.header.iter().enumerate().map(|(i, _)| if i == 0 { "---" } else { "---:" }).collect();
        out.push_str(&format!("| {} |\n", align.join(" | ")));
        for row in &self.rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out
    }
}

/// Where the tables go, if anywhere (see the module docs).
pub fn output_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CODEMODE_BENCHMARKS_MD") {
        return Some(PathBuf::from(path));
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--write") {
        return Some(match args.get(i + 1).filter(|a| !a.starts_with("--")) {
            Some(path) => PathBuf::from(path),
            None => workspace_benchmarks_md(),
        });
    }
    std::env::var_os("CODEMODE_BENCH_WRITE").map(|_| workspace_benchmarks_md())
}

/// `BENCHMARKS.md` at the workspace root (two levels above the bench's crate).
pub fn workspace_benchmarks_md() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../BENCHMARKS.md")
}

/// Prints every table, then writes them if asked to.
pub fn publish(tables: &[Table]) {
    for t in tables {
        println!("\n[{}] ({})\n{}", t.key, t.heading, t.markdown());
    }
    if let Some(path) = output_path() {
        match write(&path, tables) {
            Ok(()) => println!("tables written to {}", path.display()),
            Err(e) => eprintln!("cannot write {}: {e}", path.display()),
        }
    }
}

fn open_marker(key: &str) -> String {
    format!("<!-- bench-table: {key} -->")
}

const CLOSE_MARKER: &str = "<!-- /bench-table -->";

/// Replaces (or places) each table in the file at `path`.
pub fn write(path: &Path, tables: &[Table]) -> std::io::Result<()> {
    let mut text = std::fs::read_to_string(path).unwrap_or_else(|_| "# Benchmarks\n".to_owned());
    for table in tables {
        text = place(&text, table);
    }
    std::fs::write(path, text)
}

/// `text` with `table` in place.
pub fn place(text: &str, table: &Table) -> String {
    let open = open_marker(table.key);
    let block = format!("{open}\n{}{CLOSE_MARKER}\n", table.markdown());
    if let Some(start) = text.find(&open)
        && let Some(len) = text[start..].find(CLOSE_MARKER)
    {
        let mut end = start + len + CLOSE_MARKER.len();
        if text[end..].starts_with('\n') {
            end += 1;
        }
        return format!("{}{block}{}", &text[..start], &text[end..]);
    }
    let heading = format!("## {}\n", table.heading);
    match text.find(&heading) {
        Some(at) => {
            let body = at + heading.len();
            let end = text[body..].find("\n## ").map_or(text.len(), |i| body + i + 1);
            let before = text[..end].trim_end_matches('\n');
            format!("{before}\n\n{block}\n{}", &text[end..])
        }
        None => format!("{}\n\n## {}\n\n{block}", text.trim_end_matches('\n'), table.heading),
    }
}
