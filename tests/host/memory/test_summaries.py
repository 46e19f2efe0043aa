"""Summaries of old log entries: aligned spans, whole quotes, rebuilt on every change, within the bounds."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

import pytest

from host.memory import Evidence, MemoryStore, NoteItem, RecordNotFoundError
from host.memory.summaries import Span, cut_date, parse_span, spans_before, summary_text
from tests.host.memory.conftest import FakeClock

USER = Evidence("user")
EPOCH = date(1970, 1, 1)


def test_spans_tile_the_days_before_the_cut_aligned_and_growing_with_distance() -> None:
    cut, oldest = date(2026, 11, 30), date(2024, 11, 1)
    spans = spans_before(cut, oldest)
    assert spans[0].end == cut and spans[-1].start <= oldest
    for newer, older in zip(spans, spans[1:], strict=False):
        assert older.end == newer.start and older.days >= newer.days
    assert all((s.start - EPOCH).days % s.days == 0 and s.days & (s.days - 1) == 0 for s in spans)
    assert len(spans) <= 16, "two years take about a dozen spans"


def test_a_summary_id_names_only_an_aligned_span_and_is_never_a_record_id() -> None:
    span = spans_before(date(2026, 11, 30), date(2026, 1, 1))[-1]
    assert parse_span(span.id) == span
    assert parse_span("s-20261129-3d") is None and parse_span("s-20261130-2d") is None
    assert parse_span("m-0123456789ab") is None


def test_a_summary_quotes_entries_whole_or_not_at_all() -> None:
    from host.memory.fold import Fact

    def entry(n: int, text: str) -> Fact:
        return Fact(
            f"m-{n:012x}", n, "assert", text, "s", None, "log", "user", None, "confirmed", "live", "private",
            "2025-01-01T00:00:00.000000Z", None, None, None, None, None, None, None, (), n,
        )  # fmt: skip

    long = "word " * 40
    text, quoted = summary_text(Span(date(2025, 1, 1), 1), 3, [entry(1, long), entry(2, "Short one."), entry(3, "B")])
    assert quoted == ("m-000000000002", "m-000000000003")
    assert "word word" not in text and '"Short one."' in text and "(+1 more)" in text
    assert len(text.encode()) <= 200


def _day(clock: FakeClock, back: int) -> str:
    return (clock.current.date() - timedelta(days=back)).isoformat()


def test_old_entries_come_through_summaries_and_a_change_rebuilds_the_summary(
    store: MemoryStore, clock: FakeClock
) -> None:
    async def main() -> None:
        old_id = (
            (await store.note("Went to the lake with Ana.", evidence=USER, tier="log", valid_from=_day(clock, 40)))
            .records[0]
            .id
        )
        await store.note("Baked rye bread.", evidence=USER, tier="log", valid_from=_day(clock, 40))
        recent_id = (
            (await store.note("Called the plumber.", evidence=USER, tier="log", valid_from=_day(clock, 0)))
            .records[0]
            .id
        )
        section = store.prompt_section()
        assert f"- [{recent_id}] Called the plumber." in section.text
        assert f"- [{old_id}] Went" not in section.text and old_id not in section.shown_ids
        (summary_id,) = section.summary_ids
        assert set(store.summary_covers(summary_id)) >= {old_id}
        assert "2 log entries" in section.text and "lake" in section.text
        assert "All 3 standing records are shown or summarised" in section.text
        await store.retract(old_id, evidence=USER)
        section = store.prompt_section()
        assert "lake" not in section.text and "1 log entry" in section.text and "rye bread" in section.text
        assert old_id not in store.summary_covers(summary_id)

    asyncio.run(main())


def test_a_corrected_old_entry_is_summarised_in_its_new_words(store: MemoryStore, clock: FakeClock) -> None:
    async def main() -> None:
        old_id = (
            (await store.note("Visited Porto in May.", evidence=USER, tier="log", valid_from=_day(clock, 90)))
            .records[0]
            .id
        )
        assert "Porto" in store.prompt_section().text
        await store.correct(old_id, "Visited Braga in May.", evidence=USER)
        text = store.prompt_section().text
        assert "Braga" in text and "Porto" not in text

    asyncio.run(main())


def test_a_summary_id_is_no_record_and_names_nothing_to_cite(store: MemoryStore) -> None:
    with pytest.raises(RecordNotFoundError):
        store.fact("s-20250101-1d")
    with pytest.raises(RecordNotFoundError):
        store.summary_covers("s-20250101-3d")


def test_two_years_of_entries_stay_within_the_bounds_and_say_what_did_not_fit(
    store: MemoryStore, clock: FakeClock
) -> None:
    items = [
        NoteItem(f"Entry {n}: met a friend at the cafe number {n}.", tier="log", valid_from=_day(clock, n % 730))
        for n in range(3000)
    ]
    asyncio.run(store.note_many(items, evidence=USER))
    asyncio.run(store.note("User prefers window seats.", evidence=USER))
    section = store.prompt_section(max_bytes=3000, max_lines=30)
    assert len(section.text.encode()) <= 3000 and len(section.text.splitlines()) <= 30
    assert "window seats" in section.text and section.summary_ids
    footer = section.text.splitlines()[-1]
    assert "older log entries are shown through" in footer and "did not fit" in footer, footer
    assert section.summary_ids[0] == spans_before(cut_date(clock.current), date(2024, 1, 1))[0].id
