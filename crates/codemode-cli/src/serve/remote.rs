//! Remote upstreams: Streamable HTTP through rmcp's reqwest client (watched, so the gateway sees a
//! lost connection and a re-initialized session), the HTTP client and headers both remote
//! transports share, and error texts that name no Rust type and leak no credential. The legacy
//! HTTP+SSE transport is in `sse`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use super::config::{RESTART_BACKOFF_FIRST, RESTART_BACKOFF_MAX};
use super::sse::MAX_SSE_EVENT_BYTES;
use super::upstream::Changed;

/// reqwest is built with rustls but without a built-in crypto provider: install ring's, once.
pub(super) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means a provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The HTTP client for remote upstreams: no idle pooling (as rmcp's default client), same-origin
/// 307/308 redirects only (a redirect elsewhere would carry the bearer token to another host).
pub(super) fn http_client() -> Result<reqwest::Client, String> {
    install_crypto_provider();
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin =
            attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        if !same_origin || !keeps_body || attempt.previous().len() > 10 {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .connect_timeout(Duration::from_secs(10))
        .redirect(policy)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {}", chain(&e)))
}

/// An rmcp error as one line without the Rust type names rmcp puts into some of its messages
/// (`Transport [some::Type] error: ...`).
pub(super) fn error_text(error: &(dyn std::error::Error + 'static)) -> String {
    let text = chain(error);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find('[') {
        let Some(len) = rest[start..].find(']') else { break };
        let inside = &rest[start + 1..start + len];
        out.push_str(&rest[..start]);
        if !inside.contains("::") {
            out.push_str(&rest[start..=start + len]);
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out.replace("  ", " ")
}

/// `url` as the gateway shows it (in errors, logs and the status): without user info, query or
/// fragment, which may carry credentials (`?api_key=...`).
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "(an invalid URL)".to_owned(),
    }
}

/// `text` with `url` (as given, and as reqwest prints it) replaced by its redacted form.
pub(super) fn scrub(text: &str, url: &str) -> String {
    let shown = redact_url(url);
    let mut out = text.replace(url, &shown);
    if let Ok(mut parsed) = reqwest::Url::parse(url) {
        out = out.replace(parsed.as_str(), &shown);
        // reqwest prints request URLs without their user info.
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        out = out.replace(parsed.as_str(), &shown);
    }
    out
}

/// An error and its sources as one line (`error sending request: client error (Connect): tcp
/// connect error: Connection refused (os error 111)`), each cause once.
pub(super) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// What the gateway knows about one remote upstream's connection, shared with the HTTP client
/// that watches it.
pub struct RemoteLink {
    pub(super) name: String,
    /// The URL as shown ([`redact_url`]).
    pub(super) url: String,
    /// The URL as configured (only to scrub it out of error texts).
    full_url: String,
    changed: Arc<Changed>,
    /// The first `initialize` went out (any later one re-initializes a lost session).
    initialized: AtomicBool,
    /// Sessions re-initialized after the server lost the old one (it restarted).
    pub(super) reconnects: AtomicU32,
    /// The last connection failure, while the server cannot be reached.
    unreachable: Mutex<Option<String>>,
    /// The last failed request, as a user-facing line (what a failed `initialize` reports).
    last_failure: Mutex<Option<String>>,
    /// Probing an unreachable server: failed probes in a row, when the next is due, whether one
    /// is running.
    probe: Mutex<Probe>,
}

struct Probe {
    failures: u32,
    next: Instant,
    running: bool,
}

impl std::fmt::Debug for RemoteLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLink").field("name", &self.name).finish_non_exhaustive()
    }
}

impl RemoteLink {
    pub(super) fn new(name: &str, url: &str, changed: Arc<Changed>) -> Arc<RemoteLink> {
        Arc::new(RemoteLink {
            name: name.to_owned(),
            url: redact_url(url),
            full_url: url.to_owned(),
            changed,
            initialized: AtomicBool::new(false),
            reconnects: AtomicU32::new(0),
            unreachable: Mutex::new(None),
            last_failure: Mutex::new(None),
            probe: Mutex::new(Probe { failures: 0, next: Instant::now(), running: false }),
        })
    }

    /// A new transport (a restart of the connection): its first `initialize` is not a
    /// re-initialization.
    pub(super) fn new_transport(&self) {
        self.initialized.store(false, Ordering::SeqCst);
    }

    /// Why the server cannot be reached now (None while it answers).
    pub(super) fn unreachable(&self) -> Option<String> {
        self.unreachable.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_unreachable(&self, why: String) {
        let mut slot = self.unreachable.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            // Before the first session, a failure is a start-up failure (reported as such).
            if self.initialized.load(Ordering::SeqCst) {
                tracing::warn!(server = %self.name, "MCP server {:?} cannot be reached at {}: {why}; reconnecting with backoff", self.name, self.url);
            }
            let mut probe = self.probe.lock().unwrap_or_else(|p| p.into_inner());
            probe.failures = 0;
            probe.next = Instant::now() + RESTART_BACKOFF_FIRST;
        }
        *slot = Some(why);
    }

    fn set_reachable(&self) {
        let was = self.unreachable.lock().unwrap_or_else(|p| p.into_inner()).take();
        if was.is_some() {
            tracing::info!(server = %self.name, "MCP server {:?} answers again", self.name);
        }
    }

    /// The last failed request to the server, as one line.
    pub(super) fn last_failure(&self) -> Option<String> {
        self.last_failure.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A request to the server finished.
    fn observe<T>(&self, result: &HttpResult<T>) {
        let Err(error) = result else {
            self.set_reachable();
            return;
        };
        let (why, unreachable) = match error {
            StreamableHttpError::Client(e) if e.is_status() => {
                (e.status().map_or_else(|| chain(e), |status| http_status_text(&self.url, status)), false)
            }
            StreamableHttpError::Client(e) => (chain(e), e.is_connect() || e.is_timeout() || e.is_request()),
            StreamableHttpError::Io(e) => (chain(e), true),
            StreamableHttpError::HttpStatus(e) => (error_text(e), false),
            StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => {
                (http_refusal(&self.url, reqwest::StatusCode::UNAUTHORIZED), false)
            }
            // Expired sessions, unexpected answers: the server is there.
            other => {
                let text = error_text(other);
                // rmcp reports other HTTP refusals as "unexpected server response: HTTP 401 ...".
                let status = text
                    .split("HTTP ")
                    .nth(1)
                    .and_then(|rest| rest.get(..3))
                    .and_then(|code| code.parse::<u16>().ok())
                    .and_then(|code| reqwest::StatusCode::from_u16(code).ok())
                    .filter(|s| s.is_client_error() || s.is_server_error());
                (status.map_or(text, |status| http_refusal(&self.url, status)), false)
            }
        };
        let why = scrub(&why, &self.full_url);
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
        if unreachable {
            self.set_unreachable(why);
        }
    }

    /// An `initialize` was answered: the first one starts the connection, any later one is rmcp
    /// re-initializing a session the server lost; the server's lists are read again (and the
    /// client told through `list_changed`).
    fn initialized(&self) {
        if self.initialized.swap(true, Ordering::SeqCst) {
            let n = self.reconnects.fetch_add(1, Ordering::SeqCst) + 1;
            tracing::info!(server = %self.name, reconnects = n, "MCP server {:?} lost the session (it restarted?); a new session is initialized and its tools are listed again", self.name);
            self.changed.mark(&self.name);
        }
    }

    /// Whether a reconnection probe is due now; if so it is marked running.
    pub(super) fn probe_due(&self) -> bool {
        if self.unreachable().is_none() {
            return false;
        }
        let mut probe = self.probe.lock().unwrap_or_else(|p| p.into_inner());
        if probe.running || Instant::now() < probe.next {
            return false;
        }
        probe.running = true;
        true
    }

    /// A probe finished; a failed one doubles the wait before the next (up to
    /// [`RESTART_BACKOFF_MAX`]).
    pub(super) fn probe_done(&self, ok: bool) {
        let mut probe = self.probe.lock().unwrap_or_else(|p| p.into_inner());
        probe.running = false;
        if ok {
            probe.failures = 0;
        } else {
            probe.failures += 1;
            let wait =
                RESTART_BACKOFF_FIRST.saturating_mul(1 << probe.failures.min(16)).min(RESTART_BACKOFF_MAX);
            probe.next = Instant::now() + wait;
        }
    }
}

/// reqwest under rmcp's Streamable HTTP client, telling the [`RemoteLink`] what it sees.
#[derive(Clone)]
struct WatchedClient {
    inner: reqwest::Client,
    link: Arc<RemoteLink>,
}

type Limits = StreamableHttpResponseLimits;
type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

impl StreamableHttpClient for WatchedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            Limits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let mut limits = Limits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: Limits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let initialize = is_initialize(&message);
        let result = self
            .inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        self.link.observe(&result);
        if initialize && result.is_ok() {
            self.link.initialized();
        }
        result
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_SSE_EVENT_BYTES,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        let result = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        if !matches!(result, Err(StreamableHttpError::ServerDoesNotSupportSse)) {
            self.link.observe(&result);
        }
        result
    }
}

/// Splits `headers` into rmcp's bearer token (`Authorization: Bearer <token>`) and the others.
fn split_headers(
    headers: &BTreeMap<String, String>,
) -> Result<(Option<String>, HashMap<HeaderName, HeaderValue>), String> {
    let mut bearer = None;
    let mut custom = HashMap::new();
    for (key, value) in headers {
        if key.eq_ignore_ascii_case("authorization")
            && let Some(token) = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer "))
        {
            bearer = Some(token.trim().to_owned());
            continue;
        }
        let (name, value) = header(key, value)?;
        custom.insert(name, value);
    }
    Ok((bearer, custom))
}

pub(super) fn header(key: &str, value: &str) -> Result<(HeaderName, HeaderValue), String> {
    let name =
        HeaderName::from_bytes(key.as_bytes()).map_err(|_| format!("header name {key:?} is not valid"))?;
    let value =
        HeaderValue::from_str(value).map_err(|_| format!("the value of header {key:?} is not valid"))?;
    Ok((name, value))
}

/// rmcp's Streamable HTTP client for `url` with `headers` on every request, watched by `link`.
pub(super) fn http_transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    link: Arc<RemoteLink>,
) -> Result<impl Transport<RoleClient> + 'static, String> {
    let (bearer, custom) = split_headers(headers)?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(custom);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    let client = WatchedClient { inner: http_client()?, link };
    Ok(rmcp::transport::StreamableHttpClientTransport::with_client(client, config))
}

/// An HTTP refusal as an error a user can act on.
pub(super) fn http_status_text(url: &str, status: reqwest::StatusCode) -> String {
    http_refusal(url, status)
}

pub(super) fn http_refusal(url: &str, status: reqwest::StatusCode) -> String {
    match status.as_u16() {
        401 | 403 => format!(
            "{url} refused the credentials (HTTP {status}): check the Authorization header (e.g. \"Bearer ${{TOKEN}}\")"
        ),
        404 => format!("{url} was not found (HTTP 404): check the URL"),
        _ => format!("{url} answered HTTP {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_drops_rust_type_names() {
        #[derive(Debug, thiserror::Error)]
        #[error("Send message error Transport [a::b::C<d::E>] error: Client error: refused")]
        struct Rmcp;
        assert_eq!(error_text(&Rmcp), "Send message error Transport error: Client error: refused");
        #[derive(Debug, thiserror::Error)]
        #[error("keeps [brackets] without paths")]
        struct Plain;
        assert_eq!(error_text(&Plain), "keeps [brackets] without paths");
    }
}
