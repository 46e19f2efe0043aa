"""Fixtures: a data dir with two agents, alice (whose files are protected) and mallory (who tries to reach them).

Helpers are fixtures (not imports) so the suite works under any pytest import mode.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from kernel.tools import ShellPool, ToolContext
from sandbox import Policy, build_policy


async def _always_yes(action: str, target: str, summary: str, *, always_ask: bool = False) -> bool:
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

    @property
    def outside(self) -> Path:
        """A directory of the person's beside the data dir, holding a program the kernel could run."""
        return self.data.parent / "outside"

    def policy(self, agent_id: str, *, network: bool = False) -> Policy:
        return build_policy(str(self.data), agent_id, network=network)

    def context(self, agent_id: str, shells: ShellPool | None = None) -> ToolContext:
        return ToolContext(self.policy(agent_id), agent_id, _always_yes, shells)

    def snapshot(self) -> dict[str, bytes]:
        """Every regular file under the data dir (by relative path) and beside it (as `../outside/...`).

        Walked through directory descriptors, so a tree deeper than PATH_MAX (see `deep_tree`) is no obstacle.
        """
        files: dict[str, bytes] = {}
        for top, prefix in ((self.data, ""), (self.outside, "../outside/")):
            for dirpath, _, names, dir_fd in os.fwalk(top, follow_symlinks=False):
                relative = os.path.relpath(dirpath, top)
                for name in names:
                    if not stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                        continue
                    fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
                    with os.fdopen(fd, "rb") as handle:
                        key = name if relative == "." else f"{relative}/{name}"
                        files[prefix + key] = handle.read()
        return dict(sorted(files.items()))

    def deep_tree(self, agent_id: str, levels: int = 22) -> None:
        """Nested dirs in the agent's scratch whose path is longer than PATH_MAX: rg fails to open the leaf (exit 2)."""
        fd = os.open(self.agent(agent_id) / "scratch", os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(levels):
                os.mkdir("d" * 200, dir_fd=fd)
                child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = child
            leaf = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(leaf, b"deep\n")
            os.close(leaf)
        finally:
            os.close(fd)

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
                # Nested braces, as in every real transcript line: not a valid ignore glob, so rg used to print it.
                "transcript.jsonl": (
                    f'{{"type": "assistant", "usage": {{"inputTokens": 3}}, "text": "{self.transcript_canary}"}}\n'
                    if own
                    else "{}"
                ),
                "prompt-cache.json": self.prompt_canary if own else "{}",
                f"memory/{memory_name}": self.memory_canary if own else "mallory's own memory",
                # Unparseable as an ignore glob: rg used to print such a line in its error message.
                "memory/ledger.jsonl": f'{{"text": "{self.memory_canary} [open"}}\n' if own else "{}\n",
                "scratch/notes.txt": self.notes if own else "mallory's notes\n",
            }
            for name, text in files.items():
                (home / name).write_text(text, encoding="utf-8")
        self.outside.mkdir()
        (self.outside / "rg").write_text("#!/bin/sh\necho ORIGINAL-PROGRAM\n", encoding="utf-8")
        (self.outside / "rg").chmod(0o755)
        return self


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path / "data").build()
