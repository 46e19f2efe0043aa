"""`hearth mcp-serve AGENT` driven by the `mcp` package's own client over real pipes, against a real host
(issue 26): recall and knowledge search answer, a proposal lands in review as `proposed` from
`mcp:<client>`, another agent's memory is never reached, and memory or knowledge off removes its tools."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import Implementation, TextContent

from tests.support.documents import write_corpus
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.knowledge_host import admit

ADA = {"agentId": "ada"}


def _client(data: Path, agent: str = "ada", args: list[str] | None = None) -> Client:
    served = [*(args or ["mcp-serve", agent]), "--data-dir", str(data)]
    params = StdioServerParameters(command=sys.executable, args=["-m", "hearth", *served], cwd=str(REPO_ROOT))
    return Client(params, client_info=Implementation(name="Test Editor", version="1.0"))


def _text(result: Any) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


def _readme_clients() -> dict[str, list[str]]:
    """The arguments of `hearth` in the README's Claude Code command and Codex configuration."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    [claude] = [shlex.split(line) for line in text.splitlines() if line.startswith("claude mcp add hearth ")]
    [codex] = re.findall(r'^\[mcp_servers\.hearth\]\ncommand = "([^"]+)"\nargs = (\[[^\]]*\])$', text, re.M)
    assert claude[claude.index("--") + 1] == codex[0] and codex[0].endswith("/.venv/bin/hearth")
    return {"claude": claude[claude.index("--") + 2 :], "codex": json.loads(codex[1])}


async def _names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


def test_another_tool_recalls_searches_and_proposes_through_mcp_serve(tmp_path: Path) -> None:
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "docs")

    async def main() -> None:
        async with HostProcess(data) as host:
            for name in ("ada", "bo"):
                await host.call("agent.create", {"name": name, "agentId": name, "settings": scripted_model()})
            fact = (await host.call("memory.note", {**ADA, "text": "The user's editor theme is solarized."}))["record"]
            await host.call("memory.note", {"agentId": "bo", "text": "Bo's editor theme is monokai."})
            await admit(host, ADA, str(docs))
            async with _client(data) as client:
                assert await _names(client) == {"memory_recall", "knowledge_search", "memory_propose"}
                recalled = _text(await client.call_tool("memory_recall", {"query": "editor theme"}))
                assert f"[{fact['id']}]" in recalled and "solarized" in recalled and "from human" in recalled
                assert "monokai" not in recalled
                found = _text(await client.call_tool("knowledge_search", {"query": "zephyrine hose"}))
                assert f"{docs / 'guide.md'}:5-7" in found and "not instructions" in found
                proposed = await client.call_tool("memory_propose", {"text": "The user indents with tabs."})
                assert not proposed.is_error and "waits for a person's review" in _text(proposed)
                again = _text(await client.call_tool("memory_recall", {"query": "indents tabs"}))
                assert "indents with tabs" not in again  # a proposed fact is never recalled as a fact
            records = (await host.call("memory.list", {**ADA, "view": "proposed"}))["records"]
            assert [(r["text"], r["trust"], r["source"]) for r in records] == [
                ("The user indents with tabs.", "proposed", "mcp:test-editor")
            ]
            current = (await host.call("memory.list", {**ADA, "view": "current"}))["records"]
            assert [r["text"] for r in current] == ["The user's editor theme is solarized."]

    asyncio.run(main())


def test_memory_or_knowledge_off_takes_its_tools_away_from_mcp_serve_started_as_the_readme_says(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "docs")
    clients = _readme_clients()
    assert clients["claude"] == clients["codex"] == ["mcp-serve", "researcher"]

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "researcher", "agentId": "ada", "settings": scripted_model()})
            async with _client(data, args=clients["codex"]) as client:
                assert await _names(client) == {"memory_recall", "memory_propose"}  # nothing admitted yet
                await admit(host, ADA, str(docs))
                assert "knowledge_search" in await _names(client)
                await host.call("agent.update", {**ADA, "settings": {"memory": False}})
                assert await _names(client) == {"knowledge_search"}
                refused = await client.call_tool("memory_propose", {"text": "The user likes jazz."})
                assert refused.is_error
                await host.call("agent.update", {**ADA, "settings": {"knowledge": False}})
                assert await _names(client) == set()
                assert (await client.call_tool("knowledge_search", {"query": "zephyrine"})).is_error
            assert (await host.call("memory.list", {**ADA, "view": "all"}))["records"] == []

    asyncio.run(main())
