//! JSON Schema validation of nested-call inputs and declared outputs.
//!
//! Validators are compiled lazily, once per tool and direction, and cached for the life of the
//! [`crate::CodeMode`]. jsonschema is built without its `resolve-http`/`resolve-file` features, so a
//! remote `$ref` is never fetched: such a schema does not compile. Messages name instance paths and
//! schema keywords, never the offending values.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// How many validation errors a message lists.
const MAX_LISTED_ERRORS: usize = 3;

/// Which schema of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Direction {
    Input,
    Output,
}

type Compiled = Arc<Result<jsonschema::Validator, String>>;

/// Per-[`crate::CodeMode`] cache of compiled validators, one map per direction (looked up by the
/// tool id as it comes, with no key built per call).
#[derive(Default)]
pub(crate) struct Validators {
    input: Mutex<HashMap<String, Compiled>>,
    output: Mutex<HashMap<String, Compiled>>,
}

impl Validators {
    /// The validator of `id`'s `direction` schema, compiled on first use.
    pub(crate) fn get(&self, id: &str, direction: Direction, schema: &Value) -> Compiled {
        let map = match direction {
            Direction::Input => &self.input,
            Direction::Output => &self.output,
        };
        if let Some(found) = lock(map).get(id) {
            return found.clone();
        }
        let compiled = Arc::new(jsonschema::options().build(schema).map_err(|e| {
            format!("the schema does not compile ({})", keyword_of(&e.schema_path.to_string()))
        }));
        lock(map).insert(id.to_owned(), compiled.clone());
        compiled
    }
}

fn lock(map: &Mutex<HashMap<String, Compiled>>) -> std::sync::MutexGuard<'_, HashMap<String, Compiled>> {
    map.lock().unwrap_or_else(|p| p.into_inner())
}

/// Validates `instance`; `Err` lists the first few problems by path and keyword, never by value.
pub(crate) fn check(
    validator: &jsonschema::Validator,
    schema: &Value,
    instance: &Value,
) -> Result<(), String> {
    // The common case, a valid instance, without collecting errors.
    if validator.is_valid(instance) {
        return Ok(());
    }
    let mut problems = Vec::new();
    let mut total = 0usize;
    for error in validator.iter_errors(instance) {
        total += 1;
        if problems.len() < MAX_LISTED_ERRORS {
            problems.push(describe(&error, schema));
        }
    }
    if total == 0 {
        return Ok(());
    }
    let mut message = problems.join("; ");
    if total > problems.len() {
        message.push_str(&format!("; and {} more", total - problems.len()));
    }
    Err(message)
}

fn describe(error: &jsonschema::ValidationError<'_>, schema: &Value) -> String {
    let path = error.instance_path.to_string();
    let at = if path.is_empty() { "input".to_owned() } else { format!("input{path}") };
    let what = match &error.kind {
        ValidationErrorKind::Required { property } => format!("missing required property {property}"),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().take(5).map(|n| format!("{n:?}")).collect();
            format!(
                "unexpected propert{} {}",
                if unexpected.len() == 1 { "y" } else { "ies" },
                names.join(", ")
            )
        }
        _ => {
            let schema_path = error.schema_path.to_string();
            let keyword = keyword_of(&schema_path);
            match schema.pointer(&schema_path) {
                Some(expected) if !matches!(keyword.as_str(), "anyOf" | "oneOf" | "allOf" | "not") => {
                    let mut text = expected.to_string();
                    if text.chars().count() > 80 {
                        text = text.chars().take(80).collect::<String>() + "…";
                    }
                    format!("does not satisfy `{keyword}: {text}`")
                }
                _ => format!("does not satisfy `{keyword}`"),
            }
        }
    };
    format!("{at}: {what}")
}

fn keyword_of(schema_path: &str) -> String {
    schema_path.rsplit('/').next().filter(|s| !s.is_empty()).unwrap_or("schema").to_owned()
}
