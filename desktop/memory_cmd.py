"""`hearth memory AGENT ...`: a person's view and governance of an agent's memory from the terminal.

It speaks only the wire (`memory.*` through the running host): the current facts, conflicts, what waits
for review (and deciding it), the history of one fact and why it is believed, verify, export, forget and
erase. Tables by default; `--json` prints what the host returned, so a script sees exactly `memory.list`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.client import connect_host, run_command
from desktop.describe import describe_trust
from desktop.memory_story import fact_story, story_lines
from desktop.names import require_agent
from desktop.receipts import runs_that_saw, transcript_events
from desktop.tables import print_json, print_table
from protocol.dispatch import Router
from protocol.peer import JsonRpcPeer

__all__ = ["MEMORY_ACTIONS", "MemoryCommand", "run_memory_command", "record_row", "record_text"]

MEMORY_ACTIONS = ("list", "conflicts", "review", "history", "why", "verify", "export", "forget", "erase")
RECORD_HEADERS = ["id", "trust", "fact", "key", "source", "recorded"]


@dataclass(frozen=True, slots=True)
class MemoryCommand:
    action: str
    agent: str
    data_dir: Path
    view: str = "current"
    record_id: str | None = None
    decision: str | None = None
    text: str | None = None
    reason: str | None = None
    as_json: bool = False
    out: str | None = None
    scrub_conversation: bool = False


def record_text(record: dict[str, Any]) -> str:
    """A record's text as a person reads it; a request to forget names its target and why."""
    text = str(record.get("text")) if record.get("text") is not None else "(erased)"
    if record.get("op") == "retract" and record.get("replaces"):
        text = f"forget {record['replaces']}: {text}"  # a request to forget, waiting for review
        if record.get("reason"):
            text += f" (why: {record['reason']})"
    return text


def record_row(record: dict[str, Any]) -> tuple[str, ...]:
    return (
        record["id"],
        describe_trust(record),
        record_text(record),
        record.get("key") or "",
        record["source"],
        record["observedAt"],
    )


def _print_listing(listing: dict[str, Any], view: str) -> None:
    print_table(RECORD_HEADERS, [record_row(r) for r in listing["records"]], empty=f"(nothing in the {view} view)")
    for conflict in listing.get("conflicts", []):
        print(f"\nconflict on {conflict['key']}:")
        print_table(RECORD_HEADERS, [record_row(r) for r in conflict["records"]], empty="")


async def _list(peer: JsonRpcPeer, command: MemoryCommand, agent_id: str, view: str) -> int:
    listing = await peer.request("memory.list", {"agentId": agent_id, "view": view})
    if command.as_json:
        print_json(listing)
    elif view == "conflicts" and not listing["conflicts"]:
        print("(no conflicts)")
    else:
        _print_listing(listing, view)
    return 0


async def _write(peer: JsonRpcPeer, command: MemoryCommand, agent_id: str) -> int:
    params: dict[str, Any] = {"agentId": agent_id, "recordId": command.record_id}
    if command.action == "review":
        method, label = "memory.review", command.decision
        params["decision"] = command.decision
        if command.text:
            params["text"] = command.text
    else:
        method = "memory.retract" if command.action == "forget" else "memory.erase"
        label = command.action
        if command.reason:
            params["reason"] = command.reason
        if command.scrub_conversation:
            params["scrubConversation"] = True
    result = await peer.request(method, params)
    if command.as_json:
        print_json(result)
        return 0
    print(f"{label}: {result['outcome']}")
    if result.get("scrubbedMessages"):
        print(f"scrubbed from {result['scrubbedMessages']} message(s) of the conversation")
    if result.get("heldInConversation"):
        print(f"{result['heldInConversation']} message(s) of the conversation still hold the text (left as they are)")
    return 0


async def _verify(peer: JsonRpcPeer, command: MemoryCommand, agent_id: str) -> int:
    report = await peer.request("memory.verify", {"agentId": agent_id})
    if command.as_json:
        print_json(report)
    elif report["ok"]:
        print(f"ok: {report['count']} records, the hash chain verifies")
    else:
        print(f"BROKEN at seq {report['firstBadSeq']} ({report['firstBadId']}): {report['problem']}")
    return 0 if report["ok"] else 1


async def _export(peer: JsonRpcPeer, command: MemoryCommand, agent_id: str) -> int:
    exported = {
        "agentId": agent_id,
        "exportedAt": datetime.now(UTC).isoformat(),
        "facts": (await peer.request("memory.list", {"agentId": agent_id, "view": "all"}))["records"],
        "history": (await peer.request("memory.history", {"agentId": agent_id}))["records"],
    }
    if command.out:
        with open(command.out, "w", encoding="utf-8") as f:
            json.dump(exported, f, ensure_ascii=False, indent=2)
        print(f"exported {len(exported['facts'])} facts and {len(exported['history'])} ledger records to {command.out}")
    else:
        print_json(exported)
    return 0


async def _run(command: MemoryCommand) -> int:
    async with connect_host(command.data_dir, Router(), client="hearth-memory") as peer:
        agent_id = (await require_agent(peer, command.agent)).agent_id
        action = command.action
        if action == "list":
            return await _list(peer, command, agent_id, command.view)
        if action == "conflicts":
            return await _list(peer, command, agent_id, "conflicts")
        if action == "review" and command.record_id is None:
            return await _list(peer, command, agent_id, "proposed")
        if action in ("review", "forget", "erase"):
            return await _write(peer, command, agent_id)
        if action == "history":
            params = {"agentId": agent_id, **({"recordId": command.record_id} if command.record_id else {})}
            history = await peer.request("memory.history", params)
            if command.as_json:
                print_json(history)
            else:
                rows = [(r["seq"], r["op"], *record_row(r)) for r in history["records"]]
                print_table(["seq", "op", *RECORD_HEADERS], rows, empty="(no history)")
            return 0
        if action == "why":
            assert command.record_id is not None
            story = await fact_story(peer, agent_id, command.record_id)
            seen = runs_that_saw(await transcript_events(peer, agent_id), command.record_id)
            if command.as_json:
                print_json({**story, "seenBy": seen})
            else:
                print("\n".join(story_lines(story)))
                print(f"  seen by {len(seen)} run(s)" + (":" if seen else ""))
                for receipt in seen:
                    where = f"transcript #{receipt['seq']}, {receipt['ts']}, epoch {receipt['epoch']}"
                    print(f"    {receipt['runId']} ({where})")
            return 0
        if action == "export":
            return await _export(peer, command, agent_id)
        return await _verify(peer, command, agent_id)


def run_memory_command(command: MemoryCommand) -> int:
    """Run one `hearth memory` command. Returns the exit code (1 for an unknown agent or record)."""
    if command.action == "review" and command.record_id is not None and command.decision is None:
        print("hearth: say what to do with it: confirm, reject or edit --text TEXT", file=sys.stderr)
        return 2
    return run_command(_run(command))
