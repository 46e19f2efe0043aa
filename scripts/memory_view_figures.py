"""MEMORY.md under load, through the real host: hand edits among arriving notes, and hosts killed mid-write.

    python scripts/memory_view_figures.py                # 100 edits among 500 notes and 20 turns; 200 kills
    python scripts/memory_view_figures.py --kills 20     # fewer kill cycles

Edits: while notes arrive over the wire and the agent takes turns (its scripted model notes a fact each
turn), an editor saves MEMORY.md 100 times, each time adding one line (read the file, add the line, write a
temporary file and rename it, as editors do). Afterwards every added line must be a fact exactly once.
Kills: a memory past the view's window (over 500 notes) is written to while the host is killed with
SIGKILL at a random moment, again and again; afterwards no fact may have been retracted (nobody asked)
and every acknowledged note must stand. Prints the counts; exits 1 when any is not zero.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.dispatch import Router
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import process_transport

ROOT = Path(__file__).resolve().parents[1]

AGENT = "ann"
_NOTE_CALL = {"name": "memory_note", "arguments": {"text": r"The user's turn \1 fact holds."}}
_RULES = [{"match": r"^turn (\d+)$", "on": "user", "toolCalls": [_NOTE_CALL]}, {"match": ".*", "reply": "ok"}]


@dataclass
class Counts:
    edits: int = 0
    lost: int = 0
    duplicated: int = 0
    unasked_retractions: int = 0
    missing_acknowledged: int = 0
    acknowledged: int = 0
    cycles: int = 0


@contextlib.asynccontextmanager
async def running_host(data_dir: Path) -> AsyncIterator[tuple[asyncio.subprocess.Process, JsonRpcPeer]]:
    """A real `python -m host` on `data_dir`, initialised; shut down (or already killed) on the way out."""
    with open(data_dir / "host.log", "ab") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "host",
            "--data-dir",
            str(data_dir),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            cwd=ROOT,
            limit=READ_LIMIT,
        )
    peer = JsonRpcPeer(process_transport(process), Router(), name="host", default_timeout=60)
    serving = asyncio.create_task(peer.serve())
    try:
        await peer.request("initialize", {"client": {"name": "figures"}, "protocolVersion": PROTOCOL_VERSION})
        yield process, peer
    finally:
        if process.returncode is None:
            with contextlib.suppress(Exception):
                await peer.request("shutdown", {}, timeout=20)
        await process.wait()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await serving


async def _history(peer: JsonRpcPeer) -> list[dict[str, Any]]:
    result = await peer.request("memory.history", {"agentId": AGENT})
    return list(result["records"])


def _add_line(view: Path, line: str) -> None:
    """What an editor does: read the file, add a line under Notes, write a temporary file, rename it."""
    text = view.read_text(encoding="utf-8")
    text = text.replace("## Notes\n\n", f"## Notes\n\n- {line}\n", 1)
    tmp = view.with_name(".MEMORY.md.editor")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, view)


async def edits_among_notes(data_dir: Path, *, edits: int, notes: int, turns: int, seed: int = 1) -> Counts:
    """Hand edits while notes arrive and turns run; returns how many edits were lost or duplicated."""
    chance = random.Random(seed)
    counts = Counts(edits=edits)
    async with running_host(data_dir) as (_, peer):
        settings = {"model": {"provider": "scripted", "rules": _RULES}}
        await peer.request("agent.create", {"name": AGENT, "settings": settings})
        await peer.request("memory.list", {"agentId": AGENT})  # opens the memory, which writes the view
        view = data_dir / "agents" / AGENT / "memory" / "MEMORY.md"

        async def noter() -> None:
            for n in range(notes):
                await peer.request("memory.note", {"agentId": AGENT, "text": f"Arriving note {n} about the garden."})

        async def talker() -> None:
            for n in range(turns):
                sent = await peer.request("agent.send", {"agentId": AGENT, "text": f"turn {n}"})
                while any(r["runId"] == sent["runId"] for r in (await peer.request("host.status", {}))["runs"]):
                    await asyncio.sleep(0.05)

        async def editor() -> None:
            for n in range(edits):
                await asyncio.sleep(chance.uniform(0.0, 0.05))
                _add_line(view, f"Hand edit {n} says the hedge is {n} metres long.")

        await asyncio.gather(noter(), talker(), editor())
        wanted = {f"Hand edit {n} says the hedge is {n} metres long." for n in range(edits)}
        for _ in range(400):  # the watcher imports the last edits after its debounce
            current = await peer.request("memory.list", {"agentId": AGENT, "view": "current"})
            if wanted <= {r["text"] for r in current["records"]}:
                break
            await asyncio.sleep(0.05)
        records = await _history(peer)
    asserted = [r["text"] for r in records if r["op"] == "assert" and r.get("text") in wanted]
    counts.lost = len(wanted - set(asserted))
    counts.duplicated = len(asserted) - len(set(asserted))
    counts.unasked_retractions = sum(1 for r in records if r["op"] == "retract")
    return counts


async def kills_mid_write(data_dir: Path, *, cycles: int, base_notes: int = 520, seed: int = 2) -> Counts:
    """SIGKILL the host at random moments while notes are written; count retractions nobody asked for."""
    chance = random.Random(seed)
    counts = Counts(cycles=cycles)
    acknowledged: list[str] = []
    async with running_host(data_dir) as (_, peer):
        await peer.request("agent.create", {"name": AGENT})
        for n in range(base_notes):
            await peer.request("memory.note", {"agentId": AGENT, "text": f"Base note {n} about the orchard."})
            acknowledged.append(f"Base note {n} about the orchard.")
    for cycle in range(cycles):
        async with running_host(data_dir) as (process, peer):

            async def burst(cycle: int = cycle, peer: JsonRpcPeer = peer) -> None:
                for n in range(40):
                    text = f"Cycle {cycle} note {n} about the orchard."
                    await peer.request("memory.note", {"agentId": AGENT, "text": text})
                    acknowledged.append(text)

            writing = asyncio.create_task(burst())
            await asyncio.sleep(chance.uniform(0.05, 0.6))
            process.send_signal(signal.SIGKILL)
            with contextlib.suppress(Exception):
                await writing
    async with running_host(data_dir) as (_, peer):
        records = await _history(peer)
        current = await peer.request("memory.list", {"agentId": AGENT, "view": "current"})
    standing = {r["text"] for r in current["records"]}
    counts.acknowledged = len(acknowledged)
    counts.unasked_retractions = sum(1 for r in records if r["op"] == "retract")
    counts.missing_acknowledged = sum(1 for text in acknowledged if text not in standing)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--notes", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--kills", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        edited = asyncio.run(edits_among_notes(Path(first), edits=args.edits, notes=args.notes, turns=args.turns))
        print(
            f"edits: {edited.edits} hand edits among {args.notes} notes and {args.turns} turns: "
            f"{edited.lost} lost, {edited.duplicated} duplicated, {edited.unasked_retractions} retractions"
        )
        killed = asyncio.run(kills_mid_write(Path(second), cycles=args.kills))
        print(
            f"kills: {killed.cycles} SIGKILL cycles, {killed.acknowledged} acknowledged notes: "
            f"{killed.unasked_retractions} retractions nobody asked for, {killed.missing_acknowledged} missing"
        )
    bad = edited.lost + edited.duplicated + edited.unasked_retractions
    bad += killed.unasked_retractions + killed.missing_acknowledged
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
