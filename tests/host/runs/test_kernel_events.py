"""Recording a run's kernel events: a memory tool's reply recorded after the fact it shows was erased keeps
no text of it (issue 22.1: the reply was worked out just before the erase, so no pass of the erase saw it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic import BaseModel

from host.memory import Evidence, MemoryStore
from host.runs.kernel_events import KernelEvents
from host.runs.run import Run
from host.store.transcript import Transcript
from protocol.models.kernel import TurnToolEvent

CAT = "The user's cat is called Miso."
TEA = "The user drinks oolong tea."


def test_a_memory_reply_recorded_after_its_fact_was_erased_keeps_only_the_id(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agents" / "ann"
    agent_dir.mkdir(parents=True)
    transcript = Transcript(agent_dir / "transcript.jsonl")
    told: list[tuple[str, BaseModel]] = []

    async def notify(method: str, event: BaseModel) -> None:
        told.append((method, event))

    async def main() -> None:
        with MemoryStore(agent_dir) as store:
            cat = (await store.note(CAT, evidence=Evidence("human"))).fact
            tea = (await store.note(TEA, evidence=Evidence("human"))).fact
            assert cat is not None and tea is not None
            reply = f"2 record(s) matched 'pets', best first:\n1. [{cat.id}] {CAT} (from human)\n2. [{tea.id}] {TEA}"
            await store.erase(cat.id)  # between the reply being worked out and its kernel event arriving
            events = KernelEvents(lambda run: transcript, notify, lambda run: store)
            run = Run("r-1", "ann")
            done = TurnToolEvent(
                run_id="r-1", tool_call_id="c", name="memory_recall", status="completed", content=reply
            )
            await events.record(run, done)
            other = TurnToolEvent(run_id="r-1", tool_call_id="d", name="grep", status="completed", content=reply)
            await events.record(run, other)

    asyncio.run(main())
    recall, grep = [json.loads(line) for line in transcript.path.read_bytes().splitlines()]
    assert recall["content"].splitlines()[1].endswith("] [erased]") and "Miso" not in recall["content"]
    assert TEA in recall["content"], "the other record's line is as it was"
    assert "Miso" not in str(told[0][1]), "the shell is told the same"
    assert grep["content"] == told[1][1].model_dump()["content"] and CAT in grep["content"], "other tools: as said"
