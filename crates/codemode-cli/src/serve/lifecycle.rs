//! The gateway's lifecycle: starting the upstreams and the first catalog, rebuilding the catalog
//! after `list_changed`, and the supervisor restarting crashed upstreams (with back-off).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::*;
use super::gateway::{Gateway, GatewayInner, keep_generations, passthrough};
use super::projection::*;
use super::remote::RemoteLink;
use super::upstream::*;
use crate::engine::{Engine, EngineOptions};
use crate::error::CliError;
use crate::fixture::UpstreamTransport;

impl Gateway {
    /// Starts the upstream servers (in parallel, each within its `startupTimeoutMs`) and builds the
    /// first catalog. An upstream that cannot start, or does not within its time, is logged, left
    /// out and listed as failed in the status (the gateway stays up). Dropping this future stops
    /// every upstream process started so far.
    pub async fn start(config: GatewayConfig) -> Result<Gateway, CliError> {
        let changed = Arc::new(Changed::default());
        let projection = Arc::new(Projection::default());
        for (name, command) in &config.servers {
            for warning in &command.warnings {
                tracing::warn!(server = %name, "{warning}");
            }
        }
        for name in &config.disabled_servers {
            tracing::info!(server = %name, "MCP server {name:?} is disabled; not started");
        }
        let timeouts = config
            .servers
            .iter()
            .filter_map(|(name, c)| c.timeout_ms.map(|ms| (name.clone(), Duration::from_millis(ms))))
            .collect();
        let links: HashMap<String, Arc<RemoteLink>> = config
            .servers
            .iter()
            .filter(|(_, c)| c.transport == UpstreamTransport::Http)
            .map(|(name, c)| {
                (name.clone(), RemoteLink::new(name, c.url.as_deref().unwrap_or_default(), changed.clone()))
            })
            .collect();
        let upstream = Arc::new(UpstreamHost {
            peers: RwLock::default(),
            timeout: config.upstream_timeout,
            timeouts,
            projection: projection.clone(),
            links,
            given_up: RwLock::default(),
        });
        let starts = config.servers.iter().map(|(name, command)| {
            let timeout = command.startup_timeout_ms.map_or(config.startup_timeout, Duration::from_millis);
            let link = upstream.links.get(name).cloned();
            start_upstream(name.clone(), command.clone(), timeout, changed.clone(), projection.clone(), link)
        });
        let started = futures::future::join_all(starts).await;
        let mut upstreams = Vec::new();
        let mut failed = Vec::new();
        for ((name, _), result) in config.servers.iter().zip(started) {
            match result {
                Ok(started) => {
                    upstream
                        .peers
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(name.clone(), started.client.peer().clone());
                    upstreams.push(started);
                }
                Err(error) if config.require_upstreams => {
                    // The upstreams started so far stop when dropped.
                    return Err(CliError::Upstream { server: name.clone(), message: error });
                }
                Err(error) => {
                    tracing::warn!(server = %name, "MCP server {name:?}: {error}; continuing without it");
                    failed.push((name.clone(), error));
                }
            }
        }
        // A list change during start-up is already in the first listing.
        changed.take();
        let gateway = Gateway {
            inner: Arc::new(GatewayInner {
                config,
                upstream,
                upstreams: tokio::sync::Mutex::new(upstreams),
                engines: RwLock::default(),
                run_owner: Mutex::default(),
                projection,
                changed,
                generation: Default::default(),
                failed,
                warnings: Mutex::default(),
                rebuilder: Mutex::default(),
                supervisor: Mutex::default(),
                restarts: Mutex::default(),
                passthrough: RwLock::default(),
            }),
        };
        gateway.rebuild(&BTreeSet::new()).await?;
        let weak = Arc::downgrade(&gateway.inner);
        let rebuilder = tokio::spawn(async move {
            loop {
                let Some(changed) = weak.upgrade().map(|i| i.changed.clone()) else { return };
                changed.settled().await;
                let Some(inner) = weak.upgrade() else { return };
                let servers = changed.take();
                if let Err(e) = (Gateway { inner }).rebuild(&servers).await {
                    tracing::warn!("catalog rebuild failed: {e}");
                }
            }
        });
        *gateway.inner.rebuilder.lock().unwrap_or_else(|p| p.into_inner()) = Some(rebuilder);
        let weak = Arc::downgrade(&gateway.inner);
        let supervisor = tokio::spawn(async move {
            loop {
                tokio::time::sleep(SUPERVISE_EVERY).await;
                let Some(inner) = weak.upgrade() else { return };
                let gateway = Gateway { inner };
                gateway.probe_unreachable();
                gateway.restart_exited().await;
            }
        });
        *gateway.inner.supervisor.lock().unwrap_or_else(|p| p.into_inner()) = Some(supervisor);
        Ok(gateway)
    }

    /// Restarts upstreams whose process exited or whose connection closed, with backoff
    /// ([`RESTART_BACKOFF_FIRST`] doubling up to [`RESTART_BACKOFF_MAX`]); after
    /// [`MAX_RESTARTS`] restarts without [`RESTART_RESET_AFTER`] of uptime in between it gives up.
    /// A restarted server's tools come back through a rebuild (and `list_changed`).
    async fn restart_exited(&self) {
        let inner = &self.inner;
        let (_, exited) = inner.upstream.servers_by_state();
        let now = Instant::now();
        {
            // Servers that stayed up long enough start counting again.
            let (running, _) = inner.upstream.servers_by_state();
            let mut restarts = inner.restarts.lock().unwrap_or_else(|p| p.into_inner());
            for name in running {
                if let Some(r) = restarts.get_mut(&name)
                    && now.duration_since(r.up_since) >= RESTART_RESET_AFTER
                {
                    r.count = 0;
                }
            }
        }
        for name in exited {
            let remote = inner
                .config
                .servers
                .iter()
                .any(|(n, c)| *n == name && c.transport != UpstreamTransport::Stdio);
            let due = {
                let mut restarts = inner.restarts.lock().unwrap_or_else(|p| p.into_inner());
                let r = restarts.entry(name.clone()).or_insert_with(|| Restarts::new(now));
                if r.gave_up || now < r.next_try {
                    false
                } else if r.count >= MAX_RESTARTS && !remote {
                    // A remote server may be down for a while: it is tried for as long as the
                    // gateway runs, at most every RESTART_BACKOFF_MAX. A local one crashing in a
                    // loop is given up on.
                    r.gave_up = true;
                    let why = format!(
                        "it exited {} times in a row (restarted {MAX_RESTARTS} times without staying up {} s); \
                         the gateway stopped restarting it: fix the server, then restart the gateway",
                        MAX_RESTARTS + 1,
                        RESTART_RESET_AFTER.as_secs()
                    );
                    tracing::warn!(server = %name, "MCP server {name:?}: {why}");
                    inner
                        .upstream
                        .given_up
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(name.clone(), why);
                    false
                } else {
                    r.count += 1;
                    r.total += 1;
                    let backoff = RESTART_BACKOFF_FIRST
                        .saturating_mul(1 << (r.count - 1).min(16))
                        .min(RESTART_BACKOFF_MAX);
                    r.next_try = now + backoff;
                    true
                }
            };
            if !due {
                continue;
            }
            let Some((_, command)) = inner.config.servers.iter().find(|(n, _)| *n == name).cloned() else {
                continue;
            };
            let old = {
                let mut upstreams = inner.upstreams.lock().await;
                upstreams.iter().position(|u| u.name == name).map(|i| upstreams.remove(i))
            };
            if let Some(old) = old {
                old.stop().await;
            }
            let timeout =
                command.startup_timeout_ms.map_or(inner.config.startup_timeout, Duration::from_millis);
            tracing::info!(server = %name, "MCP server {name:?} exited; restarting it");
            match start_upstream(
                name.clone(),
                command,
                timeout,
                inner.changed.clone(),
                inner.projection.clone(),
                inner.upstream.links.get(&name).cloned(),
            )
            .await
            {
                Ok(started) => {
                    inner
                        .upstream
                        .peers
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(name.clone(), started.client.peer().clone());
                    let order = |n: &str| inner.config.servers.iter().position(|(s, _)| s == n);
                    let mut upstreams = inner.upstreams.lock().await;
                    upstreams.push(started);
                    upstreams.sort_by_key(|u| order(&u.name));
                    drop(upstreams);
                    if let Some(r) = inner.restarts.lock().unwrap_or_else(|p| p.into_inner()).get_mut(&name) {
                        r.up_since = Instant::now();
                    }
                    inner.changed.mark(&name);
                }
                Err(error) => {
                    tracing::warn!(server = %name, "restarting MCP server {name:?} failed: {error}")
                }
            }
        }
    }

    /// Builds a new catalog generation, listing `changed` servers again (each within its
    /// start-up time; one that fails keeps its previous listing), and tells the client once.
    pub(super) async fn rebuild(&self, changed: &BTreeSet<String>) -> Result<(), CliError> {
        let inner = &self.inner;
        let mut upstreams = inner.upstreams.lock().await;
        for upstream in upstreams.iter_mut().filter(|u| changed.contains(&u.name)) {
            let listing = describe(&upstream.name, upstream.client.peer());
            match tokio::time::timeout(upstream.startup_timeout, listing).await {
                Ok(described) => upstream.described = described,
                Err(_) => tracing::warn!(
                    server = %upstream.name,
                    "listing again after list_changed took over {} ms; keeping the previous listing",
                    upstream.startup_timeout.as_millis()
                ),
            }
        }
        let mut servers = Vec::new();
        let mut tools = Vec::new();
        let mut warnings = Vec::new();
        let mut raw = Vec::new();
        for upstream in upstreams.iter() {
            for def in &upstream.described.raw {
                let Some(name) = def.get("name").and_then(Value::as_str) else { continue };
                let kept = upstream.described.specs.iter().find(|s| s.name == name);
                if kept.is_some_and(|spec| !inner.config.catalog.is_denied(spec)) {
                    raw.push((upstream.name.clone(), name.to_owned(), def.clone()));
                }
            }
            servers.push(upstream.described.server.clone());
            tools.extend(upstream.described.specs.iter().cloned());
            warnings.extend(upstream.described.warnings.iter().map(|w| (upstream.name.clone(), w.clone())));
        }
        drop(upstreams);
        let catalog = &inner.config.catalog;
        let first = inner.generation.load(std::sync::atomic::Ordering::Relaxed) == 0;
        for entry in catalog.unmatched_deny(&tools) {
            let warning = format!("deny entry {entry:?} matches no tool, so it denies nothing");
            if first {
                tracing::warn!("{warning}; deny entries are tool names or catalog ids (mcp:<server>:<tool>)");
            }
            warnings.push(("deny".to_owned(), warning));
        }
        tools.retain(|spec| !catalog.is_denied(spec));
        for server in &mut servers {
            let name = server.name.clone();
            server.tools.retain(|t| !catalog.is_denied(&t.to_tool_spec(&name)));
        }
        let options = EngineOptions {
            config: inner.config.code_mode.clone(),
            catalog: catalog.clone(),
            extra_tools: tools,
            extra_mcp_servers: servers,
            fallback: Some(inner.upstream.clone()),
            events: Some(inner.projection.clone()),
            module_cache: inner.config.module_cache.clone(),
            run_store: inner.config.run_store.clone(),
        };
        let engine = Engine::build(options)?;
        if !inner.config.code_mode.is_enabled() {
            let upstream_names: BTreeSet<&str> = raw.iter().map(|(server, _, _)| server.as_str()).collect();
            let own: Vec<Value> = engine.surface_json()["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| {
                    let spec = engine.tools().iter().find(|t| d["name"] == t.name.as_str());
                    !spec.is_some_and(|t| upstream_names.contains(t.owner.as_str()))
                })
                .cloned()
                .collect();
            *inner.passthrough.write().unwrap_or_else(|p| p.into_inner()) = passthrough(own, raw);
        }
        {
            let mut engines = inner.engines.write().unwrap_or_else(|p| p.into_inner());
            let generation = inner.generation.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            engines.insert(0, Arc::new(engine.with_generation(generation)));
            keep_generations(&mut engines);
        }
        *inner.warnings.lock().unwrap_or_else(|p| p.into_inner()) = warnings;
        if inner.generation.load(std::sync::atomic::Ordering::Relaxed) > 1 {
            // Each client on its own: one that does not read its stream cannot hold the rebuilds.
            for peer in inner.projection.peers() {
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_tool_list_changed()).await;
                });
            }
        }
        Ok(())
    }
}

/// How long a reconnection probe (`ping`) of an unreachable remote server may take.
pub(super) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long telling one client that the tool list changed may take.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the supervisor looks for exited upstreams.
const SUPERVISE_EVERY: Duration = Duration::from_millis(250);

/// Restart bookkeeping of one upstream.
pub(super) struct Restarts {
    /// Restarts since it last stayed up for [`RESTART_RESET_AFTER`].
    count: u32,
    /// Restarts in all.
    pub(super) total: u32,
    next_try: Instant,
    up_since: Instant,
    gave_up: bool,
}

impl Restarts {
    fn new(now: Instant) -> Restarts {
        Restarts { count: 0, total: 0, next_try: now, up_since: now, gave_up: false }
    }
}
