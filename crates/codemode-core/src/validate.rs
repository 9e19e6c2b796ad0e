//! The one validation style of every JSON document the project reads (`tools.codeMode`, the fixture
//! catalog, the gateway config and its server entries): an error names the JSON path of the
//! offending value, says what is allowed (a type, a range, the allowed values) and what was found,
//! and for a mistyped key or value suggests the closest allowed one ([`crate::suggest`]).
//!
//! The messages have three shapes:
//! - `expected <what is allowed>, got <what was found>` ([`expected`]): a wrong type, a value out of
//!   a rejected range, a literal other than the only supported one;
//! - ``unknown key; did you mean `<key>`? allowed keys are …`` ([`crate::suggest::unknown_key`]);
//! - ``unknown <noun> "<value>"; did you mean `<value>`? allowed values are …`` ([`unknown_value`]).
//!
//! ```
//! use codemode_core::validate::{Object, child};
//! use serde_json::json;
//!
//! let doc = json!({ "github": { "timeoutMs": "5s" } });
//! let servers = Object::new(&doc, "mcpServers").unwrap();
//! let github = Object::new(servers.get("github").unwrap(), child("mcpServers", "github")).unwrap();
//! let err = github.positive_millis("timeoutMs").unwrap_err();
//! assert_eq!(err.path, "mcpServers.github.timeoutMs");
//! assert_eq!(err.message, "expected a positive whole number of milliseconds, got string \"5s\"");
//! ```

use serde_json::{Map, Value};

pub use crate::suggest::unknown_key;

/// A value that does not fit: where it is and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
#[non_exhaustive]
pub struct Invalid {
    /// JSON path of the offending value, e.g. `mcpServers.github.timeoutMs` or `$.tools[2].name`.
    pub path: String,
    /// What was wrong and what is allowed.
    pub message: String,
}

impl Invalid {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid { path: path.into(), message: message.into() }
    }
}

/// The path of member `key` under `path`: `.key` for an identifier-like key, `["a b"]` otherwise.
pub fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain { format!("{path}.{key}") } else { format!("{path}[{}]", Value::from(key)) }
}

/// The path of element `i` under `path`: `path[i]`.
pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// The JSON type of a value with its article: `null`, `a boolean`, `a number`, `a string`,
/// `an array`, `an object`.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short description of a found value: its type and, when short, its JSON text
/// (`string "yes"`, `number 1.5`, `null`, `array`).
pub fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let text = value.to_string();
    if text.chars().count() <= 40 { format!("{kind} {text}") } else { kind.to_owned() }
}

/// `expected <allowed>, got <found>`: the message for a value of the wrong type or out of range.
pub fn expected(allowed: &str, found: &Value) -> String {
    format!("expected {allowed}, got {}", describe(found))
}

/// The message for a string `value` that is not one of `allowed` (`noun` names what it is, e.g.
/// `behavior`): a did-you-mean hint when one is close, then the allowed values.
pub fn unknown_value(noun: &str, value: &str, allowed: &[&str]) -> String {
    let hint =
        crate::suggest::closest(value, allowed).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    format!("unknown {noun} {}; {hint}allowed values are {}", Value::from(value), allowed.join(", "))
}

/// A JSON object with its path, read field by field with errors in this module's style.
#[derive(Clone, Debug)]
pub struct Object<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl<'a> Object<'a> {
    /// `value` as an object at `path`; anything else is `expected an object, got …`.
    pub fn new(value: &'a Value, path: impl Into<String>) -> Result<Object<'a>, Invalid> {
        let path = path.into();
        match value.as_object() {
            Some(map) => Ok(Object { map, path }),
            None => Err(Invalid::new(path, expected("an object", value))),
        }
    }

    /// The object's own path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path of member `key`.
    pub fn child(&self, key: &str) -> String {
        child(&self.path, key)
    }

    /// Member `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// Fails on the first key not in `allowed`, with a did-you-mean hint.
    pub fn only(&self, allowed: &[&str]) -> Result<(), Invalid> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(Invalid::new(self.child(key), unknown_key(key, allowed))),
            None => Ok(()),
        }
    }

    /// An optional string member.
    pub fn string(&self, key: &str) -> Result<Option<String>, Invalid> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(Invalid::new(self.child(key), expected("a string", other))),
        }
    }

    /// A required, non-empty string member.
    pub fn required_string(&self, key: &str) -> Result<String, Invalid> {
        match self.string(key)? {
            Some(s) if !s.is_empty() => Ok(s),
            Some(_) => Err(Invalid::new(self.child(key), "expected a non-empty string, got string \"\"")),
            None => Err(Invalid::new(self.child(key), format!("missing required field {key:?}"))),
        }
    }

    /// An optional boolean member (`false` when absent).
    pub fn bool(&self, key: &str) -> Result<bool, Invalid> {
        match self.map.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(Invalid::new(self.child(key), expected("true or false", other))),
        }
    }

    /// An optional whole number of milliseconds, at least 1.
    pub fn positive_millis(&self, key: &str) -> Result<Option<u64>, Invalid> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().filter(|ms| *ms >= 1).map(Some).ok_or_else(|| {
                Invalid::new(self.child(key), expected("a positive whole number of milliseconds", v))
            }),
        }
    }

    /// An optional whole number in `min..=max` (rejected, not clamped, outside it); `what` names
    /// the unit, e.g. `milliseconds`.
    pub fn integer_in(&self, key: &str, min: u64, max: u64, what: &str) -> Result<Option<u64>, Invalid> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().filter(|n| (min..=max).contains(n)).map(Some).ok_or_else(|| {
                Invalid::new(
                    self.child(key),
                    expected(&format!("a whole number of {what} between {min} and {max}"), v),
                )
            }),
        }
    }

    /// An optional array of strings.
    pub fn string_array(&self, key: &str) -> Result<Option<Vec<String>>, Invalid> {
        self.map.get(key).map(|v| string_array(v, &self.child(key))).transpose()
    }

    /// An optional array of objects (`what` names its elements in the error), each read at its
    /// own path (`key[i]`).
    pub fn objects(&self, key: &str, what: &str) -> Result<Option<Vec<Object<'a>>>, Invalid> {
        let Some(v) = self.map.get(key) else { return Ok(None) };
        let path = self.child(key);
        let items = v
            .as_array()
            .ok_or_else(|| Invalid::new(path.clone(), expected(&format!("an array of {what}"), v)))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| Object::new(item, index(&path, i)))
            .collect::<Result<_, _>>()
            .map(Some)
    }
}

/// `value` as an array of strings at `path`.
pub fn string_array(value: &Value, path: &str) -> Result<Vec<String>, Invalid> {
    let items = value.as_array().ok_or_else(|| Invalid::new(path, expected("an array of strings", value)))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str().map(str::to_owned).ok_or_else(|| Invalid::new(index(path, i), expected("a string", v)))
        })
        .collect()
}

/// `value` as an object of string values at `path`, in document order.
pub fn string_map(value: &Value, path: &str) -> Result<Vec<(String, String)>, Invalid> {
    let map =
        value.as_object().ok_or_else(|| Invalid::new(path, expected("an object of string values", value)))?;
    map.iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.to_owned())),
            None => Err(Invalid::new(child(path, k), expected("a string", v))),
        })
        .collect()
}
