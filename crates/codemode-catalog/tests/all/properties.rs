//! Property: equivalent tool sets in any order give the same catalog.

use codemode_catalog::{Catalog, CatalogOptions, QuickIndexOptions};
use codemode_core::{ToolOrigin, ToolSpec};
use proptest::prelude::*;

use crate::support::small_set;

fn tool_set() -> Vec<ToolSpec> {
    let mut tools = small_set(100);
    tools.push(ToolSpec::core("message"));
    tools.push(ToolSpec::core("exec"));
    tools.push(ToolSpec::core("wait"));
    tools.push(ToolSpec::core("screen").direct_only());
    tools.push(ToolSpec::new("create_issue", ToolOrigin::Mcp, "github"));
    tools.push(ToolSpec::new("list_issues", ToolOrigin::Mcp, "github"));
    tools.push(ToolSpec::new("select_file", ToolOrigin::Client, "app"));
    tools.push(ToolSpec::new("click", ToolOrigin::ExternalPlugin, "other-browser"));
    tools
}

/// Ids, quick index, convenience names and a search result.
type Fingerprint = (Vec<String>, String, Vec<(String, String)>, Vec<String>);

fn fingerprint(catalog: &Catalog) -> Fingerprint {
    (
        catalog.entries().iter().map(|e| e.id.clone()).collect(),
        catalog.quick_index(&QuickIndexOptions::default()),
        catalog.convenience_names().to_vec(),
        catalog.search("take a screenshot", 8).iter().map(|e| e.id.clone()).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn shuffled_equivalent_tool_sets_build_identically(shuffled in Just(tool_set()).prop_shuffle()) {
        let reference = fingerprint(&Catalog::build(tool_set(), &CatalogOptions::default()));
        let other = fingerprint(&Catalog::build(shuffled, &CatalogOptions::default()));
        prop_assert_eq!(reference, other);
    }
}
