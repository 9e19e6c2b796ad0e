"""Tools from Python: hinted callables, explicit schemas, MCP-shaped dicts and servers, namespaces,
and tool errors as catchable guest errors."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any, Dict, List, Optional

from conftest import FAST, run, value

import codemode


@dataclasses.dataclass
class Window:
    start: int
    end: int


def test_hinted_tools_are_called_with_typed_keyword_arguments() -> None:
    seen: Dict[str, Any] = {}

    def get_weather(city: str, days: int = 1) -> Dict[str, Any]:
        """Current weather for a city.

        Args:
            city: The city name.
        """
        seen["thread"] = threading.get_ident()
        return {"city": city, "days": days, "tempC": 21.5}

    async def span(window: Window) -> int:
        """Length of a window."""
        assert isinstance(window, Window)
        return window.end - window.start

    cm = codemode.CodeMode(tools=[get_weather, span], config=FAST)

    async def main() -> Any:
        seen["loop_thread"] = threading.get_ident()
        return await cm.exec(
            """
            const w = await tools.get_weather({ city: "Paris" });
            const n = await tools.callValue("openclaw:core:span", { window: { start: 3, end: 10 } });
            const d = await tools.describe("openclaw:core:get_weather");
            return { w, n, description: d.description, city: d.parameters.properties.city };
            """
        )

    got = value(run(main()))
    assert got["w"] == {"city": "Paris", "days": 1, "tempC": 21.5}
    assert got["n"] == 7
    assert got["description"] == "Current weather for a city."
    assert got["city"] == {"type": "string", "description": "The city name."}
    # Sync callables run in a worker thread, not on the loop.
    assert seen["thread"] != seen["loop_thread"]
    ids = [entry["id"] for entry in cm.catalog()]
    assert ids == ["openclaw:core:get_weather", "openclaw:core:span"]


def test_input_is_validated_against_the_hinted_schema() -> None:
    calls: List[Any] = []

    def add(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    cm = codemode.CodeMode(tools=[add], config=FAST)
    got = value(
        cm.exec_sync(
            """
            const errors = [];
            for (const input of [{ a: 1 }, { a: 1, b: "2" }, { a: 1, b: 2, c: 3 }]) {
              try { await tools.add(input); } catch (e) { errors.push(e.code); }
            }
            return { errors, ok: await tools.add({ a: 1, b: 2 }) };
            """
        )
    )
    assert got == {"errors": ["invalid_input", "invalid_input", "invalid_input"], "ok": 3}
    assert calls == [(1, 2)]
    cm.close()


def test_tool_errors_are_catchable_guest_errors() -> None:
    def deny() -> None:
        raise codemode.ToolError("not allowed for this user", code="denied")

    async def broken() -> None:
        raise ValueError("the upstream answered 502")

    def not_json() -> Any:
        return {"when": object()}

    @codemode.tool(output_schema={"type": "object", "required": ["id"]})
    def declared() -> Any:
        return {"name": "no id here"}

    cm = codemode.CodeMode(tools=[deny, broken, not_json, declared], config=FAST)
    got = value(
        cm.exec_sync(
            """
            const out = {};
            for (const name of ["deny", "broken", "not_json", "declared"]) {
              try { await tools[name]({}); out[name] = "no error"; }
              catch (e) { out[name] = { message: e.message, code: e.code ?? null, isError: e instanceof Error }; }
            }
            return out;
            """
        )
    )
    assert got["deny"] == {"message": "not allowed for this user", "code": "denied", "isError": True}
    assert got["broken"] == {"message": "the upstream answered 502", "code": None, "isError": True}
    assert got["not_json"]["code"] == "invalid_output"
    assert "not JSON" in got["not_json"]["message"]
    assert got["declared"]["code"] == "output_schema_mismatch"
    cm.close()


def test_an_uncaught_tool_error_fails_the_run_with_its_message() -> None:
    def deny() -> None:
        raise codemode.ToolError("no", code="denied")

    cm = codemode.CodeMode(tools=[deny], config=FAST)
    result = cm.exec_sync("await tools.deny({});\nreturn 1;")
    assert result["status"] == "failed"
    assert result["error"].startswith("Error: no"), result
    assert "code" not in result  # a guest error, not a runtime failure
    cm.close()


def test_mcp_shaped_dict_tools_and_an_mcp_server() -> None:
    issues: List[Dict[str, Any]] = []

    async def create_issue(arguments: Dict[str, Any]) -> Dict[str, Any]:
        issues.append(arguments)
        number = len(issues)
        return {
            "content": [{"type": "text", "text": f"created #{number}"}],
            "structuredContent": {"number": number},
        }

    def call_tool(name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
        if name == "search_docs":
            return {"content": [{"type": "text", "text": "found " + arguments["q"]}]}
        return {"content": [{"type": "text", "text": "exploded"}], "isError": True}

    local = {
        "name": "create_issue",
        "description": "Create an issue.",
        "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
        "server": "tracker",
        "handler": create_issue,
    }
    docs = codemode.McpServer(
        name="docs",
        tools=[
            {"name": "search_docs", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
            {"name": "explode", "inputSchema": {"type": "object"}},
        ],
        call_tool=call_tool,
        read_resource=lambda uri: {"contents": [{"uri": uri, "text": "readme"}]},
    )
    cm = codemode.CodeMode(tools=[local], mcp_servers=[docs], config=FAST)
    got = value(
        cm.exec_sync(
            """
            const created = await MCP.tracker.createIssue({ title: "Bug" });
            const found = await MCP.docs.searchDocs({ q: "wasm" });
            let err = null;
            try { await MCP.docs.explode({}); } catch (e) { err = e.message; }
            const res = await MCP.docs.resources.read({ uri: "doc://readme" });
            const files = await API.list("mcp");
            const header = await MCP.docs.$api("search_docs");
            return { created, found, err, res, files, visible: ALL_TOOLS.length, header };
            """
        )
    )
    assert got["created"] == {"content": [{"type": "text", "text": "created #1"}], "structuredContent": {"number": 1}}
    assert got["found"]["content"] == [{"type": "text", "text": "found wasm"}]
    assert got["err"] == "exploded"
    assert got["res"] == {"contents": [{"uri": "doc://readme", "text": "readme"}]}
    assert "mcp/docs.d.ts" in str(got["files"])
    assert got["visible"] == 0  # MCP tools live only under MCP.*
    assert "searchDocs" in str(got["header"])
    assert issues == [{"title": "Bug"}]
    cm.close()


def test_namespace_members_call_plugin_tools() -> None:
    @codemode.tool(plugin="github")
    def github_list_issues(state: str = "open") -> List[Dict[str, Any]]:
        """List issues."""
        return [{"number": 1, "state": state}]

    @codemode.tool(plugin="github")
    def github_update_issue(number: int, patch: Dict[str, Any]) -> Dict[str, Any]:
        """Update an issue."""
        return {"number": number, **patch}

    issues = codemode.Namespace(
        id="github-issues",
        global_name="Issues",
        plugin="github",
        description="GitHub issue helpers.",
        prompt="Use Issues.list(params) and Issues.update(number, patch).",
        scope={
            "repository": "octo/demo",
            "list": codemode.namespace_tool("github_list_issues"),
            "update": codemode.namespace_tool("github_update_issue", args=["number", "patch"]),
        },
    )
    cm = codemode.CodeMode(tools=[github_list_issues, github_update_issue], namespaces=[issues], config=FAST)
    exec_tool = cm.tools_for("mcp")[0]
    assert "Namespace Issues: GitHub issue helpers." in exec_tool["description"]
    got = value(
        cm.exec_sync(
            """
            const open = await Issues.list({ state: "closed" });
            const updated = await namespaces.Issues.update(7, { title: "New" });
            return { open, updated, repo: Issues.repository };
            """
        )
    )
    assert got == {
        "open": [{"number": 1, "state": "closed"}],
        "updated": {"number": 7, "title": "New"},
        "repo": "octo/demo",
    }
    cm.close()


def test_current_call_reports_the_nested_call() -> None:
    calls: List[Optional[codemode.ToolCall]] = []

    async def whoami() -> str:
        calls.append(codemode.current_call())
        return "me"

    cm = codemode.CodeMode(tools=[whoami], config=FAST, session_id="s-1", agent_run_id="turn-9")
    result = run(cm.exec("return await tools.whoami({});", call_id="call-42"))
    assert value(result) == "me"
    call = calls[0]
    assert call is not None
    assert (call.catalog_id, call.session_id, call.agent_run_id, call.parent_call_id) == (
        "openclaw:core:whoami",
        "s-1",
        "turn-9",
        "call-42",
    )
    assert call.call_id.startswith(call.run_id)
    assert codemode.current_call() is None


def test_duplicate_tools_and_bad_config_are_refused() -> None:
    def a() -> None: ...

    try:
        codemode.CodeMode(tools=[a, a])
    except ValueError as e:
        assert "openclaw:core:a" in str(e)
    else:
        raise AssertionError("duplicate tools were accepted")
    try:
        codemode.CodeMode(tools=[a], config={"timeoutMs": "soon"})
    except ValueError as e:
        assert "timeoutMs" in str(e)
    else:
        raise AssertionError("a bad config was accepted")


def test_async_tools_run_on_the_callers_loop() -> None:
    loops: List[asyncio.AbstractEventLoop] = []

    async def where() -> bool:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0.01)
        return True

    cm = codemode.CodeMode(tools=[where], config=FAST)

    async def main() -> asyncio.AbstractEventLoop:
        assert value(await cm.exec("return await Promise.all([tools.where({}), tools.where({})]);")) == [True, True]
        return asyncio.get_running_loop()

    caller = run(main())
    assert loops == [caller, caller]
