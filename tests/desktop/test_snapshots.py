"""Snapshots of the shell's main screens (pytest-textual-snapshot), against a real host.

Deterministic by construction: a fixed terminal size, agents with fixed ids and scripted replies, no
clock, no record ids or paths on these screens, and each picture taken once the shell has settled
(connected, kernel up, transcript shown). `pytest --snapshot-update` rewrites them after a deliberate change.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from desktop.client import attach_or_start
from desktop.shell import HearthApp
from desktop.shell.chat_view import ChatView
from desktop.shell.entries import ApprovalPrompt
from protocol.dispatch import Router
from tests.desktop.pilot import TOOLS, type_text, until
from tests.support.background_host import wait_until_stopped
from tests.support.host_process import HostProcess

SIZE = (110, 32)


def _prepare(data_dir: Path) -> None:
    async def main() -> None:
        async with HostProcess(data_dir) as host:
            await host.call("agent.create", {"name": "Helper", "agentId": "helper", "settings": TOOLS})
            await host.call("agent.create", {"name": "Scout", "agentId": "scout", "settings": TOOLS})
            await host.send_and_wait("helper", "say Good morning! How can I help?")

    asyncio.run(main())


async def _settled(pilot: Any) -> None:
    app = pilot.app
    await until(
        pilot, lambda: app.kernel == "up" and app.current == "helper" and app.query_one(ChatView).agent is not None
    )


def _cancel_and_wait(data_dir: Path) -> None:
    """A question left open keeps the run (and so the host) alive: end it, then let the host stop."""

    async def main() -> None:
        link = await attach_or_start(data_dir, Router(), client="tests")
        try:
            await link.peer.request("agent.cancel", {"agentId": "helper"})
        finally:
            await link.close()

    asyncio.run(main())
    wait_until_stopped(data_dir)


def test_the_chat_screen(tmp_path: Path, snap_compare: Any) -> None:
    _prepare(tmp_path)
    assert snap_compare(HearthApp(tmp_path), terminal_size=SIZE, run_before=_settled)
    wait_until_stopped(tmp_path)


def test_an_approval_question_in_the_chat(tmp_path: Path, snap_compare: Any) -> None:
    _prepare(tmp_path)

    async def ask(pilot: Any) -> None:
        await _settled(pilot)
        await type_text(pilot, "run echo hello")
        await pilot.press("enter")
        await until(
            pilot, lambda: bool(pilot.app.query(ApprovalPrompt)) and pilot.app.query_one(ApprovalPrompt).has_focus
        )

    try:
        assert snap_compare(HearthApp(tmp_path), terminal_size=SIZE, run_before=ask)
    finally:
        _cancel_and_wait(tmp_path)


def test_the_new_agent_dialog(tmp_path: Path, snap_compare: Any) -> None:
    _prepare(tmp_path)

    async def open_dialog(pilot: Any) -> None:
        await _settled(pilot)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: pilot.app.screen.query("#name").first() is not None)

    assert snap_compare(HearthApp(tmp_path), terminal_size=SIZE, run_before=open_dialog)
    wait_until_stopped(tmp_path)
