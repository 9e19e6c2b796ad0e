//! [`FixtureHost`]: a [`ToolHost`] that answers nested calls with the fixture catalog's behaviors,
//! parks `manual` calls until [`ManualCalls::resolve`], and routes everything else to an optional
//! fallback host (the upstream MCP servers of `codemode serve`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use codemode::{NestedCall, RunScope, ToolError, ToolHost, ToolOutcome};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::error::CliError;
use crate::fixture::{Behavior, FixtureCatalog, FixtureMcpServer, FixturePrompt, FixtureResource};

/// Which tool a catalog id names, in parts, so clients need not parse ids.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolIdentity {
    /// The id's source: the host source name (`openclaw` by default) for core and plugin tools,
    /// `mcp`, or `client`.
    pub source: String,
    /// `core`, the plugin id, the MCP server name, or the client app id.
    pub owner: String,
    /// The tool's name as its owner knows it (for MCP: the server's own tool name).
    pub tool: String,
    /// The MCP server, for MCP tools.
    pub server: Option<String>,
}

impl ToolIdentity {
    /// The identity of a host (core, plugin or client) tool whose catalog id is `catalog_id`.
    pub fn of_spec(spec: &codemode::ToolSpec, catalog_id: &str) -> ToolIdentity {
        let source = catalog_id.split(':').next().unwrap_or_default().to_owned();
        ToolIdentity { source, owner: spec.owner.clone(), tool: spec.name.clone(), server: None }
    }

    /// The identity of tool `tool` of MCP server `server`.
    pub fn mcp(server: &str, tool: &str) -> ToolIdentity {
        ToolIdentity {
            source: "mcp".to_owned(),
            owner: server.to_owned(),
            tool: tool.to_owned(),
            server: Some(server.to_owned()),
        }
    }

    /// Parses `<source>:<owner>:<tool>` (the tool part may contain `:`); MCP ids get `server`.
    pub fn from_catalog_id(id: &str) -> ToolIdentity {
        let mut parts = id.splitn(3, ':');
        let source = parts.next().unwrap_or_default().to_owned();
        let owner = parts.next().unwrap_or_default().to_owned();
        let tool = parts.next().unwrap_or_default().to_owned();
        let server = (source == "mcp").then(|| owner.clone());
        ToolIdentity { source, owner, tool, server }
    }

    /// What an echo returns: `{tool: <catalog id>, input}` for host tools, `{server, tool, input}`
    /// for MCP tools.
    fn echo(&self, catalog_id: &str, input: &Value) -> Value {
        match &self.server {
            Some(server) => json!({ "server": server, "tool": self.tool, "input": input }),
            None => json!({ "tool": catalog_id, "input": input }),
        }
    }
}

/// A `manual` tool call as announced to the session client.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ManualCall {
    /// The nested call id (what `resolve` names).
    pub call_id: String,
    /// The Code Mode run id.
    pub run_id: String,
    /// The exact catalog id.
    pub tool_id: String,
    /// The same id in parts.
    pub identity: ToolIdentity,
    /// The validated input.
    pub input: Value,
}

impl ManualCall {
    /// The session protocol's event line:
    /// `{"event":"toolCall","callId","runId","toolId","source","owner","tool","server"?,"input"}`
    /// (`server` for MCP tools only).
    pub fn to_event_json(&self) -> Value {
        let mut event = json!({
            "event": "toolCall",
            "callId": self.call_id,
            "runId": self.run_id,
            "toolId": self.tool_id,
            "source": self.identity.source,
            "owner": self.identity.owner,
            "tool": self.identity.tool,
            "input": self.input,
        });
        if let Some(server) = &self.identity.server {
            event["server"] = json!(server);
        }
        event
    }
}

type Announce = Arc<dyn Fn(&ManualCall) + Send + Sync>;
type Answer = Result<ToolOutcome, ToolError>;

/// The `manual` calls waiting for a `resolve`, keyed by call id.
#[derive(Default)]
pub struct ManualCalls {
    pending: Mutex<HashMap<String, (oneshot::Sender<Answer>, Value)>>,
    announce: Mutex<Option<Announce>>,
}

impl std::fmt::Debug for ManualCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManualCalls").field("pending", &self.lock().len()).finish()
    }
}

impl ManualCalls {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, (oneshot::Sender<Answer>, Value)>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the function told about every new manual call (the session writes an event line).
    pub fn on_call(&self, announce: impl Fn(&ManualCall) + Send + Sync + 'static) {
        *self.announce.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(announce));
    }

    /// Completes a pending call with `answer`.
    pub fn resolve(&self, call_id: &str, answer: Result<ToolOutcome, ToolError>) -> Result<(), CliError> {
        let (sender, _) =
            self.lock().remove(call_id).ok_or_else(|| CliError::UnknownCall(call_id.to_owned()))?;
        // The receiver is gone only if the run was cancelled in the meantime: nothing to deliver to.
        sender.send(answer).map_err(|_| CliError::UnknownCall(call_id.to_owned()))
    }

    /// The input of a pending call.
    pub fn input_of(&self, call_id: &str) -> Option<Value> {
        self.lock().get(call_id).map(|(_, input)| input.clone())
    }

    /// The ids of the calls still pending, sorted.
    pub fn pending_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }

    async fn park(&self, call: ManualCall) -> Answer {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(call.call_id.clone(), (tx, call.input.clone()));
        let announce = self.announce.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(announce) = announce {
            announce(&call);
        }
        // Removes the entry if the run is cancelled and this future dropped before an answer.
        struct Forget<'a>(&'a ManualCalls, String);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0.lock().remove(&self.1);
            }
        }
        let _forget = Forget(self, call.call_id.clone());
        rx.await.unwrap_or_else(|_| Err(ToolError::with_code("the manual call was abandoned", "cancelled")))
    }
}

/// Reads a `resolve` payload: `{"result": details, "content"?: [...]}` or `{"error": "msg" | {"message","code"}}`.
pub fn answer_from_json(request: &Value) -> Result<Answer, String> {
    if let Some(error) = request.get("error") {
        return match error {
            Value::String(message) => Ok(Err(ToolError::new(message.clone()))),
            Value::Object(map) => {
                let message =
                    map.get("message").and_then(Value::as_str).ok_or("`error.message` must be a string")?;
                Ok(Err(match map.get("code").and_then(Value::as_str) {
                    Some(code) => ToolError::with_code(message, code),
                    None => ToolError::new(message),
                }))
            }
            _ => Err("`error` must be a string or {\"message\", \"code\"?}".to_owned()),
        };
    }
    let Some(result) = request.get("result") else {
        return Err("resolve needs `result` (the tool's details) or `error`".to_owned());
    };
    let mut outcome = ToolOutcome::details(result.clone());
    if let Some(content) = request.get("content") {
        outcome = outcome.with_content(content.clone());
    }
    Ok(Ok(outcome))
}

/// Answers nested calls from a [`FixtureCatalog`].
pub struct FixtureHost {
    behaviors: HashMap<String, Behavior>,
    identities: HashMap<String, ToolIdentity>,
    denied: HashSet<String>,
    counters: Mutex<HashMap<String, usize>>,
    manual: Arc<ManualCalls>,
    resources: BTreeMap<String, Vec<FixtureResource>>,
    prompts: BTreeMap<String, Vec<FixturePrompt>>,
    fallback: Option<Arc<dyn ToolHost>>,
}

impl std::fmt::Debug for FixtureHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixtureHost").field("tools", &self.behaviors.len()).finish()
    }
}

impl FixtureHost {
    /// A host for `catalog`; calls to ids it does not know go to `fallback` (or fail `not_found`).
    pub fn new(catalog: &FixtureCatalog, fallback: Option<Arc<dyn ToolHost>>) -> FixtureHost {
        let mut behaviors = HashMap::new();
        let mut identities = HashMap::new();
        let mut denied = HashSet::new();
        for tool in &catalog.tools {
            let id = catalog.id_of(&tool.spec);
            if catalog.is_denied(&tool.spec) {
                denied.insert(id.clone());
            }
            identities.insert(id.clone(), ToolIdentity::of_spec(&tool.spec, &id));
            behaviors.insert(id, tool.behavior.clone());
        }
        let mut resources = BTreeMap::new();
        let mut prompts = BTreeMap::new();
        for server in &catalog.mcp_servers {
            if let FixtureMcpServer::Inline(inline) = server {
                let name = &inline.server.name;
                for tool in &inline.server.tools {
                    let id = tool.catalog_id(name);
                    if catalog.is_denied(&tool.to_tool_spec(name)) {
                        denied.insert(id.clone());
                    }
                    let behavior = inline.behaviors.get(&tool.name).cloned().unwrap_or(Behavior::Unscripted);
                    identities.insert(id.clone(), ToolIdentity::mcp(name, &tool.name));
                    behaviors.insert(id, behavior);
                }
                resources.insert(name.clone(), inline.resources.clone());
                prompts.insert(name.clone(), inline.prompts.clone());
            }
        }
        FixtureHost {
            behaviors,
            identities,
            denied,
            counters: Mutex::new(HashMap::new()),
            manual: Arc::new(ManualCalls::default()),
            resources,
            prompts,
            fallback,
        }
    }

    /// The manual-call registry (the session resolves calls through it).
    pub fn manual_calls(&self) -> Arc<ManualCalls> {
        self.manual.clone()
    }

    fn next_index(&self, id: &str) -> usize {
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        let counter = counters.entry(id.to_owned()).or_insert(0);
        let index = *counter;
        *counter += 1;
        index
    }

    /// Calls a fixture tool outside Code Mode (a direct-only tool exposed by `codemode serve`).
    pub async fn call_direct(&self, catalog_id: &str, input: Value) -> Option<Answer> {
        if self.denied.contains(catalog_id) {
            return Some(Err(ToolError::denied(format!("tool {catalog_id:?} is denied by policy"))));
        }
        let behavior = self.behaviors.get(catalog_id)?;
        let index = self.next_index(catalog_id);
        let call =
            Dispatch { call_id: format!("direct-{index}"), run_id: String::new(), catalog_id, input: &input };
        Some(self.run(behavior, &call, index).await)
    }

    fn identity(&self, catalog_id: &str) -> ToolIdentity {
        self.identities.get(catalog_id).cloned().unwrap_or_else(|| ToolIdentity::from_catalog_id(catalog_id))
    }

    async fn run(&self, behavior: &Behavior, call: &Dispatch<'_>, index: usize) -> Answer {
        let mut behavior = behavior;
        while let Behavior::Sequence(steps) = behavior {
            // Validation guarantees steps is non-empty; an empty one counts as unscripted.
            match steps.get(index.min(steps.len().saturating_sub(1))) {
                Some(step) => behavior = step,
                None => behavior = &Behavior::Unscripted,
            }
        }
        let echo = || ToolOutcome::details(self.identity(call.catalog_id).echo(call.catalog_id, call.input));
        match behavior {
            Behavior::Static { content, is_error: true, .. } => {
                Err(mcp_tool_error(content.as_ref().unwrap_or(&Value::Null)))
            }
            Behavior::Static { details, content, .. } => {
                let outcome = ToolOutcome::details(details.clone());
                Ok(match content {
                    Some(content) => outcome.with_content(content.clone()),
                    None => outcome,
                })
            }
            Behavior::Echo => Ok(echo()),
            Behavior::Unscripted => Err(ToolError::with_code(
                format!(
                    "the fixture catalog gives tool {:?} no \"behavior\"; add one (for example \"echo\") to script its result",
                    call.catalog_id
                ),
                "no_behavior",
            )),
            Behavior::Error { message, code } => Err(match code {
                Some(code) => ToolError::with_code(message.clone(), code.clone()),
                None => ToolError::new(message.clone()),
            }),
            Behavior::Delay { ms, details } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Ok(match details {
                    Some(details) => ToolOutcome::details(details.clone()),
                    None => echo(),
                })
            }
            Behavior::Manual => {
                self.manual
                    .park(ManualCall {
                        call_id: call.call_id.clone(),
                        run_id: call.run_id.clone(),
                        tool_id: call.catalog_id.to_owned(),
                        identity: self.identity(call.catalog_id),
                        input: call.input.clone(),
                    })
                    .await
            }
            Behavior::Sequence(_) => Ok(echo()),
        }
    }
}

/// The parts of a call a behavior needs.
struct Dispatch<'a> {
    call_id: String,
    run_id: String,
    catalog_id: &'a str,
    input: &'a Value,
}

/// How an MCP result with `isError: true` reaches the guest (here and in `codemode serve`): a tool
/// error with the result's text blocks as message (bounded) and code `tool_error`.
pub(crate) fn mcp_tool_error(content: &Value) -> ToolError {
    let texts: Vec<&str> = content
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let message =
        if texts.is_empty() { "the MCP tool reported an error".to_owned() } else { texts.join("\n") };
    let mut short: String = message.chars().take(500).collect();
    if short.len() < message.len() {
        short.push('…');
    }
    ToolError::with_code(short, "tool_error")
}

/// MCP tools answer in the MCP result shape: `details` is the structured content, `content` one
/// text block with the JSON (unless the behavior gave explicit content).
fn as_mcp_result(outcome: ToolOutcome) -> ToolOutcome {
    if outcome.content.is_some() {
        return outcome;
    }
    let text = match &outcome.details {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let content = json!([{ "type": "text", "text": text }]);
    outcome.with_content(content)
}

#[async_trait]
impl ToolHost for FixtureHost {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        if self.denied.contains(&call.catalog_id) {
            return Err(ToolError::denied(format!("tool {:?} is denied by policy", call.catalog_id)));
        }
        let Some(behavior) = self.behaviors.get(&call.catalog_id) else {
            return match &self.fallback {
                Some(fallback) => fallback.call(call).await,
                None => Err(ToolError::with_code(format!("unknown tool {:?}", call.catalog_id), "not_found")),
            };
        };
        let index = self.next_index(&call.catalog_id);
        let dispatch = Dispatch {
            call_id: call.call_id.clone(),
            run_id: call.run_id.clone(),
            catalog_id: &call.catalog_id,
            input: &call.input,
        };
        let outcome = self.run(behavior, &dispatch, index).await?;
        Ok(if call.catalog_id.starts_with("mcp:") { as_mcp_result(outcome) } else { outcome })
    }

    async fn read_resource(&self, scope: &RunScope, server: &str, uri: &str) -> Result<Value, ToolError> {
        let Some(resources) = self.resources.get(server) else {
            return match &self.fallback {
                Some(fallback) => fallback.read_resource(scope, server, uri).await,
                None => Err(ToolError::with_code(format!("unknown MCP server {server:?}"), "not_found")),
            };
        };
        let resource = resources
            .iter()
            .find(|r| r.uri == uri)
            .ok_or_else(|| ToolError::with_code(format!("resource {uri:?} not found"), "not_found"))?;
        let mut content = json!({ "uri": resource.uri, "text": resource.text });
        if let Some(mime) = &resource.mime_type {
            content["mimeType"] = json!(mime);
        }
        Ok(json!({ "contents": [content] }))
    }

    async fn get_prompt(
        &self,
        scope: &RunScope,
        server: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Value, ToolError> {
        let Some(prompts) = self.prompts.get(server) else {
            return match &self.fallback {
                Some(fallback) => fallback.get_prompt(scope, server, name, arguments).await,
                None => Err(ToolError::with_code(format!("unknown MCP server {server:?}"), "not_found")),
            };
        };
        let prompt = prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ToolError::with_code(format!("prompt {name:?} not found"), "not_found"))?;
        let mut messages = prompt.messages.clone();
        if let Value::Object(args) = arguments {
            substitute(&mut messages, args);
        }
        let mut result = json!({ "messages": messages });
        if let Some(description) = &prompt.description {
            result["description"] = json!(description);
        }
        Ok(result)
    }
}

fn substitute(value: &mut Value, args: &serde_json::Map<String, Value>) {
    match value {
        Value::String(s) => {
            for (k, v) in args {
                let replacement = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                *s = s.replace(&format!("{{{{{k}}}}}"), &replacement);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, args)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, args)),
        _ => {}
    }
}
