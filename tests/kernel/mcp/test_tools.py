"""MCP tools as turn tools: names, approvals, the prompt budget and the finder pair, with real servers."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types

from kernel.mcp import (
    MAX_LISTED_TOOLS,
    MAX_RESULT_CHARS,
    McpConnection,
    McpPool,
    ServerSpec,
    mcp_tool_name,
    mcp_turn_tools,
    result_text,
)
from kernel.tools import ToolContext
from protocol.models.mcp import McpStatusEvent
from sandbox import Launch, build_policy, detect_shell_sandbox

SUPPORT = Path(__file__).resolve().parents[2] / "support"
NOTES = ServerSpec("notes", sys.executable, (str(SUPPORT / "mcp_notes.py"),))
MANY = ServerSpec("many", sys.executable, (str(SUPPORT / "mcp_many.py"),))


async def _ignore(_: McpStatusEvent) -> None:
    return None


def _with_servers(
    tmp_path: Path,
    specs: list[ServerSpec],
    body: Callable[[list[Any], ToolContext, list[tuple[str, str]]], Awaitable[None]],
) -> None:
    """Start `specs` for agent ann and run `body(connections, context, asked)`; `asked` records approvals."""
    (tmp_path / "agents/ann/scratch").mkdir(parents=True)
    policy = build_policy(str(tmp_path), "ann")
    asked: list[tuple[str, str]] = []

    async def approve(action: str, target: str, summary: str) -> bool:
        asked.append((action, target))
        return target != "notes/crash"

    async def main() -> None:
        pool = McpPool(detect_shell_sandbox("bubblewrap"), _ignore)
        serving = asyncio.create_task(pool.serve())
        await asyncio.sleep(0)
        try:
            connections = await pool.ready_servers("ann", policy, specs)
            await body(connections, ToolContext(policy, "ann", approve), asked)
        finally:
            await pool.close_all()
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)

    asyncio.run(main())


def test_each_tool_is_named_for_its_server_and_every_call_is_approved_as_mcp_server_tool(tmp_path: Path) -> None:
    async def body(connections: list[Any], ctx: ToolContext, asked: list[tuple[str, str]]) -> None:
        tools = mcp_turn_tools(connections, context_window=128_000)
        assert sorted(tools) == ["mcp__notes__add", "mcp__notes__crash", "mcp__notes__list", "mcp__notes__wait"]
        added = await tools["mcp__notes__add"].run({"text": "call Ines"}, ctx)
        listed = await tools["mcp__notes__list"].run({}, ctx)
        assert not added.is_error and "call Ines" in listed.content
        refused = await tools["mcp__notes__crash"].run({}, ctx)
        assert refused.is_error and refused.content.startswith("denied")
        assert asked == [("mcp", "notes/add"), ("mcp", "notes/list"), ("mcp", "notes/crash")]
        assert "call Ines" in (await tools["mcp__notes__list"].run({}, ctx)).content, "the refused crash never ran"

    _with_servers(tmp_path, [NOTES], body)


def test_sixty_tools_are_offered_through_the_finder_pair_and_a_call_through_it_works(tmp_path: Path) -> None:
    async def body(connections: list[Any], ctx: ToolContext, asked: list[tuple[str, str]]) -> None:
        (many,) = connections
        assert len(many.tools) == 60 > MAX_LISTED_TOOLS
        tools = mcp_turn_tools(connections, context_window=1_000_000)
        assert sorted(tools) == ["mcp_call", "mcp_find_tools"]
        found = await tools["mcp_find_tools"].run({"query": "reverse the text"}, ctx)
        assert found.content.splitlines()[1].startswith("- mcp__many__reverse_text:")
        called = await tools["mcp_call"].run({"tool": "mcp__many__reverse_text", "arguments": {"text": "abc"}}, ctx)
        assert called.content == "cba" and asked == [("mcp", "many/reverse_text")]
        unknown = await tools["mcp_call"].run({"tool": "mcp__many__nothing", "arguments": {}}, ctx)
        assert unknown.is_error and "mcp_find_tools" in unknown.content

    _with_servers(tmp_path, [MANY], body)


def test_a_small_context_window_moves_even_a_few_tools_behind_the_finder(tmp_path: Path) -> None:
    async def body(connections: list[Any], ctx: ToolContext, asked: list[tuple[str, str]]) -> None:
        assert len(mcp_turn_tools(connections, context_window=128_000)) == 4
        assert sorted(mcp_turn_tools(connections, context_window=256)) == ["mcp_call", "mcp_find_tools"]

    _with_servers(tmp_path, [NOTES], body)


def test_tool_names_are_safe_for_every_provider() -> None:
    assert mcp_tool_name("git", "log.show/all") == "mcp__git__log_show_all"
    assert len(mcp_tool_name("server", "x" * 100)) == 64


def _result(*blocks: Any, is_error: bool = False, structured: Any = None) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=list(blocks), is_error=is_error, structured_content=structured)


def test_a_long_result_is_cut_and_says_its_cap() -> None:
    text = result_text(_result(mcp_types.TextContent(type="text", text="x" * (MAX_RESULT_CHARS * 2))), NOTES).content
    assert len(text) < MAX_RESULT_CHARS + 200 and f"capped at {MAX_RESULT_CHARS} characters" in text


def test_images_are_described_structured_content_is_json_and_errors_stay_errors() -> None:
    image = mcp_types.ImageContent(type="image", data="aGVsbG8h", mime_type="image/png")
    assert result_text(_result(image), NOTES).content == "[image image/png, 6 bytes, not shown]"
    assert result_text(_result(structured={"b": 1, "a": 2}), NOTES).content == '{"a": 2, "b": 1}'
    failed = result_text(_result(mcp_types.TextContent(type="text", text="no such note"), is_error=True), NOTES)
    assert failed.is_error and failed.content == "error: no such note"


def test_a_secret_value_in_a_result_is_withheld() -> None:
    spec = ServerSpec("s", "x", secrets=(("TOKEN", "tok-abc-123"), ("LONGER", "tok-abc-123-and-more")))
    said = result_text(_result(mcp_types.TextContent(type="text", text="a tok-abc-123-and-more b tok-abc-123")), spec)
    assert said.content == "a [secret LONGER withheld] b [secret TOKEN withheld]"


def test_a_secret_in_a_tools_name_description_or_schema_is_withheld_from_the_model() -> None:
    """Issue 21.5: what the model is offered is what the server says, too."""
    secret = "tok-in-the-schema-42"
    encoded = base64.b64encode(secret.encode()).decode()
    spec = ServerSpec("s", sys.executable, secrets=(("TOKEN", secret),))
    connection = McpConnection(spec, Launch((), (), "/"), _report, program=sys.executable, call_timeout=1)
    schema = {"type": "object", "properties": {"key": {"type": "string", "default": secret, "description": encoded}}}
    connection.tools = (
        mcp_types.Tool(name=f"get_{secret}", description=f"Uses {secret}.", input_schema=schema),
        mcp_types.Tool(name="plain", description="Nothing secret.", input_schema={"type": "object"}),
    )
    tools = mcp_turn_tools([connection], context_window=128_000)
    shown = json.dumps(
        [(t.definition.name, t.definition.description, t.definition.input_schema) for t in tools.values()]
    )
    assert secret not in shown and encoded not in shown and "[secret TOKEN withheld]" in shown
    assert (
        "mcp__s__plain" in tools and tools["mcp__s__plain"].definition.description == "Nothing secret. (MCP server s)"
    )


async def _report(state: str, **_: Any) -> None:
    return None
