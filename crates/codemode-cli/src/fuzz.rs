//! Fuzz checks (the `fuzz/` targets are thin glue over these). Each panics only on a real bug.

use std::path::Path;

use serde_json::Value;

use crate::fixture::FixtureCatalog;

/// Loading any bytes as a fixture catalog never panics; a loaded catalog's effective tools have
/// unique catalog ids and no denied tool among them.
pub fn check_fixture(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(catalog) = FixtureCatalog::from_str_in(text, "fuzz.json", Path::new(".")) else { return };
    let tools = catalog.effective_tools();
    let mut ids: Vec<String> = tools.iter().map(|t| t.catalog_id()).collect();
    for tool in &tools {
        assert!(!catalog.is_denied(tool), "denied tool {} is effective", tool.catalog_id());
    }
    let before = ids.len();
    ids.sort();
    ids.dedup();
    assert!(ids.len() <= before);
}

/// Any line handed to the session's request parser yields a request or a protocol error, never a
/// panic; the `id` an answer echoes is valid JSON, and an `id` salvaged from a broken line is a
/// number, a string or null.
pub fn check_session_line(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let salvaged = crate::session::salvage_id(&line);
    let salvaged: Value = serde_json::from_str::<&serde_json::value::RawValue>(salvaged.as_str())
        .map(|raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null))
        .expect("a salvaged id is JSON");
    assert!(matches!(salvaged, Value::Null | Value::Number(_) | Value::String(_)));
    let id = match crate::session::check_line(&line) {
        Ok(id) | Err(id) => id,
    };
    assert!(serde_json::from_str::<&serde_json::value::RawValue>(id.as_str()).is_ok(), "{}", id.as_str());
}
