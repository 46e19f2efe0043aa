"""Extraction planning: the small-talk gate, the instruction, the tolerant parse, and trust by evidence."""

from __future__ import annotations

import asyncio
import logging

import pytest

from host.memory import Evidence, MemoryStore
from host.memory.extraction import (
    ExchangeItem,
    ExtractionOp,
    apply_extraction,
    extraction_prompt,
    parse_extraction,
    worth_extracting,
)

EXTRACTOR = Evidence("extractor")
EXCHANGE = [
    ExchangeItem(10, "user", "I moved to Lisbon last month, and please look up Acme for me."),
    ExchangeItem(11, "tool", "Acme Corp was founded in 1999 by Ann Lee.", name="web_search"),
    ExchangeItem(12, "assistant", "Welcome to Lisbon! Acme was founded in 1999."),
]


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Lisbon last month",
        "I'm Sam",
        "我住在柏林",
        "私は東京に住んでいます",
        "My sister Ann is a nurse in Leeds",
    ],
)
def test_an_exchange_with_content_is_worth_extracting(text: str) -> None:
    assert worth_extracting(text, "Noted.")


@pytest.mark.parametrize(
    "text", ["hi", "Thanks so much!", "ok 👍", "谢谢", "好的好的", "哈哈哈", "ありがとう", "감사합니다", "  "]
)
def test_small_talk_in_any_script_is_not(text: str) -> None:
    assert not worth_extracting(text, "You're welcome!")


def test_the_instruction_shows_the_facts_with_ids_and_each_line_with_its_seq_and_source(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User lives in Berlin", evidence=Evidence("user"), key="user.home_city")
        prompt = extraction_prompt(EXCHANGE, store.standing().current)
        assert "(user.home_city) User lives in Berlin" in prompt and "[m-" in prompt
        assert "[seq 11 · tool:web_search] Acme Corp" in prompt and "[seq 10 · user] I moved" in prompt
        assert '"op": "retract"' in prompt

    asyncio.run(main())


def test_parse_tolerates_fences_and_prose_and_drops_malformed_operations(caplog: pytest.LogCaptureFixture) -> None:
    reply = (
        'Sure!\n```json\n{"operations": [{"op": "assert", "text": "User lives in Lisbon", "seq": 10, '
        '"source": "user", "key": "user.home_city"}, {"op": "retract"}, '
        '{"op": "correct", "id": "m-1", "text": "x"}]}\n```'
    )
    ops = parse_extraction(reply)
    assert [op.op for op in ops] == ["assert", "correct"]
    assert ops[0] == ExtractionOp("assert", 10, "user", "User lives in Lisbon", "user.home_city")
    assert "dropped 1 malformed" in caplog.text


@pytest.mark.parametrize("reply", ["I could not find anything.", '{"operations": "none"}', "```json\n{broken\n```"])
def test_an_unreadable_reply_gives_no_operations_and_a_warning(reply: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    assert parse_extraction(reply) == []
    assert "nothing extracted" in caplog.text


def test_trust_comes_from_the_line_an_operation_rests_on_not_from_its_label(store: MemoryStore) -> None:
    async def main() -> None:
        ops = [
            ExtractionOp("assert", 10, "user", "User lives in Lisbon", "user.home_city"),
            ExtractionOp("assert", 11, "user", "Acme Corp was founded in 1999"),  # mislabelled: line 11 is a tool
            ExtractionOp("assert", 99, "user", "Ann Lee likes golf"),  # no such line
        ]
        outcomes = await apply_extraction(store, ops, EXTRACTOR, exchange=EXCHANGE)
        assert [o.kind for o in outcomes] == ["recorded", "proposed", "proposed"]
        assert [(r.source, r.basis, r.evidence_seq) for o in outcomes for r in o.records] == [
            ("extractor", "user", 10),
            ("extractor", "tool:web_search", 11),
            ("extractor", "unknown", 99),
        ]

    asyncio.run(main())


def test_a_retraction_must_rest_on_the_users_word(store: MemoryStore) -> None:
    async def main() -> None:
        berlin = await store.note("User lives in Berlin", evidence=Evidence("user"))
        assert berlin.fact is not None
        from_tool = [ExtractionOp("retract", 11, "tool:web_search", record_id=berlin.fact.id)]
        assert await apply_extraction(store, from_tool, EXTRACTOR, exchange=EXCHANGE) == []
        assert store.fact(berlin.fact.id).status == "live"
        inferred = [ExtractionOp("retract", 10, "user", record_id=berlin.fact.id, reason="moved")]
        assert await apply_extraction(store, inferred, EXTRACTOR, exchange=EXCHANGE) == []
        assert store.fact(berlin.fact.id).status == "live", "the user's line does not ask to forget Berlin"
        asked = [ExchangeItem(20, "user", "I no longer live in Berlin, forget that.")]
        from_user = [ExtractionOp("retract", 20, "user", record_id=berlin.fact.id, reason="moved")]
        assert [o.kind for o in await apply_extraction(store, from_user, EXTRACTOR, exchange=asked)] == ["retracted"]

    asyncio.run(main())


def test_a_failing_operation_is_skipped_and_the_rest_applied(store: MemoryStore) -> None:
    async def main() -> None:
        ops = [
            ExtractionOp("correct", 10, "user", "User lives in Lisbon", record_id="m-000000000000"),
            ExtractionOp("assert", 10, "user", "User's API token is sk-abcdefghijklmnopqrstuvwx"),
            ExtractionOp("assert", 10, "user", "User moved to Lisbon"),
        ]
        outcomes = await apply_extraction(store, ops, EXTRACTOR, exchange=EXCHANGE)
        assert [o.kind for o in outcomes] == ["recorded"]

    asyncio.run(main())
