"""Code Mode in-process for Python agents.

The model sees two tools, ``exec`` and ``wait``, and writes a short JavaScript or TypeScript program
that searches, describes and calls your tools inside a QuickJS guest compiled to WebAssembly.
Build a :class:`CodeMode` from your tools, give the model :meth:`CodeMode.tools_for`, and route its
tool calls through :meth:`CodeMode.handle_tool_call`.
"""

from ._codemode import FORMATS, CodeMode, Result, Run
from ._tools import McpServer, Namespace, Tool, ToolCall, ToolError, current_call, namespace_tool, tool

__all__ = [
    "FORMATS",
    "CodeMode",
    "McpServer",
    "Namespace",
    "Result",
    "Run",
    "Tool",
    "ToolCall",
    "ToolError",
    "current_call",
    "namespace_tool",
    "tool",
]
