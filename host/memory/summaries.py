"""Summaries of old log entries: aligned power-of-two spans of days, and their deterministic text.

A log entry (a dated event) dated before the horizon's cut is shown in the memory section only through the
summary of the span of days that holds it. Spans are aligned (a span of 2^k days starts on a multiple of
2^k days since 1970-01-01) and grow with their distance from the cut, so two years take about a dozen. A
summary is derived data: it names its span (`s-YYYYMMDD-Nd`, never a record id, so it is never evidence),
counts the entries it covers and quotes a few of them whole, as their fact lines show them. When the
agent's model has written a span's summary (`model_summaries.py`), the line keeps the same head and carries
the model's words instead of the quotes (`model_summary_text`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from host.memory.fold import Fact

__all__ = [
    "HORIZON_DAYS",
    "SUMMARY_BYTES",
    "Span",
    "Summary",
    "cut_date",
    "entry_day",
    "spans_before",
    "summary_text",
    "model_summary_text",
    "day_instant",
    "parse_span",
]

HORIZON_DAYS = 2
"""Log entries dated before the start of the day this many days ago are folded into summaries."""
SUMMARY_BYTES = 200
"""The most bytes one summary's line takes in the memory section."""
SAMPLE_BYTES = 120
"""A quoted entry longer than this is left out of the quotes (never cut, so an erase's scrub finds it whole)."""

_EPOCH = date(1970, 1, 1)
_SPAN_ID = re.compile(r"^s-(\d{4})(\d{2})(\d{2})-(\d{1,4})d$")


@dataclass(frozen=True, slots=True)
class Span:
    """`days` days (a power of two) from `start`, aligned: `start` is a multiple of `days` since 1970."""

    start: date
    days: int

    @property
    def id(self) -> str:
        return f"s-{self.start:%Y%m%d}-{self.days}d"

    @property
    def end(self) -> date:
        return self.start + timedelta(days=self.days)

    @property
    def label(self) -> str:
        last = self.end - timedelta(days=1)
        return f"{self.start:%Y-%m-%d}" if self.days == 1 else f"{self.start:%Y-%m-%d} to {last:%Y-%m-%d}"


@dataclass(frozen=True, slots=True)
class Summary:
    """One span's summary: how many standing log entries it covers, the ids it quotes, its line's text, and
    the model that wrote it (None: the deterministic text)."""

    span: Span
    count: int
    quoted: tuple[str, ...]
    text: str
    model: str | None = None

    @property
    def id(self) -> str:
        return self.span.id


def day_instant(day: date) -> str:
    """The ledger instant of a day's start (UTC), for comparing with entries' instants."""
    return f"{day:%Y-%m-%d}T00:00:00.000000Z"


def entry_day(fact: Fact) -> date:
    """The day a log entry is dated: its valid time's start, else when it was written."""
    return date.fromisoformat((fact.valid_from or fact.observed_at)[:10])


def cut_date(now: datetime, horizon_days: int = HORIZON_DAYS) -> date:
    """The first day whose log entries are shown in full; entries dated before it are summarised."""
    return now.date() - timedelta(days=horizon_days)


def spans_before(cut: date, oldest: date) -> list[Span]:
    """The spans that tile the days from `oldest` up to `cut` (exclusive), newest first.

    Walking back from the cut, each span is the longest aligned one that ends where the last began and is
    no longer than twice its distance from the cut: a day, then two, four, ... days.
    """
    spans: list[Span] = []
    end = cut
    while end > oldest:
        distance = (cut - end).days
        size = 1
        while size * 2 <= max(1, 2 * distance) and (end - _EPOCH).days % (size * 2) == 0:
            size *= 2
        span = Span(end - timedelta(days=size), size)
        spans.append(span)
        end = span.start
    return spans


def _quote(fact: Fact) -> str:
    return " ".join((fact.text or "").split())


def _head(span: Span, count: int) -> str:
    noun = "log entry" if count == 1 else "log entries"
    return f"[{span.id}] {span.label}: {count} {noun}"


def summary_text(
    span: Span, count: int, samples: Sequence[Fact], limit: int = SUMMARY_BYTES
) -> tuple[str, tuple[str, ...]]:
    """The deterministic summary line of a span (without its leading "- "), and the ids it quotes.

    The line names the span and the count, then quotes entries (spread over the span, in order) whole, as
    many as fit in `limit` bytes; an entry too long to quote whole is left out, never cut.
    """
    head = _head(span, count)
    quotes: list[str] = []
    ids: list[str] = []
    room = limit - len(head.encode("utf-8")) - len(b" (+999999 more)") - 2
    for fact in samples:
        quote = f'[{fact.id}] "{_quote(fact)}"'
        size = len(quote.encode("utf-8")) + 2
        if len(_quote(fact).encode("utf-8")) > SAMPLE_BYTES or size > room:
            continue
        quotes.append(quote)
        ids.append(fact.id)
        room -= size
    text = head + (": " + "; ".join(quotes) if quotes else "")
    if count > len(quotes) and quotes:
        text += f" (+{count - len(quotes)} more)"
    return text, tuple(ids)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def model_summary_text(span: Span, count: int, reply: str, limit: int = SUMMARY_BYTES) -> str | None:
    """A span's summary line (without its leading "- ") carrying a model's words, or None when none are left.

    The head is the deterministic line's own. The reply is folded onto one line (so it can never start a line
    of the section), then, like the quotes, taken whole sentence by sentence while they fit in `limit` bytes;
    a first sentence too long for the line is cut at a word and ends with "…".
    """
    head = _head(span, count) + ": "
    room = limit - len(head.encode("utf-8"))
    words = " ".join(reply.split())
    kept: list[str] = []
    for sentence in _SENTENCE_END.split(words):
        candidate = " ".join([*kept, sentence])
        if len(candidate.encode("utf-8")) > room:
            break
        kept.append(sentence)
    text = " ".join(kept)
    if not kept and words:
        cut = words.encode("utf-8")[: room - len("…".encode())].decode("utf-8", "ignore")
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…"
    return head + text if text.strip("… ") else None


def parse_span(summary_id: str) -> Span | None:
    """The span a summary id names, or None when it names no aligned power-of-two span."""
    match = _SPAN_ID.match(summary_id)
    if match is None:
        return None
    year, month, day, days = (int(group) for group in match.groups())
    try:
        start = date(year, month, day)
    except ValueError:
        return None
    if days < 1 or days & (days - 1) or (start - _EPOCH).days % days:
        return None
    return Span(start, days)
