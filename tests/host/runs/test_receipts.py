"""A receipt lists the fact ids of the rendered memory segment and of the recall blocks attached, nothing else."""

from __future__ import annotations

from datetime import date

from host.memory.fold import classify
from host.memory.section import SectionLimits, block_fact_ids, block_summary_ids, render_section
from host.memory.summaries import Span, Summary, summary_text
from host.prompt.cache import AssembledPrompt
from host.prompt.identity import PromptSegment
from host.runs.live_context import Context
from host.runs.receipts import build_receipt, prefix_hash

SECTION = (
    "## Memory\nrules\n\n- [m-0000000000a1] (user.bike) The bike is red\n"
    "- CONFLICT on user.city:\n  - [m-0000000000b2] Lisbon"
)
RECALL = (
    "Recalled from memory for this message (may not all be relevant):\n- [m-0000000000c3] a fact about [m-0000000000d4]"
)


def test_only_the_renderers_fact_lines_give_ids_not_an_id_written_inside_a_facts_text() -> None:
    assert block_fact_ids(SECTION) == ("m-0000000000a1", "m-0000000000b2")
    assert block_fact_ids(RECALL) == ("m-0000000000c3",)


def test_the_receipt_takes_the_memory_segment_not_an_id_the_instructions_mention() -> None:
    segments = (
        PromptSegment("identity", "You are Ann.\n- [m-0000000000e5] is what the person typed as instructions"),
        PromptSegment("memory", SECTION),
    )
    prompt = AssembledPrompt("whole system text", segments, None, 7)
    receipt = build_receipt("run-1", prompt, Context([], [], 0, (RECALL, RECALL)))
    assert receipt.section == ["m-0000000000a1", "m-0000000000b2"]
    assert receipt.recall == ["m-0000000000c3"]
    assert receipt.epoch == 7 and receipt.prefix_hash == prefix_hash("whole system text")
    assert receipt.fact_ids() == ["m-0000000000a1", "m-0000000000b2", "m-0000000000c3"]


def test_the_receipt_names_the_summaries_the_section_carried() -> None:
    spans = [Span(date(2026, 11, 28), 1), Span(date(2026, 11, 26), 2)]
    summaries = []
    for span in spans:
        text, quoted = summary_text(span, 3, [])
        summaries.append(Summary(span, 3, quoted, text))
    room = SectionLimits(max_bytes=6000, max_lines=60)
    rendered = render_section(classify([], "2026-12-01T00:00:00.000000Z"), room, summaries=summaries[:1])
    assert rendered.summary_ids == ("s-20261128-1d",)
    assert block_summary_ids(rendered.text) == rendered.summary_ids
    prompt = AssembledPrompt("system", (PromptSegment("memory", rendered.text),), None, 3)
    receipt = build_receipt("run-2", prompt, Context([], [], 0, ()))
    assert receipt.summaries == ["s-20261128-1d"] and receipt.section == []
