//! The legacy HTTP+SSE client transport: GET an event stream whose `endpoint` event names the
//! POST URL; answers arrive as `message` events. Built on reqwest and the `sse-stream` parser as an
//! rmcp [`Transport`]; one event is at most [`MAX_SSE_EVENT_BYTES`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::{Error as SseError, Sse, SseStream};

use super::remote::{chain, header, http_client, http_refusal, redact_url, scrub};
use super::wire;

/// Most bytes of one SSE event read from a legacy SSE server (as rmcp bounds Streamable HTTP).
pub const MAX_SSE_EVENT_BYTES: usize = wire::MAX_MESSAGE_BYTES;

/// How long the legacy SSE stream may take to name its POST endpoint.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

/// A failure of the legacy SSE transport.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseTransportError(String);

/// Reading the event stream failed, or an event grew past [`MAX_SSE_EVENT_BYTES`].
#[derive(Debug, thiserror::Error)]
enum SseReadError {
    #[error("{0}")]
    Body(String),
    #[error("an event is larger than {} MiB", MAX_SSE_EVENT_BYTES >> 20)]
    TooLarge,
}

/// Bytes of the event being read (since the last blank line).
#[derive(Default)]
struct EventSize {
    bytes: usize,
    after_newline: bool,
}

impl EventSize {
    fn add(&mut self, chunk: &[u8]) -> Result<(), SseReadError> {
        for &b in chunk {
            match b {
                b'\r' => {}
                b'\n' if self.after_newline => self.bytes = 0,
                b'\n' => {
                    self.after_newline = true;
                    self.bytes += 1;
                }
                _ => {
                    self.after_newline = false;
                    self.bytes += 1;
                }
            }
            if self.bytes > MAX_SSE_EVENT_BYTES {
                return Err(SseReadError::TooLarge);
            }
        }
        Ok(())
    }
}

/// The legacy HTTP+SSE client transport: one GET event stream for the session; each message is a
/// POST to the URL its `endpoint` event named.
pub(super) struct SseTransport {
    server: String,
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: reqwest::header::HeaderMap,
    events: BoxStream<'static, Result<Sse, SseError>>,
    /// Requests sent and not answered yet (a reply that cannot be used fails its request).
    pending: Arc<Mutex<std::collections::HashSet<rmcp::model::RequestId>>>,
    queued: std::collections::VecDeque<RxJsonRpcMessage<RoleClient>>,
}

impl SseTransport {
    /// Opens the event stream at `url` and waits for its `endpoint` event.
    pub(super) async fn connect(
        server: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<SseTransport, String> {
        let client = http_client()?;
        let full = url;
        let shown = redact_url(url);
        let url = shown.as_str();
        let base = reqwest::Url::parse(full).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        let mut map = reqwest::header::HeaderMap::new();
        for (key, value) in headers {
            let (name, value) = header(key, value)?;
            map.insert(name, value);
        }
        let response = client
            .get(base.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .headers(map.clone())
            .send()
            .await
            .map_err(|e| format!("cannot connect to {url}: {}", scrub(&chain(&e), full)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(http_refusal(url, status));
        }
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        if !is_sse {
            return Err(format!(
                "{url} did not answer with an event stream (text/event-stream); is it the SSE URL (often ending in /sse)?"
            ));
        }
        let mut size = EventSize::default();
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(|e| SseReadError::Body(chain(&e)))?;
            size.add(&chunk)?;
            Ok::<_, SseReadError>(chunk)
        });
        let mut events: BoxStream<'static, Result<Sse, SseError>> =
            SseStream::from_bytes_stream(bytes).boxed();
        let endpoint = tokio::time::timeout(ENDPOINT_TIMEOUT, async {
            while let Some(event) = events.next().await {
                let event = event.map_err(|e| {
                    format!("reading the event stream failed: {}", scrub(&e.to_string(), full))
                })?;
                if event.event.as_deref() == Some("endpoint") {
                    let data = event.data.unwrap_or_default();
                    let endpoint = base
                        .join(data.trim())
                        .map_err(|e| format!("its endpoint {data:?} is not a URL: {e}"))?;
                    if endpoint.origin() != base.origin() {
                        return Err(format!(
                            "its endpoint {} is on another origin than {url}; not sending the headers there",
                            redact_url(endpoint.as_str())
                        ));
                    }
                    return Ok(endpoint);
                }
            }
            Err("the event stream ended before it named the message endpoint".to_owned())
        })
        .await
        .map_err(|_| {
            format!(
                "the event stream did not name its message endpoint within {} s",
                ENDPOINT_TIMEOUT.as_secs()
            )
        })??;
        Ok(SseTransport {
            server: server.to_owned(),
            client,
            endpoint,
            headers: map,
            events,
            pending: Arc::default(),
            queued: Default::default(),
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self.client.post(self.endpoint.clone()).headers(self.headers.clone()).json(&item);
        let pending = self.pending.clone();
        let id = match &item {
            JsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        if let Some(id) = &id {
            pending.lock().unwrap_or_else(|p| p.into_inner()).insert(id.clone());
        }
        let endpoint = self.endpoint.to_string();
        async move {
            let shown = redact_url(&endpoint);
            let failed = match request.send().await {
                Ok(response) if response.status().is_success() => None,
                Ok(response) => Some(http_refusal(&shown, response.status())),
                Err(e) => Some(format!("cannot reach {shown}: {}", scrub(&chain(&e), &endpoint))),
            };
            match failed {
                None => Ok(()),
                Some(why) => {
                    if let Some(id) = id {
                        pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                    }
                    Err(SseTransportError(why))
                }
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Some(message);
            }
            let event = match self.events.next().await? {
                Ok(event) => event,
                Err(e) => {
                    tracing::warn!(server = %self.server, "the SSE event stream failed: {e}");
                    return None;
                }
            };
            if !matches!(event.event.as_deref(), None | Some("message")) {
                continue;
            }
            let Some(data) = event.data else { continue };
            match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data) {
                Ok(message) => {
                    let id = match &message {
                        JsonRpcMessage::Response(r) => Some(r.id.clone()),
                        JsonRpcMessage::Error(e) => e.id.clone(),
                        _ => None,
                    };
                    if let Some(id) = id {
                        self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                    }
                    return Some(message);
                }
                Err(e) => {
                    let envelope = wire::scan_envelope(data.as_bytes());
                    match envelope.id {
                        Some(id)
                            if !envelope.has_method
                                && self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id) =>
                        {
                            tracing::warn!(server = %self.server, "upstream reply could not be used: {e}");
                            self.queued.push_back(wire::failure(
                                "the message is not a valid MCP JSON-RPC message",
                                id,
                            ));
                        }
                        _ => {
                            tracing::debug!(server = %self.server, "ignoring an SSE message that does not parse: {e}")
                        }
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.events = futures::stream::empty().boxed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_event_may_be_as_large_as_the_bound_and_no_larger() {
        let mut size = EventSize::default();
        let line = vec![b'x'; MAX_SSE_EVENT_BYTES];
        assert!(size.add(&line).is_ok(), "exactly the bound");
        assert!(matches!(size.add(b"x"), Err(SseReadError::TooLarge)), "one byte past it");
        // A blank line ends the event: the next one counts from zero, across chunks and CRLF.
        let mut size = EventSize::default();
        size.add(&line[..MAX_SSE_EVENT_BYTES - 1]).unwrap();
        size.add(b"\r\n").unwrap();
        size.add(b"\r\n").unwrap();
        size.add(&line).unwrap();
        assert!(size.add(b"y").is_err());
    }
}
