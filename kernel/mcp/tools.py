"""MCP tools as a turn's tools: one `mcp__<server>__<tool>` each, or two finder tools when they would not fit.

Every call is approved like any tool (action `mcp`, target `<server>/<tool>`, so a remembered always/never
applies to exactly that tool) and its result is capped (see `kernel.mcp.results`). When the servers' tools
pass the prompt budget (more than `MAX_LISTED_TOOLS` tools, or schemas longer than a tenth of the model's
context window at four characters a token), the model gets `mcp_find_tools {query}` and `mcp_call {tool,
arguments}` instead of every schema; a call through `mcp_call` is the same call, approved the same way.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernel.mcp.connection import McpCallError, McpConnection
from kernel.mcp.results import MAX_RESULT_CHARS, result_text
from kernel.mcp.spec import ServerSpec, mcp_tool_name
from kernel.providers.base import ToolDefinition
from kernel.tools import Arguments, LocalTool, ToolContext, ToolResult

__all__ = ["MAX_LISTED_TOOLS", "McpTool", "mcp_turn_tools", "schema_budget"]

logger = logging.getLogger(__name__)

MAX_LISTED_TOOLS = 40
_FOUND_LIMIT = 8
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of one server, offered under its `mcp__` name."""

    definition: ToolDefinition
    connection: McpConnection
    tool: str

    @property
    def target(self) -> str:
        return f"{self.connection.spec.name}/{self.tool}"

    async def run(self, arguments: Any, ctx: ToolContext) -> ToolResult:
        """Approve, then call; every failure is an error result for the model."""
        if not isinstance(arguments, Mapping):
            return ToolResult("error: arguments must be a JSON object", is_error=True)
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        shown = shown if len(shown) <= 300 else shown[:297] + "..."
        summary = f"call the MCP tool {self.tool} of server {self.connection.spec.name} with {shown}"
        if not await ctx.approve("mcp", self.target, summary):
            return ToolResult(f"denied: the call of {self.target} was not approved", is_error=True)
        try:
            result = await self.connection.call(self.tool, dict(arguments))
        except McpCallError as exc:
            return ToolResult(f"error: {exc.message}", is_error=True)
        return result_text(result, self.connection.spec)


def _size(tool: McpTool) -> int:
    definition = tool.definition
    return len(definition.name) + len(definition.description) + len(json.dumps(definition.input_schema))


def schema_budget(context_window: int) -> int:
    """Characters of tool schemas a turn may spend on MCP tools: a tenth of the window, four characters a token."""
    return context_window * 4 // 10


def _withheld(value: Any, spec: ServerSpec) -> Any:
    """A schema with the server's secrets withheld from every string in it, keys included."""
    if isinstance(value, str):
        return spec.redact(value)
    if isinstance(value, list):
        return [_withheld(item, spec) for item in value]
    if isinstance(value, dict):
        return {spec.redact(str(key)): _withheld(item, spec) for key, item in value.items()}
    return value


def _listed(connections: list[McpConnection]) -> list[McpTool]:
    """Every tool as the model sees it: named, described and with its schema, the server's secrets withheld."""
    tools: dict[str, McpTool] = {}
    for connection in connections:
        spec = connection.spec
        for tool in connection.tools:
            name = mcp_tool_name(spec.name, spec.redact(tool.name))
            if name in tools:
                logger.warning("MCP tool %s of %s is left out: its name collides", name, spec.name)
                continue
            description = (tool.description or tool.title or f"The {tool.name} tool").strip()
            description = spec.redact(f"{description} (MCP server {spec.name})")
            raw = dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
            schema = _withheld(raw, spec)
            tools[name] = McpTool(ToolDefinition(name, description, schema), connection, tool.name)
    return list(tools.values())


def mcp_turn_tools(connections: list[McpConnection], *, context_window: int) -> dict[str, TurnTool]:
    """The MCP tools to offer this turn, by name: every tool when they fit the budget, else the finder pair.

    Args:
        connections: the ready servers of the run's session.
        context_window: the model's context window, in tokens.
    """
    tools = _listed(connections)
    if not tools:
        return {}
    if len(tools) <= MAX_LISTED_TOOLS and sum(_size(t) for t in tools) <= schema_budget(context_window):
        return {tool.definition.name: tool for tool in tools}
    finder = _Finder({tool.definition.name: tool for tool in tools})
    return {"mcp_find_tools": finder.find_tool(), "mcp_call": finder.call_tool()}


@dataclass(frozen=True, slots=True)
class _CallTool:
    """`mcp_call`: takes the model's raw arguments, since the inner call's arguments are any object."""

    definition: ToolDefinition
    finder: _Finder

    async def run(self, arguments: Any, ctx: ToolContext) -> ToolResult:
        return await self.finder.call(arguments, ctx)


TurnTool = McpTool | LocalTool | _CallTool


class _Finder:
    """Searches the tools by words of their names and descriptions, and calls one by name."""

    def __init__(self, tools: dict[str, McpTool]) -> None:
        self._tools = tools
        self._by_target = {tool.target: tool for tool in tools.values()}

    def _search(self, query: str) -> list[McpTool]:
        words = set(_WORD.findall(query.lower()))
        scored = []
        for tool in self._tools.values():
            text = f"{tool.definition.name} {tool.definition.description}".lower()
            found = set(_WORD.findall(text))
            score = sum(2 if word in found else 1 for word in words if word in text)
            if score or not words:
                scored.append((-score, tool.definition.name, tool))
        return [tool for _, _, tool in sorted(scored)[:_FOUND_LIMIT]]

    async def _find(self, args: Arguments, _ctx: ToolContext) -> ToolResult:
        query = args.text("query")
        found = self._search(query)
        if not found:
            servers = sorted({tool.connection.spec.name for tool in self._tools.values()})
            return ToolResult(
                f"no MCP tool matches {query!r}; {len(self._tools)} tools from {', '.join(servers)} are available: "
                "try other words"
            )
        lines = [f"{len(found)} of {len(self._tools)} MCP tools; call one with mcp_call {{tool, arguments}}:"]
        for tool in found:
            schema = json.dumps(tool.definition.input_schema, ensure_ascii=False, sort_keys=True)
            lines.append(f"- {tool.definition.name}: {tool.definition.description}\n  arguments schema: {schema}")
        return ToolResult("\n".join(lines))

    async def call(self, raw: Any, ctx: ToolContext) -> ToolResult:
        if not isinstance(raw, Mapping):
            return ToolResult("error: arguments must be a JSON object", is_error=True)
        name, arguments = raw.get("tool"), raw.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return ToolResult("error: `tool` must be a string and `arguments` an object", is_error=True)
        tool = self._tools.get(name) or self._by_target.get(name)
        if tool is None:
            return ToolResult(f"error: there is no MCP tool {name!r}; find one with mcp_find_tools", is_error=True)
        return await tool.run(arguments, ctx)

    def find_tool(self) -> LocalTool:
        return LocalTool(
            ToolDefinition(
                name="mcp_find_tools",
                description=(
                    f"Search the {len(self._tools)} tools of your MCP servers by words of their names and "
                    "descriptions; returns the best matches with their argument schemas."
                ),
                input_schema={
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "Words describing the tool."}},
                    "required": ["query"],
                    "additionalProperties": False,
                },
            ),
            self._find,
        )

    def call_tool(self) -> _CallTool:
        return _CallTool(
            ToolDefinition(
                name="mcp_call",
                description=(
                    "Call a tool of your MCP servers found with mcp_find_tools, by its mcp__ name. "
                    f"Results are capped at {MAX_RESULT_CHARS} characters."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "tool": {"type": "string", "description": "The tool's name, e.g. mcp__server__tool."},
                        "arguments": {"type": "object", "description": "The tool's arguments."},
                    },
                    "required": ["tool"],
                    "additionalProperties": False,
                },
            ),
            self,
        )
