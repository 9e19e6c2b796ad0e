//! The quick index: format, sources, bound, truncation preferences, determinism.

use codemode_catalog::{Catalog, CatalogOptions, QUICK_INDEX_MAX_CHARS, QuickIndexOptions};
use codemode_catalog::{omitted_footer, quick_index_line};
use codemode_core::{ToolOrigin, ToolSpec};
use serde_json::json;

use crate::support::{public_catalog, repeated_set, small_set};

fn index(catalog: &Catalog) -> String {
    catalog.quick_index(&QuickIndexOptions::default())
}

fn closed() -> serde_json::Value {
    json!({ "type": "object", "properties": { "id": { "type": "string" } }, "required": ["id"], "additionalProperties": false })
}

#[test]
fn line_format_and_sources() {
    let catalog = Catalog::build(
        vec![
            ToolSpec::core("message")
                .description("SECRET DESCRIPTION")
                .parameters(json!({ "type": "object", "properties": { "to": { "type": "string" } }, "required": ["to"] }))
                .output_schema(closed()),
            ToolSpec::new("browser_request", ToolOrigin::BundledPlugin, "browser").description("SECRET TOO"),
            ToolSpec::new("create_issue", ToolOrigin::Mcp, "github"),
            ToolSpec::new("select_file", ToolOrigin::Client, "app"),
        ],
        &CatalogOptions::default(),
    );
    assert_eq!(
        index(&catalog),
        "\"openclaw:core:message\" { to: string } -> { id: string }\n\"openclaw:browser:browser_request\" object -> ?"
    );
}

#[test]
fn empty_catalog_gives_empty_index() {
    let catalog = Catalog::build(vec![ToolSpec::new("x", ToolOrigin::Mcp, "s")], &CatalogOptions::default());
    assert_eq!(index(&catalog), "");
}

#[test]
fn a_72_tool_catalog_fits_whole() {
    let catalog = Catalog::build(small_set(72), &CatalogOptions::default());
    let text = index(&catalog);
    assert_eq!(text.lines().count(), 72);
    assert!(text.chars().count() <= QUICK_INDEX_MAX_CHARS);
    assert!(!text.contains("more tools not listed"));
}

fn check_truncated(tools: Vec<ToolSpec>) {
    let total = tools.len();
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    let text = index(&catalog);
    assert!(text.chars().count() <= QUICK_INDEX_MAX_CHARS, "{} chars", text.chars().count());
    let lines: Vec<&str> = text.lines().collect();
    let listed = lines.len() - 1;
    assert!(listed > 0);
    assert_eq!(lines.last().copied(), Some(omitted_footer(total - listed).as_str()));
    assert!(lines.last().is_some_and(|l| l.contains("tools.search")));
    // Every line is a real entry's line (its input hint possibly shortened), in catalog order.
    let ids: Vec<String> =
        catalog.entries().iter().map(|e| serde_json::to_string(&e.id).expect("id")).collect();
    let mut position = 0;
    for line in &lines[..listed] {
        let found = ids[position..]
            .iter()
            .position(|id| line.starts_with(&format!("{id} ")))
            .expect("an entry's line, in order");
        let entry = &catalog.entries()[position + found];
        assert!(line.ends_with(&format!(" -> {}", entry.output.as_deref().unwrap_or("?"))), "{line}");
        position += found + 1;
    }
}

#[test]
fn a_100_tool_catalog_is_truncated_with_a_footer() {
    check_truncated(small_set(100));
}

#[test]
fn a_1024_tool_catalog_is_truncated_with_a_footer() {
    check_truncated(repeated_set(1024));
}

#[test]
fn entries_with_declared_outputs_are_preferred() {
    // 300 tools without a declared output come first in catalog order; 5 with one come last.
    let mut tools: Vec<ToolSpec> = (0..300).map(|i| ToolSpec::core(format!("plain_tool_{i:03}"))).collect();
    tools.extend((0..5).map(|i| {
        ToolSpec::new(format!("typed_{i}"), ToolOrigin::ExternalPlugin, "zz").output_schema(closed())
    }));
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    let text = index(&catalog);
    assert!(text.ends_with("or ALL_TOOLS)"));
    for i in 0..5 {
        assert!(text.contains(&format!("\"openclaw:zz:typed_{i}\" object -> {{ id: string }}")), "typed_{i}");
    }
    assert!(text.chars().count() <= QUICK_INDEX_MAX_CHARS);
}

#[test]
fn declared_outputs_on_the_public_catalogs_are_omitted_only_for_size() {
    let catalog = public_catalog();
    let text = index(catalog);
    let listed: Vec<&str> = text.lines().filter(|l| l.starts_with('"') && !l.ends_with("-> ?")).collect();
    assert!(!listed.is_empty());
    // Declared-output lines are chosen first: one left out did not fit beside those chosen.
    let chosen: usize = listed.iter().map(|l| l.chars().count() + 1).sum();
    let footer = omitted_footer(catalog.len()).chars().count();
    for entry in catalog.entries().iter().filter(|e| e.output.is_some()) {
        let id = serde_json::to_string(&entry.id).expect("id");
        if !text.lines().any(|l| l.starts_with(&format!("{id} "))) {
            // Its shortest possible line is at least `"id" unknown -> <output>`.
            let shortest = format!("{id} unknown -> {}", entry.output.as_deref().unwrap_or_default());
            assert!(
                chosen + shortest.chars().count() + 1 + footer > QUICK_INDEX_MAX_CHARS,
                "{id} omitted but fits"
            );
        }
    }
}

#[test]
fn bound_is_exact() {
    // Inputs that cannot shrink (`object`): the footer appears exactly one character past the bound.
    let tools: Vec<ToolSpec> = (0..40).map(|i| ToolSpec::core(format!("tool_{i:02}"))).collect();
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    let whole = index(&catalog);
    let n = whole.chars().count();
    assert_eq!(whole.lines().count(), 40);
    assert_eq!(catalog.quick_index(&QuickIndexOptions::default().with_max_chars(n)), whole);
    let cut = catalog.quick_index(&QuickIndexOptions::default().with_max_chars(n - 1));
    assert!(cut.chars().count() < n);
    assert!(cut.ends_with("or ALL_TOOLS)"), "{cut}");
    assert!(cut.lines().count() < 41);
}

#[test]
fn input_hints_shrink_before_anything_is_omitted() {
    let catalog = Catalog::build(small_set(72), &CatalogOptions::default());
    let full: String = catalog.entries().iter().map(quick_index_line).collect::<Vec<_>>().join("\n");
    let text = index(&catalog);
    assert!(full.chars().count() > QUICK_INDEX_MAX_CHARS, "the 72-tool set needs shrinking");
    assert_eq!(text.lines().count(), 72);
    assert!(text.chars().count() <= QUICK_INDEX_MAX_CHARS);
    // When even the last step does not fit, every listed input hint is within its budget.
    let last = *codemode_catalog::INPUT_HINT_STEPS.last().expect("steps");
    let tight = catalog.quick_index(&QuickIndexOptions::default().with_max_chars(full.chars().count() / 4));
    assert!(tight.ends_with("or ALL_TOOLS)"));
    for line in tight.lines().filter(|l| l.starts_with('"')) {
        let input = line.split_once("\" ").expect("id").1.rsplit_once(" -> ").expect("arrow").0;
        assert!(input.chars().count() <= last, "{line}");
    }
}

#[test]
fn oversized_line_is_skipped_not_blanking_the_index() {
    let huge = "x".repeat(9_000);
    let catalog = Catalog::build(
        vec![ToolSpec::core(huge), ToolSpec::core("message"), ToolSpec::core("read")],
        &CatalogOptions::default(),
    );
    let text = index(&catalog);
    assert_eq!(
        text,
        format!(
            "\"openclaw:core:message\" object -> ?\n\"openclaw:core:read\" object -> ?\n{}",
            omitted_footer(1)
        )
    );
}

#[test]
fn tiny_bounds_never_overflow() {
    let catalog = Catalog::build(small_set(72), &CatalogOptions::default());
    for max in [0, 1, 10, 60, 80, 100, 200] {
        let text = catalog.quick_index(&QuickIndexOptions::default().with_max_chars(max));
        assert!(text.chars().count() <= max, "{max}: {text}");
    }
}

#[test]
fn deterministic_across_rebuilds() {
    let a = index(&Catalog::build(repeated_set(1024), &CatalogOptions::default()));
    let b = index(&Catalog::build(repeated_set(1024), &CatalogOptions::default()));
    assert_eq!(a, b);
}
