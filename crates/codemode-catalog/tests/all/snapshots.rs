//! Snapshots of ALL_TOOLS, the quick index and the convenience names over the public catalogs.

use codemode_catalog::{Catalog, CatalogDiagnostic, CatalogOptions, QuickIndexOptions};

use crate::support::{public_catalog, repeated_set, small_set};

#[test]
fn all_tools_72() {
    let catalog = Catalog::build(small_set(72), &CatalogOptions::default());
    insta::assert_json_snapshot!(catalog.all_tools_json());
}

#[test]
fn quick_index_72() {
    let catalog = Catalog::build(small_set(72), &CatalogOptions::default());
    insta::assert_snapshot!(catalog.quick_index(&QuickIndexOptions::default()));
}

#[test]
fn quick_index_100() {
    let catalog = Catalog::build(small_set(100), &CatalogOptions::default());
    insta::assert_snapshot!(catalog.quick_index(&QuickIndexOptions::default()));
}

#[test]
fn quick_index_677() {
    let catalog = public_catalog();
    insta::assert_snapshot!(catalog.quick_index(&QuickIndexOptions::default()));
}

#[test]
fn quick_index_1024() {
    let catalog = Catalog::build(repeated_set(1024), &CatalogOptions::default());
    insta::assert_snapshot!(catalog.quick_index(&QuickIndexOptions::default()));
}

#[test]
fn convenience_names_677() {
    let catalog = public_catalog();
    let mut out = String::new();
    for (name, id) in catalog.convenience_names() {
        if catalog.get(id).is_some_and(|e| e.name != *name) {
            out.push_str(&format!("{name} <- {id}\n"));
        }
    }
    out.push_str(&format!("installed: {}\n", catalog.convenience_names().len()));
    for diagnostic in catalog.diagnostics() {
        match diagnostic {
            CatalogDiagnostic::AmbiguousSafeName { name, ids } => {
                out.push_str(&format!("ambiguous {name}: {}\n", ids.join(", ")))
            }
            CatalogDiagnostic::RefusedSafeName { id, reason } => {
                out.push_str(&format!("refused {id}: {}\n", reason.as_str()))
            }
            _ => {}
        }
    }
    insta::assert_snapshot!(out);
}
