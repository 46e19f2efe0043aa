"""`hearth export AGENT FILE` and `hearth import FILE`: carry an agent in one archive, through the wire.

The host does the work (`agent.export`, `agent.import`); this only launches it, asks, and says what
happened. A refused import names what was wrong (for a tampered archive, the first bad record).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from desktop.client import connect_host
from protocol.dispatch import Router
from protocol.errors import JsonRpcError

__all__ = ["run_export", "run_import"]


async def _call(data_dir: Path, method: str, params: dict[str, object]) -> dict[str, object]:
    async with connect_host(data_dir, Router(), client="hearth-archive") as peer:
        result: dict[str, object] = await peer.request(method, params)
        return result


def run_export(agent: str, file: Path, data_dir: Path) -> int:
    """Write `agent`'s archive to `file`. Returns the exit code."""
    try:
        done = asyncio.run(_call(data_dir, "agent.export", {"agentId": agent, "path": str(file.resolve())}))
    except JsonRpcError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        return 1
    print(f"exported {agent}: {done['records']} memory records, {done['events']} transcript events to {done['path']}")
    return 0


def run_import(file: Path, data_dir: Path, agent_id: str | None = None) -> int:
    """Make an agent of the archive `file`. Returns the exit code."""
    params: dict[str, object] = {"path": str(file.resolve())}
    if agent_id:
        params["agentId"] = agent_id
    try:
        done = asyncio.run(_call(data_dir, "agent.import", params))
    except JsonRpcError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        return 1
    agent = done["agent"]
    assert isinstance(agent, dict)
    print(f"imported {agent['agentId']}: {done['records']} memory records, {done['events']} transcript events")
    return 0
