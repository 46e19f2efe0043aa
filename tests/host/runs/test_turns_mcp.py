"""Turn preparation for an agent with MCP servers: the specs the kernel gets, and what the agent is told."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from host.runs.turns import TurnPlanner
from host.store.agents import AgentStore
from host.store.secrets import SecretStore
from protocol.models.agents import AgentSettings
from protocol.models.kernel import KernelInitializeResult, ShellAvailability, SummarizeParams, SummarizeResult


async def _no_summary(_: SummarizeParams) -> SummarizeResult:
    raise AssertionError("no compaction expected")


def _planner(tmp_path: Path, mcp: ShellAvailability) -> tuple[TurnPlanner, AgentStore, SecretStore]:
    store, secrets = AgentStore(tmp_path), SecretStore(tmp_path)
    info = KernelInitializeResult(name="k", version="1", tools=[], shell=ShellAvailability(available=True), mcp=mcp)
    return TurnPlanner(store, secrets, _no_summary, lambda: info), store, secrets


def _settings(servers: list[dict[str, object]]) -> AgentSettings:
    return AgentSettings.model_validate({"model": {"provider": "scripted"}, "mcpServers": servers})


def test_where_no_sandbox_works_an_agent_with_servers_is_told_why_and_one_without_is_not(tmp_path: Path) -> None:
    planner, store, _ = _planner(tmp_path, ShellAvailability(available=False, reason="bubblewrap is not installed"))
    with_servers = store.create("ann", None, _settings([{"name": "notes", "command": sys.executable}]))
    without = store.create("bob", None, _settings([]))
    note = planner.tools_note(with_servers)
    assert "notes" in note and "bubblewrap is not installed" in note and "not started" in note
    assert planner.tools_note(without) == ""


def test_a_turn_carries_the_servers_with_their_secrets_resolved(tmp_path: Path) -> None:
    planner, store, secrets = _planner(tmp_path, ShellAvailability(available=True))
    secrets.set("notes-token", "tok-turn-7")
    agent = store.create(
        "ann", None, _settings([{"name": "notes", "command": sys.executable, "secretEnv": {"T": "notes-token"}}])
    )
    params = asyncio.run(planner.prepare(agent, "run-1"))
    (spec,) = params.mcp_servers
    assert spec.name == "notes" and spec.secret_env["T"].get_secret_value() == "tok-turn-7"
    assert "not started" not in params.messages[0].content
