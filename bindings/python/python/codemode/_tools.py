"""Tools: Python callables (schema from hints and docstring, or explicit), MCP-shaped dicts with a
handler, MCP servers, and internal namespaces."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, overload

from ._schema import JsonObject, coerce_arguments, function_schema

F = TypeVar("F", bound=Callable[..., Any])


class ToolError(Exception):
    """Raise from a tool (or resolve an approval future with it) to fail the nested call.

    The guest receives a plain ``Error`` with ``message`` and ``code`` that it can catch, e.g.
    ``ToolError("not approved", code="denied")``.
    """

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """The nested call a tool is serving (see :func:`current_call`)."""

    run_id: str
    """The Code Mode run id (stable across ``wait``)."""
    call_id: str
    """Unique id of this nested call."""
    catalog_id: str
    """Exact catalog id, e.g. ``openclaw:core:get_weather``."""
    session_id: str
    agent_run_id: str
    parent_call_id: Optional[str] = None
    """The model's ``exec`` call id, when the host passed one."""
    restart_safe: bool = False


_CURRENT: contextvars.ContextVar[Optional[ToolCall]] = contextvars.ContextVar("codemode_call", default=None)


def current_call() -> Optional[ToolCall]:
    """The nested call the running tool serves (``None`` outside a tool call)."""
    return _CURRENT.get()


class Tool:
    """One tool in the catalog. Build it with :func:`tool`, or pass a callable or an MCP-shaped dict
    to :class:`codemode.CodeMode` directly."""

    def __init__(
        self,
        handler: Callable[..., Any],
        *,
        name: str,
        description: str = "",
        input_schema: Optional[JsonObject] = None,
        output_schema: Optional[JsonObject] = None,
        title: Optional[str] = None,
        direct_only: bool = False,
        read_only: Optional[bool] = None,
        annotations: Optional[Mapping[str, Any]] = None,
        plugin: Optional[str] = None,
        server: Optional[str] = None,
        call_style: str = "kwargs",
    ) -> None:
        if not callable(handler):
            raise TypeError(f"tool {name!r}: the handler is not callable")
        if plugin is not None and server is not None:
            raise ValueError(f"tool {name!r}: a tool belongs to a plugin or to an MCP server, not both")
        self.handler = handler
        self.name = name
        self.description = description
        self.input_schema: JsonObject = dict(input_schema) if input_schema is not None else {"type": "object"}
        self.output_schema = dict(output_schema) if output_schema is not None else None
        self.title = title
        self.direct_only = direct_only
        self.annotations: Dict[str, Any] = dict(annotations or {})
        if read_only is not None:
            self.annotations["readOnlyHint"] = read_only
        self.plugin = plugin
        self.server = server
        self._call_style = call_style

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.handler(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.catalog_id!r})"

    @property
    def catalog_id(self) -> str:
        """``<source>:<owner>:<name>``, the id the guest calls it by."""
        if self.server is not None:
            return f"mcp:{self.server}:{self.name}"
        return f"openclaw:{self.plugin or 'core'}:{self.name}"

    def spec(self) -> JsonObject:
        """The tool as the runtime takes it (the ``ToolSpec`` JSON shape)."""
        origin, owner = "core", "core"
        if self.server is not None:
            origin, owner = "mcp", self.server
        elif self.plugin is not None:
            origin, owner = "bundledPlugin", self.plugin
        hints = {k: v for k, v in self.annotations.items() if k.endswith("Hint") and isinstance(v, bool)}
        return json_object(
            {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
                "origin": origin,
                "owner": owner,
            },
            label=self.title or None,
            outputSchema=self.output_schema,
            directOnly=True if self.direct_only else None,
            annotations=hints or None,
        )

    async def invoke(self, arguments: Dict[str, Any]) -> Tuple[Any, Optional[Any]]:
        """Runs the handler on the running loop (sync handlers in a worker thread) and awaits any
        pending future it returns. Returns ``(details, content or None)``."""
        if self._call_style == "kwargs":
            call = functools.partial(self.handler, **coerce_arguments(self.handler, arguments))
        else:
            call = functools.partial(self.handler, arguments)
        result = await _call(call, _is_async(self.handler))
        if self._call_style == "mcp":
            return mcp_outcome(result)
        return result, None


def _is_async(fn: Any) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


async def _call(call: Callable[[], Any], is_async: bool) -> Any:
    if is_async:
        result = call()
    else:
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        result = await loop.run_in_executor(None, context.run, call)
    # An approval-gated tool answers with a pending future; the host resolves it later.
    while True:
        if isinstance(result, concurrent.futures.Future):
            result = await asyncio.wrap_future(result)
        elif inspect.isawaitable(result):
            result = await result
        else:
            return result


def mcp_outcome(result: Any) -> Tuple[Any, Optional[Any]]:
    """An MCP ``CallToolResult`` (dict or SDK object) as ``(structuredContent, content)``; an
    ``isError`` result raises :class:`ToolError` with its text."""
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        result = dump(by_alias=True, exclude_none=True, mode="json")
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return result, None
    content = result["content"]
    if result.get("isError"):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        raise ToolError("; ".join(t for t in texts if t) or "the MCP tool reported an error")
    return result.get("structuredContent"), content


@overload
def tool(
    fn: F,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    input_schema: Optional[JsonObject] = None,
    output_schema: Optional[JsonObject] = None,
    title: Optional[str] = None,
    direct_only: bool = False,
    read_only: Optional[bool] = None,
    plugin: Optional[str] = None,
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    input_schema: Optional[JsonObject] = None,
    output_schema: Optional[JsonObject] = None,
    title: Optional[str] = None,
    direct_only: bool = False,
    read_only: Optional[bool] = None,
    plugin: Optional[str] = None,
) -> Callable[[F], Tool]: ...


def tool(
    fn: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    input_schema: Optional[JsonObject] = None,
    output_schema: Optional[JsonObject] = None,
    title: Optional[str] = None,
    direct_only: bool = False,
    read_only: Optional[bool] = None,
    plugin: Optional[str] = None,
) -> Union[Tool, Callable[[F], Tool]]:
    """Makes a tool of a sync or async callable; usable bare (``@tool``) or with options.

    The input schema comes from the signature's type hints and the docstring's parameter
    descriptions (Google, reST or NumPy style); the description is the docstring's summary; the
    output schema comes from the return hint. ``input_schema`` / ``output_schema`` replace them.
    The handler is called with the input's fields as keyword arguments. ``direct_only`` keeps the
    tool on the model-visible surface; ``read_only`` is its ``readOnlyHint``; ``plugin`` makes it a
    plugin's tool (the owner namespaces check).
    """

    def make(f: Callable[..., Any]) -> Tool:
        derived_input, derived_output, doc = function_schema(f)
        return Tool(
            f,
            name=name or getattr(f, "__name__", None) or type(f).__name__,
            description=description if description is not None else doc,
            input_schema=input_schema if input_schema is not None else derived_input,
            output_schema=output_schema if output_schema is not None else derived_output,
            title=title,
            direct_only=direct_only,
            read_only=read_only,
            plugin=plugin,
        )

    if fn is not None:
        return make(fn)
    return make


def _from_mcp_dict(spec: Mapping[str, Any], server: Optional[str]) -> Tool:
    handler = spec.get("handler")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("an MCP-shaped tool needs a non-empty string 'name'")
    if handler is None:
        raise ValueError(f"MCP-shaped tool {name!r} needs a 'handler' callable")
    return Tool(
        handler,
        name=name,
        description=str(spec.get("description") or ""),
        input_schema=spec.get("inputSchema") or {"type": "object"},
        output_schema=spec.get("outputSchema"),
        title=spec.get("title"),
        direct_only=bool(spec.get("directOnly", False)),
        annotations=spec.get("annotations"),
        server=spec.get("server", server),
        call_style="mcp",
    )


def as_tool(item: Any) -> Tool:
    """A :class:`Tool` from a Tool, a callable, or an MCP-shaped dict with a ``handler``."""
    if isinstance(item, Tool):
        return item
    if isinstance(item, Mapping):
        return _from_mcp_dict(item, None)
    if callable(item):
        made: Tool = tool(item)
        return made
    raise TypeError(f"not a tool: {item!r} (pass a callable, a codemode.Tool, or an MCP-shaped dict)")


@dataclasses.dataclass
class McpServer:
    """An MCP server's tools behind one call function, as ``tools/list`` and ``tools/call`` give them.

    ``call_tool(name, arguments)`` may be sync or async and return an MCP ``CallToolResult`` (a dict
    or the MCP SDK's object); ``read_resource(uri)`` and ``get_prompt(name, arguments)`` are
    optional and serve ``MCP.<server>.resources.read`` / ``prompts.get``.
    """

    name: str
    tools: Sequence[Mapping[str, Any]]
    call_tool: Callable[[str, Dict[str, Any]], Any]
    title: Optional[str] = None
    instructions: Optional[str] = None
    read_resource: Optional[Callable[[str], Any]] = None
    get_prompt: Optional[Callable[[str, Dict[str, Any]], Any]] = None

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> "McpServer":
        return cls(
            name=value["name"],
            tools=value.get("tools", []),
            call_tool=value["call_tool"],
            title=value.get("title"),
            instructions=value.get("instructions"),
            read_resource=value.get("read_resource"),
            get_prompt=value.get("get_prompt"),
        )

    def catalog_tools(self) -> List[Tool]:
        out = []
        for listed in self.tools:
            tool_name = listed["name"]
            out.append(_from_mcp_dict({**listed, "handler": functools.partial(self.call_tool, tool_name)}, self.name))
        return out

    def metadata(self) -> JsonObject:
        return json_object(
            {"name": self.name},
            title=self.title or None,
            instructions=self.instructions or None,
            hasResources=True if self.read_resource is not None else None,
            hasPrompts=True if self.get_prompt is not None else None,
        )

    async def serve_extra(self, kind: str, arguments: Dict[str, Any]) -> Any:
        if kind == "resource" and self.read_resource is not None:
            fn: Callable[[], Any] = functools.partial(self.read_resource, arguments["uri"])
            return _plain(await _call(fn, _is_async(self.read_resource)))
        if kind == "prompt" and self.get_prompt is not None:
            fn = functools.partial(self.get_prompt, arguments["name"], arguments.get("arguments") or {})
            return _plain(await _call(fn, _is_async(self.get_prompt)))
        raise ToolError(f"MCP server {self.name!r} does not serve this here", code="unsupported")


def json_object(fields: JsonObject, **optional: Any) -> JsonObject:
    """``fields`` plus each ``optional`` field that is not ``None``, in order: the one way the
    package builds the JSON objects it hands the runtime (a field left out is the runtime's default)."""
    out = dict(fields)
    out.update((key, value) for key, value in optional.items() if value is not None)
    return out


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(by_alias=True, exclude_none=True, mode="json") if callable(dump) else value


def namespace_tool(tool_name: str, args: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """A callable namespace member that calls the plugin tool ``tool_name``.

    Without ``args`` the guest's first argument is the input (``{}`` when missing); with ``args``
    the guest's positional arguments become those input fields, e.g. ``args=["number", "patch"]``
    maps ``Issues.update(7, {...})`` to ``{"number": 7, "patch": {...}}``.
    """
    marker: Dict[str, Any] = {"$codemodeTool": tool_name}
    if args is not None:
        marker["args"] = list(args)
    return marker


@dataclasses.dataclass
class Namespace:
    """An internal namespace: a guest global (``Issues``) whose members are data and
    :func:`namespace_tool` markers. Every marked tool must be a tool of ``plugin``."""

    id: str
    global_name: str
    plugin: str
    scope: Mapping[str, Any]
    description: str = ""
    prompt: Optional[str] = None

    def to_json(self) -> JsonObject:
        return json_object(
            {
                "id": self.id,
                "globalName": self.global_name,
                "plugin": self.plugin,
                "scope": dict(self.scope),
                "description": self.description,
            },
            prompt=self.prompt or None,
        )

