"""Recall by meaning through the real host: found without a shared word, and gone with an erase."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from host.memory.embedder import SWITCH, load_embedder
from host.memory.rewrite import REWRITE_MARK
from host.memory.rewrite import SWITCH as REWRITE_SWITCH
from host.memory.tools import WORDS_ONLY_NOTE
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

HOME = "Her home is in Lisbon, near the river."
CELLO = "She plays the cello every Sunday."
RULES = [
    {
        "match": r"^recall: ([^\n]*)",
        "on": "user",
        "toolCalls": [{"name": "memory_recall", "arguments": {"query": r"\1"}}],
    },
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


async def create_ann(host: HostProcess, *rules: dict[str, Any]) -> None:
    """Create ann, then wait until her searches rank by meaning (the model loads after the host starts)."""
    await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
    await ann_ranks_by_meaning(host)


async def ann_ranks_by_meaning(host: HostProcess) -> None:
    """Wait until ann's searches rank by meaning (the model loads after the host starts)."""
    async with asyncio.timeout(60):
        while (await host.call("memory.search", {"agentId": "ann", "query": "ready?"}))["meaning"] != "on":
            pass  # each search asks again


def test_memory_recall_finds_a_fact_by_meaning_and_an_erased_fact_by_nothing(tmp_path: Path) -> None:
    erased: list[str] = []

    async def main() -> None:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            await create_ann(host, *RULES)
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
# is what she said. Each entry is searched by its vector composed with the one before it.
DIALOGUE = [
    "Caroline: My friend is moving to Lisbon soon.",
    "Melanie: Caroline, how was the support group?",
    "Caroline: I went to the support group yesterday and it was lovely.",
]


def test_a_question_naming_a_speaker_finds_what_they_said_and_an_erase_leaves_no_context(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            await create_ann(host, *RULES)
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
        vectors = db.execute("SELECT seq, after FROM vectors ORDER BY seq").fetchall()
        standing = [row[0] for row in db.execute("SELECT seq FROM facts WHERE status = 'live' AND text IS NOT NULL")]
    assert [seq for seq, _ in vectors] == sorted(standing), "one vector per standing entry, none for the erased one"
    assert all(after is None for _, after in vectors), "each of its own text: neighbours are composed when searched"


# A chat as people name themselves: a lower-case display name and a full name. Ravi's entries address them
# and hold more of the questions' words; their own entries are what they said.
CHAT = [
    "maren: the beach trip to Porto was the best part of my winter",
    "Ravi: Maren, your beach trip to Porto sounds amazing! Did you like Porto?",
    "Tomas Berg: honestly the trip to Porto was fun, we went to the beach every single day",
    "Ravi: Tomas, how was the beach trip to Porto? Tell me about Porto!",
]


def test_a_question_finds_what_a_lower_case_or_full_name_speaker_said_by_the_name_people_use(tmp_path: Path) -> None:
    """Issue 23.1, through the wire: "Maren" names "maren", "Tomas" names "Tomas Berg", "Kate" names nobody."""

    async def main() -> None:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            await create_ann(host, *RULES)
            for day, text in enumerate(CHAT, start=1):
                params = {"agentId": "ann", "text": text, "tier": "log", "validFrom": f"2024-01-0{day}T12:00:00Z"}
                await host.call("memory.note", params)
            for n in range(12):
                await host.call("memory.note", {"agentId": "ann", "text": f"Note {n}: the garden shed needs paint"})
            assert (await search(host, "What did Maren say about the beach trip to Porto?"))[0] == CHAT[0]
            assert (await search(host, "what did maren say about the beach trip to porto"))[0] == CHAT[0]
            assert (await search(host, "What did Tomas say about the trip to Porto?"))[0] == CHAT[2]
            assert (await search(host, "What did Kate say about the trip to Porto?"))[0] != CHAT[2], "nobody is Kate"
            await host.idle_turn("ann", "recall: What did Maren say about the beach trip to Porto?")

    asyncio.run(main())
    (recalled,) = recall_results(tmp_path)
    assert "best part of my winter" in recalled.splitlines()[1], "the model's recall finds maren's own words"


NOVELS = "Maren: I finished three novels this week"
BOOKWORM = "Maren: is the bookworm cafe open on Sunday?"
REWRITING = [{"match": REWRITE_MARK, "on": "user", "reply": "reading, novels, books"}, *RULES]


async def recall_twice_about_a_bookworm(tmp_path: Path, rewrite: str) -> None:
    async with HostProcess(tmp_path, env={SWITCH: "off", REWRITE_SWITCH: rewrite}) as host:
        await host.call("agent.create", {"name": "ann", "settings": scripted_model(*REWRITING)})
        for day, text in enumerate((NOVELS, BOOKWORM), start=1):
            await host.call(
                "memory.note", {"agentId": "ann", "text": text, "tier": "log", "validFrom": f"2024-01-0{day}"}
            )
        for n in range(10):
            await host.call("memory.note", {"agentId": "ann", "text": f"Note {n}: the garden shed needs paint"})
        await host.idle_turn("ann", "recall: Is she a bookworm?")
        await host.idle_turn("ann", "recall: Is she a bookworm?")


def test_memory_recall_asks_the_agents_model_once_for_search_words_and_says_what_it_cost(tmp_path: Path) -> None:
    """Issue 23.4, through the wire: the model's words find the novels; the second ask is served from the cache."""
    asyncio.run(recall_twice_about_a_bookworm(tmp_path, "on"))
    first, second = recall_results(tmp_path)
    assert NOVELS in first and BOOKWORM in first, "the question's own find stays"
    assert "3 words from a rewrite of the question by your model" in first and "tokens in" in first
    assert NOVELS in second and "earlier rewrite of this question: no cost" in second


def test_memory_recall_with_rewriting_switched_off_searches_the_question_alone(tmp_path: Path) -> None:
    asyncio.run(recall_twice_about_a_bookworm(tmp_path, "off"))
    first, second = recall_results(tmp_path)
    assert BOOKWORM in first and NOVELS not in first and "rewrite" not in first
    assert second == first


SLOW_ENGINE = REPO_ROOT / "tests" / "support" / "slow_engine"


async def search_result(host: HostProcess, query: str) -> dict[str, Any]:
    result: dict[str, Any] = await host.call("memory.search", {"agentId": "ann", "query": query})
    return result


def test_the_first_searches_after_a_start_run_on_words_while_the_model_loads_and_say_so(tmp_path: Path) -> None:
    """Issue 23.6: the host answers before its embedding model is ready (an engine that loads when told)."""
    gate = tmp_path / "engine-gate"
    os.mkfifo(gate)
    path = os.pathsep.join([str(SLOW_ENGINE), os.environ.get("PYTHONPATH", "")])
    env = {SWITCH: "on", "PYTHONPATH": path, "HEARTH_TEST_ENGINE_GATE": str(gate)}

    async def main() -> None:
        async with HostProcess(tmp_path / "data", env=env) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
            await host.call("memory.note", {"agentId": "ann", "text": HOME})
            await host.call("memory.note", {"agentId": "ann", "text": CELLO})
            words = await search_result(host, "Lisbon")
            assert words["meaning"] == "loading" and [h["record"]["text"] for h in words["hits"]] == [HOME]
            assert (await search_result(host, "Where does she live?")) == {"hits": [], "meaning": "loading"}
            await host.idle_turn("ann", "recall: Lisbon")

            await asyncio.to_thread(gate.write_text, "load\n")
            async with asyncio.timeout(60):
                while (found := await search_result(host, "Where does she live?"))["meaning"] != "on" or not found[
                    "hits"
                ]:
                    pass  # each search asks again: the model loads, then its vectors are computed
            assert found["hits"][0]["record"]["text"] == HOME, "no word is shared: found by meaning"
            await host.idle_turn("ann", "recall: Lisbon")

    asyncio.run(main())
    loading, ready = recall_results(tmp_path / "data")
    assert "Lisbon" in loading and WORDS_ONLY_NOTE in loading.splitlines()
    assert "Lisbon" in ready and WORDS_ONLY_NOTE not in ready


PLACES = ["attic", "garage", "kitchen", "cellar", "garden shed", "hallway", "studio", "car boot"]
THINGS = ["violin", "tent", "bicycle pump", "winter coat", "toolbox", "photo album", "kettle", "chess set"]


def _stored_vectors(index: Path) -> tuple[dict[int, bytes], dict[int, str]]:
    """The index's vectors and its standing facts' texts, each by seq, read as another process would."""
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=30)
    try:
        try:
            vectors = {int(seq): bytes(blob) for seq, blob in db.execute("SELECT seq, v FROM vectors")}
        except sqlite3.OperationalError:  # no vectors table yet
            vectors = {}
        sql = "SELECT seq, text FROM facts WHERE status = 'live' AND text IS NOT NULL"
        return vectors, {int(seq): str(text) for seq, text in db.execute(sql)}
    finally:
        db.close()


def test_killing_the_host_while_it_writes_vectors_loses_no_fact_and_leaves_each_vector_its_own_facts(
    tmp_path: Path,
) -> None:
    index = tmp_path / "agents/ann/memory/index.sqlite"
    texts = [f"Note {n}: the {THINGS[n % 8]} is kept in the {PLACES[n // 8 % 8]}, box {n}." for n in range(160)]

    async def note_then_kill() -> None:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            await create_ann(host, *RULES)
            # Noted many at a time, so the facts are in before the background worker can keep up with them.
            for start in range(0, len(texts), 40):
                notes = [
                    host.call("memory.note", {"agentId": "ann", "text": text}) for text in texts[start : start + 40]
                ]
                await asyncio.gather(*notes)
            async with asyncio.timeout(120):
                while len(_stored_vectors(index)[0]) < 24:  # the background worker is under way
                    await asyncio.sleep(0.02)
            assert host.process is not None
            os.kill(host.process.pid, signal.SIGKILL)
            await host.process.wait()  # reaped before the harness's own shutdown looks at it

    asyncio.run(note_then_kill())
    written, standing = _stored_vectors(index)
    assert sorted(standing.values()) == sorted(texts), "every acknowledged fact survived the kill"
    assert len(written) < len(texts), "killed while vectors were still being written"

    async def reopen() -> list[str]:
        async with HostProcess(tmp_path, env={SWITCH: "on"}) as host:
            async with asyncio.timeout(180):  # no search is needed for the rest to be computed
                while len(_stored_vectors(index)[0]) < len(texts):
                    await asyncio.sleep(0.1)
            await ann_ranks_by_meaning(host)
            return await search(host, "Where is the violin stored, box 0?")

    found = asyncio.run(reopen())
    assert found[0] == texts[0]
    vectors, standing = _stored_vectors(index)
    assert sorted(vectors) == sorted(standing), "one vector per standing fact"
    engine = load_embedder()
    assert engine is not None
    sample = sorted(vectors)[::10]
    expected = engine.passages([standing[seq] for seq in sample])
    for row, seq in enumerate(sample):
        stored = np.frombuffer(vectors[seq], dtype=np.float32)
        assert float(stored @ expected[row]) > 0.999, f"fact {seq}'s vector is its own text's"
