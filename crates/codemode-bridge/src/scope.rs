//! Namespace scope serialization: a visible namespace's [`ScopeValue`] becomes a guest descriptor
//! (plain JSON the prelude turns into objects and functions) and host-side entries that resolve guest
//! calls back to their [`ToolMarker`].
//!
//! # Descriptor shape
//!
//! ```json
//! { "id": "github-issues", "globalName": "Issues", "root": NODE, "shared": [NODE, ...] }
//! ```
//!
//! where a `NODE` is a tagged array, so data can never be mistaken for a marker:
//!
//! | node | meaning |
//! | --- | --- |
//! | `["d", value]` | plain JSON data, handed to the guest as parsed JSON (own properties only) |
//! | `["o", [[key, NODE], ...]]` | an object holding callables; keys are path segments |
//! | `["a", [NODE, ...]]` | an array holding callables; indices are path segments |
//! | `["t", path]` | a callable: the prelude makes a function that sends `namespace` + `path` + args |
//! | `["r", index]` | a shared subtree, built once in the guest (so `a.x === b.x` holds there too) |
//!
//! A callable's path is its segments joined by [`PATH_SEPARATOR`]; a callable reachable through a
//! shared subtree keeps the path of the first place it was serialized at. Tool names never appear in
//! the descriptor.
//!
//! # Rules
//!
//! Rejected: a `globalName` that is not an identifier ([`ident::is_identifier`]), a Code Mode global
//! ([`RESERVED_GLOBALS`], `globalThis`) or a private prefix ([`PRIVATE_PREFIXES`](codemode_core::guest::PRIVATE_PREFIXES)); object keys that are
//! `__proto__`, `constructor`, `prototype`, empty, or contain [`PATH_SEPARATOR`]; duplicate keys;
//! markers whose tool is not in `requiredToolNames`; a root that is not an object; nesting deeper
//! than [`MAX_VALUE_DEPTH`]. Raw functions and cycles cannot be expressed by [`ScopeValue`] at all.
//! On the guest side, forged namespace ids and paths are rejected by [`NamespaceTable::resolve`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use codemode_core::guest::{RESERVED_GLOBALS, is_private};
use codemode_core::ident;
use codemode_core::{NamespaceRegistration, PATH_SEPARATOR, ScopeValue, ToolMarker};
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::json::{MAX_VALUE_DEPTH, value_depth};

/// One visible namespace, serialized for one run.
#[derive(Clone, Debug)]
pub struct SerializedNamespace {
    id: String,
    global_name: String,
    descriptor: Value,
    callables: BTreeMap<String, ToolMarker>,
}

impl SerializedNamespace {
    /// Namespace id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The guest global.
    pub fn global_name(&self) -> &str {
        &self.global_name
    }

    /// The guest descriptor (see the module docs).
    pub fn descriptor(&self) -> &Value {
        &self.descriptor
    }

    /// Callable paths and their markers.
    pub fn callables(&self) -> &BTreeMap<String, ToolMarker> {
        &self.callables
    }
}

/// Serializes `scope` (built by `registration.create_scope`) under the spec's rules.
pub fn serialize_namespace(
    registration: &NamespaceRegistration,
    scope: &ScopeValue,
) -> Result<SerializedNamespace, BridgeError> {
    check_global_name(&registration.id, &registration.global_name)?;
    let mut s = Serializer {
        registration,
        shared: Vec::new(),
        shared_index: HashMap::new(),
        callables: BTreeMap::new(),
        path: Vec::new(),
    };
    let mut root = scope;
    while let ScopeValue::Shared(inner) = root {
        root = inner;
    }
    let is_object = matches!(root, ScopeValue::Object(_) | ScopeValue::Data(Value::Object(_)));
    if !is_object {
        return Err(BridgeError::ScopeNotObject { id: registration.id.clone() });
    }
    let root = s.node(scope, 0)?;
    let descriptor = json!({
        "id": registration.id,
        "globalName": registration.global_name,
        "root": root,
        "shared": s.shared,
    });
    Ok(SerializedNamespace {
        id: registration.id.clone(),
        global_name: registration.global_name.clone(),
        descriptor,
        callables: s.callables,
    })
}

/// Checks a namespace `globalName` against the spec's rules.
pub fn check_global_name(id: &str, name: &str) -> Result<(), BridgeError> {
    let reason = if !ident::is_identifier(name) {
        Some("not a JavaScript identifier")
    } else if RESERVED_GLOBALS.contains(&name) || name == "globalThis" {
        Some("collides with a built-in Code Mode global")
    } else if is_private(name) {
        Some("uses a private prefix")
    } else {
        None
    };
    match reason {
        Some(reason) => {
            Err(BridgeError::InvalidGlobalName { id: id.to_owned(), global_name: name.to_owned(), reason })
        }
        None => Ok(()),
    }
}

/// Whether `key` may be a namespace path segment.
pub fn is_safe_segment(key: &str) -> bool {
    !key.is_empty()
        && !matches!(key, "__proto__" | "constructor" | "prototype")
        && !key.contains(PATH_SEPARATOR)
}

struct Serializer<'a> {
    registration: &'a NamespaceRegistration,
    shared: Vec<Value>,
    shared_index: HashMap<*const ScopeValue, usize>,
    callables: BTreeMap<String, ToolMarker>,
    path: Vec<String>,
}

impl Serializer<'_> {
    fn id(&self) -> String {
        self.registration.id.clone()
    }

    fn dotted(&self) -> String {
        self.path.join(".")
    }

    fn too_deep(&self) -> BridgeError {
        BridgeError::ScopeTooDeep { id: self.id(), limit: MAX_VALUE_DEPTH }
    }

    fn node(&mut self, value: &ScopeValue, depth: usize) -> Result<Value, BridgeError> {
        match value {
            ScopeValue::Data(v) => {
                if depth + value_depth(v) > MAX_VALUE_DEPTH {
                    return Err(self.too_deep());
                }
                Ok(json!(["d", v]))
            }
            ScopeValue::Array(items) => {
                if depth + 1 > MAX_VALUE_DEPTH {
                    return Err(self.too_deep());
                }
                let mut nodes = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    self.path.push(i.to_string());
                    let node = self.node(item, depth + 1);
                    self.path.pop();
                    nodes.push(node?);
                }
                Ok(json!(["a", nodes]))
            }
            ScopeValue::Object(members) => {
                if depth + 1 > MAX_VALUE_DEPTH {
                    return Err(self.too_deep());
                }
                let mut nodes = Vec::with_capacity(members.len());
                let mut seen = std::collections::HashSet::new();
                for (key, member) in members {
                    if !is_safe_segment(key) {
                        return Err(BridgeError::UnsafeSegment {
                            id: self.id(),
                            segment: key.clone(),
                            path: self.dotted(),
                        });
                    }
                    if !seen.insert(key.as_str()) {
                        return Err(BridgeError::DuplicateKey {
                            id: self.id(),
                            segment: key.clone(),
                            path: self.dotted(),
                        });
                    }
                    self.path.push(key.clone());
                    let node = self.node(member, depth + 1);
                    self.path.pop();
                    nodes.push(json!([key, node?]));
                }
                Ok(json!(["o", nodes]))
            }
            ScopeValue::Shared(inner) => {
                let ptr = Arc::as_ptr(inner);
                if let Some(&index) = self.shared_index.get(&ptr) {
                    return Ok(json!(["r", index]));
                }
                let index = self.shared.len();
                self.shared.push(Value::Null);
                self.shared_index.insert(ptr, index);
                let node = self.node(inner, depth)?;
                self.shared[index] = node;
                Ok(json!(["r", index]))
            }
            ScopeValue::Tool(marker) => {
                if !self.registration.required_tool_names.contains(&marker.tool_name) {
                    return Err(BridgeError::UndeclaredTool {
                        id: self.id(),
                        path: self.dotted(),
                        tool: marker.tool_name.clone(),
                    });
                }
                let path = self.path.join(&PATH_SEPARATOR.to_string());
                self.callables.insert(path.clone(), marker.clone());
                Ok(json!(["t", path]))
            }
        }
    }
}

/// The host-side table of a run's visible namespaces: resolves guest calls and holds descriptors.
#[derive(Clone, Debug, Default)]
pub struct NamespaceTable {
    namespaces: Vec<SerializedNamespace>,
}

/// A resolved namespace call.
#[derive(Clone, Copy, Debug)]
pub struct ResolvedCallable<'a> {
    /// The namespace id.
    pub namespace: &'a str,
    /// The marker: its `tool_name` is the catalog tool to call, `map_input(args)` its input.
    pub marker: &'a ToolMarker,
}

impl NamespaceTable {
    /// An empty table.
    pub fn new() -> NamespaceTable {
        NamespaceTable::default()
    }

    /// Adds a serialized namespace; ids and global names must be unique.
    pub fn insert(&mut self, namespace: SerializedNamespace) -> Result<(), BridgeError> {
        for existing in &self.namespaces {
            if existing.id == namespace.id {
                return Err(BridgeError::DuplicateNamespace {
                    id: namespace.id,
                    what: "id",
                    name: existing.id.clone(),
                });
            }
            if existing.global_name == namespace.global_name {
                return Err(BridgeError::DuplicateNamespace {
                    id: namespace.id,
                    what: "globalName",
                    name: existing.global_name.clone(),
                });
            }
        }
        self.namespaces.push(namespace);
        Ok(())
    }

    /// Serializes and adds a namespace.
    pub fn add(
        &mut self,
        registration: &NamespaceRegistration,
        scope: &ScopeValue,
    ) -> Result<(), BridgeError> {
        self.insert(serialize_namespace(registration, scope)?)
    }

    /// The namespaces, in insertion order.
    pub fn namespaces(&self) -> &[SerializedNamespace] {
        &self.namespaces
    }

    /// The guest descriptors, in insertion order.
    pub fn descriptors(&self) -> Vec<Value> {
        self.namespaces.iter().map(|n| n.descriptor.clone()).collect()
    }

    /// Resolves a guest `namespace` request. Unknown (forged) ids and paths are refused with a
    /// message that is safe for the guest (deliver it as a rejection).
    pub fn resolve<'a>(&'a self, namespace: &str, path: &str) -> Result<ResolvedCallable<'a>, String> {
        let Some(ns) = self.namespaces.iter().find(|n| n.id == namespace) else {
            return Err("namespace call: unknown namespace".to_owned());
        };
        match ns.callables.get_key_value(path) {
            Some((_, marker)) => Ok(ResolvedCallable { namespace: &ns.id, marker }),
            None => Err(format!("{}: no callable at this path", ns.global_name)),
        }
    }
}
