"""The time a question names, as a valid-time span: "on 8 May 2023", "in June 2023", "in 2022", "last week".

A span is a half-open [start, end) of UTC instants in the index's fixed-width form, so it compares with
`validFrom` as strings. A day is widened by SLACK_DAYS on each side (people and their notes disagree on the
exact day of an event), a month or a year is taken whole. Relative words count back from `now`. Text that
names no time gives None: recall then has no time vote. English only; other languages name no span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from host.memory.records import format_instant

__all__ = ["Span", "named_span", "SLACK_DAYS"]

SLACK_DAYS = 3
"""Days either side of a named day that still count as that day."""

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = "|".join([*_MONTHS, *(m[:3] for m in _MONTHS if m != "may"), "sept"])
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"
_AGO = r"(\d+|a|one|two|three)\s+(day|week|month|year)s?\s+ago"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso-day", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("iso-month", re.compile(r"\b(\d{4})-(\d{2})\b")),
    ("day-month-year", re.compile(rf"\b{_DAY}\s+(?:of\s+)?({_MONTH})\.?,?\s+{_YEAR}\b", re.I)),
    ("month-day-year", re.compile(rf"\b({_MONTH})\.?\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("month-year", re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("year", re.compile(r"\b(?:in|during|of|since|from|year)\s+((?:19|20)\d{2})\b", re.I)),
    ("relative", re.compile(rf"\b(yesterday|today|last\s+(?:week|month|year)|{_AGO})\b", re.I)),
)
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3}


@dataclass(frozen=True, slots=True)
class Span:
    start: str
    end: str


def _instant(day: date) -> str:
    return format_instant(datetime(day.year, day.month, day.day, tzinfo=UTC))


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(number for number, month in enumerate(_MONTHS, start=1) if month.startswith(name[:3]))


def _around(day: date, slack: int = SLACK_DAYS) -> Span:
    return Span(_instant(day - timedelta(days=slack)), _instant(day + timedelta(days=slack + 1)))


def _month(year: int, month: int) -> Span:
    after = date(year + month // 12, month % 12 + 1, 1)
    return Span(_instant(date(year, month, 1)), _instant(after))


def _relative(match: re.Match[str], today: date) -> Span:
    words = " ".join(match.group(1).lower().split())
    if words == "today":
        return _around(today, 0)
    if words == "yesterday":
        return _around(today - timedelta(days=1), 1)
    if words.startswith("last "):
        unit = words.split()[1]
        days = {"week": 7, "month": 31, "year": 366}[unit]
        return Span(_instant(today - timedelta(days=2 * days)), _instant(today))
    count = _NUMBERS.get(match.group(2).lower()) or int(match.group(2))
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[match.group(3).lower()] * count
    return _around(today - timedelta(days=days), max(SLACK_DAYS, days // 4))


def named_span(text: str, now: datetime) -> Span | None:
    """The first time `text` names, as a valid-time span, or None."""
    for kind, pattern in _PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        try:
            if kind == "iso-day":
                return _around(date(int(match[1]), int(match[2]), int(match[3])))
            if kind == "iso-month":
                return _month(int(match[1]), int(match[2]))
            if kind == "day-month-year":
                return _around(date(int(match[3]), _month_number(match[2]), int(match[1])))
            if kind == "month-day-year":
                return _around(date(int(match[3]), _month_number(match[1]), int(match[2])))
            if kind == "month-year":
                return _month(int(match[2]), _month_number(match[1]))
            if kind == "year":
                year = int(match[1])
                return Span(_instant(date(year, 1, 1)), _instant(date(year + 1, 1, 1)))
            return _relative(match, now.astimezone(UTC).date())
        except ValueError:  # "31 February": no such day, so no span from this pattern
            continue
    return None
