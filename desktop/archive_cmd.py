"""`hearth export AGENT FILE`, `hearth import FILE` and `hearth adopt AGENT GRANT...`, through the wire.

The host does the work (`agent.export`, `agent.import`, `agent.adoptSettings`); this asks and says what
happened: a refusal's reason, whether the memory kept its trust (or why not, and where its proposals wait),
and what the archive's settings asked for, none of it in effect until `hearth adopt` says yes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from desktop.client import connect_host
from protocol.dispatch import Router
from protocol.errors import CONFLICT, JsonRpcError

__all__ = ["run_export", "run_import", "run_adopt"]


async def _call(data_dir: Path, method: str, params: dict[str, object]) -> dict[str, Any]:
    async with connect_host(data_dir, Router(), client="hearth-archive") as peer:
        result: dict[str, Any] = await peer.request(method, params)
        return result


def _request(data_dir: Path, method: str, params: dict[str, object], *, on_conflict: str = "") -> dict[str, Any] | None:
    try:
        return asyncio.run(_call(data_dir, method, params))
    except JsonRpcError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        if exc.code == CONFLICT and on_conflict:
            print(on_conflict, file=sys.stderr)
        return None


def run_export(agent: str, file: Path, data_dir: Path, with_knowledge: bool = False) -> int:
    """Write `agent`'s archive to `file` (with its knowledge when asked). Returns the exit code."""
    params = {"agentId": agent, "path": str(file.resolve()), "withKnowledge": with_knowledge}
    done = _request(data_dir, "agent.export", params)
    if done is None:
        return 1
    carried = " and its knowledge" if with_knowledge else ""  # the person sees the documents went too
    print(
        f"exported {agent}: {done['records']} memory records, {done['events']} transcript events{carried}"
        f" to {done['path']}"
    )
    return 0


def _grant_lines(grants: list[dict[str, Any]]) -> list[str]:
    width = max(len(grant["id"]) for grant in grants)
    return [f"  {grant['id']:<{width}}  {grant['summary']}" for grant in grants]


def run_import(file: Path, data_dir: Path, agent_id: str | None = None) -> int:
    """Make an agent of the archive `file`. Returns the exit code."""
    params: dict[str, object] = {"path": str(file.resolve())}
    if agent_id:
        params["agentId"] = agent_id
    elsewhere = f"  to import it beside that agent: hearth import {file} --agent-id NEW_ID"
    done = _request(data_dir, "agent.import", params, on_conflict=elsewhere)
    if done is None:
        return 1
    name = done["agent"]["agentId"]
    print(f"imported {name}: {done['records']} memory records, {done['events']} transcript events")
    if done["signed"]:
        print("memory: signed by this installation; its facts keep their trust")
    else:
        print(f"memory: not signed by this installation: {done['reason']}")
        print(f"  so every fact it brings waits for your review ({done['proposed']}): hearth memory {name} review")
        if done["leftOut"]:
            print(f"  left out: {done['leftOut']} (they looked like secrets or were malformed)")
    requested = done["requested"]
    if requested:
        print("settings: the archive asks for these; none is in effect until you adopt it")
        print("\n".join(_grant_lines(requested)))
        print(f"  adopt with: hearth adopt {name} GRANT... (or: hearth adopt {name} all)")
    return 0


def run_adopt(agent: str, grants: list[str], data_dir: Path) -> int:
    """Adopt `grants` (ids, or `all`) of what `agent`'s archive asked for; with none, list what waits."""
    if "all" in grants:
        waiting = _request(data_dir, "agent.adoptSettings", {"agentId": agent, "grants": []})
        if waiting is None:
            return 1
        grants = [grant["id"] for grant in waiting["pending"]]
    done = _request(data_dir, "agent.adoptSettings", {"agentId": agent, "grants": grants})
    if done is None:
        return 1
    if done["adopted"]:
        print(f"adopted for {agent}: {', '.join(grant['id'] for grant in done['adopted'])}")
    if done["pending"]:
        print(f"waiting for your word ({agent}):")
        print("\n".join(_grant_lines(done["pending"])))
    elif not done["adopted"]:
        print(f"nothing waits for {agent}")
    return 0
