//! Building a [`CodeMode`]: the catalog, the MCP API, the guest boot context and the sandbox whose
//! base image holds this catalog's guest API.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};

use codemode_bridge::{BootContext, PRELUDE};
use codemode_catalog::{Catalog, CatalogOptions, NamespaceRegistry};
use codemode_core::{CodeModeConfig, ToolSpec};
use codemode_mcp::{McpApi, McpApiOptions, McpServer, McpTool};
use codemode_sandbox::{Sandbox, SandboxConfig, SandboxError};

use super::{CodeMode, Inner};
use crate::admission::Admission;
use crate::error::BuildError;
use crate::host::{EventSink, ToolHost};
use crate::schema::Validators;
use crate::store::envelope::{self, StateKey};
use crate::store::local::RunStore as LocalRuns;
use crate::store::shared::Shared;
use crate::surface::{EXEC_TOOL, WAIT_TOOL};
use crate::vm::GuestThread;

/// Creates the sandbox of a [`CodeMode`] from the Code Mode config and the bridge prelude.
pub type SandboxFactory = Arc<dyn Fn(&CodeModeConfig, &str) -> Result<Sandbox, SandboxError> + Send + Sync>;

/// Builds a [`CodeMode`]; see [`CodeMode::builder`].
#[must_use]
pub struct CodeModeBuilder {
    config: CodeModeConfig,
    tools: Vec<ToolSpec>,
    host: Option<Arc<dyn ToolHost>>,
    events: Option<Arc<dyn EventSink>>,
    namespaces: NamespaceRegistry,
    mcp_servers: Vec<McpServer>,
    sandbox_factory: Option<SandboxFactory>,
    module_cache: Option<PathBuf>,
    host_source: Option<String>,
    admission: Option<Admission>,
    guest_thread: GuestThread,
    run_store: Option<(Arc<dyn crate::store::RunStore>, StateKey)>,
}

impl CodeModeBuilder {
    /// Keeps suspended runs in `store` (shared with other runtimes and processes) instead of this
    /// runtime's own in-process map, sealed with `key` (see [`crate::store`]). Default: none.
    pub fn run_store(mut self, store: Arc<dyn crate::store::RunStore>, key: StateKey) -> Self {
        self.run_store = Some((store, key));
        self
    }

    /// The budget of VMs and guest memory this runtime's `exec` and `wait` calls draw from (see
    /// [`Admission`]). Default: [`Admission::global`], shared by every runtime of the process.
    pub fn admission(mut self, admission: Admission) -> Self {
        self.admission = Some(admission);
        self
    }

    /// Which thread runs guest code (see [`GuestThread`]). Default: [`GuestThread::Dedicated`].
    pub fn guest_thread(mut self, thread: GuestThread) -> Self {
        self.guest_thread = thread;
        self
    }

    /// The effective tools of the run, after the host's policy. Default: none.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolSpec>) -> Self {
        self.tools = tools.into_iter().collect();
        self
    }

    /// Executes nested calls. Required when Code Mode is enabled.
    pub fn host(mut self, host: Arc<dyn ToolHost>) -> Self {
        self.host = Some(host);
        self
    }

    /// Receives nested-call events. Default: none (like [`crate::NoEvents`], and the events are not built).
    pub fn events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = Some(events);
        self
    }

    /// The namespace registry. Default: [`NamespaceRegistry::global`].
    pub fn namespaces(mut self, registry: NamespaceRegistry) -> Self {
        self.namespaces = registry;
        self
    }

    /// Metadata of the MCP servers behind the run's MCP tools: title, instructions and whether they
    /// serve resources and prompts. Their tools come from [`CodeModeBuilder::tools`] (MCP origin, owner
    /// = server name); the `tools` field of these values is ignored. Default: none.
    pub fn mcp_servers(mut self, servers: impl IntoIterator<Item = McpServer>) -> Self {
        self.mcp_servers = servers.into_iter().collect();
        self
    }

    /// Keeps the compiled guest module in `dir` (created if missing) so the next process loads it
    /// instead of compiling (about a second of CPU). Corrupt or foreign entries are recompiled; a
    /// directory that cannot be used only costs the compile. Ignored with a
    /// [`CodeModeBuilder::sandbox_factory`]. Default: none (compile once per process).
    pub fn module_cache(mut self, dir: Option<PathBuf>) -> Self {
        self.module_cache = dir;
        self
    }

    /// Names the `<source>` of core and plugin tool ids: `host` gives `host:core:message` instead
    /// of the spec's `openclaw:core:message`. MCP (`mcp:`) and client (`client:`) ids, the entries'
    /// `source` field and telemetry keys are unchanged. The name must pass
    /// [`codemode_core::is_valid_host_source`] (else [`CodeModeBuilder::build`] fails). Default:
    /// `openclaw`, for spec conformance.
    pub fn host_source(mut self, name: impl Into<String>) -> Self {
        self.host_source = Some(name.into());
        self
    }

    /// Replaces how the sandbox is created (tests, custom sandbox settings). Default: one sandbox per
    /// `memoryLimitBytes` and module cache per process, with the bridge prelude.
    pub fn sandbox_factory(mut self, factory: SandboxFactory) -> Self {
        self.sandbox_factory = Some(factory);
        self
    }

    /// Builds the catalog, the MCP API and the guest boot context, and obtains the sandbox. A sandbox
    /// that cannot be created does not fail the build: every `exec` then fails with
    /// `runtime_unavailable` (fail closed).
    pub fn build(self) -> Result<CodeMode, BuildError> {
        let config = self.config;
        if config.is_enabled() && self.host.is_none() {
            return Err(BuildError::MissingHost);
        }
        let mut catalog_options = CatalogOptions::default();
        if let Some(name) = self.host_source {
            if !codemode_core::is_valid_host_source(&name) {
                return Err(BuildError::InvalidHostSource { name });
            }
            catalog_options.host_source = name;
        }
        let catalog = Catalog::build(self.tools.clone(), &catalog_options);
        let mcp = build_mcp(&catalog, &self.mcp_servers);
        let mut boot = BootContext::new();
        boot.all_tools = catalog.guest_entries().cloned().collect();
        boot.convenience = catalog.convenience_names().to_vec();
        boot.mcp = mcp.as_ref().map(McpApi::guest_table);
        boot.max_result_chars = Some(config.max_output_bytes());
        // The files' contents travel as bulk text, not as string literals the guest would parse.
        let (api_script, api_texts) =
            boot.api_script_and_texts().map_err(|e| BuildError::BootContext(e.to_string()))?;
        let api_texts: Vec<&str> = api_texts.iter().map(String::as_str).collect();
        let sandbox = if config.is_enabled() {
            match &self.sandbox_factory {
                Some(factory) => factory(&config, PRELUDE),
                None => shared_sandbox(&config, self.module_cache.as_deref()),
            }
            // The guest API of this catalog is built once, into this runtime's base image: a run
            // only adds its namespaces. (Booting it per run cost ~7 ms with 677 MCP tools.)
            .and_then(|sandbox| sandbox.extend_with_texts(&api_script, &api_texts, "codemode-boot.js"))
            .map_err(|e| e.to_string())
        } else {
            Err("code mode is disabled".to_owned())
        };
        if let Err(reason) = &sandbox
            && config.is_enabled()
        {
            tracing::error!(%reason, "code mode sandbox unavailable; every exec will fail closed");
        }
        // Most runs see no namespace: their (empty) namespaces are booted once, into a second base
        // image that shares all other pages with the first. Evaluating that boot script cost a
        // run ~20 us, a third of a trivial exec.
        let without_namespaces = sandbox.as_ref().ok().and_then(|sandbox| {
            let script = BootContext::new().namespaces_script();
            sandbox
                .extend(&script, "codemode-namespaces.js")
                .inspect_err(
                    |e| tracing::warn!(error = %e, "runs will boot their empty namespaces themselves"),
                )
                .ok()
        });
        let mut visible_tools = vec![EXEC_TOOL.to_owned(), WAIT_TOOL.to_owned()];
        visible_tools.extend(catalog.direct_only_tools().iter().map(|t| t.name.clone()));
        let salt = RandomState::new().hash_one(std::process::id());
        let shared = match (self.run_store, &sandbox) {
            (Some((store, key)), Ok(sandbox)) => {
                let (module_hash, base_id) = sandbox.identity();
                let module = envelope::identity(&[b"guest-module", &module_hash.to_le_bytes()]);
                let tools = serde_json::to_vec(&self.tools).unwrap_or_default();
                let servers = serde_json::to_vec(&self.mcp_servers).unwrap_or_default();
                let config_text = format!("{config:?}");
                let catalog = envelope::identity(&[
                    b"catalog",
                    &base_id.to_le_bytes(),
                    &tools,
                    &servers,
                    config_text.as_bytes(),
                ]);
                Some(Arc::new(Shared::new(store, key, module, catalog)))
            }
            _ => None,
        };
        Ok(CodeMode {
            inner: Arc::new(Inner {
                config,
                tools: self.tools,
                catalog,
                host: self.host,
                events: self.events,
                namespaces: self.namespaces,
                mcp,
                sandbox,
                without_namespaces,
                validators: Validators::default(),
                store: LocalRuns::default(),
                shared,
                visible_tools,
                next_run: AtomicU64::new(1),
                salt,
                admission: self.admission.unwrap_or_else(|| Admission::global().clone()),
                guest_thread: self.guest_thread,
            }),
        })
    }
}

impl CodeMode {
    /// Starts building a runtime for `config`.
    pub fn builder(config: CodeModeConfig) -> CodeModeBuilder {
        CodeModeBuilder {
            config,
            tools: Vec::new(),
            host: None,
            events: None,
            namespaces: NamespaceRegistry::global().clone(),
            mcp_servers: Vec::new(),
            sandbox_factory: None,
            module_cache: None,
            host_source: None,
            admission: None,
            guest_thread: GuestThread::default(),
            run_store: None,
        }
    }
}

fn shared_sandbox(config: &CodeModeConfig, module_cache: Option<&Path>) -> Result<Sandbox, SandboxError> {
    type Key = (u64, Option<PathBuf>);
    static SANDBOXES: OnceLock<Mutex<HashMap<Key, Sandbox>>> = OnceLock::new();
    let cache = SANDBOXES.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    let key = (config.memory_limit_bytes(), module_cache.map(Path::to_path_buf));
    if let Some(sandbox) = cache.get(&key) {
        return Ok(sandbox.clone());
    }
    let mut sandbox_config = SandboxConfig::default();
    sandbox_config.memory_limit_bytes = config.memory_limit_bytes();
    sandbox_config.cache_dir = key.1.clone();
    let sandbox = Sandbox::new(sandbox_config, PRELUDE)?;
    cache.insert(key, sandbox.clone());
    Ok(sandbox)
}

/// The MCP API of the catalog's MCP entries (grouped by server, in catalog order), plus listed
/// servers that serve resources or prompts without tools. `None` when no MCP server is visible.
fn build_mcp(catalog: &Catalog, servers: &[McpServer]) -> Option<McpApi> {
    let mut order: Vec<String> = Vec::new();
    let mut tools: HashMap<String, Vec<McpTool>> = HashMap::new();
    for entry in catalog.mcp_entries() {
        let Some(spec) = catalog.spec(&entry.id) else { continue };
        let mut tool = McpTool::new(spec.name.clone())
            .with_description(spec.description.clone())
            .with_input_schema(spec.parameters.clone());
        if let Some(label) = &spec.label {
            tool = tool.with_title(label.clone());
        }
        if let Some(output) = &spec.output_schema {
            tool = tool.with_output_schema(output.clone());
        }
        if !tools.contains_key(&spec.owner) {
            order.push(spec.owner.clone());
        }
        tools.entry(spec.owner.clone()).or_default().push(tool);
    }
    for server in servers {
        if (server.has_resources || server.has_prompts) && !order.contains(&server.name) {
            order.push(server.name.clone());
        }
    }
    if order.is_empty() {
        return None;
    }
    let by_name: HashMap<&str, &McpServer> = servers.iter().rev().map(|s| (s.name.as_str(), s)).collect();
    let list: Vec<Arc<McpServer>> = order
        .iter()
        .map(|name| {
            let mut server = McpServer::new(name.clone(), tools.remove(name).unwrap_or_default());
            if let Some(meta) = by_name.get(name.as_str()) {
                server.title = meta.title.clone();
                server.instructions = meta.instructions.clone();
                server.has_resources = meta.has_resources;
                server.has_prompts = meta.has_prompts;
            }
            Arc::new(server)
        })
        .collect();
    // The tools' schemas are shared with the catalog's specs (`Arc`), and the servers move into
    // the API: nothing here copies a schema.
    Some(McpApi::build_shared(&list, &McpApiOptions::default()))
}
