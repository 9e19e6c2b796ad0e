""":class:`CodeMode`: exec/wait on asyncio (and sync variants), the model surface, tool routing."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
import weakref
from typing import Any, Callable, Dict, Generator, Iterable, List, Mapping, Optional, Sequence, Union

from . import _native
from ._schema import JsonObject, dumps
from ._tools import _CURRENT, McpServer, Namespace, Tool, ToolCall, ToolError, as_tool, json_object

Result = Dict[str, Any]
"""A result in the spec's shape: ``{"status": "completed" | "waiting" | "failed", ...}``."""

FORMATS = ("openai", "openai-responses", "anthropic", "mcp")


def _noop() -> None:
    return None


class Run:
    """One ``exec`` or ``wait`` in flight. ``await run`` gives its result; cancelling the awaiting
    task aborts the run (it ends ``failed`` with code ``aborted``)."""

    def __init__(self, native: _native.Run, future: "asyncio.Future[Result]") -> None:
        self._native = native
        self._future = future

    def abort(self) -> None:
        """Aborts the run: in-flight tool calls are cancelled and the run is not parked."""
        self._native.abort()

    def done(self) -> bool:
        """Whether the result is in."""
        return self._future.done()

    async def result(self) -> Result:
        """The result, without aborting the run if the awaiting task is cancelled."""
        return await asyncio.shield(self._future)

    async def _await(self) -> Result:
        try:
            return await asyncio.shield(self._future)
        except asyncio.CancelledError:
            self._native.abort()
            raise

    def __await__(self) -> Generator[Any, None, Result]:
        return self._await().__await__()


class _LoopThread:
    """A private event loop on a daemon thread: where the sync variants run their tool calls."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name="codemode-sync-loop", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            if threading.current_thread() is self._thread:
                return  # stopping from the loop's own thread: it stops when this callback returns
            self._thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()


def _config_json(config: Union[None, bool, Mapping[str, Any]]) -> str:
    if config is None:
        return json.dumps({"enabled": True})
    if isinstance(config, bool):
        return json.dumps({"enabled": config})
    if not isinstance(config, Mapping):
        raise TypeError("config must be a dict in the tools.codeMode shape, a bool, or None")
    merged = dict(config)
    merged.setdefault("enabled", True)
    return json.dumps(merged)


class CodeMode:
    """Code Mode over a set of Python tools, in-process.

    ``tools`` are callables (sync or async; schema from type hints and docstring), :class:`Tool`\\ s
    from :func:`codemode.tool`, or MCP-shaped dicts (``name``, ``description``, ``inputSchema``,
    optional ``outputSchema``/``annotations``/``server``) with a ``handler(arguments)``.
    ``mcp_servers`` are :class:`McpServer`\\ s (or dicts of the same fields) whose tools the guest
    calls as ``MCP.<server>.<tool>(...)``. ``namespaces`` are :class:`Namespace`\\ s. ``config`` is
    the ``tools.codeMode`` object (camelCase keys, e.g. ``{"timeoutMs": 5000}``); ``enabled``
    defaults to ``True`` here.

    Tool calls run on the event loop of the ``exec``/``wait`` call that drives the run (sync
    callables in the loop's default executor); the sync variants use a private loop thread. Use one
    ``CodeMode`` per event loop.
    """

    def __init__(
        self,
        tools: Iterable[Any] = (),
        mcp_servers: Optional[Iterable[Union[McpServer, Mapping[str, Any]]]] = None,
        namespaces: Optional[Iterable[Namespace]] = None,
        config: Union[None, bool, Mapping[str, Any]] = None,
        *,
        session_id: Optional[str] = None,
        agent_run_id: str = "default",
        module_cache: Optional[str] = None,
    ) -> None:
        catalog: List[Tool] = [as_tool(t) for t in tools]
        servers = [s if isinstance(s, McpServer) else McpServer.from_dict(s) for s in (mcp_servers or ())]
        for server in servers:
            catalog.extend(server.catalog_tools())
        self._tools: Dict[str, Tool] = {}
        for t in catalog:
            if t.catalog_id in self._tools:
                raise ValueError(f"two tools have the catalog id {t.catalog_id!r}")
            self._tools[t.catalog_id] = t
        self._servers: Dict[str, McpServer] = {}
        for server in servers:
            if server.name in self._servers:
                raise ValueError(f"two MCP servers are named {server.name!r}")
            self._servers[server.name] = server
        self.session_id = session_id or f"py-{uuid.uuid4().hex}"
        self.agent_run_id = agent_run_id
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._background: Optional[_LoopThread] = None
        self._lock = threading.Lock()
        # The runtime holds the dispatcher; a weak reference back keeps this object collectable
        # (dropping it discards its suspended runs and cancels their tool calls).
        owner = weakref.ref(self)

        def dispatch(kind: str, target: str, input_json: str, info_json: str, responder: _native.Responder) -> Callable[[], Any]:
            live = owner()
            if live is None:
                responder.reject("the CodeMode object that served this tool is gone", "unavailable")
                return _noop
            return live._dispatch(kind, target, input_json, info_json, responder)

        self._native = _native.CodeMode(
            _config_json(config),
            json.dumps([t.spec() for t in catalog]),
            json.dumps([s.metadata() for s in servers]),
            json.dumps([n.to_json() for n in (namespaces or ())]),
            dispatch,
            module_cache,
        )

    # ---- exec / wait ------------------------------------------------------------------------

    def _scope(
        self, session_id: Optional[str], agent_run_id: Optional[str], call_id: Optional[str]
    ) -> str:
        scope = json_object(
            {"sessionId": session_id or self.session_id, "agentRunId": agent_run_id or self.agent_run_id},
            callId=call_id,
        )
        return json.dumps(scope)

    def _start(
        self,
        kind: str,
        arguments: Any,
        session_id: Optional[str],
        agent_run_id: Optional[str],
        call_id: Optional[str],
    ) -> Run:
        loop = asyncio.get_running_loop()
        self._loop = loop
        future: asyncio.Future[Result] = loop.create_future()

        def settle(text: str) -> None:
            if not future.done():
                future.set_result(json.loads(text))

        def on_done(text: str) -> None:
            try:
                loop.call_soon_threadsafe(settle, text)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        native = self._native.start(kind, self._scope(session_id, agent_run_id, call_id), dumps(arguments), on_done)
        return Run(native, future)

    def start_exec(
        self,
        code: str,
        language: str = "javascript",
        *,
        restart_safe: bool = False,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
        call_id: Optional[str] = None,
    ) -> Run:
        """Starts an ``exec`` on the running loop and returns its :class:`Run`."""
        arguments: JsonObject = {"code": code, "language": language}
        if restart_safe:
            arguments["restartSafe"] = True
        return self._start("exec", arguments, session_id, agent_run_id, call_id)

    def start_wait(
        self,
        run_id: str,
        *,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
        call_id: Optional[str] = None,
    ) -> Run:
        """Starts a ``wait`` on the running loop and returns its :class:`Run`."""
        return self._start("wait", {"runId": run_id}, session_id, agent_run_id, call_id)

    async def exec(
        self,
        code: str,
        language: str = "javascript",
        *,
        restart_safe: bool = False,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
        call_id: Optional[str] = None,
    ) -> Result:
        """Runs a cell (``language``: ``"javascript"`` or ``"typescript"``). Returns the spec's
        result dict; never raises for model mistakes (they are ``failed`` results)."""
        run = self.start_exec(
            code,
            language,
            restart_safe=restart_safe,
            session_id=session_id,
            agent_run_id=agent_run_id,
            call_id=call_id,
        )
        return await run

    async def wait(
        self,
        run_id: str,
        *,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
        call_id: Optional[str] = None,
    ) -> Result:
        """Continues a ``waiting`` run."""
        return await self.start_wait(run_id, session_id=session_id, agent_run_id=agent_run_id, call_id=call_id)

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("the *_sync methods cannot run inside an event loop; await the async ones")
        with self._lock:
            if self._background is None:
                self._background = _LoopThread()
                weakref.finalize(self, self._background.stop)
            return self._background.loop

    def _sync(self, coro_factory: Callable[[], Any], timeout: Optional[float]) -> Any:
        loop = self._background_loop()
        future = asyncio.run_coroutine_threadsafe(coro_factory(), loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()  # cancels the awaiting task, which aborts the run
            raise

    def exec_sync(
        self,
        code: str,
        language: str = "javascript",
        *,
        timeout: Optional[float] = None,
        restart_safe: bool = False,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
        call_id: Optional[str] = None,
    ) -> Result:
        """:meth:`exec` for code without an event loop. The calling thread waits without the GIL;
        tools run on a private loop thread. ``timeout`` (seconds) aborts the run when it passes."""
        return self._sync(  # type: ignore[no-any-return]
            lambda: self.exec(
                code,
                language,
                restart_safe=restart_safe,
                session_id=session_id,
                agent_run_id=agent_run_id,
                call_id=call_id,
            ),
            timeout,
        )

    def wait_sync(
        self,
        run_id: str,
        *,
        timeout: Optional[float] = None,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
        call_id: Optional[str] = None,
    ) -> Result:
        """:meth:`wait` for code without an event loop."""
        return self._sync(  # type: ignore[no-any-return]
            lambda: self.wait(run_id, session_id=session_id, agent_run_id=agent_run_id, call_id=call_id),
            timeout,
        )

    # ---- the model surface ------------------------------------------------------------------

    def model_tools(self) -> List[JsonObject]:
        """What the model sees: ``exec``, ``wait`` and direct-only tools (or, when Code Mode is not
        active, the tools unchanged), as ``{"name", "description", "inputSchema"}``."""
        tools: List[JsonObject] = json.loads(self._native.surface_json())["tools"]
        return tools

    @property
    def is_active(self) -> bool:
        """Whether the Code Mode surface is active (enabled, with at least one tool)."""
        return bool(json.loads(self._native.surface_json())["codeMode"])

    def tools_for(self, format: str) -> List[JsonObject]:
        """The model-visible tools for a provider: ``"openai"`` (Chat Completions), ``"openai-responses"``,
        ``"anthropic"`` (Messages) or ``"mcp"`` (``tools/list``)."""
        tools = self.model_tools()

        def named(t: JsonObject, schema_key: str) -> JsonObject:
            return {"name": t["name"], "description": t["description"], schema_key: t["inputSchema"]}

        if format == "openai":
            return [{"type": "function", "function": named(t, "parameters")} for t in tools]
        if format == "openai-responses":
            return [{"type": "function", **named(t, "parameters")} for t in tools]
        if format == "anthropic":
            return [named(t, "input_schema") for t in tools]
        if format == "mcp":
            return [named(t, "inputSchema") for t in tools]
        raise ValueError(f"unknown tool format {format!r}; use one of: {', '.join(FORMATS)}")

    def check_provider_payload(self, names: Sequence[str]) -> None:
        """The fail-closed guard: raises ``ValueError`` unless the final payload's tool names are
        exactly ``exec``, ``wait`` and approved direct-only tools."""
        self._native.check_provider_payload(list(names))

    async def handle_tool_call(
        self,
        name: str,
        arguments: Union[str, bytes, Mapping[str, Any], None],
        *,
        call_id: Optional[str] = None,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
    ) -> str:
        """Routes one model tool call (``exec``, ``wait`` or a direct-only tool) and returns the text
        the model expects: the result as compact JSON. ``arguments`` may be the provider's JSON
        text. Unknown names answer with an error text rather than raising."""
        if isinstance(arguments, (str, bytes)):
            try:
                parsed: Any = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                return dumps({"status": "failed", "code": "invalid_input", "error": f"{name}: arguments are not valid JSON."})
        else:
            parsed = dict(arguments) if arguments is not None else {}
        if name in ("exec", "wait"):
            run = self._start(name, parsed, session_id, agent_run_id, call_id)
            return dumps(await run)
        # Direct-only tools stay with the model; when Code Mode is not active, every tool is direct.
        active = self.is_active
        direct = next((t for t in self._tools.values() if t.name == name and (t.direct_only or not active)), None)
        if direct is not None:
            try:
                details, content = await direct.invoke(parsed if isinstance(parsed, dict) else {})
            except ToolError as e:
                return dumps({"error": e.message, "code": e.code})
            except Exception as e:  # the host's tool failed: tell the model, do not crash the loop
                return dumps({"error": str(e) or type(e).__name__})
            return dumps(details if content is None else {"content": content, "structuredContent": details})
        visible = ", ".join(t["name"] for t in self.model_tools())
        return dumps({"error": f"unknown tool {name!r}; the tools here are: {visible}"})

    def handle_tool_call_sync(
        self,
        name: str,
        arguments: Union[str, bytes, Mapping[str, Any], None],
        *,
        timeout: Optional[float] = None,
        call_id: Optional[str] = None,
        session_id: Optional[str] = None,
        agent_run_id: Optional[str] = None,
    ) -> str:
        """:meth:`handle_tool_call` for code without an event loop."""
        return self._sync(  # type: ignore[no-any-return]
            lambda: self.handle_tool_call(
                name, arguments, call_id=call_id, session_id=session_id, agent_run_id=agent_run_id
            ),
            timeout,
        )

    # ---- runs -------------------------------------------------------------------------------

    def catalog(self) -> List[JsonObject]:
        """The guest's ``ALL_TOOLS`` entries (``id``, ``name``, ``description``, ``input``, ...)."""
        entries: List[JsonObject] = json.loads(self._native.catalog_json())
        return entries

    @property
    def tools(self) -> Dict[str, Tool]:
        """The tools by catalog id."""
        return dict(self._tools)

    @property
    def runtime_unavailable_reason(self) -> Optional[str]:
        """Why the sandbox cannot run (then every ``exec`` fails with ``runtime_unavailable``)."""
        return self._native.runtime_unavailable_reason()

    def run_count(self) -> int:
        """Suspended runs held for ``wait``."""
        return self._native.run_count()

    def has_run(self, run_id: str) -> bool:
        """Whether ``run_id`` is a suspended run that ``wait`` can continue."""
        return self._native.has_run(run_id)

    def cancel(self, run_id: str) -> bool:
        """Discards a suspended run and cancels its tool calls. Returns whether it was found."""
        return self._native.cancel(run_id)

    def end_session(self, session_id: Optional[str] = None) -> int:
        """Discards every run of a session (default: this object's). Returns how many."""
        return self._native.end_session(session_id or self.session_id)

    def close(self) -> None:
        """Discards every suspended run and stops the sync variants' loop thread."""
        self._native.shutdown()
        with self._lock:
            background, self._background = self._background, None
        if background is not None:
            background.stop()

    def __enter__(self) -> "CodeMode":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- nested calls (called by the runtime, from its threads) ------------------------------

    def _dispatch(
        self, kind: str, target: str, input_json: str, info_json: str, responder: _native.Responder
    ) -> Callable[[], Any]:
        loop = self._loop
        if loop is None or loop.is_closed():
            responder.reject("the host's event loop is not running", "unavailable")
            return _noop
        coro = self._serve(kind, target, input_json, info_json, responder)
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()
            responder.reject("the host's event loop is not running", "unavailable")
            return _noop
        return future.cancel

    async def _serve(
        self, kind: str, target: str, input_json: str, info_json: str, responder: _native.Responder
    ) -> None:
        info = json.loads(info_json)
        token = _CURRENT.set(
            ToolCall(
                run_id=info.get("runId", ""),
                call_id=info.get("callId", ""),
                catalog_id=info.get("catalogId", target),
                session_id=info.get("sessionId", ""),
                agent_run_id=info.get("agentRunId", ""),
                parent_call_id=info.get("parentCallId"),
                restart_safe=bool(info.get("restartSafe", False)),
            )
            if kind == "tool"
            else None
        )
        try:
            arguments = json.loads(input_json)
            if kind == "tool":
                found = self._tools.get(target)
                if found is None:
                    responder.reject(f"no tool {target!r} is served here", "unknown_tool")
                    return
                details, content = await found.invoke(arguments)
            else:
                server = self._servers.get(target)
                if server is None:
                    responder.reject(f"MCP server {target!r} is not served here", "unknown_tool")
                    return
                details, content = await server.serve_extra(kind, arguments), None
            try:
                details_json = dumps(details)
                content_json = None if content is None else dumps(content)
            except (TypeError, ValueError) as e:
                responder.reject(f"the tool returned a value that is not JSON ({e})", "invalid_output")
                return
            responder.resolve(details_json, content_json)
        except asyncio.CancelledError:
            responder.reject("the tool call was cancelled", "cancelled")
            raise
        except ToolError as e:
            responder.reject(e.message, e.code)
        except Exception as e:
            code = getattr(e, "code", None)
            responder.reject(str(e) or type(e).__name__, code if isinstance(code, str) else None)
        finally:
            _CURRENT.reset(token)
