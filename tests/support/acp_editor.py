"""A test editor: the `acp` package's own client side, spawning the real `hearth acp` process over pipes.

`EditorClient` records every `session/update` and answers each `session/request_permission` with the next
option of its script, so a test can wait for an update with a timeout instead of sleeping.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.core import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    InitializeResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.support.host_process import REPO_ROOT

__all__ = ["EditorClient", "open_editor", "prompt"]


class EditorClient:
    """Args: answers: the option ids to choose, in order, for the permission questions to come."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.answers = list(answers or [])
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.asked: list[dict[str, Any]] = []
        self.options: list[list[str]] = []
        self.changed = asyncio.Condition()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        async with self.changed:
            self.updates.append((session_id, update.model_dump(mode="json", by_alias=True, exclude_none=True)))
            self.changed.notify_all()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        async with self.changed:
            self.asked.append(tool_call.model_dump(mode="json", by_alias=True, exclude_none=True))
            self.options.append([option.kind for option in options])
            self.changed.notify_all()
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    def kinds(self, after: int = 0) -> list[str]:
        return [update["sessionUpdate"] for _, update in self.updates[after:]]

    def of_kind(self, kind: str, after: int = 0) -> list[dict[str, Any]]:
        return [update for _, update in self.updates[after:] if update["sessionUpdate"] == kind]

    def text(self, kind: str = "agent_message_chunk", after: int = 0) -> str:
        return "".join(update["content"].get("text", "") for update in self.of_kind(kind, after))

    async def wait_for(self, where: Callable[[dict[str, Any]], bool], *, after: int = 0, timeout: float = 30) -> None:
        async with asyncio.timeout(timeout), self.changed:
            while not any(where(update) for _, update in self.updates[after:]):
                await self.changed.wait()


@asynccontextmanager
async def open_editor(
    client: EditorClient, data_dir: Path, *args: str, log: Path
) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse]]:
    """Spawn `hearth acp ARGS --data-dir DATA` and initialize it; leaving closes its stdin and waits for it."""
    with open(log, "ab") as stderr:
        command = [sys.executable, "-m", "hearth", "acp", *args, "--data-dir", str(data_dir)]
        spawned = spawn_agent_process(
            client,
            command[0],
            *command[1:],
            env=dict(os.environ),
            cwd=REPO_ROOT,
            transport_kwargs={"stderr": stderr, "shutdown_timeout": 30.0},
        )
        async with spawned as (conn, _):
            init = await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="test-editor", version="1"),
            )
            yield conn, init


async def prompt(conn: ClientSideConnection, session_id: str, text: str, *, timeout: float = 60) -> PromptResponse:
    async with asyncio.timeout(timeout):
        return await conn.prompt(session_id=session_id, prompt=[text_block(text)])
