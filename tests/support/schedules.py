"""Helpers for schedule tests: a host on a hand-moved clock, agents with scripted models, and waits.

`advance` moves the host's test clock (`debug.advanceClock`) and returns what it decided; `outcome` waits
for a firing's outcome event, so no test ever sleeps for a schedule to fire.
"""

from __future__ import annotations

from typing import Any

from tests.support.host_process import scripted_model
from tests.support.shell import TestShell

__all__ = ["SLOW", "SUMMARY", "T0", "add_agent", "advance", "every", "outcome"]

T0 = 1_800_000_000.0
"""2027-01-15T08:00:00Z: where the tests' clocks start."""

SLOW = {"match": r"(?m)^slow$", "on": "user", "reply": "z" * 200, "chunkChars": 2, "delayMs": 20}
SUMMARY = {"match": r"(?m)^summarize$", "on": "user", "reply": "summary done"}


async def add_agent(host: TestShell, name: str, *rules: dict[str, Any]) -> None:
    await host.call("agent.create", {"name": name, "settings": scripted_model(*(rules or (SUMMARY,)))})


async def every(host: TestShell, agent_id: str, seconds: int = 3600, **extra: Any) -> str:
    """Add an interval schedule whose runs start with `summarize`; returns its id."""
    added = await host.call(
        "schedule.add", {"agentId": agent_id, "everySeconds": seconds, "message": "summarize", **extra}
    )
    return str(added["scheduleId"])


async def advance(host: TestShell, seconds: float) -> list[dict[str, Any]]:
    """Move the host's test clock on and return the firings it decided."""
    result = await host.call("debug.advanceClock", {"by": seconds})
    return list(result["fired"])


async def outcome(host: TestShell, firing_id: str, *, timeout: float = 30) -> dict[str, Any]:
    """The firing once it has its outcome (its `schedule.fired`) and, when it had a run, that run's
    `agent.ended` has been announced too (so the agent is free again)."""
    event = await host.wait_for(
        "schedule.fired",
        lambda p: p["firing"]["firingId"] == firing_id and p["firing"]["outcome"] is not None,
        timeout=timeout,
    )
    firing = dict(event["firing"])
    if firing["runId"] is not None:
        await host.wait_for("agent.ended", lambda p: p["runId"] == firing["runId"], timeout=timeout)
    return firing
