"""kernel.mcp: an agent's MCP servers, each a sandboxed child of the kernel, as tools of its turns.
`McpPool` keeps their sessions and `mcp_turn_tools` makes the ready ones a turn's tools.

A session is kept per (session key, server), started on the first turn that offers its tools inside the
agent's OS sandbox and stopped when the agent goes, its settings change or it sits idle; the turn's tools are
approved, capped, and behind `mcp_find_tools` / `mcp_call` when they would not fit the prompt.
"""

from kernel.mcp.connection import McpCallError, McpConnection
from kernel.mcp.pool import McpPool, StatusSink
from kernel.mcp.results import MAX_RESULT_CHARS, result_text
from kernel.mcp.spec import ServerSpec, mcp_tool_name
from kernel.mcp.tools import MAX_LISTED_TOOLS, McpTool, mcp_turn_tools, schema_budget

__all__ = [
    "MAX_LISTED_TOOLS",
    "MAX_RESULT_CHARS",
    "McpCallError",
    "McpConnection",
    "McpPool",
    "McpTool",
    "ServerSpec",
    "StatusSink",
    "mcp_tool_name",
    "mcp_turn_tools",
    "result_text",
    "schema_budget",
]
