//! The run-scoped catalog: effective tools in, ordered entries with ids, hints and safe names out.

use std::collections::HashMap;
use std::sync::OnceLock;

use codemode_core::hint::{HintOptions, input_hint, output_hint};
use codemode_core::{
    CodeModeConfig, DEFAULT_HOST_SOURCE, SourceCounts, ToolCatalogEntry, ToolCatalogEntryWithSchema,
    ToolOrigin, ToolSource, ToolSpec, is_valid_host_source,
};
use serde::Serialize;
use serde_json::Value;

use crate::error::CatalogError;
use crate::names::{RefusedName, assign_safe_names};
use crate::quick_index::{QuickIndexOptions, render_quick_index};
use crate::search::{DocText, SearchIndex, edit_distance};

/// Names of the Code Mode and Tool Search control tools.
///
/// A host tool (core or plugin origin) with one of these names is a control tool and never enters
/// the catalog, with one exception: a **core** tool named `exec` is the host's shell tool and is
/// catalogued as `openclaw:core:exec` like any other tool. Code Mode's own `exec`/`wait` are not
/// host tools and are never handed to the catalog; and catalog dispatch goes to the host by id,
/// never into Code Mode itself, so they cannot be reached through it. MCP and client tools are never
/// control tools: their ids live under `mcp:` / `client:` and cannot be mistaken for a control.
pub const CONTROL_TOOL_NAMES: &[&str] =
    &["exec", "wait", "tool_search_code", "tool_search", "tool_describe", "tool_call"];

/// The input hint of entries whose schema is untrusted (MCP and client tools).
pub const UNKNOWN_INPUT: &str = "unknown";

/// Options of [`Catalog::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogOptions {
    /// Budget of trusted input hints. Default: [`HintOptions::input`] (240 characters).
    pub input_hint: HintOptions,
    /// Budget of trusted output hints. Default: [`HintOptions::output`] (400 characters).
    pub output_hint: HintOptions,
    /// The `<source>` of core and plugin tool ids (`<source>:<owner>:<tool>`). Default:
    /// [`DEFAULT_HOST_SOURCE`] (`openclaw`, as in the spec). Must pass [`is_valid_host_source`];
    /// an invalid name is ignored (the default is used) and reported as
    /// [`CatalogDiagnostic::InvalidHostSource`]. Entries keep `source: "openclaw"`: the id names,
    /// the `source` field classifies.
    pub host_source: String,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            input_hint: HintOptions::input(),
            output_hint: HintOptions::output(),
            host_source: DEFAULT_HOST_SOURCE.to_owned(),
        }
    }
}

/// Something [`Catalog::build`] decided that the host may want to log. Never fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogDiagnostic {
    /// A control tool was left out (see [`CONTROL_TOOL_NAMES`]).
    ExcludedControl {
        /// The tool's would-be id.
        id: String,
    },
    /// A direct-only tool was left out (it stays on the model surface; see
    /// [`Catalog::direct_only_tools`]).
    ExcludedDirectOnly {
        /// The tool's would-be id.
        id: String,
    },
    /// A tool with an empty name or owner was left out.
    InvalidTool {
        /// The tool's would-be id.
        id: String,
    },
    /// A later tool produced an id that an earlier one (in catalog order) already has; the first
    /// is kept.
    DuplicateId {
        /// The id.
        id: String,
        /// The origin of the kept tool.
        kept: ToolOrigin,
        /// The origin of the dropped tool.
        dropped: ToolOrigin,
    },
    /// Several guest-visible entries normalize to the same safe name; none gets it.
    AmbiguousSafeName {
        /// The safe name.
        name: String,
        /// The entries that share it.
        ids: Vec<String>,
    },
    /// An entry's name normalizes to a refused safe name; it gets none.
    RefusedSafeName {
        /// The entry.
        id: String,
        /// Why.
        reason: RefusedName,
    },
    /// [`CatalogOptions::host_source`] is not a valid source name; the default was used.
    InvalidHostSource {
        /// The refused name.
        name: String,
    },
}

/// The run-scoped tool catalog.
///
/// Entries are in the spec's order: core, bundled plugin, external plugin, MCP, then client tools;
/// within one origin by owner, then name (byte order), so equivalent tool sets give the same catalog
/// whatever order the host lists them in. See the [crate docs](crate) for every rule.
#[derive(Clone, Debug)]
pub struct Catalog {
    host_source: String,
    entries: Vec<ToolCatalogEntry>,
    specs: Vec<ToolSpec>,
    by_id: HashMap<String, usize>,
    /// Indices of guest-visible entries (not MCP), in catalog order.
    guest: Vec<usize>,
    safe_names: Vec<(String, String)>,
    safe_name_by_id: HashMap<String, usize>,
    direct_only: Vec<ToolSpec>,
    diagnostics: Vec<CatalogDiagnostic>,
    /// Built on the first search (runs that never search do not pay for it).
    search: OnceLock<SearchIndex>,
    /// The MCP entries' index (`API.search`), built on its first search.
    mcp_search: OnceLock<SearchIndex>,
    /// Indices of MCP entries, in catalog order.
    mcp: Vec<usize>,
    /// Entry counts by source (every result's telemetry reports them: counted once, here).
    counts: SourceCounts,
}

/// One search result: the entry, how well it matched, and where.
///
/// Serializes as the entry's own fields (`ToolCatalogEntry`) plus `score` and `match`, so a
/// `tools.search` result is still a `ToolCatalogEntry[]` with two additive fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchHit<'a> {
    /// The entry.
    #[serde(flatten)]
    pub entry: &'a ToolCatalogEntry,
    /// Relevance in `[0, 1]`: `0` for an entry that matched no query word (a nearest-name fill),
    /// `1` for an exact name or id match. See [`crate::search`].
    pub score: f64,
    /// Which fields matched which query words, e.g. `name: create, issue~; description: bug`
    /// (`~`: a synonym, prefix, WordNet or typo match), or `nearest`; at most
    /// [`MAX_MATCH_CHARS`](crate::search::MAX_MATCH_CHARS) characters.
    #[serde(rename = "match")]
    pub matched: String,
}

fn origin_rank(origin: ToolOrigin) -> u8 {
    match origin {
        ToolOrigin::Core => 0,
        ToolOrigin::BundledPlugin => 1,
        ToolOrigin::ExternalPlugin => 2,
        ToolOrigin::Mcp => 3,
        ToolOrigin::Client => 4,
    }
}

/// Whether `spec` is a control tool the catalog never holds.
pub fn is_control_tool(spec: &ToolSpec) -> bool {
    if !CONTROL_TOOL_NAMES.contains(&spec.name.as_str()) || !spec.origin.is_trusted() {
        return false;
    }
    !(spec.origin == ToolOrigin::Core && spec.name == "exec")
}

impl Catalog {
    /// Builds the catalog from the host's effective tools (after the host's policy).
    pub fn build(tools: impl IntoIterator<Item = ToolSpec>, options: &CatalogOptions) -> Catalog {
        let mut diagnostics = Vec::new();
        let host_source = if is_valid_host_source(&options.host_source) {
            options.host_source.clone()
        } else {
            diagnostics.push(CatalogDiagnostic::InvalidHostSource { name: options.host_source.clone() });
            DEFAULT_HOST_SOURCE.to_owned()
        };
        let mut direct_only = Vec::new();
        let mut kept: Vec<ToolSpec> = Vec::new();
        for spec in tools {
            if spec.name.is_empty() || spec.owner.is_empty() {
                diagnostics.push(CatalogDiagnostic::InvalidTool { id: spec.catalog_id_in(&host_source) });
            } else if is_control_tool(&spec) {
                diagnostics.push(CatalogDiagnostic::ExcludedControl { id: spec.catalog_id_in(&host_source) });
            } else if spec.direct_only {
                diagnostics
                    .push(CatalogDiagnostic::ExcludedDirectOnly { id: spec.catalog_id_in(&host_source) });
                direct_only.push(spec);
            } else {
                kept.push(spec);
            }
        }
        // Stable: exact duplicates keep the host's relative order.
        kept.sort_by(|a, b| {
            (origin_rank(a.origin), &a.owner, &a.name).cmp(&(origin_rank(b.origin), &b.owner, &b.name))
        });
        direct_only.sort_by(|a, b| {
            (origin_rank(a.origin), &a.owner, &a.name).cmp(&(origin_rank(b.origin), &b.owner, &b.name))
        });

        let mut entries = Vec::with_capacity(kept.len());
        let mut specs = Vec::with_capacity(kept.len());
        let mut by_id = HashMap::with_capacity(kept.len());
        for spec in kept {
            let id = spec.catalog_id_in(&host_source);
            if let Some(&first) = by_id.get(&id) {
                let first: &ToolSpec = &specs[first];
                diagnostics.push(CatalogDiagnostic::DuplicateId {
                    id,
                    kept: first.origin,
                    dropped: spec.origin,
                });
                continue;
            }
            by_id.insert(id.clone(), entries.len());
            entries.push(entry_for(&spec, id, options));
            specs.push(spec);
        }

        let guest: Vec<usize> =
            (0..entries.len()).filter(|&i| entries[i].source != ToolSource::Mcp).collect();
        let mcp: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].source == ToolSource::Mcp).collect();
        let safe =
            assign_safe_names(guest.iter().map(|&i| (entries[i].id.as_str(), entries[i].name.as_str())));
        for (name, ids) in safe.ambiguous {
            diagnostics.push(CatalogDiagnostic::AmbiguousSafeName { name, ids });
        }
        for (id, reason) in safe.refused {
            diagnostics.push(CatalogDiagnostic::RefusedSafeName { id, reason });
        }
        let safe_name_by_id = safe.installed.iter().enumerate().map(|(i, (_, id))| (id.clone(), i)).collect();
        let mut counts = SourceCounts::default();
        for entry in &entries {
            match entry.source {
                ToolSource::Openclaw => counts.openclaw += 1,
                ToolSource::Mcp => counts.mcp += 1,
                ToolSource::Client => counts.client += 1,
            }
        }

        Catalog {
            host_source,
            entries,
            specs,
            by_id,
            guest,
            safe_names: safe.installed,
            safe_name_by_id,
            direct_only,
            diagnostics,
            search: OnceLock::new(),
            mcp_search: OnceLock::new(),
            mcp,
            counts,
        }
    }

    /// The `<source>` of core and plugin tool ids in this catalog (`openclaw` unless
    /// [`CatalogOptions::host_source`] names another).
    pub fn host_source(&self) -> &str {
        &self.host_source
    }

    /// Every entry, in catalog order, MCP entries included.
    pub fn entries(&self) -> &[ToolCatalogEntry] {
        &self.entries
    }

    /// The guest-visible entries (`ALL_TOOLS`): every entry except MCP ones, in catalog order.
    pub fn guest_entries(&self) -> impl ExactSizeIterator<Item = &ToolCatalogEntry> + '_ {
        self.guest.iter().map(|&i| &self.entries[i])
    }

    /// `ALL_TOOLS` as JSON: the guest-visible entries, serialized in the spec's shape.
    pub fn all_tools_json(&self) -> Value {
        Value::Array(self.guest_entries().map(|e| serde_json::to_value(e).unwrap_or(Value::Null)).collect())
    }

    /// Number of entries (MCP included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the catalog has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry with this exact id, any source (MCP included): the host-side dispatch view.
    pub fn get(&self, id: &str) -> Option<&ToolCatalogEntry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// The host's descriptor of the entry with this exact id, any source.
    pub fn spec(&self, id: &str) -> Option<&ToolSpec> {
        self.by_id.get(id).map(|&i| &self.specs[i])
    }

    /// The MCP entry of `server`'s tool `tool_name` (the `MCP.<server>.<tool>` dispatch view).
    pub fn by_mcp(&self, server: &str, tool_name: &str) -> Option<&ToolCatalogEntry> {
        let id = format!("mcp:{server}:{tool_name}");
        self.get(&id).filter(|e| e.source == ToolSource::Mcp)
    }

    /// The MCP entries, in catalog order.
    pub fn mcp_entries(&self) -> impl Iterator<Item = &ToolCatalogEntry> + '_ {
        self.entries.iter().filter(|e| e.source == ToolSource::Mcp)
    }

    /// The guest-visible entry with this id: what `tools.call`, `tools.callValue` and
    /// `tools.describe` accept. MCP ids and unknown ids are errors for the guest.
    pub fn guest_entry(&self, id: &str) -> Result<&ToolCatalogEntry, CatalogError> {
        match self.get(id) {
            Some(entry) if entry.source == ToolSource::Mcp => Err(CatalogError::McpTool { id: shorten(id) }),
            Some(entry) => Ok(entry),
            None => Err(CatalogError::UnknownTool { id: shorten(id), suggestions: self.closest_ids(id, 3) }),
        }
    }

    /// The spec of the guest-visible entry with this id, in one lookup: what `tools.call` and
    /// `tools.callValue` run. Errors as [`Catalog::guest_entry`].
    pub fn guest_spec(&self, id: &str) -> Result<&ToolSpec, CatalogError> {
        match self.by_id.get(id) {
            Some(&i) if self.entries[i].source == ToolSource::Mcp => {
                Err(CatalogError::McpTool { id: shorten(id) })
            }
            Some(&i) => Ok(&self.specs[i]),
            None => Err(CatalogError::UnknownTool { id: shorten(id), suggestions: self.closest_ids(id, 3) }),
        }
    }

    /// `tools.describe(id)`: the guest-visible entry with its full schemas.
    pub fn describe(&self, id: &str) -> Result<ToolCatalogEntryWithSchema, CatalogError> {
        let entry = self.guest_entry(id)?;
        let spec = &self.specs[self.by_id[&entry.id]];
        Ok(ToolCatalogEntryWithSchema::new(
            entry.clone(),
            Value::clone(&spec.parameters),
            spec.output_schema.as_deref().cloned(),
        ))
    }

    /// `tools.search(query, { limit })` with an already-resolved limit: guest-visible entries,
    /// best first, ties in catalog order. See [`crate::search`] for the ranking model.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&ToolCatalogEntry> {
        self.search_hits(query, limit).into_iter().map(|hit| hit.entry).collect()
    }

    /// [`Catalog::search`] with each hit's `score` and `match`: what the guest receives. Never
    /// empty for a non-empty query and catalog: `min(limit, guest entries)` hits.
    pub fn search_hits(&self, query: &str, limit: usize) -> Vec<SearchHit<'_>> {
        self.search_hits_in(query, limit, &[])
    }

    /// [`Catalog::search_hits`] over the entries of some owners only: `owners` are
    /// [`ToolSpec::owner`] values (`core`, a plugin id, a client app id); every owner when it is
    /// empty. The ranking is the whole index's, so an entry ranks as it does unscoped, among fewer
    /// others. Never empty for a non-empty query when a named owner has guest entries.
    pub fn search_hits_in(&self, query: &str, limit: usize, owners: &[&str]) -> Vec<SearchHit<'_>> {
        let index = self.search.get_or_init(|| self.build_index(&self.guest));
        self.scoped_hits(index, &self.guest, query, limit, owners)
    }

    /// The gateway's `API.search(query, { limit })`: the **MCP** entries, ranked with the same
    /// engine. A separate entry point: MCP entries never appear in [`Catalog::search`] or
    /// `ALL_TOOLS`.
    pub fn search_mcp(&self, query: &str, limit: usize) -> Vec<SearchHit<'_>> {
        self.search_mcp_in(query, limit, &[])
    }

    /// [`Catalog::search_mcp`] over the tools of some servers only: `servers` are exact server
    /// names (each MCP tool's [`ToolSpec::owner`]); every server when it is empty. The ranking is
    /// the whole MCP index's, so a tool ranks as it does unscoped, among fewer others. Never empty
    /// for a non-empty query when a named server has tools: `min(limit, their tools)` hits.
    pub fn search_mcp_in(&self, query: &str, limit: usize, servers: &[&str]) -> Vec<SearchHit<'_>> {
        let index = self.mcp_search.get_or_init(|| self.build_index(&self.mcp));
        self.scoped_hits(index, &self.mcp, query, limit, servers)
    }

    /// The hits of `index` (built over `set`), among the entries of `owners` when it names any.
    fn scoped_hits(
        &self,
        index: &SearchIndex,
        set: &[usize],
        query: &str,
        limit: usize,
        owners: &[&str],
    ) -> Vec<SearchHit<'_>> {
        let ranked = if owners.is_empty() {
            index.search(query, limit)
        } else {
            let scope: Vec<bool> =
                set.iter().map(|&i| owners.contains(&self.specs[i].owner.as_str())).collect();
            index.search_in(query, limit, Some(&scope))
        };
        ranked
            .into_iter()
            .map(|r| SearchHit { entry: &self.entries[set[r.doc]], score: r.score, matched: r.matched })
            .collect()
    }

    fn build_index(&self, set: &[usize]) -> SearchIndex {
        let docs: Vec<DocText<'_>> = set
            .iter()
            .map(|&i| {
                let (entry, spec) = (&self.entries[i], &self.specs[i]);
                let (params, param_descriptions) = parameter_texts(&spec.parameters);
                DocText {
                    name: &entry.name,
                    label: entry.label.as_deref(),
                    owner: entry.source_name.as_deref(),
                    description: &entry.description,
                    params,
                    param_descriptions,
                    id: &entry.id,
                }
            })
            .collect();
        SearchIndex::build(&docs)
    }

    /// `tools.search` with the guest's raw `limit` (absent -> `searchDefaultLimit`, clamped to
    /// `[1, maxSearchLimit]`).
    pub fn search_with_config(
        &self,
        query: &str,
        requested_limit: Option<f64>,
        config: &CodeModeConfig,
    ) -> Vec<SearchHit<'_>> {
        self.search_hits(query, config.search_limit(requested_limit))
    }

    /// Installed convenience names: `(safe name, id)`, sorted by safe name. See [`crate::safe_tool_name`].
    pub fn convenience_names(&self) -> &[(String, String)] {
        &self.safe_names
    }

    /// The convenience name of the entry with this id, if it has one.
    pub fn convenience_name(&self, id: &str) -> Option<&str> {
        self.safe_name_by_id.get(id).map(|&i| self.safe_names[i].0.as_str())
    }

    /// The quick index for the `exec` description. See [`crate::QuickIndexOptions`].
    pub fn quick_index(&self, options: &QuickIndexOptions) -> String {
        let entries: Vec<(&ToolCatalogEntry, &Value)> = self
            .entries
            .iter()
            .zip(&self.specs)
            .filter(|(e, _)| e.source == ToolSource::Openclaw)
            .map(|(e, spec)| (e, &*spec.parameters))
            .collect();
        render_quick_index(&entries, options)
    }

    /// Entry counts by source.
    pub fn counts(&self) -> SourceCounts {
        self.counts
    }

    /// The direct-only tools that were left out of the catalog (they stay on the model surface),
    /// in catalog order.
    pub fn direct_only_tools(&self) -> &[ToolSpec] {
        &self.direct_only
    }

    /// What the build decided: exclusions, duplicate ids, refused and ambiguous safe names.
    pub fn diagnostics(&self) -> &[CatalogDiagnostic] {
        &self.diagnostics
    }

    /// Up to `n` guest-visible ids closest to `id`, best first.
    fn closest_ids(&self, id: &str, n: usize) -> Vec<String> {
        let wanted: String = id.chars().take(200).collect::<String>().to_ascii_lowercase();
        let wanted_name = wanted.rsplit(':').next().unwrap_or(&wanted).to_owned();
        let mut scored: Vec<(usize, usize)> = self
            .guest
            .iter()
            .map(|&i| {
                let entry = &self.entries[i];
                let by_id = edit_distance(&wanted, &entry.id.to_ascii_lowercase());
                let by_name = edit_distance(&wanted_name, &entry.name.to_ascii_lowercase());
                (by_id.min(by_name), i)
            })
            .collect();
        scored.sort();
        let limit = (wanted_name.chars().count() / 2).max(3);
        let mut out: Vec<String> = scored
            .iter()
            .filter(|(d, _)| *d <= limit)
            .take(n)
            .map(|&(_, i)| self.entries[i].id.clone())
            .collect();
        if out.is_empty() {
            // Nothing close by spelling: fall back to the search ranking.
            out = self
                .search_hits(&wanted, n)
                .into_iter()
                .filter(|hit| hit.score > 0.0)
                .map(|hit| hit.entry.id.clone())
                .collect();
        }
        out
    }
}

fn entry_for(spec: &ToolSpec, id: String, options: &CatalogOptions) -> ToolCatalogEntry {
    let trusted = spec.origin.is_trusted();
    let input =
        if trusted { input_hint(&spec.parameters, &options.input_hint) } else { UNKNOWN_INPUT.to_owned() };
    let output = if trusted {
        spec.output_schema.as_ref().and_then(|s| output_hint(s, &options.output_hint))
    } else {
        None
    };
    ToolCatalogEntry::new(id, spec.name.clone(), spec.description.clone(), spec.source(), input)
        .with_label(spec.label.clone())
        .with_source_name((spec.origin != ToolOrigin::Core).then(|| spec.owner.clone()))
        .with_output(output)
}

/// Top-level property names of an input schema, and their descriptions and enumerated string
/// values (for search).
fn parameter_texts(schema: &Value) -> (Vec<&str>, Vec<&str>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return (Vec::new(), Vec::new());
    };
    // Paging controls (`page`, `perPage`, `cursor`) say nothing about what a tool does, and
    // `page` would match a question about wiki pages in every paged list.
    let props = || props.iter().filter(|(name, _)| !is_paging(name)).take(64);
    let names = props().map(|(name, _)| name.as_str()).collect();
    let mut descriptions = Vec::new();
    for (_, p) in props() {
        descriptions.extend(p.get("description").and_then(Value::as_str));
        // Enumerated values say what a tool can do (`event: "APPROVE" | "COMMENT"`).
        let values = p.get("enum").or_else(|| p.get("items").and_then(|i| i.get("enum")));
        descriptions.extend(
            values.and_then(Value::as_array).into_iter().flatten().take(20).filter_map(Value::as_str),
        );
    }
    (names, descriptions)
}

/// Whether a parameter name is a paging control: `page`, `perPage`, `page_size`, `pageToken`,
/// `cursor`, `offset`, `startAt`, `maxResults`, `after`, `before`.
fn is_paging(name: &str) -> bool {
    let folded: String =
        name.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect();
    matches!(
        folded.as_str(),
        "page"
            | "perpage"
            | "pagesize"
            | "pagetoken"
            | "nextpagetoken"
            | "pagenumber"
            | "cursor"
            | "offset"
            | "startat"
            | "maxresults"
            | "after"
            | "before"
    )
}

/// At most 200 characters of a guest-supplied id, for error messages.
pub(crate) fn shorten(id: &str) -> String {
    codemode_core::text::char_prefix(id, 200)
}
