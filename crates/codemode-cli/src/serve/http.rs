//! `codemode serve --http ADDR`: the gateway over MCP Streamable HTTP at `/mcp` (docs/serve.md,
//! "HTTP endpoint").
//!
//! rmcp's [`StreamableHttpService`] (stateful sessions with `Mcp-Session-Id`, its local session
//! manager, Host and Origin checks) runs behind axum, with one middleware in front: the bearer
//! token (`--auth-token-env`) and the count of POST responses still being written (for graceful
//! shutdown). Every MCP session gets its own `SessionHandler` over the one shared [`Gateway`]:
//! one set of upstream connections and catalog, while runs, progress, log level and trajectory
//! messages belong to the session ([`Principal`]) that started them.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
};
// MCP logging is deprecated by SEP-2577, but it is what clients show today (nested-call projection).
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use sha2::{Digest, Sha256};

use super::gateway::Gateway;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// MCP sessions open at once at most by default (each holds its handler and its runs); past it, a
/// new session is refused with 503 until one closes (`DELETE`) or idles out.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// The largest POST body accepted (413 past it): the bound of one message on stdio.
pub const MAX_REQUEST_BYTES: usize = 16 << 20;

/// How long shutdown waits for requests in flight by default.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Hosts a loopback listener answers (`Host` header), any port.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Browser origins a loopback listener accepts besides `--allowed-origin`, any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// `codemode serve --http` options.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// What `--http` names: `HOST:PORT`, `[V6]:PORT`, or a port alone (then on 127.0.0.1).
    pub listen: String,
    /// `--auth-token-env VAR`: requests must carry `Authorization: Bearer <value of VAR>`.
    pub auth_token_env: Option<String>,
    /// `--allowed-origin`: browser origins accepted besides the loopback ones (loopback listener)
    /// or at all (other listeners), e.g. `https://app.example.com:443` or `http://10.0.0.5:*`.
    pub allowed_origins: Vec<String>,
    /// `--allowed-host`: `Host` values accepted besides the loopback names (loopback listener) or
    /// at all (other listeners; without any, every `Host` is accepted there).
    pub allowed_hosts: Vec<String>,
    /// How long shutdown waits for requests in flight before it closes them.
    pub shutdown_grace: Duration,
    /// `--max-sessions`: MCP sessions open at once at most.
    pub max_sessions: usize,
    /// The gateway keeps runs in a shared store (`--run-store`): runs then belong to the
    /// authenticated client, not to an MCP session, and authentication is required.
    pub shared_runs: bool,
}

impl HttpOptions {
    /// Options for `--http listen` with everything else at its default.
    pub fn new(listen: impl Into<String>) -> HttpOptions {
        HttpOptions {
            listen: listen.into(),
            auth_token_env: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            shared_runs: false,
        }
    }

    /// The address to bind: a port alone means 127.0.0.1, so only an address `--http` names
    /// explicitly is ever other than loopback.
    pub fn bind_address(&self) -> String {
        match self.listen.trim().parse::<u16>() {
            Ok(port) => format!("127.0.0.1:{port}"),
            Err(_) => self.listen.trim().to_owned(),
        }
    }
}

/// Who a request comes from, as far as owning runs goes. A run can be continued (`wait`) or
/// cancelled only by the principal that started it; another gets the spec's `failed` result
/// (`code mode run belongs to a different session.`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    /// The MCP session (`Mcp-Session-Id`), when the client has one (every client of a protocol
    /// revision with sessions does).
    pub session_id: Option<String>,
    /// The authenticated client, when `--auth-token-env` is set: `token:<VAR>`, the credential
    /// it presented (with a shared run store: `token-sha256:<digest prefix>`, the same on every
    /// replica that accepts the token).
    pub client_id: Option<String>,
    /// Runs belong to the authenticated client rather than to the MCP session (shared run store):
    /// a client reconnecting to another replica continues its runs.
    pub by_client: bool,
}

impl Principal {
    /// The scope key of the principal's runs (their [`codemode::RunScope`] `session_id`): its MCP
    /// session when it has one, else its authenticated client, else the one anonymous scope of
    /// clients without sessions.
    pub fn scope_key(&self) -> String {
        match (&self.session_id, &self.client_id) {
            (_, Some(client)) if self.by_client => format!("http-client:{client}"),
            (Some(session), _) => format!("http-session:{session}"),
            (None, Some(client)) => format!("http-client:{client}"),
            (None, None) => "http-anonymous".to_owned(),
        }
    }
}

/// What every session handler and the middleware share.
struct Shared {
    /// `token:<VAR>` when a token is required.
    client_id: Option<String>,
    /// Runs belong to the client, not the session ([`HttpOptions::shared_runs`]).
    by_client: bool,
    /// SHA-256 of the token, when one is required (compared in constant time).
    token_digest: Option<[u8; 32]>,
    /// Set once shutdown began: new tool calls are refused.
    draining: AtomicBool,
    /// POST responses not yet written out (tool calls in flight among them).
    posts: AtomicUsize,
    /// Signalled whenever `posts` drops.
    post_done: tokio::sync::Notify,
    /// Session handlers alive (sessions, and requests of clients without one while they run).
    handlers: AtomicUsize,
    /// At most this many handlers.
    max_sessions: usize,
}

impl Shared {
    fn too_many(&self) -> String {
        format!(
            "{} MCP sessions are open, the most this gateway keeps; end one (DELETE) or wait until an idle one expires",
            self.max_sessions
        )
    }
}

/// One MCP session's handler over the shared gateway.
#[derive(Clone)]
struct SessionHandler {
    gateway: Gateway,
    shared: Arc<Shared>,
    session: Arc<SessionEnd>,
}

/// Ends the session's scope when the session's handler goes away (the client sent `DELETE`, the
/// session idled out, or the server shut down): its suspended runs are discarded.
struct SessionEnd {
    gateway: Gateway,
    shared: Arc<Shared>,
    key: OnceLock<String>,
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        self.shared.handlers.fetch_sub(1, Ordering::SeqCst);
        if let Some(key) = self.key.get() {
            self.gateway.end_client(key);
        }
    }
}

impl SessionHandler {
    /// The request's principal's scope key, and whether the client has no session (then every
    /// request has its own connection).
    fn client(&self, context: &RequestContext<RoleServer>) -> (String, bool) {
        self.client_of(&context.extensions)
    }

    /// [`SessionHandler::client`] from a message's extensions (the HTTP request's parts).
    fn client_of(&self, extensions: &rmcp::model::Extensions) -> (String, bool) {
        let session_id = extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let stateless = session_id.is_none();
        let principal = Principal {
            session_id,
            client_id: self.shared.client_id.clone(),
            by_client: self.shared.by_client,
        };
        let key = principal.scope_key();
        if !stateless {
            let known = self.session.key.get_or_init(|| key.clone());
            if *known != key {
                tracing::warn!(known = %known, key = %key, "one MCP session handler saw two session ids");
            }
        }
        (key, stateless)
    }
}

/// Counts a POST response in flight until its body is written out (or dropped).
struct PostGuard(Arc<Shared>);

impl Drop for PostGuard {
    fn drop(&mut self) {
        self.0.posts.fetch_sub(1, Ordering::SeqCst);
        self.0.post_done.notify_one();
    }
}

impl ServerHandler for SessionHandler {
    fn get_info(&self) -> ServerConfig {
        self.gateway.get_info()
    }

    /// The session is a client from now on (it hears `list_changed` before its first request).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let (client, stateless) = self.client_of(&context.extensions);
        if !stateless {
            self.gateway.client_attach(&client, &context.peer);
        }
    }

    #[allow(deprecated)] // SEP-2577: see the import.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let (client, stateless) = self.client(&context);
        self.gateway.client_set_level(&client, &context.peer, stateless, request);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let (client, stateless) = self.client(&context);
        Ok(self.gateway.client_list_tools(&client, &context.peer, stateless))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.gateway.list_resources(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.gateway.read_resource(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.shared.draining.load(Ordering::SeqCst) {
            return Err(McpError::internal_error(
                "the gateway is shutting down; call again once it is back",
                None,
            ));
        }
        let (client, stateless) = self.client(&context);
        self.gateway.client_call_tool(&client, stateless, request, &context).await
    }
}

/// SHA-256 of a secret, so comparing two takes the same time whatever their lengths and contents.
fn digest(secret: &[u8]) -> [u8; 32] {
    Sha256::digest(secret).into()
}

/// Compares two digests in constant time.
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b.iter()) {
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

/// The token from `Authorization: Bearer <token>` (scheme case-insensitive), if the request has one.
fn bearer(request: &Request) -> Option<&[u8]> {
    let value = request.headers().get(http::header::AUTHORIZATION)?.as_bytes();
    let scheme = value.get(..7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then(|| value[7..].trim_ascii())
}

/// In front of the MCP service: the bearer token (401 without it), then counting POST responses
/// until they are written (graceful shutdown waits for them).
async fn front(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if let Some(expected) = &shared.token_digest {
        let presented = bearer(&request).map(digest);
        if !presented.is_some_and(|p| same_digest(&p, expected)) {
            let why =
                if presented.is_some() { "the bearer token is not the right one" } else { "no bearer token" };
            tracing::warn!("refused an HTTP request: {why}");
            return (
                http::StatusCode::UNAUTHORIZED,
                [(http::header::WWW_AUTHENTICATE, "Bearer")],
                "Unauthorized: send the gateway's token as `Authorization: Bearer <token>`",
            )
                .into_response();
        }
    }
    if request.method() == http::Method::DELETE {
        // rmcp answers a session's DELETE with 202; the Python SDK counts only 200 and 204 as
        // "session ended" and warns otherwise. Nothing follows a DELETE, so 204 says it exactly.
        let mut response = next.run(request).await;
        if response.status() == http::StatusCode::ACCEPTED {
            *response.status_mut() = http::StatusCode::NO_CONTENT;
            *response.body_mut() = axum::body::Body::empty();
        }
        return response;
    }
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    // A POST without a session starts one (or is a request of a client without sessions).
    if !request.headers().contains_key("mcp-session-id")
        && shared.handlers.load(Ordering::SeqCst) >= shared.max_sessions
    {
        tracing::warn!("refused a new MCP session: {} are open", shared.max_sessions);
        let body = format!("Service Unavailable: {}", shared.too_many());
        return (http::StatusCode::SERVICE_UNAVAILABLE, body).into_response();
    }
    shared.posts.fetch_add(1, Ordering::SeqCst);
    let guard = PostGuard(shared.clone());
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _counted = &guard;
        chunk
    });
    Response::from_parts(parts, axum::body::Body::from_stream(body))
}

/// `codemode serve --config F --http ADDR`: serve MCP over Streamable HTTP until SIGTERM, SIGINT or
/// Ctrl-C, then finish what is in flight (at most `shutdown_grace`), stop the upstreams and return.
pub(super) async fn run(
    gateway_start: impl Future<Output = Result<Gateway, crate::error::CliError>>,
    options: HttpOptions,
) -> anyhow::Result<()> {
    let (client_id, token_digest) = match &options.auth_token_env {
        Some(var) => {
            let token = std::env::var(var).unwrap_or_default();
            if token.trim().is_empty() {
                anyhow::bail!(
                    "--auth-token-env {var}: the environment variable {var} is not set or empty; set it to the token clients must send as `Authorization: Bearer <token>`"
                );
            }
            let token_digest = digest(token.trim().as_bytes());
            let client_id = if options.shared_runs {
                let prefix: String = token_digest[..16].iter().map(|b| format!("{b:02x}")).collect();
                format!("token-sha256:{prefix}")
            } else {
                format!("token:{var}")
            };
            (Some(client_id), Some(token_digest))
        }
        None if options.shared_runs => anyhow::bail!(
            "--run-store with --http needs --auth-token-env: runs in a shared store belong to the authenticated client, and without authentication any client could continue any run"
        ),
        None => (None, None),
    };
    let address = options.bind_address();
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .map_err(|e| anyhow::anyhow!("--http {}: cannot listen on {address}: {e}", options.listen))?;
    let local: SocketAddr = listener.local_addr()?;
    let loopback = local.ip().is_loopback();
    if !loopback && token_digest.is_none() {
        tracing::warn!(
            "listening on {local}, which is not a loopback address, without --auth-token-env: anyone who can reach it can call every upstream tool"
        );
    }

    let signal = async {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "interrupted",
            _ = super::terminated() => "terminated",
        }
    };
    tokio::pin!(signal);
    let gateway = tokio::select! {
        gateway = gateway_start => gateway?,
        why = &mut signal => {
            tracing::info!("{why} while upstream servers started; they are stopped");
            return Ok(());
        }
    };

    let mut config = StreamableHttpServerConfig::default();
    let hosts: Vec<String> = if loopback {
        LOOPBACK_HOSTS.iter().map(|h| h.to_string()).chain(options.allowed_hosts.iter().cloned()).collect()
    } else {
        options.allowed_hosts.clone()
    };
    config = if hosts.is_empty() { config.disable_allowed_hosts() } else { config.with_allowed_hosts(hosts) };
    let origins: Vec<String> = if loopback {
        LOOPBACK_ORIGINS
            .iter()
            .map(|o| o.to_string())
            .chain(options.allowed_origins.iter().cloned())
            .collect()
    } else {
        options.allowed_origins.clone()
    };
    config = config
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_REQUEST_BYTES);
    let cancel = config.cancellation_token.clone();

    let shared = Arc::new(Shared {
        client_id,
        by_client: options.shared_runs,
        token_digest,
        draining: AtomicBool::new(false),
        posts: AtomicUsize::new(0),
        post_done: tokio::sync::Notify::new(),
        handlers: AtomicUsize::new(0),
        max_sessions: options.max_sessions.max(1),
    });
    let factory = {
        let (gateway, shared) = (gateway.clone(), shared.clone());
        move || {
            if shared.handlers.fetch_add(1, Ordering::SeqCst) >= shared.max_sessions {
                shared.handlers.fetch_sub(1, Ordering::SeqCst);
                return Err(std::io::Error::other(shared.too_many()));
            }
            let session =
                SessionEnd { gateway: gateway.clone(), shared: shared.clone(), key: OnceLock::new() };
            Ok(SessionHandler {
                gateway: gateway.clone(),
                shared: shared.clone(),
                session: Arc::new(session),
            })
        }
    };
    let service = StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
    let app = axum::Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(shared.clone(), front));
    let stop_accepting = Arc::new(tokio::sync::Notify::new());
    let server = {
        let stop_accepting = stop_accepting.clone();
        axum::serve(listener, app).with_graceful_shutdown(async move { stop_accepting.notified().await })
    };
    let mut server = tokio::spawn(server.into_future());
    eprintln!("codemode serve: listening on http://{local}{MCP_PATH}");
    tracing::info!(tools = gateway.engine().tools().len(), "codemode serve: catalog ready");

    let why = tokio::select! {
        why = &mut signal => why,
        result = &mut server => {
            gateway.shutdown().await;
            return match result {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(anyhow::anyhow!("the HTTP listener failed: {e}")),
                Err(e) => Err(anyhow::anyhow!("the HTTP listener failed: {e}")),
            };
        }
    };
    tracing::info!(
        "{why}: no new connections; finishing requests in flight (at most {} ms)",
        options.shutdown_grace.as_millis()
    );
    shared.draining.store(true, Ordering::SeqCst);
    stop_accepting.notify_one();
    let deadline = tokio::time::Instant::now() + options.shutdown_grace;
    let second = async {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => (),
            _ = super::terminated() => (),
        }
    };
    tokio::pin!(second);
    loop {
        let done = shared.post_done.notified();
        let left = shared.posts.load(Ordering::SeqCst);
        if left == 0 {
            break;
        }
        tokio::select! {
            _ = done => {}
            _ = tokio::time::sleep_until(deadline) => {
                tracing::warn!("{left} requests still in flight after {} ms; closing them", options.shutdown_grace.as_millis());
                break;
            }
            _ = &mut second => {
                tracing::warn!("second signal: closing {left} requests in flight now");
                break;
            }
        }
    }
    // Ends the sessions (their suspended runs are discarded) and the standalone SSE streams.
    cancel.cancel();
    if tokio::time::timeout(Duration::from_secs(2), &mut server).await.is_err() {
        server.abort();
    }
    gateway.shutdown().await;
    tracing::info!("codemode serve: upstream servers stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_listens_on_loopback() {
        assert_eq!(HttpOptions::new("8787").bind_address(), "127.0.0.1:8787");
        assert_eq!(HttpOptions::new("0.0.0.0:8787").bind_address(), "0.0.0.0:8787");
        assert_eq!(HttpOptions::new("[::1]:1").bind_address(), "[::1]:1");
    }

    #[test]
    fn principals_own_runs_by_session_then_client() {
        let with = |s: Option<&str>, c: Option<&str>| {
            Principal { session_id: s.map(str::to_owned), client_id: c.map(str::to_owned), by_client: false }
                .scope_key()
        };
        assert_eq!(with(Some("abc"), Some("token:T")), "http-session:abc");
        assert_eq!(with(None, Some("token:T")), "http-client:token:T");
        assert_eq!(with(None, None), "http-anonymous");
        assert_ne!(with(Some("a"), None), with(Some("b"), None));
        // With a shared run store the authenticated client owns its runs in every session.
        let by_client = |s: &str| {
            Principal {
                session_id: Some(s.to_owned()),
                client_id: Some("token-sha256:ab".into()),
                by_client: true,
            }
            .scope_key()
        };
        assert_eq!(by_client("a"), "http-client:token-sha256:ab");
        assert_eq!(by_client("a"), by_client("b"));
    }

    #[test]
    fn tokens_compare_by_digest() {
        assert!(same_digest(&digest(b"secret"), &digest(b"secret")));
        assert!(!same_digest(&digest(b"secret"), &digest(b"secreT")));
        assert!(!same_digest(&digest(b"secret"), &digest(b"secret-and-more")));
    }
}
