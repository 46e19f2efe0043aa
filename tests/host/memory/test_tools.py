"""The model's memory tools reply in plain words and never offer a person's acts."""

from __future__ import annotations

import asyncio

import pytest

from host.memory import Evidence, MemoryStore
from host.memory.rewrite import Rewrite
from host.memory.tools import memory_tool_definitions, run_memory_tool
from host.memory.trust import CLEAN

AGENT = Evidence("agent", seq=7, tool_call_id="call-1")


def test_the_tools_are_note_recall_correct_and_forget_only() -> None:
    names = [name for name, _, _ in memory_tool_definitions()]
    assert names == ["memory_note", "memory_recall", "memory_correct", "memory_forget"]
    for _, description, schema in memory_tool_definitions():
        assert description and schema["type"] == "object" and schema["additionalProperties"] is False
    assert not any(word in name for name in names for word in ("review", "erase", "export"))


def test_note_then_duplicate_then_recall_then_forget(store: MemoryStore) -> None:
    async def main() -> None:
        reply, error = await run_memory_tool(
            store, "memory_note", {"text": "User's dog is called Rex"}, AGENT, provenance=CLEAN
        )
        assert not error and reply.startswith("Recorded as m-")
        record_id = reply.split()[2].rstrip(".")
        reply, error = await run_memory_tool(
            store, "memory_note", {"text": "user's dog is called rex"}, AGENT, provenance=CLEAN
        )
        assert (reply, error) == (f"Already recorded as {record_id}; nothing changed.", False)
        reply, _ = await run_memory_tool(
            store, "memory_recall", {"query": "what is the dog called"}, AGENT, provenance=CLEAN
        )
        assert f"[{record_id}] User's dog is called Rex" in reply
        reply, _ = await run_memory_tool(
            store, "memory_forget", {"id": record_id, "reason": "asked"}, AGENT, provenance=CLEAN
        )
        assert reply.startswith(f"Forgotten: {record_id}")
        reply, _ = await run_memory_tool(store, "memory_recall", {"query": "dog"}, AGENT, provenance=CLEAN)
        assert reply == "Nothing matched 'dog'."
        reply, _ = await run_memory_tool(
            store, "memory_recall", {"query": "dog", "includeRetracted": True}, AGENT, provenance=CLEAN
        )
        assert "[retracted]" in reply
        reply, _ = await run_memory_tool(
            store, "memory_note", {"text": "User's dog is called Rex"}, AGENT, provenance=CLEAN
        )
        assert reply.startswith("Not stored: this fact was forgotten earlier")
        assert store.history()[0].tool_call_id == "call-1" and store.history()[0].evidence_seq == 7

    asyncio.run(main())


def test_a_note_from_a_tool_result_is_proposed_and_the_model_is_told(store: MemoryStore) -> None:
    async def main() -> None:
        reply, error = await run_memory_tool(
            store, "memory_note", {"text": "Acme's CEO is Bob", "basis": "tool"}, AGENT, provenance=CLEAN
        )
        assert not error and reply.startswith("Stored as proposed")
        assert store.standing().current == ()

    asyncio.run(main())


def test_correct_names_the_old_and_new_records(store: MemoryStore) -> None:
    async def main() -> None:
        outcome = await store.note("User lives in Berlin", evidence=AGENT, key="user.home_city")
        assert outcome.fact is not None
        arguments = {"id": outcome.fact.id, "text": "User lives in Lisbon", "validFrom": "2024-03-01"}
        reply, error = await run_memory_tool(store, "memory_correct", arguments, AGENT, provenance=CLEAN)
        assert not error and f"replaces {outcome.fact.id}" in reply

    asyncio.run(main())


@pytest.mark.parametrize(
    ("name", "arguments", "starts"),
    [
        ("memory_note", {"text": ""}, "Invalid arguments"),
        ("memory_note", {"text": "My password is hunter2hunter"}, "Not stored: it looks like a password"),
        ("memory_note", {"text": "x", "tier": "diary"}, "tier must be one of"),
        ("memory_recall", {"query": "x", "limit": 500}, "Invalid arguments"),
        ("memory_forget", {"id": "m-000000000000", "reason": "x"}, "no memory record m-000000000000"),
        ("memory_erase", {"id": "m-000000000000"}, "Unknown memory tool"),
    ],
)
def test_refusals_are_error_replies_not_exceptions(
    store: MemoryStore, name: str, arguments: dict[str, object], starts: str
) -> None:
    reply, error = asyncio.run(run_memory_tool(store, name, arguments, AGENT, provenance=CLEAN))
    assert error and reply.startswith(starts)
    assert store.last_seq == 0


def test_recall_asks_the_rewriter_only_for_a_question_with_content_words_and_ends_with_its_cost(
    store: MemoryStore,
) -> None:
    asked: list[str] = []

    async def rewriter(question: str) -> Rewrite:
        asked.append(question)
        return Rewrite(("novels",), 40, 3)

    async def main() -> tuple[str, str, str]:
        await store.note("The user finished three novels", evidence=AGENT)
        await store.note("The user waters the plants", evidence=AGENT)
        call = {"provenance": CLEAN, "rewriter": rewriter}
        found, _ = await run_memory_tool(store, "memory_recall", {"query": "Is she a bookworm?"}, AGENT, **call)
        empty, _ = await run_memory_tool(store, "memory_recall", {"query": "what was it?"}, AGENT, **call)
        plain, _ = await run_memory_tool(
            store, "memory_recall", {"query": "Is she a bookworm?"}, AGENT, provenance=CLEAN
        )
        return found, empty, plain

    found, empty, plain = asyncio.run(main())
    assert asked == ["Is she a bookworm?"], "no request for a question without content words"
    assert "three novels" in found and "plants" not in found and found.endswith("40 tokens in, 3 out.)")
    assert "three novels" not in plain and "rewrite" not in plain and "rewrite" not in empty
