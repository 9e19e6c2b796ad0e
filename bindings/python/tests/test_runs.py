"""exec/wait on asyncio and sync: suspend/resume, approval futures, limits, TypeScript,
cancellation, the GIL, and two CodeMode objects in one process."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import Any, Dict, List

import pytest
from conftest import FAST, run, value

import codemode


def test_yield_control_suspends_and_wait_resumes() -> None:
    def step(n: int) -> int:
        return n + 1

    cm = codemode.CodeMode(tools=[step], config=FAST)

    async def main() -> Dict[str, Any]:
        first = await cm.exec(
            """
            text("before");
            const a = await tools.step({ n: 1 });
            await yield_control("checkpoint");
            text("after");
            return a + await tools.step({ n: 10 });
            """
        )
        assert first["status"] == "waiting", first
        assert first["reason"] == "yield"
        assert first["output"] == [{"type": "text", "text": "before"}]
        assert cm.has_run(first["runId"]) and cm.run_count() == 1
        second = await cm.wait(first["runId"])
        assert second["output"] == [{"type": "text", "text": "after"}]
        assert not cm.has_run(first["runId"])
        again = await cm.wait(first["runId"])
        assert again["status"] == "failed" and again["code"] == "invalid_input"
        assert again["error"] == "code mode run is unavailable or expired."
        return second

    assert value(run(main())) == 13


def test_wait_is_scoped_to_session_and_agent_run() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config=FAST, session_id="alice", agent_run_id="turn-1")
    waiting = cm.exec_sync("await yield_control(); return 1;")
    run_id = waiting["runId"]
    other_session = cm.wait_sync(run_id, session_id="bob")
    assert other_session["code"] == "invalid_input"
    assert other_session["error"] == "code mode run belongs to a different session."
    other_turn = cm.wait_sync(run_id, agent_run_id="turn-2")
    assert other_turn["error"] == "code mode run belongs to a different agent run."
    assert value(cm.wait_sync(run_id)) == 1
    cm.close()


def test_an_approval_future_suspends_the_run_until_the_host_resolves_it() -> None:
    pending: List["asyncio.Future[Any]"] = []
    calls: List[codemode.ToolCall] = []

    async def deploy(service: str) -> "asyncio.Future[Dict[str, Any]]":
        """Deploys a service once a human approves."""
        call = codemode.current_call()
        assert call is not None
        calls.append(call)
        future: asyncio.Future[Dict[str, Any]] = asyncio.get_running_loop().create_future()
        pending.append(future)
        return future

    cm = codemode.CodeMode(tools=[deploy], config={"timeoutMs": 300})

    async def main() -> Dict[str, Any]:
        first = await cm.exec('const r = await tools.deploy({ service: "api" }); return { approved: r };')
        assert first["status"] == "waiting", first
        assert first["reason"] == "pending_tools"
        [pending_call] = first["pendingToolCalls"]
        assert pending_call["toolId"] == "openclaw:core:deploy"
        assert pending_call["input"] == {"service": "api"}
        assert pending_call["callId"] == calls[0].call_id
        # Still unresolved: another wait suspends again.
        again = await cm.wait(first["runId"])
        assert again["status"] == "waiting"
        pending[0].set_result({"by": "ops", "ok": True})
        return await cm.wait(first["runId"])

    assert value(run(main())) == {"approved": {"by": "ops", "ok": True}}
    assert cm.run_count() == 0


def test_a_denied_approval_reaches_the_guest_as_a_catchable_error() -> None:
    futures: List["concurrent.futures.Future[Any]"] = []

    def transfer(amount: int) -> "concurrent.futures.Future[Any]":
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        futures.append(future)
        return future

    cm = codemode.CodeMode(tools=[transfer], config={"timeoutMs": 200})
    first = cm.exec_sync(
        """
        try { return await tools.transfer({ amount: 5 }); }
        catch (e) { return { refused: e.message, code: e.code }; }
        """
    )
    assert first["status"] == "waiting", first
    futures[0].set_exception(codemode.ToolError("the user declined", code="denied"))
    assert value(cm.wait_sync(first["runId"])) == {"refused": "the user declined", "code": "denied"}
    cm.close()


def test_the_timeout_limit() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config={"timeoutMs": 100})
    result = cm.exec_sync("while (true) {}")
    assert result["status"] == "failed" and result["code"] == "timeout", result
    assert "timeoutMs (100 ms)" in result["error"]
    cm.close()


def test_the_output_limit_at_and_past_the_bound() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config={"maxOutputBytes": 1024})
    at = cm.exec_sync('text("x".repeat(1000)); return 1;')
    assert value(at) == 1
    past = cm.exec_sync('text("x".repeat(2000)); return 1;')
    assert past["status"] == "failed" and past["code"] == "output_limit_exceeded", past
    cm.close()


def test_the_memory_limit() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config={"memoryLimitBytes": 8 * 1024 * 1024})
    result = cm.exec_sync("const a = []; while (true) a.push('x'.repeat(1 << 16) + a.length);")
    assert result["status"] == "failed", result
    assert "memoryLimitBytes" in result["error"] or "out of memory" in result["error"].lower(), result
    # The runtime survives and runs the next cell.
    assert value(cm.exec_sync("return 2")) == 2
    cm.close()


def test_max_pending_tool_calls_bounds_parallel_calls() -> None:
    active = 0
    peak = 0

    async def slow(i: int) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.02)
        active -= 1
        return i

    code = "return await Promise.all([1, 2, 3, 4].map((i) => tools.slow({ i })));"
    one = codemode.CodeMode(tools=[slow], config={"maxPendingToolCalls": 1, "timeoutMs": 5000})
    assert value(run(one.exec(code))) == [1, 2, 3, 4]
    assert peak == 1
    peak = 0
    four = codemode.CodeMode(tools=[slow], config={"maxPendingToolCalls": 4, "timeoutMs": 5000})
    assert value(run(four.exec(code))) == [1, 2, 3, 4]
    assert peak == 4


def test_typescript_cells() -> None:
    def double(n: int) -> int:
        return n * 2

    cm = codemode.CodeMode(tools=[double], config=FAST)
    code = """
    interface Out { doubled: number[] }
    const input: number[] = [1, 2, 3];
    const doubled = await Promise.all(input.map((n: number) => tools.double({ n }) as Promise<number>));
    return { doubled } satisfies Out;
    """
    assert value(cm.exec_sync(code, language="typescript")) == {"doubled": [2, 4, 6]}
    as_js = cm.exec_sync(code)
    assert as_js["status"] == "failed"
    ts_only = codemode.CodeMode(tools=[double], config={"languages": ["typescript"]})
    refused = ts_only.exec_sync("return 1")
    assert refused["code"] == "invalid_input" and "disabled" in refused["error"], refused
    module = cm.exec_sync('import fs from "fs";', language="typescript")
    assert module["code"] == "invalid_input", module
    cm.close()
    ts_only.close()


def test_cancelling_the_awaiting_task_aborts_the_run() -> None:
    events: List[str] = []

    async def forever() -> None:
        events.append("started")
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise

    cm = codemode.CodeMode(tools=[forever], config={"timeoutMs": 60000})

    async def main() -> None:
        task = asyncio.ensure_future(cm.exec("await tools.forever({}); return 1;"))
        while not events:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(200):
            if "cancelled" in events:
                break
            await asyncio.sleep(0.01)

    run(main())
    assert events == ["started", "cancelled"]
    assert cm.run_count() == 0


def test_run_abort_gives_the_aborted_result() -> None:
    async def forever() -> None:
        await asyncio.sleep(3600)

    cm = codemode.CodeMode(tools=[forever], config={"timeoutMs": 60000})

    async def main() -> Dict[str, Any]:
        r = cm.start_exec("await tools.forever({}); return 1;")
        await asyncio.sleep(0.2)
        assert not r.done()
        r.abort()
        return await r.result()

    result = run(main())
    assert result["status"] == "failed" and result["code"] == "aborted", result
    assert result["error"] == "code mode run was aborted."
    assert cm.run_count() == 0


def test_exec_sync_timeout_aborts_the_run() -> None:
    futures: List["concurrent.futures.Future[Any]"] = []

    def hang() -> "concurrent.futures.Future[Any]":
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        futures.append(future)
        return future

    cm = codemode.CodeMode(tools=[hang], config={"timeoutMs": 60000})
    with pytest.raises(concurrent.futures.TimeoutError):
        cm.exec_sync("return await tools.hang({});", timeout=0.5)
    assert cm.run_count() == 0
    assert value(cm.exec_sync("return 3")) == 3
    cm.close()


def test_the_gil_is_released_while_the_guest_runs() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config={"timeoutMs": 5000})
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = ticks
        # About half a second of pure guest CPU work.
        result = cm.exec_sync("const end = Date.now() + 500; let n = 0; while (Date.now() < end) n++; return n > 0;")
        during = ticks - before
    finally:
        stop.set()
        counter.join()
    assert value(result) is True
    assert during > 50, f"the Python thread only ran {during} times while the guest ran"
    cm.close()


def test_the_event_loop_keeps_running_while_the_guest_runs() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config={"timeoutMs": 5000})

    async def main() -> int:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        ticker = asyncio.ensure_future(tick())
        result = await cm.exec("const end = Date.now() + 400; while (Date.now() < end) {} return 1;")
        ticker.cancel()
        assert value(result) == 1
        return ticks

    assert run(main()) > 20


def test_sync_variants_refuse_inside_a_running_loop() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config=FAST)

    async def main() -> None:
        with pytest.raises(RuntimeError, match="inside an event loop"):
            cm.exec_sync("return 1")

    run(main())
    cm.close()


def test_two_codemode_objects_in_one_process() -> None:
    def alpha() -> str:
        return "a"

    def beta() -> str:
        return "b"

    one = codemode.CodeMode(tools=[alpha], config=FAST, session_id="shared")
    two = codemode.CodeMode(tools=[beta], config=FAST, session_id="shared")

    async def main() -> None:
        a, b = await asyncio.gather(
            one.exec("return { names: ALL_TOOLS.map((t) => t.name), v: await tools.alpha({}) };"),
            two.exec("return { names: ALL_TOOLS.map((t) => t.name), v: await tools.beta({}) };"),
        )
        assert value(a) == {"names": ["alpha"], "v": "a"}
        assert value(b) == {"names": ["beta"], "v": "b"}
        missing = await one.exec('return await tools.callValue("openclaw:core:beta", {});')
        assert missing["status"] == "failed" and "openclaw:core:beta" in missing["error"]
        parked = await one.exec("await yield_control(); return 1;")
        assert parked["status"] == "waiting"
        elsewhere = await two.wait(parked["runId"])
        assert elsewhere["code"] == "invalid_input"
        assert value(await one.wait(parked["runId"])) == 1

    run(main())


def test_the_snapshot_limit() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config={"maxSnapshotBytes": 1024})
    result = cm.exec_sync("const big = 'y'.repeat(200000) + Math.random(); await yield_control(); return big.length;")
    assert result["status"] == "failed" and result["code"] == "snapshot_limit_exceeded", result
    assert cm.run_count() == 0
    cm.close()


def test_the_cap_on_suspended_runs_at_and_past_the_bound() -> None:
    cm = codemode.CodeMode(tools=[lambda: 1], config=FAST)

    async def main() -> None:
        parked = [await cm.exec("await yield_control(); return 1;") for _ in range(64)]
        assert all(r["status"] == "waiting" for r in parked)
        assert cm.run_count() == 64
        refused = await cm.exec("await yield_control(); return 1;")
        assert refused["status"] == "failed" and refused["code"] == "invalid_input"
        assert refused["error"] == "too many suspended code mode runs."
        assert value(await cm.wait(parked[0]["runId"])) == 1
        assert cm.end_session() == 63
        assert cm.run_count() == 0

    run(main())


def test_a_dropped_codemode_is_collected_with_its_runs() -> None:
    import gc
    import weakref

    cm = codemode.CodeMode(tools=[lambda: 1], config=FAST)
    parked = cm.exec_sync("await yield_control(); return 1;")
    assert parked["status"] == "waiting" and cm.run_count() == 1
    ref = weakref.ref(cm)
    del cm
    gc.collect()
    assert ref() is None, "the runtime keeps its CodeMode alive (a reference cycle through the dispatcher)"
