//! Identifier mapping: reserved and dangerous names, collisions, bounds, and injectivity.

use codemode_core::guest::MCP_SERVER_MEMBERS;
use codemode_core::ident::is_identifier;
use codemode_mcp::{MAX_IDENT_CHARS, NameTable};
use proptest::prelude::*;

fn map(names: &[&str]) -> Vec<(String, String)> {
    let table = NameTable::build(names.iter().copied(), MCP_SERVER_MEMBERS);
    table.entries().map(|(i, n)| (n.to_owned(), i.to_owned())).collect()
}

fn ident_of(name: &str) -> String {
    NameTable::build([name], MCP_SERVER_MEMBERS).ident(name).unwrap().to_owned()
}

#[test]
fn separators_become_camel_case() {
    assert_eq!(ident_of("chrome-devtools"), "chromeDevtools");
    assert_eq!(ident_of("create_issue"), "createIssue");
    assert_eq!(ident_of("get.thing"), "getThing");
    assert_eq!(
        ident_of("appservice_webapp_settings_get-appsettings"),
        "appserviceWebappSettingsGetAppsettings"
    );
    assert_eq!(ident_of("createIssue"), "createIssue");
}

#[test]
fn reserved_and_dangerous_names_get_a_suffix() {
    for (name, ident) in [
        ("delete", "delete2"),
        ("constructor", "constructor2"),
        ("prototype", "prototype2"),
        ("default", "default2"),
        ("for", "for2"),
        ("function", "function2"),
        ("static", "static2"),
        ("then", "then2"),
        ("toString", "toString2"),
        ("hasOwnProperty", "hasOwnProperty2"),
        ("valueOf", "valueOf2"),
        ("$api", "$api2"),
        ("resources", "resources2"),
        ("prompts", "prompts2"),
    ] {
        assert_eq!(ident_of(name), ident, "{name}");
    }
    // `__proto__` loses its underscores and is then an ordinary name.
    assert_eq!(ident_of("__proto__"), "proto");
    // Server identifiers do not reserve the namespace members.
    assert_eq!(NameTable::build(["resources"], &[]).ident("resources"), Some("resources"));
}

#[test]
fn leading_digits_and_empty_names_are_prefixed() {
    assert_eq!(ident_of("2fa"), "_2fa");
    assert_eq!(ident_of("3d-model"), "_3dModel");
    assert_eq!(ident_of(""), "_");
    assert_eq!(ident_of("---"), "_");
    assert_eq!(ident_of("ünïcode"), "nCode");
}

#[test]
fn collisions_are_numbered_deterministically_and_nothing_is_dropped() {
    let names = ["create_issue", "create.issue", "createIssue", "create-issue"];
    let mapped = map(&names);
    assert_eq!(
        mapped,
        [
            ("create_issue".to_owned(), "createIssue4".to_owned()),
            ("create.issue".to_owned(), "createIssue3".to_owned()),
            ("createIssue".to_owned(), "createIssue".to_owned()),
            ("create-issue".to_owned(), "createIssue2".to_owned()),
        ]
    );
    // The same names in any order map the same way.
    let mut reversed = names;
    reversed.reverse();
    let mut a = map(&reversed);
    let mut b = mapped.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn a_suffix_never_steals_another_names_base() {
    let mapped = map(&["a-b", "a_b", "aB2"]);
    assert_eq!(
        mapped,
        [
            ("a-b".to_owned(), "aB".to_owned()),
            ("a_b".to_owned(), "aB3".to_owned()),
            ("aB2".to_owned(), "aB2".to_owned())
        ]
    );
    // `delete2` the name keeps `delete2`; `delete` the reserved word moves on.
    let mapped = map(&["delete", "delete2"]);
    assert_eq!(
        mapped,
        [("delete".to_owned(), "delete22".to_owned()), ("delete2".to_owned(), "delete2".to_owned())]
    );
}

#[test]
fn exact_duplicates_are_counted_not_mapped_twice() {
    let table = NameTable::build(["x", "y", "x"], &[]);
    assert_eq!(table.len(), 2);
    assert_eq!(table.duplicates(), 1);
}

#[test]
fn identifiers_are_bounded_and_long_names_stay_distinct() {
    let long_a = format!("{}_a", "x".repeat(200));
    let long_b = format!("{}_b", "x".repeat(200));
    let table = NameTable::build([long_a.as_str(), long_b.as_str()], &[]);
    let a = table.ident(&long_a).unwrap();
    let b = table.ident(&long_b).unwrap();
    assert_eq!(a.len(), MAX_IDENT_CHARS);
    assert_eq!(b, format!("{a}2"));
    // Exactly at the bound: kept whole; one past: cut.
    let at = "y".repeat(MAX_IDENT_CHARS);
    let past = "z".repeat(MAX_IDENT_CHARS + 1);
    assert_eq!(ident_of(&at), at);
    assert_eq!(ident_of(&past), "z".repeat(MAX_IDENT_CHARS));
}

#[test]
fn many_colliding_names_stay_linear_and_unique() {
    let names: Vec<String> = (0..5_000).map(|i| "-".repeat(i % 7 + 1) + &"_".repeat(i / 7)).collect();
    let table = NameTable::build(names.iter().map(String::as_str), &[]);
    assert_eq!(table.len(), names.len());
    let idents: std::collections::HashSet<&str> = table.entries().map(|(i, _)| i).collect();
    assert_eq!(idents.len(), names.len());
}

fn name_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_.$ -]{0,12}",
        prop::sample::select(vec![
            "delete",
            "constructor",
            "__proto__",
            "prototype",
            "then",
            "default",
            "$api",
            "resources",
            "a-b",
            "a_b",
            "aB",
            "aB2",
            "2fa",
            "_2fa",
            "",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mapping_is_injective_reversible_and_order_independent(
        names in prop::collection::vec(name_strategy(), 0..40),
        seed in any::<u64>(),
    ) {
        let table = NameTable::build(names.iter().map(String::as_str), MCP_SERVER_MEMBERS);
        let unique: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
        prop_assert_eq!(table.len(), unique.len());
        let mut seen = std::collections::HashSet::new();
        for (ident, name) in table.entries() {
            prop_assert!(is_identifier(ident), "{:?}", ident);
            prop_assert!(!MCP_SERVER_MEMBERS.contains(&ident));
            prop_assert!(seen.insert(ident.to_owned()), "duplicate {:?}", ident);
            prop_assert_eq!(table.name(ident), Some(name));
            prop_assert_eq!(table.ident(name), Some(ident));
        }
        // A rotation of the input maps every name the same way.
        let mut rotated = names.clone();
        if !rotated.is_empty() {
            let by = (seed % rotated.len() as u64) as usize;
            rotated.rotate_left(by);
        }
        let other = NameTable::build(rotated.iter().map(String::as_str), MCP_SERVER_MEMBERS);
        for (ident, name) in table.entries() {
            prop_assert_eq!(other.ident(name), Some(ident));
        }
    }
}
