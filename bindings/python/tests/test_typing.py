"""The stubs are real: mypy --strict accepts typed use of the package and rejects misuse."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _mypy(tmp_path: pathlib.Path, source: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "usage.py"
    path.write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file", str(ROOT / "pyproject.toml"), str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )


def test_mypy_accepts_typed_use(tmp_path: pathlib.Path) -> None:
    done = _mypy(
        tmp_path,
        """
        import codemode

        def add(a: int, b: int) -> int:
            return a + b

        async def main() -> str:
            cm = codemode.CodeMode(tools=[add, codemode.tool(add, name="plus")], config={"timeoutMs": 1000})
            result: codemode.Result = await cm.exec("return 1", language="typescript")
            run: codemode.Run = cm.start_wait(str(result.get("runId")))
            run.abort()
            tools: list[dict[str, object]] = cm.tools_for("anthropic")
            return await cm.handle_tool_call("exec", {"code": "return 1"}) + str(tools)
        """,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_rejects_misuse(tmp_path: pathlib.Path) -> None:
    done = _mypy(
        tmp_path,
        """
        import codemode

        cm = codemode.CodeMode(tools=[])
        cm.exec_sync(42)
        count: str = cm.run_count()
        """,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Argument 1 to "exec_sync" of "CodeMode" has incompatible type "int"' in done.stdout
    assert "Incompatible types in assignment" in done.stdout


def test_the_sources_keep_to_python_3_9_syntax() -> None:
    import ast

    sources = sorted((ROOT / "python" / "codemode").glob("*.py")) + sorted((ROOT / "tests").glob("*.py"))
    assert len(sources) >= 8
    for path in sources:
        ast.parse(path.read_text(), filename=str(path), feature_version=(3, 9))
