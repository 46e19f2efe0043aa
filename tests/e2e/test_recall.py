"""Recall by meaning through the real host: found without a shared word, and gone with an erase."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from host.memory.embedder import SWITCH
from tests.support.host_process import HostProcess, scripted_model

HOME = "Her home is in Lisbon, near the river."
CELLO = "She plays the cello every Sunday."
RULES = [
    {"match": r"^recall: (.*)$", "on": "user", "toolCalls": [{"name": "memory_recall", "arguments": {"query": r"\1"}}]},
    {"match": ".*", "reply": "ok"},
]


def recall_results(tmp_path: Path) -> list[str]:
    lines = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    return [e["content"] for e in events if e.get("type") == "tool" and e.get("name") == "memory_recall"]


async def search(host: HostProcess, query: str) -> list[str]:
    """The texts `memory.search` finds for `query` in ann's memory, best first."""
    result: dict[str, Any] = await host.call("memory.search", {"agentId": "ann", "query": query})
    return [hit["record"]["text"] for hit in result["hits"]]


def test_memory_recall_finds_a_fact_by_meaning_and_an_erased_fact_by_nothing(tmp_path: Path) -> None:
    erased: list[str] = []

    async def main() -> None:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
            home = await host.call("memory.note", {"agentId": "ann", "text": HOME})
            await host.call("memory.note", {"agentId": "ann", "text": CELLO})
            assert (await search(host, "Where does she live?"))[:1] == [HOME], "no word is shared with the fact"
            await host.idle_turn("ann", "recall: Where does she live?")
            await host.call("memory.erase", {"agentId": "ann", "recordId": home["record"]["id"]})
            erased.append(home["record"]["id"])
            assert HOME not in await search(host, "Where does she live?")
            assert (await search(host, "What does she do at the weekend?"))[:1] == [CELLO]
            await host.idle_turn("ann", "recall: Where does she live?")
            await host.idle_turn("ann", "recall: What does she do at the weekend?")

    asyncio.run(main())
    before, after, other = recall_results(tmp_path)
    # The model's recall found it first; the erase then took its text out of that reply (issue 22.1).
    assert before.splitlines()[1].startswith(f"1. [{erased[0]}] [erased]") and "Lisbon" not in before
    assert "Lisbon" not in after
    assert "cello" in other.splitlines()[1], "the other fact is still found by meaning"
    index = (tmp_path / "agents/ann/memory/index.sqlite").read_bytes()
    assert b"Lisbon" not in index


# A dialogue log: Melanie's entry addresses Caroline and shares the question's words; Caroline's own entry
# is what she said. Each entry's vector reads the one before it.
DIALOGUE = [
    "Caroline: My friend is moving to Lisbon soon.",
    "Melanie: Caroline, how was the support group?",
    "Caroline: I went to the support group yesterday and it was lovely.",
]


def test_a_question_naming_a_speaker_finds_what_they_said_and_an_erase_leaves_no_context(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
            ids = []
            for minute, text in enumerate(DIALOGUE):
                params = {"agentId": "ann", "text": text, "tier": "log", "validFrom": f"2023-05-08T12:0{minute}:00Z"}
                ids.append((await host.call("memory.note", params))["record"]["id"])
            assert (await search(host, "When did Caroline go to the support group?"))[0] == DIALOGUE[2]
            assert (await search(host, "What did Melanie ask about the support group?"))[0] == DIALOGUE[1]
            await host.idle_turn("ann", "recall: When did Caroline go to the support group?")
            await host.call("memory.erase", {"agentId": "ann", "recordId": ids[1]})
            found = await search(host, "When did Caroline go to the support group?")
            assert DIALOGUE[1] not in found and found[0] == DIALOGUE[2]

    asyncio.run(main())
    (recalled,) = recall_results(tmp_path)
    assert "support group yesterday" in recalled.splitlines()[1], "the model's recall finds Caroline's own words"
    index = tmp_path / "agents/ann/memory/index.sqlite"
    assert b"how was the support group" not in index.read_bytes()
    with sqlite3.connect(index) as db:
        read_after = db.execute("SELECT after FROM vectors WHERE after IS NOT NULL").fetchall()
        standing = {row[0] for row in db.execute("SELECT seq FROM facts WHERE status = 'live' AND text IS NOT NULL")}
    assert len(read_after) == 1 and read_after[0][0] in standing, "Caroline's answer now reads the Lisbon entry"
