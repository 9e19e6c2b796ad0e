"""Shared helpers: every test drives the real extension (QuickJS in wasmtime), no mocks."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Dict, TypeVar

T = TypeVar("T")

# Short deadlines keep suspension tests quick; the floor of timeoutMs is 100 ms.
FAST: Dict[str, Any] = {"timeoutMs": 2000}


def run(awaitable: Awaitable[T]) -> T:
    """Runs a coroutine on a fresh event loop (no pytest plugin needed)."""

    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def value(result: Dict[str, Any]) -> Any:
    """The value of a completed result, with the whole result in the failure message."""
    assert result["status"] == "completed", result
    return result["value"]
