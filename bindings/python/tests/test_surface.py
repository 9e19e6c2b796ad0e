"""The model-visible surface: tools_for in each format, handle_tool_call, the payload guard, and
the README's agent loop against a scripted fake model."""

from __future__ import annotations

import json
import pathlib
import re
import types
from typing import Any, Dict, List

import pytest
from conftest import FAST, run

import codemode


def get_weather(city: str) -> Dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "tempC": 21}


@codemode.tool(direct_only=True)
def screenshot(page: str) -> Dict[str, Any]:
    """Takes a screenshot (an image cannot cross the JSON bridge)."""
    return {"page": page, "png": "..."}


def test_tools_for_each_format() -> None:
    cm = codemode.CodeMode(tools=[get_weather, screenshot], config=FAST)
    mcp = cm.tools_for("mcp")
    assert [t["name"] for t in mcp] == ["exec", "wait", "screenshot"]
    exec_tool = mcp[0]
    assert '"openclaw:core:get_weather"' in exec_tool["description"]  # the quick index
    language = exec_tool["inputSchema"]["properties"]["language"]
    assert language["type"] == "string" and language["enum"] == ["javascript", "typescript"]
    assert mcp[1]["inputSchema"]["required"] == ["runId"]
    openai = cm.tools_for("openai")
    assert openai[0] == {
        "type": "function",
        "function": {"name": "exec", "description": exec_tool["description"], "parameters": exec_tool["inputSchema"]},
    }
    responses = cm.tools_for("openai-responses")
    assert responses[1]["type"] == "function" and responses[1]["name"] == "wait"
    anthropic = cm.tools_for("anthropic")
    assert anthropic[2]["name"] == "screenshot"
    assert anthropic[2]["input_schema"]["required"] == ["page"]
    assert set(anthropic[0]) == {"name", "description", "input_schema"}
    with pytest.raises(ValueError, match="unknown tool format"):
        cm.tools_for("gemini")
    assert cm.is_active


def test_disabled_code_mode_shows_the_tools_unchanged() -> None:
    cm = codemode.CodeMode(tools=[get_weather], config={"enabled": False})
    assert not cm.is_active
    assert [t["name"] for t in cm.tools_for("mcp")] == ["get_weather"]
    refused = cm.exec_sync("return 1")
    assert refused["code"] == "invalid_input" and refused["error"] == "code mode is not enabled for this run."
    # Without Code Mode every tool is direct, and handle_tool_call runs it.
    assert json.loads(cm.handle_tool_call_sync("get_weather", '{"city": "Rome"}')) == {"city": "Rome", "tempC": 21}
    cm.close()


def test_check_provider_payload() -> None:
    cm = codemode.CodeMode(tools=[get_weather, screenshot], config=FAST)
    cm.check_provider_payload(["exec", "wait", "screenshot"])
    with pytest.raises(ValueError, match="get_weather"):
        cm.check_provider_payload(["exec", "wait", "get_weather"])
    with pytest.raises(ValueError, match="exec"):
        cm.check_provider_payload(["wait"])


def test_handle_tool_call_routes_exec_and_wait() -> None:
    cm = codemode.CodeMode(tools=[get_weather], config=FAST)

    async def main() -> None:
        text = await cm.handle_tool_call("exec", json.dumps({"code": 'return await tools.get_weather({ city: "Oslo" })'}))
        result = json.loads(text)
        assert result["status"] == "completed" and result["value"] == {"city": "Oslo", "tempC": 21}
        assert result["telemetry"]["modelVisibleTools"] == ["exec", "wait"]
        waiting = json.loads(await cm.handle_tool_call("exec", {"code": "await yield_control(); return 2;"}))
        assert waiting["status"] == "waiting"
        done = json.loads(await cm.handle_tool_call("wait", json.dumps({"runId": waiting["runId"]})))
        assert done["value"] == 2
        bad = json.loads(await cm.handle_tool_call("exec", "{not json"))
        assert bad["status"] == "failed" and bad["code"] == "invalid_input"
        empty = json.loads(await cm.handle_tool_call("exec", {}))
        assert empty["code"] == "invalid_input" and "`code`" in empty["error"]
        unknown = json.loads(await cm.handle_tool_call("exec", {"code": "return 1", "shell": True}))
        assert unknown["status"] == "failed" and unknown["code"] == "invalid_input"

    run(main())


def test_handle_tool_call_direct_only_and_unknown_tools() -> None:
    cm = codemode.CodeMode(tools=[get_weather, screenshot], config=FAST)
    direct = json.loads(cm.handle_tool_call_sync("screenshot", '{"page": "home"}'))
    assert direct == {"page": "home", "png": "..."}
    unknown = json.loads(cm.handle_tool_call_sync("get_weather", '{"city": "x"}'))
    assert "unknown tool 'get_weather'" in unknown["error"]
    assert "exec, wait, screenshot" in unknown["error"]
    cm.close()


def _readme_loop() -> str:
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    match = re.search(r"<!-- agent-loop -->\s*```python\n(.*?)```\s*<!-- /agent-loop -->", readme, re.S)
    assert match, "README.md lost its agent-loop block"
    return match.group(1)


class ScriptedModel:
    """A fake OpenAI client: answers with scripted tool calls and checks what it was sent."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self.create))

    async def create(self, *, model: str, messages: List[Any], tools: List[Dict[str, Any]]) -> Any:
        self.requests.append({"messages": list(messages), "tools": tools})
        turn = len(self.requests)
        assert [t["function"]["name"] for t in tools] == ["exec", "wait"]
        if turn == 1:
            code = 'const w = await tools.get_weather({ city: "Lisbon" }); text("checked"); return w;'
            return self._reply(tool_calls=[self._call("call_1", "exec", {"code": code})])
        if turn == 2:
            result = json.loads(messages[-1]["content"])
            assert messages[-1]["tool_call_id"] == "call_1"
            assert result["status"] == "completed", result
            code = "await yield_control(); return 'resumed';"
            return self._reply(tool_calls=[self._call("call_2", "exec", {"code": code, "language": "typescript"})])
        if turn == 3:
            waiting = json.loads(messages[-1]["content"])
            assert waiting["status"] == "waiting", waiting
            return self._reply(tool_calls=[self._call("call_3", "wait", {"runId": waiting["runId"]})])
        resumed = json.loads(messages[-1]["content"])
        assert resumed["value"] == "resumed"
        weather = json.loads(messages[2]["content"])["value"]
        return self._reply(content=f"It is {weather['tempC']}C in {weather['city']}.")

    @staticmethod
    def _call(call_id: str, name: str, arguments: Dict[str, Any]) -> Any:
        return types.SimpleNamespace(
            id=call_id, type="function", function=types.SimpleNamespace(name=name, arguments=json.dumps(arguments))
        )

    @staticmethod
    def _reply(content: Any = None, tool_calls: Any = None) -> Any:
        def model_dump(exclude_none: bool = False) -> Dict[str, Any]:
            out: Dict[str, Any] = {"role": "assistant", "content": content}
            if tool_calls:
                out["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                    for c in tool_calls
                ]
            return {k: v for k, v in out.items() if v is not None} if exclude_none else out

        message = types.SimpleNamespace(content=content, tool_calls=tool_calls, model_dump=model_dump)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


def test_the_readme_agent_loop_runs_against_a_scripted_model() -> None:
    source = _readme_loop()
    assert len(source.strip().splitlines()) <= 25
    namespace: Dict[str, Any] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    model = ScriptedModel()
    answer = run(namespace["agent"](model, "How warm is Lisbon?"))
    assert answer == "It is 21C in Lisbon."
    assert len(model.requests) == 4
    roles = [m["role"] for m in model.requests[-1]["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
