"""`hearth agents` and `hearth inspect AGENT`: what the agents are and how each one stands, read over the wire.

`inspect` gathers one agent's profile and settings (`agent.get`), its directory, prompt epoch and sandbox
roots (`agent.inspect`), the tail of its transcript (`agent.transcript`), its memory (`memory.list`, so the
facts shown are exactly the host's), what it spent today (`budget.get`) and its schedules (`schedule.list`).
`--json` prints the same, as the wire gives it. With `--run RUN` it shows one run instead: the message it
answered, its reply and its receipt (which facts the reply saw, its prompt epoch and prefix hash).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.describe import describe_event, describe_model, describe_settings, describe_trust
from desktop.quick_call import call_running_host
from desktop.tables import one_line, print_json, print_table
from protocol.errors import JsonRpcError

if TYPE_CHECKING:
    from protocol.peer import JsonRpcPeer

__all__ = ["run_agents", "run_inspect", "gather_inspection", "gather_run"]

TAIL = 10


async def gather_inspection(peer: JsonRpcPeer, ref: str) -> dict[str, Any]:
    """Everything `hearth inspect` shows, in wire form."""
    from desktop.names import require_agent

    agent = await require_agent(peer, ref)
    ref_params = {"agentId": agent.agent_id}
    directory = await peer.request("agent.inspect", ref_params)
    tail = await peer.request("agent.transcript", {**ref_params, "limit": TAIL})
    memory: dict[str, Any] = {}
    if agent.settings.memory:
        current = await peer.request("memory.list", {**ref_params, "view": "current"})
        proposed = await peer.request("memory.list", {**ref_params, "view": "proposed"})
        memory = {"current": current["records"], "conflicts": current["conflicts"], "proposed": proposed["records"]}
    budget = await peer.request("budget.get", ref_params)
    schedules = (await peer.request("schedule.list", ref_params))["schedules"]
    return {
        "agent": agent.model_dump(mode="json", by_alias=True),
        "directory": directory,
        "transcriptTail": tail["events"],
        "memory": memory,
        "budget": budget,
        "schedules": schedules,
    }


def _next_wake(schedules: list[dict[str, Any]]) -> str:
    dues = sorted(s["nextDue"] for s in schedules if s.get("nextDue"))
    proposed = sum(1 for s in schedules if s["state"] == "proposed")
    wake = dues[0].replace("T", " ")[:16] if dues else "none scheduled"
    return wake + (
        f" ({len(schedules)} schedules, {proposed} proposed)" if proposed else f" ({len(schedules)} schedules)"
    )


def _print_inspection(found: dict[str, Any]) -> None:
    from desktop.schedule_cmd import describe_budget
    from protocol.models.agents import AgentInfo

    agent = AgentInfo.model_validate(found["agent"])
    directory, memory = found["directory"], found["memory"]
    sandbox = directory["sandbox"]
    shell = sandbox.get("shell")
    epoch = directory.get("promptEpoch")
    rows = [
        ("agent", f"{agent.agent_id} ({agent.name}), {agent.status}, created {agent.created_at}"),
        ("model", describe_model(agent.settings.model)),
        ("settings", describe_settings(agent)),
        ("directory", directory["dir"]),
        ("prompt", "no turn yet" if epoch is None else f"epoch {epoch} ({directory.get('promptEpochReason') or '-'})"),
        ("workspace", f"{sandbox['workspace']} (read-write)"),
        ("read-only", ", ".join(sandbox["readOnly"])),
        (
            "shell",
            "unknown (kernel starting)" if shell is None else ("available" if shell["available"] else shell["reason"]),
        ),
    ]
    rows.append(("spent today", describe_budget(found["budget"])))
    rows.append(("next wake", _next_wake(found["schedules"])))
    if memory:
        counts = f"{len(memory['current'])} current, {len(memory['proposed'])} waiting for review"
        rows.append(("memory", f"{counts}, {len(memory['conflicts'])} conflicts"))
    else:
        rows.append(("memory", "off"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")
    if memory and (memory["current"] or memory["proposed"]):
        print()
        print_table(
            ["id", "trust", "fact"],
            [(r["id"], describe_trust(r), r.get("text") or "(erased)") for r in memory["current"] + memory["proposed"]],
            empty="",
        )
    print()
    events = found["transcriptTail"]
    print(f"transcript: the last {len(events)} of {directory['transcriptEvents']} events")
    for event in events:
        print(f"  #{event['seq']:<4} {one_line(describe_event(event), 100)}")


async def _listing(data_dir: Path) -> dict[str, Any]:
    from desktop.client import connect_host
    from protocol.dispatch import Router

    async with connect_host(data_dir, Router(), client="hearth-agents") as peer:
        listing: dict[str, Any] = await peer.request("agent.list", {})
    return listing


def _print_agents(listing: dict[str, Any], as_json: bool) -> int:
    if as_json:
        print_json(listing)
        return 0
    rows = [
        (a["agentId"], a["name"], a["status"], describe_model(a["settings"].get("model") or {}), describe_settings(a))
        for a in listing["agents"]
    ]
    print_table(
        ["id", "name", "status", "model", "settings"], rows, empty="(no agents yet: `hearth chat NAME` makes one)"
    )
    return 0


async def gather_run(peer: JsonRpcPeer, ref: str, run_id: str) -> dict[str, Any]:
    """One run of the agent, in wire form: its lines and its receipt (None when it has none).

    Raises:
        JsonRpcError: NOT_FOUND for an unknown agent, or a run that is not in its transcript.
    """
    from desktop.names import require_agent
    from desktop.receipts import run_events, transcript_events
    from protocol.errors import NOT_FOUND

    agent = await require_agent(peer, ref)
    events = run_events(await transcript_events(peer, agent.agent_id), run_id)
    if not events:
        raise JsonRpcError(f"there is no run {run_id!r} in {agent.agent_id}'s transcript", code=NOT_FOUND)
    receipt = next((event for event in events if event.get("type") == "receipt"), None)
    return {"agentId": agent.agent_id, "runId": run_id, "events": events, "receipt": receipt}


def _print_run(found: dict[str, Any]) -> None:
    from desktop.receipts import saw_line

    receipt = found["receipt"]
    print(f"run {found['runId']} of {found['agentId']}")
    for event in found["events"]:
        if event.get("type") not in ("context", "receipt"):
            print(f"  #{event['seq']:<4} {one_line(describe_event(event), 100)}")
    print(saw_line(receipt))
    if receipt is not None:
        print(f"  memory section: {', '.join(receipt['section']) or 'none'}")
        print(f"  recall blocks: {', '.join(receipt['recall']) or 'none'}")
        print(f"  summaries: {', '.join(receipt['summaries']) or 'none'}")
        print(f"  prompt epoch {receipt['epoch']}, prefix {receipt['prefixHash']}")


async def _inspect(data_dir: Path, ref: str, as_json: bool, run_id: str | None = None) -> int:
    from desktop.client import connect_host
    from protocol.dispatch import Router

    async with connect_host(data_dir, Router(), client="hearth-inspect") as peer:
        if run_id is not None:
            run = await gather_run(peer, ref, run_id)
            print_json(run) if as_json else _print_run(run)
            return 0
        found = await gather_inspection(peer, ref)
    if as_json:
        print_json(found)
    else:
        _print_inspection(found)
    return 0


def _run(coro: Any) -> int:
    from desktop.client import run_command

    return run_command(coro)


def run_agents(data_dir: Path, as_json: bool) -> int:
    """`hearth agents`. Returns the exit code.

    Against a running host it is one blocking call, with no event loop and no wire model loaded; otherwise it
    starts a host the usual way.
    """
    try:
        listing = call_running_host(data_dir, "agent.list", {}, client="hearth-agents")
    except JsonRpcError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        return 1
    if listing is None:
        return _run(_agents(data_dir, as_json))
    return _print_agents(listing, as_json)


async def _agents(data_dir: Path, as_json: bool) -> int:
    return _print_agents(await _listing(data_dir), as_json)


def run_inspect(data_dir: Path, ref: str, as_json: bool, run_id: str | None = None) -> int:
    """`hearth inspect AGENT [--run RUN]`. Returns the exit code (1 for an unknown agent or run)."""
    return _run(_inspect(data_dir, ref, as_json, run_id))
