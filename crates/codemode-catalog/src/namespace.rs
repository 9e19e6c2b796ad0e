//! The internal namespace registry and per-run visibility.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use codemode_core::PATH_SEPARATOR;
use codemode_core::guest::{RESERVED_GLOBALS, is_private};
use codemode_core::ident::is_identifier;
use codemode_core::{NamespaceContext, NamespaceRegistration, ScopeValue, ToolMarker, ToolOrigin};

use crate::catalog::{Catalog, shorten};
use crate::error::NamespaceError;

/// Most keys or array indices between a scope's root and any value in it (a path's length).
pub const MAX_SCOPE_DEPTH: usize = 32;

/// Scope keys that are never allowed as path segments.
pub(crate) const UNSAFE_KEYS: &[&str] = &["__proto__", "constructor", "prototype"];

/// JavaScript standard globals a namespace may not replace.
pub(crate) const JS_BUILTIN_GLOBALS: &[&str] = &[
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "Atomics",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float32Array",
    "Float64Array",
    "Function",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "Intl",
    "Iterator",
    "JSON",
    "Map",
    "Math",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "clearInterval",
    "clearTimeout",
    "console",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "globalThis",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "queueMicrotask",
    "setInterval",
    "setTimeout",
    "structuredClone",
    "unescape",
];

#[derive(Clone, Debug)]
struct Registered {
    plugin_id: String,
    registration: NamespaceRegistration,
}

/// The namespace registry: a cheap-to-clone handle (clones share state).
///
/// Use [`NamespaceRegistry::global`] for the process-wide registry the spec describes, or
/// [`NamespaceRegistry::new`] for an isolated one (tests, several hosts in one process).
///
/// A trusted loader registers a [`NamespaceRegistration`] for its plugin
/// ([`NamespaceRegistry::register_for_plugin`]); registrations are checked at once (id, global name,
/// required tools, duplicates). For each run, [`NamespaceRegistry::resolve_for`] decides which
/// namespaces the run sees:
///
/// - every `required_tool_names` entry must be in the run's catalog **as a plugin tool owned by the
///   registering plugin** (`openclaw:<plugin_id>:<name>`, i.e. `sourceName == plugin_id`); a
///   same-named core, MCP, client or other-plugin tool does not count. Otherwise the namespace is
///   hidden, and with it its description and prompt.
/// - the scope factory then runs with the run's [`NamespaceContext`]; a panic hides the namespace;
/// - the scope is validated: its root must be an object; every object key along the way (the path
///   segments) must be non-empty, not `__proto__` / `constructor` / `prototype`, without
///   [`PATH_SEPARATOR`], and unique within its object; every [`ToolMarker`] must target a tool in
///   `required_tool_names`; no value sits more than [`MAX_SCOPE_DEPTH`] keys or indices below the
///   root. A scope that fails hides that
///   namespace for the run (with a [`NamespaceError`] in [`NamespaceResolution::hidden`]) instead
///   of failing the run. [`ScopeValue::Data`] values are opaque JSON: their keys are not paths.
///
/// Raw host functions cannot be expressed: [`ScopeValue`] has no variant for them, and
/// [`ScopeValue::Shared`] subtrees are immutable `Arc`s, so a scope is a DAG, never a cycle (shared
/// subtrees are validated once each). This does not compile:
///
/// ```compile_fail
/// use codemode_core::ScopeValue;
/// // Wrong: a raw host function bypasses the catalog tool lifecycle; there is no way to express it.
/// let scope = ScopeValue::object([("list", || 42)]);
/// ```
///
/// Visible namespaces are ordered by namespace id.
#[derive(Clone, Debug, Default)]
pub struct NamespaceRegistry {
    inner: Arc<Mutex<Vec<Registered>>>,
}

/// A namespace visible to one run: what the bridge serializes into the guest and what the `exec`
/// description shows.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VisibleNamespace {
    /// Namespace id, e.g. `github-issues`.
    pub id: String,
    /// Guest global, e.g. `Issues` (also `namespaces.Issues`).
    pub global_name: String,
    /// One line for the `exec` description.
    pub description: String,
    /// Usage prompt for the `exec` description.
    pub prompt: Option<String>,
    /// The registering plugin.
    pub plugin_id: String,
    /// The validated scope built for this run.
    pub scope: ScopeValue,
    /// Catalog id of each required tool, by tool name (`github_list_issues` ->
    /// `openclaw:github:github_list_issues`).
    pub tool_ids: BTreeMap<String, String>,
}

/// A namespace call resolved to its catalog tool.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResolvedNamespaceCall<'a> {
    /// The namespace.
    pub namespace: &'a VisibleNamespace,
    /// The marker at the path (maps guest arguments to the tool input).
    pub marker: &'a ToolMarker,
    /// The exact catalog id to dispatch.
    pub catalog_id: &'a str,
}

impl VisibleNamespace {
    /// Resolves a callable path (`["list"]`, `["repo", "issues", "0", "close"]`) to its marker and
    /// catalog id. Array elements are addressed by decimal index. Anything that is not a marker at
    /// exactly that path is [`NamespaceError::UnknownPath`].
    pub fn resolve_path<S: AsRef<str>>(
        &self,
        path: &[S],
    ) -> Result<ResolvedNamespaceCall<'_>, NamespaceError> {
        let unknown = || NamespaceError::UnknownPath {
            namespace: self.global_name.clone(),
            path: shorten(&path.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(".")),
        };
        let mut node = &self.scope;
        for segment in path {
            let segment = segment.as_ref();
            node = deref_shared(node);
            node = match node {
                ScopeValue::Object(members) => {
                    members.iter().find(|(k, _)| k == segment).map(|(_, v)| v).ok_or_else(unknown)?
                }
                ScopeValue::Array(items) => {
                    let index = parse_index(segment).ok_or_else(unknown)?;
                    items.get(index).ok_or_else(unknown)?
                }
                _ => return Err(unknown()),
            };
        }
        match deref_shared(node) {
            ScopeValue::Tool(marker) => {
                let catalog_id = self.tool_ids.get(&marker.tool_name).ok_or_else(unknown)?;
                Ok(ResolvedNamespaceCall { namespace: self, marker, catalog_id })
            }
            _ => Err(unknown()),
        }
    }
}

fn parse_index(segment: &str) -> Option<usize> {
    let canonical = !segment.is_empty()
        && segment.bytes().all(|b| b.is_ascii_digit())
        && (segment == "0" || !segment.starts_with('0'));
    if canonical { segment.parse().ok() } else { None }
}

fn deref_shared(mut node: &ScopeValue) -> &ScopeValue {
    while let ScopeValue::Shared(inner) = node {
        node = inner;
    }
    node
}

/// The namespaces of one run: those visible, and why the others are hidden.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct NamespaceResolution {
    /// Visible namespaces, by id.
    pub visible: Vec<VisibleNamespace>,
    /// Hidden namespaces and why, by id.
    pub hidden: Vec<(String, NamespaceError)>,
}

impl NamespaceResolution {
    /// The visible namespace with this id or global name.
    pub fn get(&self, namespace: &str) -> Option<&VisibleNamespace> {
        self.visible.iter().find(|n| n.id == namespace || n.global_name == namespace)
    }

    /// Resolves a guest namespace call (namespace id or global name, then path). Forged namespaces
    /// and paths are errors.
    pub fn resolve<S: AsRef<str>>(
        &self,
        namespace: &str,
        path: &[S],
    ) -> Result<ResolvedNamespaceCall<'_>, NamespaceError> {
        self.get(namespace)
            .ok_or_else(|| NamespaceError::UnknownNamespace { namespace: shorten(namespace) })?
            .resolve_path(path)
    }
}

impl NamespaceRegistry {
    /// An empty, isolated registry.
    pub fn new() -> NamespaceRegistry {
        NamespaceRegistry::default()
    }

    /// The process-wide registry.
    pub fn global() -> &'static NamespaceRegistry {
        static GLOBAL: OnceLock<NamespaceRegistry> = OnceLock::new();
        GLOBAL.get_or_init(NamespaceRegistry::new)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Registered>> {
        // A panic while holding the lock cannot leave the Vec half-updated (every mutation is one
        // push/retain), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `registerCodeModeNamespaceForPlugin`: checks and stores a registration.
    pub fn register_for_plugin(
        &self,
        plugin_id: &str,
        registration: NamespaceRegistration,
    ) -> Result<(), NamespaceError> {
        validate_registration(plugin_id, &registration)?;
        let mut registered = self.lock();
        if let Some(existing) = registered.iter().find(|r| r.registration.id == registration.id) {
            return Err(NamespaceError::DuplicateId {
                id: registration.id.clone(),
                existing_plugin: existing.plugin_id.clone(),
            });
        }
        if let Some(existing) =
            registered.iter().find(|r| r.registration.global_name == registration.global_name)
        {
            return Err(NamespaceError::DuplicateGlobalName {
                id: registration.id.clone(),
                global_name: registration.global_name.clone(),
                existing_id: existing.registration.id.clone(),
            });
        }
        registered.push(Registered { plugin_id: plugin_id.to_owned(), registration });
        Ok(())
    }

    /// `clearCodeModeNamespacesForPlugin`: removes every registration of `plugin_id`; returns how
    /// many were removed.
    pub fn clear_for_plugin(&self, plugin_id: &str) -> usize {
        let mut registered = self.lock();
        let before = registered.len();
        registered.retain(|r| r.plugin_id != plugin_id);
        before - registered.len()
    }

    /// `clearCodeModeNamespacesForTest`: removes everything.
    pub fn clear_for_test(&self) {
        self.lock().clear();
    }

    /// `(plugin id, namespace id)` of every registration, by namespace id.
    pub fn registrations(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> =
            self.lock().iter().map(|r| (r.plugin_id.clone(), r.registration.id.clone())).collect();
        out.sort_by(|a, b| a.1.cmp(&b.1));
        out
    }

    /// The namespaces visible to a run with this catalog and context.
    pub fn visible_for(&self, catalog: &Catalog, ctx: &NamespaceContext) -> Vec<VisibleNamespace> {
        self.resolve_for(catalog, ctx).visible
    }

    /// The namespaces of a run: visible ones with their scopes, hidden ones with the reason.
    pub fn resolve_for(&self, catalog: &Catalog, ctx: &NamespaceContext) -> NamespaceResolution {
        // Snapshot the registrations so scope factories run without holding the lock.
        let mut registered: Vec<Registered> = self.lock().clone();
        registered.sort_by(|a, b| a.registration.id.cmp(&b.registration.id));
        let mut resolution = NamespaceResolution::default();
        for r in registered {
            let id = r.registration.id.clone();
            match visible_namespace(catalog, ctx, r) {
                Ok(namespace) => resolution.visible.push(namespace),
                Err(error) => resolution.hidden.push((id, error)),
            }
        }
        resolution
    }
}

fn validate_registration(plugin_id: &str, r: &NamespaceRegistration) -> Result<(), NamespaceError> {
    let id = &r.id;
    let valid_id = !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if !valid_id {
        return Err(NamespaceError::InvalidId { id: shorten(id) });
    }
    if plugin_id.is_empty() {
        return Err(NamespaceError::EmptyPluginId { id: id.clone() });
    }
    let global = &r.global_name;
    let reserved =
        |reason| NamespaceError::ReservedGlobalName { id: id.clone(), global_name: global.clone(), reason };
    if is_private(global) {
        return Err(reserved("private prefix"));
    }
    if !is_identifier(global) {
        return Err(NamespaceError::InvalidGlobalName { id: id.clone(), global_name: shorten(global) });
    }
    if RESERVED_GLOBALS.contains(&global.as_str()) {
        return Err(reserved("Code Mode global"));
    }
    if JS_BUILTIN_GLOBALS.contains(&global.as_str()) {
        return Err(reserved("JavaScript built-in global"));
    }
    if r.required_tool_names.is_empty() {
        return Err(NamespaceError::NoRequiredTools { id: id.clone() });
    }
    let mut seen = HashSet::new();
    for name in &r.required_tool_names {
        if name.is_empty() || !seen.insert(name.as_str()) {
            return Err(NamespaceError::InvalidRequiredTool { id: id.clone(), tool_name: name.clone() });
        }
    }
    Ok(())
}

fn visible_namespace(
    catalog: &Catalog,
    ctx: &NamespaceContext,
    r: Registered,
) -> Result<VisibleNamespace, NamespaceError> {
    let Registered { plugin_id, registration } = r;
    let id = registration.id.clone();
    let mut tool_ids = BTreeMap::new();
    for name in &registration.required_tool_names {
        let owned = format!("{}:{plugin_id}:{name}", catalog.host_source());
        let is_plugin_tool = catalog.spec(&owned).is_some_and(|spec| {
            matches!(spec.origin, ToolOrigin::BundledPlugin | ToolOrigin::ExternalPlugin)
                && spec.owner == plugin_id
                && spec.name == *name
        });
        if is_plugin_tool {
            tool_ids.insert(name.clone(), owned);
            continue;
        }
        let found: Vec<String> =
            catalog.entries().iter().filter(|e| e.name == *name).map(|e| e.id.clone()).collect();
        return Err(if found.is_empty() {
            NamespaceError::MissingTool { id, tool_name: name.clone() }
        } else {
            NamespaceError::ForeignTool { id, tool_name: name.clone(), plugin_id, found }
        });
    }
    let factory = registration.create_scope.clone();
    let scope = catch_unwind(AssertUnwindSafe(|| factory(ctx)))
        .map_err(|_| NamespaceError::ScopePanicked { id: id.clone() })?;
    validate_scope(&id, &scope, &registration.required_tool_names)?;
    Ok(VisibleNamespace {
        id,
        global_name: registration.global_name,
        description: registration.description,
        prompt: registration.prompt,
        plugin_id,
        scope,
        tool_ids,
    })
}

/// Checks a scope against the rules in the [module docs](self).
pub(crate) fn validate_scope(
    id: &str,
    scope: &ScopeValue,
    required: &[String],
) -> Result<(), NamespaceError> {
    let root_is_object = match deref_shared(scope) {
        ScopeValue::Object(_) => true,
        ScopeValue::Data(value) => value.is_object(),
        _ => false,
    };
    if !root_is_object {
        return Err(NamespaceError::ScopeNotObject { id: id.to_owned() });
    }
    let mut checker = ScopeChecker { id, required, visited: HashMap::new(), path: Vec::new() };
    checker.check(scope, 0)
}

struct ScopeChecker<'a> {
    id: &'a str,
    required: &'a [String],
    /// Shared subtrees already validated, by address (they are immutable and kept alive by the
    /// scope), with the shallowest depth they were validated at.
    visited: HashMap<*const ScopeValue, usize>,
    path: Vec<String>,
}

impl ScopeChecker<'_> {
    fn path(&self) -> String {
        shorten(&self.path.join("."))
    }

    fn check(&mut self, node: &ScopeValue, depth: usize) -> Result<(), NamespaceError> {
        if depth > MAX_SCOPE_DEPTH {
            return Err(NamespaceError::ScopeTooDeep { id: self.id.to_owned(), max: MAX_SCOPE_DEPTH });
        }
        match node {
            ScopeValue::Data(_) => Ok(()),
            ScopeValue::Tool(marker) => {
                if self.required.contains(&marker.tool_name) {
                    Ok(())
                } else {
                    Err(NamespaceError::UndeclaredTool {
                        id: self.id.to_owned(),
                        path: self.path(),
                        tool_name: shorten(&marker.tool_name),
                    })
                }
            }
            ScopeValue::Shared(inner) => {
                let address = Arc::as_ptr(inner);
                if self.visited.get(&address).is_some_and(|&seen| seen <= depth) {
                    return Ok(());
                }
                self.check(inner, depth)?;
                self.visited.insert(address, depth);
                Ok(())
            }
            ScopeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(i.to_string());
                    self.check(item, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            ScopeValue::Object(members) => {
                let mut keys = HashSet::new();
                for (key, value) in members {
                    if key.is_empty() || UNSAFE_KEYS.contains(&key.as_str()) || key.contains(PATH_SEPARATOR) {
                        return Err(NamespaceError::UnsafeKey {
                            id: self.id.to_owned(),
                            path: self.path(),
                            key: shorten(key),
                        });
                    }
                    if !keys.insert(key.as_str()) {
                        return Err(NamespaceError::DuplicateKey {
                            id: self.id.to_owned(),
                            path: self.path(),
                            key: shorten(key),
                        });
                    }
                    self.path.push(key.clone());
                    self.check(value, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
        }
    }
}
