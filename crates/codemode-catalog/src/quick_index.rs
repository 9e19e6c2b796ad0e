//! The quick index: a bounded, deterministic list of exact ids and hints for the `exec` description.

use codemode_core::ToolCatalogEntry;
use codemode_core::hint::{HintOptions, MIN_HINT_CHARS, input_hint};
use serde_json::Value;

/// Input-hint budgets tried, in order, when the index does not fit with the catalog's own hints.
pub const INPUT_HINT_STEPS: &[usize] = &[160, 120, 96, 72, 48];

/// Default bound of the quick index, in characters.
pub const QUICK_INDEX_MAX_CHARS: usize = 8_000;

/// Options of [`Catalog::quick_index`](crate::Catalog::quick_index).
///
/// One line per core or plugin entry (`source: "openclaw"`; never MCP or client entries, never a
/// description), in catalog order:
///
/// ```text
/// "openclaw:core:message" { to: string; text: string } -> { id: string }
/// "openclaw:browser:browser_request" { url: string } -> ?
/// ```
///
/// The id is written as a JSON string; `-> ?` means the output is unknown. Input hints are first
/// shown as in the catalog; when the lines do not all fit in [`QuickIndexOptions::max_chars`] (lines
/// joined with `\n`), the input hints are re-rendered with smaller budgets, one step of
/// [`INPUT_HINT_STEPS`] after the other (output hints are never shortened: they are either complete
/// or `?`), and the first step at which every line fits is the index. When even the smallest step
/// does not fit, lines (with the smallest input hints) are chosen greedily — entries with a declared output hint first, then the rest, each group
/// in catalog order; a line that does not fit in what is left is skipped, never ending the selection —
/// printed in catalog order, and followed by the footer
/// `(N more tools not listed here; find them with tools.search(query) or ALL_TOOLS)`. The whole
/// text, footer included, never exceeds `max_chars` characters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct QuickIndexOptions {
    /// Most characters (Unicode scalar values) in the index, footer included. Default:
    /// [`QUICK_INDEX_MAX_CHARS`] (8,000).
    pub max_chars: usize,
}

impl Default for QuickIndexOptions {
    fn default() -> Self {
        QuickIndexOptions { max_chars: QUICK_INDEX_MAX_CHARS }
    }
}

impl QuickIndexOptions {
    /// The same options with another bound.
    pub fn with_max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }
}

/// The footer line for `omitted` tools.
pub fn omitted_footer(omitted: usize) -> String {
    format!("({omitted} more tools not listed here; find them with tools.search(query) or ALL_TOOLS)")
}

/// One quick-index line, with the entry's own input hint.
pub fn quick_index_line(entry: &ToolCatalogEntry) -> String {
    line_with_input(entry, &entry.input)
}

fn line_with_input(entry: &ToolCatalogEntry, input: &str) -> String {
    let id = serde_json::to_string(&entry.id).unwrap_or_else(|_| "\"\"".to_owned());
    let output = entry.output.as_deref().unwrap_or("?");
    one_line(&format!("{id} {input} -> {output}"))
}

fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// Renders the index of `entries` (each with its input schema).
pub(crate) fn render_quick_index(
    entries: &[(&ToolCatalogEntry, &Value)],
    options: &QuickIndexOptions,
) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let measure = |line: String| {
        let len = line.chars().count();
        (line, len)
    };
    let rerender = |(entry, schema): &(&ToolCatalogEntry, &Value), budget: usize| {
        let input = input_hint(schema, &HintOptions::input().with_max_chars(budget));
        measure(line_with_input(entry, &input))
    };
    let input_len: Vec<usize> = entries.iter().map(|(e, _)| e.input.chars().count()).collect();
    let mut lines: Vec<(String, usize)> = entries.iter().map(|(e, _)| measure(quick_index_line(e))).collect();
    // The shortest each line can get: its input hint at the hint minimum.
    let floors: Vec<usize> = lines
        .iter()
        .zip(&input_len)
        .map(|((_, len), input)| len - input + input.min(&MIN_HINT_CHARS))
        .collect();
    let total = |lines: &[(String, usize)]| lines.iter().map(|(_, len)| len).sum::<usize>() + lines.len() - 1;
    let last_step = INPUT_HINT_STEPS.last().copied().unwrap_or(usize::MAX);
    // When even the floors do not fit, no step can: go straight to the last step, rendering only the
    // lines that can still be chosen (below). Otherwise try the steps in order.
    let lazy = floors.iter().sum::<usize>() + lines.len() - 1 > options.max_chars;
    if !lazy {
        let mut steps = INPUT_HINT_STEPS.iter();
        while total(&lines) > options.max_chars {
            let Some(&budget) = steps.next() else { break };
            for (i, entry) in entries.iter().enumerate() {
                if input_len[i] > budget {
                    lines[i] = rerender(entry, budget);
                }
            }
        }
        if total(&lines) <= options.max_chars {
            return lines.into_iter().map(|(line, _)| line).collect::<Vec<_>>().join("\n");
        }
    }
    let footer_reserve = omitted_footer(lines.len()).chars().count();
    let Some(mut budget) = options.max_chars.checked_sub(footer_reserve) else {
        return String::new();
    };
    let mut order: Vec<usize> = (0..lines.len()).filter(|&i| entries[i].0.output.is_some()).collect();
    order.extend((0..lines.len()).filter(|&i| entries[i].0.output.is_none()));
    let mut selected = vec![false; lines.len()];
    for i in order {
        // Each line costs its length and the newline after it.
        if floors[i] + 1 > budget {
            continue;
        }
        if lazy && input_len[i] > last_step {
            lines[i] = rerender(&entries[i], last_step);
        }
        let cost = lines[i].1 + 1;
        if cost <= budget {
            budget -= cost;
            selected[i] = true;
        }
    }
    let mut out = String::new();
    let mut omitted = 0;
    for (i, (line, _)) in lines.iter().enumerate() {
        if selected[i] {
            out.push_str(line);
            out.push('\n');
        } else {
            omitted += 1;
        }
    }
    out.push_str(&omitted_footer(omitted));
    out
}
