"""Fixtures: a data dir with two agents, alice (whose files are protected) and mallory (who tries to reach them).

Helpers are fixtures (not imports) so the suite works under any pytest import mode.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kernel.tools import ShellPool, ToolContext
from sandbox import Policy, build_policy


async def _always_yes(action: str, target: str, summary: str) -> bool:
    return True


@dataclass(frozen=True)
class World:
    """The data dir and the canaries planted in alice's protected files."""

    data: Path
    memory_canary: str = "CANARY-ALICE-MEMORY-5f1d"
    prompt_canary: str = "CANARY-ALICE-PROMPT-88a2"
    transcript_canary: str = "CANARY-ALICE-TRANSCRIPT-02c9"
    secrets_canary: str = "CANARY-HOST-SECRETS-e41b"
    notes: str = "ALICE-NOTES-ORIGINAL\n"

    def agent(self, agent_id: str) -> Path:
        return self.data / "agents" / agent_id

    def policy(self, agent_id: str, *, network: bool = False) -> Policy:
        return build_policy(str(self.data), agent_id, network=network)

    def context(self, agent_id: str, shells: ShellPool | None = None) -> ToolContext:
        return ToolContext(self.policy(agent_id), agent_id, _always_yes, shells)

    def snapshot(self) -> dict[str, bytes]:
        """Every regular file under the data dir, by relative path."""
        return {
            str(p.relative_to(self.data)): p.read_bytes()
            for p in sorted(self.data.rglob("*"))
            if p.is_file() and not p.is_symlink()
        }

    def build(self) -> World:
        agents = self.data / "agents"
        agents.mkdir(parents=True)
        (self.data / "host.lock").write_text('{"pid": 1}', encoding="utf-8")
        (self.data / "settings.json").write_text("{}", encoding="utf-8")
        (self.data / "secrets.bin").write_text(self.secrets_canary, encoding="utf-8")
        (self.data / "secrets.key").write_text(self.secrets_canary + "-key", encoding="utf-8")
        for agent_id, memory_name in (("alice", "secret.md"), ("mallory", "mallory-notes.md")):
            own = agent_id == "alice"
            home = agents / agent_id
            (home / "memory").mkdir(parents=True)
            (home / "scratch").mkdir()
            files = {
                "profile.json": f'{{"name": "{agent_id}"}}',
                "settings.json": "{}",
                "tool-approvals.json": '{"rules": []}',
                "transcript.jsonl": self.transcript_canary if own else "{}",
                "prompt-cache.json": self.prompt_canary if own else "{}",
                f"memory/{memory_name}": self.memory_canary if own else "mallory's own memory",
                "memory/ledger.jsonl": "{}\n",
                "scratch/notes.txt": self.notes if own else "mallory's notes\n",
            }
            for name, text in files.items():
                (home / name).write_text(text, encoding="utf-8")
        return self


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path / "data").build()


@pytest.fixture
def arun() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run one coroutine to completion, bounded by a timeout."""

    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        async def bounded() -> Any:
            async with asyncio.timeout(60):
                return await coro

        return asyncio.run(bounded())

    return run
