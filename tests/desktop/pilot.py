"""Driving the real shell in tests: wait for what a person would see, on the app's own signal, never a sleep."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from desktop.shell import HearthApp

__all__ = ["until", "type_text", "TOOLS", "tool_rules"]


async def until(pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 30) -> None:
    """Return once `predicate()` holds, re-checking each time the app has handled something from the host."""
    app = pilot.app
    assert isinstance(app, HearthApp)
    async with asyncio.timeout(timeout):
        while True:
            app.changed.clear()
            await pilot.pause()
            if predicate():
                return
            await app.changed.wait()


async def type_text(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*("space" if ch == " " else ch for ch in text))


def tool_rules() -> list[dict[str, Any]]:
    """A scripted model that runs `run CMD` in the shell, notes `web says X` as a tool-sourced fact, and
    replies slowly to `slow`."""
    return [
        {"match": r"^run (.+)$", "on": "user", "toolCalls": [{"name": "shell", "arguments": {"command": r"\1"}}]},
        {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"shell said: \1"},
        {
            "match": r"^web says (.+)$",
            "on": "user",
            "toolCalls": [{"name": "memory_note", "arguments": {"text": r"\1", "basis": "tool"}}],
        },
        {"match": "^slow$", "on": "user", "reply": "z" * 400, "chunkChars": 2, "delayMs": 30},
        {"match": r"^say (.+)$", "on": "user", "reply": r"\1"},
    ]


TOOLS = {"model": {"provider": "scripted", "rules": tool_rules()}}
