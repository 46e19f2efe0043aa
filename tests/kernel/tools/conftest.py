"""Fixtures: a data dir with agent `ada` (the one running tools) and a neighbour `bob`, and an async runner.

Helpers are fixtures (not imports) so the suite works under any pytest import mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kernel.tools import ShellPool, ToolContext
from sandbox import Policy, build_policy


@dataclass
class Env:
    """The data dir, ada's workspace and a record of every approval the tools asked for."""

    data: Path
    answer: bool = True
    asked: list[tuple[str, str]] = field(default_factory=list)

    @property
    def scratch(self) -> Path:
        return self.data / "agents" / "ada" / "scratch"

    def policy(self, *, network: bool = False) -> Policy:
        return build_policy(str(self.data), "ada", network=network)

    async def approve(self, action: str, target: str, summary: str, *, always_ask: bool = False) -> bool:
        self.asked.append((action, target))
        return self.answer

    def context(self, shells: ShellPool | None = None, *, network: bool = False) -> ToolContext:
        return ToolContext(self.policy(network=network), "ada", self.approve, shells)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    data = tmp_path / "data"
    for agent_id in ("ada", "bob"):
        (data / "agents" / agent_id / "memory").mkdir(parents=True)
        (data / "agents" / agent_id / "scratch").mkdir()
        (data / "agents" / agent_id / "memory" / "MEMORY.md").write_text(f"{agent_id} likes tea\n", encoding="utf-8")
    return Env(data)
