"""`hearth memory ...`: a person's view and governance of an agent's memory from the terminal.

It speaks only the wire (`memory.*` through a host it launches): list a view, review what waits for
review, say why a fact is believed, forget, erase, verify. Every record is shown with its id, trust,
source and validity.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.client import connect_host
from protocol.dispatch import Router
from protocol.errors import JsonRpcError

__all__ = ["MemoryCommand", "run_memory_command", "format_record"]


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


def format_record(record: dict[str, Any]) -> str:
    """One line a person can read: id, trust and status, the text, and where it came from."""
    state = record.get("trust") or record.get("op", "")
    if record.get("status") not in (None, "live"):
        state += f", {record['status']}"
    key = f" [{record['key']}]" if record.get("key") else ""
    valid = ""
    if record.get("validFrom") or record.get("validUntil"):
        valid = f" (valid {record.get('validFrom') or '…'} to {record.get('validUntil') or 'now'})"
    text = record.get("text") if record.get("text") is not None else "(erased)"
    if record.get("op") == "retract" and record.get("replaces"):
        text = f"forget {record['replaces']}: {text}"  # a request to forget, waiting for review
    return f"{record['id']}  {state:<18} {text}{key}{valid}  — from {record['source']}, {record['observedAt']}"


async def _run(command: MemoryCommand) -> int:
    ref = {"agentId": command.agent}
    async with connect_host(command.data_dir, Router(), client="hearth-memory") as peer:
        if command.action == "list":
            listing = await peer.request("memory.list", {**ref, "view": command.view})
            for record in listing["records"]:
                print(format_record(record))
            for conflict in listing.get("conflicts", []):
                print(f"conflict on {conflict['key']}:")
                for record in conflict["records"]:
                    print("  " + format_record(record))
            if not listing["records"] and not listing.get("conflicts"):
                print(f"(nothing in the {command.view} view)")
        elif command.action == "review":
            params = {**ref, "recordId": command.record_id, "decision": command.decision}
            if command.text:
                params["text"] = command.text
            result = await peer.request("memory.review", params)
            print(f"{command.decision}: {result['outcome']}")
        elif command.action == "why":
            story = await peer.request("memory.explain", {**ref, "recordId": command.record_id})
            print(story["summary"])
            for record in story["history"]:
                print("  " + format_record(record))
        elif command.action in ("forget", "erase"):
            method = "memory.retract" if command.action == "forget" else "memory.erase"
            params = {**ref, "recordId": command.record_id}
            if command.reason:
                params["reason"] = command.reason
            result = await peer.request(method, params)
            print(f"{command.action}: {result['outcome']}")
        else:
            report = await peer.request("memory.verify", ref)
            if report["ok"]:
                print(f"ok: {report['count']} records, the hash chain verifies")
            else:
                print(f"BROKEN at seq {report['firstBadSeq']} ({report['firstBadId']}): {report['problem']}")
                return 1
    return 0


def run_memory_command(command: MemoryCommand) -> int:
    """Run one `hearth memory` command. Returns the exit code."""
    try:
        return asyncio.run(_run(command))
    except JsonRpcError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        return 1
