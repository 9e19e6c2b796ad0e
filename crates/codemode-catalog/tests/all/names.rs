//! Safe convenience names: normalization, refusals, ambiguity, and the real catalogs.

use std::collections::HashSet;

use codemode_catalog::normalize_tool_name;
use codemode_catalog::{Catalog, CatalogDiagnostic, CatalogOptions, RefusedName, safe_tool_name};
use codemode_core::ident::is_identifier;
use codemode_core::{ToolOrigin, ToolSpec};

use crate::support::{public_catalog, public_mcp_tools};

#[test]
fn normalization_rules() {
    assert_eq!(normalize_tool_name("web_search"), "web_search");
    assert_eq!(normalize_tool_name("get-feature-flag"), "get_feature_flag");
    assert_eq!(normalize_tool_name("get.thing"), "get_thing");
    assert_eq!(normalize_tool_name("a -- b"), "a_b");
    assert_eq!(normalize_tool_name("createIssue"), "createIssue");
    assert_eq!(normalize_tool_name("$price"), "$price");
    assert_eq!(normalize_tool_name("café"), "caf_");
    assert_eq!(normalize_tool_name("2fa"), "t_2fa");
    assert_eq!(normalize_tool_name("3d-model"), "t_3d_model");
}

#[test]
fn refused_names() {
    for helper in ["search", "describe", "call", "callValue"] {
        assert_eq!(safe_tool_name(helper), Err(RefusedName::Helper), "{helper}");
    }
    for reserved in ["delete", "class", "__proto__", "constructor", "prototype", "undefined", "eval"] {
        assert_eq!(safe_tool_name(reserved), Err(RefusedName::ReservedWord), "{reserved}");
    }
    for member in ["toString", "valueOf", "hasOwnProperty", "then", "toJSON"] {
        assert_eq!(safe_tool_name(member), Err(RefusedName::ObjectMember), "{member}");
    }
    for global in ["tools", "namespaces", "text", "json", "yield_control", "MCP", "API", "ALL_TOOLS"] {
        assert_eq!(safe_tool_name(global), Err(RefusedName::CodeModeGlobal), "{global}");
    }
    assert_eq!(safe_tool_name("__codemode_call"), Err(RefusedName::PrivatePrefix));
    assert_eq!(safe_tool_name("__openclaw.x"), Err(RefusedName::PrivatePrefix));
    assert_eq!(safe_tool_name("---"), Err(RefusedName::Empty));
    assert_eq!(safe_tool_name("日本"), Err(RefusedName::Empty));
    // Near misses are fine.
    assert_eq!(safe_tool_name("search_code").as_deref(), Ok("search_code"));
    assert_eq!(safe_tool_name("Delete").as_deref(), Ok("Delete"));
    assert_eq!(safe_tool_name("exec").as_deref(), Ok("exec"));
}

#[test]
fn two_tools_normalizing_alike_get_no_name() {
    let catalog = Catalog::build(
        vec![
            ToolSpec::new("create-issue", ToolOrigin::BundledPlugin, "a"),
            ToolSpec::new("create_issue", ToolOrigin::ExternalPlugin, "b"),
            ToolSpec::new("create.issue", ToolOrigin::Client, "app"),
            ToolSpec::core("message"),
        ],
        &CatalogOptions::default(),
    );
    assert_eq!(catalog.convenience_names(), [("message".to_owned(), "openclaw:core:message".to_owned())]);
    assert!(catalog.diagnostics().contains(&CatalogDiagnostic::AmbiguousSafeName {
        name: "create_issue".into(),
        ids: vec![
            "openclaw:a:create-issue".into(),
            "openclaw:b:create_issue".into(),
            "client:app:create.issue".into()
        ],
    }));
}

#[test]
fn shell_exec_name_is_installed_only_when_unambiguous() {
    let alone = Catalog::build(vec![ToolSpec::core("exec")], &CatalogOptions::default());
    assert_eq!(alone.convenience_names(), [("exec".to_owned(), "openclaw:core:exec".to_owned())]);
    let clash = Catalog::build(
        vec![ToolSpec::core("exec"), ToolSpec::new("exec", ToolOrigin::Client, "app")],
        &CatalogOptions::default(),
    );
    assert!(clash.convenience_names().is_empty());
    assert!(clash.get("openclaw:core:exec").is_some() && clash.get("client:app:exec").is_some());
}

#[test]
fn mcp_tools_take_no_part_in_names() {
    let catalog = Catalog::build(
        vec![
            ToolSpec::core("message"),
            ToolSpec::new("message", ToolOrigin::Mcp, "evil"),
            ToolSpec::new("fetch", ToolOrigin::Mcp, "web"),
        ],
        &CatalogOptions::default(),
    );
    assert_eq!(catalog.convenience_names(), [("message".to_owned(), "openclaw:core:message".to_owned())]);
}

#[test]
fn refused_names_are_reported() {
    let catalog = Catalog::build(
        vec![ToolSpec::core("search"), ToolSpec::new("then", ToolOrigin::BundledPlugin, "p")],
        &CatalogOptions::default(),
    );
    assert!(catalog.convenience_names().is_empty());
    assert!(catalog.diagnostics().contains(&CatalogDiagnostic::RefusedSafeName {
        id: "openclaw:core:search".into(),
        reason: RefusedName::Helper
    }));
    // The tools themselves are still catalogued and callable by id.
    assert!(catalog.guest_entry("openclaw:core:search").is_ok());
}

#[test]
fn real_catalogs_as_plugins() {
    let catalog = public_catalog();
    let names = catalog.convenience_names();
    let mut seen = HashSet::new();
    for (name, id) in names {
        assert!(is_identifier(name), "{name} is not an identifier");
        assert!(seen.insert(name.as_str()), "{name} installed twice");
        assert_eq!(catalog.convenience_name(id), Some(name.as_str()));
        let entry = catalog.get(id).expect("installed id exists");
        assert_eq!(safe_tool_name(&entry.name).as_deref(), Ok(name.as_str()));
    }
    let installed = |name: &str| names.iter().find(|(n, _)| n == name).map(|(_, id)| id.as_str());
    // kebab-case names normalize.
    assert_eq!(installed("get_feature_flag"), Some("openclaw:launchdarkly:get-feature-flag"));
    assert_eq!(installed("get_sum"), Some("openclaw:everything:get-sum"));
    assert_eq!(
        installed("fileshares_fileshare_check_name_availability"),
        Some("openclaw:azure-all:fileshares_fileshare_check-name-availability")
    );
    // Shared by github and github-legacy-npm (and azure-all / azure-namespace): ambiguous.
    for ambiguous in ["create_pull_request", "create_issue", "search_code", "subscription_list", "group_list"]
    {
        assert_eq!(installed(ambiguous), None, "{ambiguous}");
    }
    assert_eq!(installed("merge_pull_request"), None);
    assert_eq!(installed("list_gists"), Some("openclaw:github:list_gists"));
    // Every guest entry either has its name or a diagnostic saying why not.
    let explained: HashSet<&str> = catalog
        .diagnostics()
        .iter()
        .flat_map(|d| match d {
            CatalogDiagnostic::AmbiguousSafeName { ids, .. } => ids.iter().map(String::as_str).collect(),
            CatalogDiagnostic::RefusedSafeName { id, .. } => vec![id.as_str()],
            _ => vec![],
        })
        .collect();
    for entry in catalog.guest_entries() {
        assert!(
            catalog.convenience_name(&entry.id).is_some() != explained.contains(entry.id.as_str()),
            "{}",
            entry.id
        );
    }
    assert_eq!(names.len() + explained.len(), 677);
}

#[test]
fn real_catalogs_as_mcp_get_no_names() {
    let catalog = Catalog::build(public_mcp_tools(), &CatalogOptions::default());
    assert_eq!(catalog.len(), 677);
    assert_eq!(catalog.guest_entries().count(), 0);
    assert!(catalog.convenience_names().is_empty());
    assert!(catalog.search("create a pull request", 8).is_empty());
    assert!(catalog.entries().iter().all(|e| e.input == "unknown" && e.output.is_none()));
}
