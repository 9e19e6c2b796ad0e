//! `codemode`: Code Mode from the command line. See `codemode --help`.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use codemode::{AbortSignal, RunScope};
use codemode_cli::engine::{Engine, EngineOptions, default_module_cache, load_config};
use codemode_cli::fixture::FixtureCatalog;
use codemode_cli::serve::{Gateway, GatewayConfig};
use codemode_cli::session::run_session;
use serde_json::json;

#[derive(Parser)]
#[command(
    name = "codemode",
    version,
    about = "Code Mode: exec/wait over a hidden tool catalog, run in a QuickJS sandbox"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Keep the compiled sandbox module in DIR (saves about a second per process start).
    /// Default: $CODEMODE_MODULE_CACHE, else $XDG_CACHE_HOME/codemode, else ~/.cache/codemode.
    #[arg(long, global = true, value_name = "DIR")]
    module_cache: Option<PathBuf>,
    /// Compile the sandbox module in memory only (no cache directory).
    #[arg(long, global = true, conflicts_with = "module_cache")]
    no_module_cache: bool,
}

#[derive(Subcommand)]
enum Command {
    /// A guided tour on an embedded demo catalog.
    Demo,
    /// Runs one cell and prints the result JSON.
    Exec {
        /// Fixture catalog file (docs/fixture-catalog.md). Default: an empty catalog.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Code Mode config (`tools.codeMode` shape). Default: enabled with defaults.
        #[arg(long)]
        config: Option<PathBuf>,
        /// `javascript` (default) or `typescript`.
        #[arg(long)]
        language: Option<String>,
        /// The source part of host tool ids (`host` gives `host:core:message`). Default: `openclaw`.
        #[arg(long, value_name = "NAME")]
        host_source: Option<String>,
        /// The code, or `-` to read it from stdin.
        code: String,
    },
    /// The JSON-lines protocol on stdin/stdout (docs/session-protocol.md).
    Session {
        /// Fixture catalog file. Default: an empty catalog.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Code Mode config. Default: enabled with defaults.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The source part of host tool ids (`host` gives `host:core:message`). Default: `openclaw`.
        #[arg(long, value_name = "NAME")]
        host_source: Option<String>,
    },
    /// An MCP server on stdio (or Streamable HTTP with --http) in front of upstream MCP servers
    /// (docs/serve.md).
    Serve {
        /// Gateway config: `{"mcpServers": {...}, "codeMode": {...}, "catalog": "fixture.json"?}`.
        #[arg(long)]
        config: PathBuf,
        /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio: `127.0.0.1:8787`,
        /// `[::1]:8787`, or a port alone (on 127.0.0.1). Another address only when named here.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Require `Authorization: Bearer <token>` with the token in environment variable VAR.
        #[arg(long, value_name = "VAR", requires = "http")]
        auth_token_env: Option<String>,
        /// A browser Origin to accept besides the loopback ones, e.g. `https://app.example.com:443` or
        /// `http://10.0.0.5:*` (repeatable). Requests with any other Origin get 403.
        #[arg(long, value_name = "ORIGIN", requires = "http")]
        allowed_origin: Vec<String>,
        /// A Host header value to accept besides the loopback names, e.g. `mcp.example.com` or
        /// `mcp.example.com:8787` (repeatable; on a non-loopback address, only these are accepted).
        #[arg(long, value_name = "HOST", requires = "http")]
        allowed_host: Vec<String>,
        /// On SIGTERM/Ctrl-C, how long requests in flight may take to finish.
        #[arg(long, value_name = "MS", default_value_t = 10_000)]
        shutdown_grace_ms: u64,
        /// MCP sessions open at once at most; past it a new session gets 503.
        #[arg(long, value_name = "N", default_value_t = codemode_cli::serve::http::DEFAULT_MAX_SESSIONS)]
        max_sessions: usize,
        /// Keep suspended runs in a shared store instead of this process's memory, so they survive a
        /// restart and any gateway on the same store can continue them: `file://DIR` or
        /// `redis://HOST:PORT/DB` (docs/serve.md, "Running more than one gateway"). Needs
        /// --state-key-env.
        #[arg(long, value_name = "URL", requires = "state_key_env")]
        run_store: Option<String>,
        /// The environment variable holding the key (at least 16 bytes) that seals stored runs; every
        /// gateway sharing a store needs the same key.
        #[arg(long, value_name = "VAR", requires = "run_store")]
        state_key_env: Option<String>,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    init_tracing();
    let cache = match (cli.no_module_cache, cli.module_cache) {
        (true, _) => None,
        (false, Some(dir)) => Some(dir),
        (false, None) => default_module_cache(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Demo => codemode_cli::demo::run(std::io::stdout().is_terminal(), cache).await,
            Command::Exec { catalog, config, language, host_source, code } => {
                let (engine, gateway) = start(catalog, config, host_source, cache).await?;
                let result = exec(&engine, language, code).await;
                stop(gateway).await;
                result
            }
            Command::Session { catalog, config, host_source } => {
                let (engine, gateway) = start(catalog, config, host_source, cache).await?;
                let result = session(engine).await;
                stop(gateway).await;
                result
            }
            Command::Serve {
                config,
                http,
                auth_token_env,
                allowed_origin,
                allowed_host,
                shutdown_grace_ms,
                max_sessions,
                run_store,
                state_key_env,
            } => {
                let store = match (run_store, state_key_env) {
                    (Some(address), Some(var)) => Some(open_store(&address, &var).await?),
                    _ => None,
                };
                match http {
                    None => codemode_cli::serve::run(&config, cache, store).await,
                    Some(listen) => {
                        let mut options = codemode_cli::serve::HttpOptions::new(listen);
                        options.auth_token_env = auth_token_env;
                        options.allowed_origins = allowed_origin;
                        options.allowed_hosts = allowed_host;
                        options.shutdown_grace = std::time::Duration::from_millis(shutdown_grace_ms);
                        options.max_sessions = max_sessions;
                        codemode_cli::serve::run_http(&config, cache, options, store).await
                    }
                }
            }
        }
    });
    // Do not wait for a blocking stdin read that may never return (serve stopped by a signal).
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

/// The shared run store `--run-store` names, sealed with the key in `$VAR`.
async fn open_store(address: &str, var: &str) -> Result<codemode_cli::engine::RunStoreChoice> {
    if address.starts_with("memory:") {
        anyhow::bail!(
            "--run-store {address}: in-process memory is the default; name file://DIR or redis://HOST:PORT/DB"
        );
    }
    let key = std::env::var_os(var).filter(|v| !v.is_empty()).with_context(|| {
        format!("--state-key-env {var}: the environment variable {var} is not set (or empty)")
    })?;
    let key = codemode::store::StateKey::new(key.into_encoded_bytes())
        .map_err(|e| anyhow::anyhow!("--state-key-env {var}: {e}"))?;
    let store =
        codemode::store::open_run_store(address).await.map_err(|e| anyhow::anyhow!("--run-store: {e}"))?;
    Ok(codemode_cli::engine::RunStoreChoice { store, key })
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_env("CODEMODE_DEBUG"))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// The engine over the catalog. Command-started MCP servers in the catalog are started (through
/// the same gateway `codemode serve` uses) and stopped by [`stop`]; one that cannot start is an
/// error naming it.
async fn start(
    catalog: Option<PathBuf>,
    config: Option<PathBuf>,
    host_source: Option<String>,
    cache: Option<PathBuf>,
) -> Result<(Arc<Engine>, Option<Gateway>)> {
    let config = load_config(config.as_deref())?;
    let mut catalog = match catalog {
        Some(path) => FixtureCatalog::load(&path)?,
        None => FixtureCatalog::default(),
    };
    if let Some(name) = host_source {
        catalog = catalog.with_host_source(name);
    }
    if catalog.upstream_servers().is_empty() {
        let mut options = EngineOptions::default();
        options.config = config;
        options.catalog = catalog;
        options.module_cache = cache;
        return Ok((Arc::new(Engine::build(options)?), None));
    }
    let mut gateway_config = GatewayConfig::for_catalog(config, catalog);
    gateway_config.module_cache = cache;
    let gateway = Gateway::start(gateway_config)
        .await
        .context("starting the catalog's command MCP servers (\"mcpServers\" entries with \"command\")")?;
    Ok((gateway.engine(), Some(gateway)))
}

async fn stop(gateway: Option<Gateway>) {
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
}

async fn exec(engine: &Engine, language: Option<String>, code: String) -> Result<()> {
    let code = if code == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("reading the cell from stdin")?;
        text
    } else {
        code
    };
    let mut arguments = json!({ "code": code });
    if let Some(language) = language {
        arguments["language"] = json!(language);
    }
    let scope = RunScope::new("cli", "exec").with_call_id("exec-1");
    let result = engine.exec(&scope, &arguments, AbortSignal::new()).await;
    let mut text = serde_json::to_string_pretty(&result)?;
    text.push('\n');
    codemode_cli::write_stdout(&text)?;
    Ok(())
}

async fn session(engine: Arc<Engine>) -> Result<()> {
    let stdin = tokio::io::BufReader::new(tokio::io::stdin());
    run_session(engine, stdin, tokio::io::stdout()).await?;
    Ok(())
}
