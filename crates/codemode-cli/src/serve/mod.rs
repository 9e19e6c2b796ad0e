//! `codemode serve`: an MCP server on stdio (or Streamable HTTP, [`run_http`]) that puts Code Mode
//! in front of upstream MCP servers (docs/serve.md). Upstream servers are child processes (stdio) or
//! remote servers (Streamable HTTP, legacy HTTP+SSE); their tools, resources and prompts become the
//! hidden catalog; the client sees `exec`, `wait` and direct-only tools.

mod child;
mod config;
mod gateway;
pub mod http;
mod lifecycle;
mod projection;
mod remote;
mod sse;
mod upstream;
pub mod wire;

use std::path::Path;

use rmcp::ServiceExt;

pub use self::http::{HttpOptions, Principal};
pub use config::*;
pub use gateway::Gateway;
pub use upstream::{ProgressRoute, UpstreamHost};

/// The gateway's one resource: its state as JSON ([`Gateway::status`]).
pub const STATUS_URI: &str = "codemode://status";

/// `codemode serve --config F`: serve until stdin closes or a signal arrives, at any moment
/// (also while upstreams start); exits cleanly, stopping every upstream it started.
///
/// With a shared `run_store` (`--run-store`), every client of a stdio gateway is one principal: the
/// local user who starts gateways with that store and state key. Their suspended runs outlive the
/// process, and any stdio gateway started on the same store, key and catalog continues them.
pub async fn run(
    config_path: &Path,
    module_cache: Option<std::path::PathBuf>,
    run_store: Option<crate::engine::RunStoreChoice>,
) -> anyhow::Result<()> {
    let mut config = GatewayConfig::load(config_path)?;
    config.module_cache = module_cache;
    config.run_store = run_store;
    let (transport, mut stdin_closed) = wire::ServerWire::new(tokio::io::stdin(), tokio::io::stdout());
    let signal = async {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "interrupted",
            _ = terminated() => "terminated",
        }
    };
    tokio::pin!(signal);
    let gateway = tokio::select! {
        gateway = Gateway::start(config) => gateway?,
        why = &mut signal => {
            tracing::info!("{why} while upstream servers started; they are stopped");
            return Ok(());
        }
        _ = stdin_closed.wait_for(|closed| *closed) => {
            tracing::info!("stdin closed while upstream servers started; they are stopped");
            return Ok(());
        }
    };
    tracing::info!(tools = gateway.engine().tools().len(), "codemode serve: catalog ready");
    tokio::select! {
        service = gateway.clone().serve(transport) => match service {
            Ok(service) => tokio::select! {
                result = service.waiting() => {
                    if let Err(e) = result {
                        tracing::warn!("the MCP session ended with an error: {e}");
                    }
                }
                why = &mut signal => tracing::info!("{why}"),
            },
            Err(e) => tracing::info!("the client left before the MCP session started: {e}"),
        },
        why = &mut signal => tracing::info!("{why}"),
    }
    gateway.shutdown().await;
    tracing::info!("codemode serve: upstream servers stopped");
    Ok(())
}

/// `codemode serve --config F --http ADDR`: the gateway over MCP Streamable HTTP at `/mcp` until a
/// signal arrives; then requests in flight finish (within the grace period) and every upstream it
/// started is stopped.
pub async fn run_http(
    config_path: &Path,
    module_cache: Option<std::path::PathBuf>,
    mut options: HttpOptions,
    run_store: Option<crate::engine::RunStoreChoice>,
) -> anyhow::Result<()> {
    let mut config = GatewayConfig::load(config_path)?;
    config.module_cache = module_cache;
    options.shared_runs = run_store.is_some();
    config.run_store = run_store;
    self::http::run(Gateway::start(config), options).await
}

/// Resolves on SIGTERM (what MCP clients and process managers send to stop a server).
async fn terminated() {
    #[cfg(unix)]
    if let Ok(mut signal) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        signal.recv().await;
        return;
    }
    std::future::pending::<()>().await
}
