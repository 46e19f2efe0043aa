"""The memory section of the system prompt and the per-turn recall block: pure rendering, bounded.

The section is bounded in bytes and lines and always ends with a count of what did not fit and how to
recall it, so nothing is cut silently. Priority when it is full: conflicts (they need a decision), then
profile facts, then notes and log entries newest first. Old log entries come through the summaries of their
spans (`summaries.py`), newest first, in a share of the bounds kept for them. Proposed facts are never
rendered as facts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from host.memory.fold import Fact, Standing
from host.memory.summaries import Summary

__all__ = [
    "MemorySection",
    "SectionLimits",
    "SUMMARY_SHARE",
    "LogRoom",
    "render_section",
    "render_recall_block",
    "block_fact_ids",
    "block_summary_ids",
    "fact_line",
    "MEMORY_RULES",
    "MEMORY_RULES_WITHOUT_TOOLS",
]

MEMORY_RULES = (
    "You have a long-term memory kept by Hearth. The facts below come from it; treat them as true unless "
    "the user says otherwise. Tools: memory_note keeps one fact the user told you (give a key such as "
    "user.home_city to a fact that has one current value); memory_correct replaces a fact that was wrong or "
    "has changed (by its [id]); memory_forget removes one when the user asks; memory_recall searches. "
    "Facts recalled for a message arrive after it in a <memory-recall> block."
)
MEMORY_RULES_WITHOUT_TOOLS = (
    "You have a long-term memory kept by Hearth. The facts below come from it; treat them as true unless "
    "the user says otherwise. You cannot change this memory yourself and have no tools: if the user wants "
    "something remembered or forgotten, tell them to type /remember followed by the fact, or /forget "
    "followed by it. Facts recalled for a message arrive after it in a <memory-recall> block."
)
"""For a model offered no tools (the embedded one): the section describes only what it has."""

_TIER_NAMES = {"profile": "profile", "note": "notes", "log": "log entries"}

SUMMARY_SHARE = 0.4
"""The share of the section's bytes and lines kept for summaries of old log entries (when there are any)."""
SUMMARY_HEADING = (
    "Older log entries, summarised by span of days ([s-…] names a summary, not a record; memory_recall finds "
    "the entries):"
)


@dataclass(frozen=True, slots=True)
class SectionLimits:
    max_bytes: int = 6000
    max_lines: int = 60


@dataclass(frozen=True, slots=True)
class MemorySection:
    """The rendered section, the ids it shows, and how many standing facts it left out (entries shown through
    a summary are not left out); `summary_ids` names the summaries it carries."""

    text: str
    shown_ids: tuple[str, ...]
    hidden: int
    summary_ids: tuple[str, ...] = ()


def _date(instant: str | None) -> str:
    return (instant or "")[:10]


def fact_line(fact: Fact, *, with_key: bool = True) -> str:
    """One fact as the model sees it: `[id] (key) text (valid from …; until …)`."""
    parts = [f"[{fact.id}]"]
    if with_key and fact.key:
        parts.append(f"({fact.key})")
    parts.append(" ".join((fact.text or "").split()))
    validity = []
    if fact.valid_from:
        validity.append(f"valid from {_date(fact.valid_from)}")
    if fact.valid_until:
        validity.append(f"until {_date(fact.valid_until)}")
    if validity:
        parts.append(f"({'; '.join(validity)})")
    return " ".join(parts)


def _blocks(standing: Standing) -> list[tuple[list[str], tuple[Fact, ...]]]:
    """(lines, facts) per item in priority order; a conflict is one item of several lines."""
    items: list[tuple[list[str], tuple[Fact, ...]]] = []
    for conflict in standing.conflicts:
        lines = [
            f"- CONFLICT on {conflict.key}: these records disagree; ask the user which holds, then correct or "
            "forget the wrong one:"
        ]
        lines += ["  - " + fact_line(fact, with_key=False) for fact in conflict.facts]
        items.append((lines, conflict.facts))
    by_tier: dict[str, list[Fact]] = {"profile": [], "note": [], "log": []}
    for fact in standing.current:
        by_tier.setdefault(fact.tier, []).append(fact)
    items += [(["- " + fact_line(f)], (f,)) for f in by_tier.pop("profile")]
    for facts in by_tier.values():
        items += [(["- " + fact_line(f)], (f,)) for f in sorted(facts, key=lambda f: -f.seq)]
    return items


def _records(count: int) -> str:
    return f"{count} standing record" + ("" if count == 1 else "s")


def _size(lines: Sequence[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _header(tools: bool) -> list[str]:
    return ["## Memory", MEMORY_RULES if tools else MEMORY_RULES_WITHOUT_TOOLS, ""]


def _opening(limits: SectionLimits, tools: bool, summaries: Sequence[Summary]) -> tuple[int, int, int, int]:
    """(bytes used, lines used, bytes kept, lines kept) before any fact: the header, room for the footer, and
    the share kept for the summaries, so recent detail cannot crowd out the whole of the past (and the reverse)."""
    header = _header(tools)
    used_bytes = _size(header) + 220 + (150 if summaries else 0)  # room for the footer line
    used_lines = len(header) + 2
    wanted = [SUMMARY_HEADING, *("- " + summary.text for summary in summaries)] if summaries else []
    kept_bytes = min(_size(wanted) + 1, int(limits.max_bytes * SUMMARY_SHARE))
    kept_lines = min(len(wanted) + 1, int(limits.max_lines * SUMMARY_SHARE))
    return used_bytes, used_lines, kept_bytes, kept_lines


class LogRoom:
    """The room a section leaves for recent log entries once everything ranked above them is placed.

    Recent log entries are read newest first while `take` says the next one fits, so a build reads and
    renders only the rows the section can show, however many entries the recent days hold.
    """

    def __init__(
        self, standing: Standing, limits: SectionLimits, *, tools: bool = True, summaries: Sequence[Summary] = ()
    ) -> None:
        used_bytes, used_lines, kept_bytes, kept_lines = _opening(limits, tools, summaries)
        self._bytes = limits.max_bytes - kept_bytes - used_bytes
        self._lines = limits.max_lines - kept_lines - used_lines
        for lines, _facts in _blocks(standing):  # the same fit as render_section's
            size = _size(lines)
            if len(lines) <= self._lines and size <= self._bytes:
                self._bytes -= size
                self._lines -= len(lines)

    def take(self, fact: Fact) -> bool:
        """Whether `fact`'s line fits in what is left (and, when it does, count it as placed)."""
        size = _size(["- " + fact_line(fact)])
        if self._lines < 1 or size > self._bytes:
            return False
        self._bytes -= size
        self._lines -= 1
        return True


def render_section(
    standing: Standing,
    limits: SectionLimits = SectionLimits(),
    totals: Mapping[str, int] | None = None,
    *,
    tools: bool = True,
    summaries: Sequence[Summary] = (),
) -> MemorySection:
    """The memory section for the system prompt.

    Args:
        standing: the standing facts and conflicts (all of them, or the newest of each tier), without the log
            entries that `summaries` cover.
        limits: the byte and line bounds of the whole section, footer included.
        totals: how many records stand per tier in all of memory (summarised log entries included), when
            `standing` is only the newest of them.
        tools: whether the model is offered the memory tools (the rules and the footer name them only then).
        summaries: the summaries of old log entries, newest span first.

    Returns:
        The section text, the ids and summary ids shown, and the count of records left out (named in the footer).
    """
    header = _header(tools)
    used_bytes, used_lines, kept_bytes, kept_lines = _opening(limits, tools, summaries)
    wanted = [SUMMARY_HEADING, *("- " + summary.text for summary in summaries)] if summaries else []
    body: list[str] = []
    shown: list[Fact] = []
    for lines, facts in _blocks(standing):
        size = _size(lines)
        if used_lines + len(lines) > limits.max_lines - kept_lines or used_bytes + size > limits.max_bytes - kept_bytes:
            continue
        body += lines
        shown += facts
        used_lines += len(lines)
        used_bytes += size
    told: list[Summary] = []
    if summaries and used_lines + 3 <= limits.max_lines and used_bytes + _size(wanted[:2]) + 1 <= limits.max_bytes:
        used_lines += 2
        used_bytes += _size([SUMMARY_HEADING]) + 1
        for summary in summaries:  # newest first: the oldest spans are the ones left out
            size = _size(["- " + summary.text])
            if used_lines + 1 > limits.max_lines or used_bytes + size > limits.max_bytes:
                break
            told.append(summary)
            used_lines += 1
            used_bytes += size
    if totals is None:
        totals = Counter(f.tier for f in (*standing.current, *(f for c in standing.conflicts for f in c.facts)))
        totals["log"] += sum(summary.count for summary in summaries)
    shown_tiers = Counter(fact.tier for fact in shown)
    shown_tiers["log"] += sum(summary.count for summary in told)
    hidden = {tier: n - shown_tiers[tier] for tier, n in totals.items() if n > shown_tiers[tier]}
    total = sum(totals.values())
    through = sum(summary.count for summary in told)
    summed = (
        f" {through} older log entr{'y is' if through == 1 else 'ies are'} shown through {len(told)} "
        f"summar{'y' if len(told) == 1 else 'ies'} (from {told[-1].span.start:%Y-%m-%d})."
        if told
        else ""
    )
    if len(told) < len(summaries):
        left = summaries[len(told)]
        summed += f" Summaries of the entries before {left.span.end:%Y-%m-%d} did not fit."
    if not total:
        footer = "No facts are stored yet."
    elif not hidden:
        shown_as = "shown or summarised" if told else "shown"
        footer = f"All {_records(total)} are {shown_as}." if total > 1 else f"The one standing record is {shown_as}."
        footer += summed
    else:
        detail = ", ".join(f"{n} {_TIER_NAMES.get(tier, tier)}" for tier, n in sorted(hidden.items()))
        footer = f"{sum(hidden.values())} of {_records(total)} did not fit here ({detail}); " + (
            "call memory_recall with a few words to find them." if tools else "some may be recalled for a message."
        )
        footer += summed
    parts = [*header, *body, *([""] if body else [])]
    if told:
        parts += [SUMMARY_HEADING, *("- " + summary.text for summary in told), ""]
    text = "\n".join([*parts, footer])
    return MemorySection(
        text, tuple(fact.id for fact in shown), sum(hidden.values()), tuple(summary.id for summary in told)
    )


def render_recall_block(recalled: Sequence[Fact], added: Sequence[Fact], more_added: int, cut: int = 0) -> str | None:
    """The per-turn block: facts recalled for the message and background additions since the freeze.

    Args:
        recalled: facts the search found for the latest message, best first.
        added: facts added in the background since the system prompt was frozen, newest first.
        more_added: how many further background additions were left out.
        cut: how many facts were left out because the block reached its byte cap.

    Returns:
        The block's text (without its enclosing tags), or None when there is nothing to say.
    """
    lines: list[str] = []
    if recalled:
        lines.append("Recalled from memory for this message (may not all be relevant):")
        lines += ["- " + fact_line(fact) for fact in recalled]
    if added:
        lines.append("Added to memory since the memory section above was written:")
        lines += ["- " + fact_line(fact) for fact in added]
        if more_added:
            lines.append(f"({more_added} more were added; they are not listed here.)")
    if cut and lines:
        lines.append(f"({cut} more matching facts did not fit in this block.)")
    return "\n".join(lines) if lines else None


_FACT_LINE = re.compile(r"^ *- \[(m-[0-9a-f]+)\]", re.MULTILINE)


def block_fact_ids(text: str) -> tuple[str, ...]:
    """The fact ids a rendered section or recall block carries, in order: one per fact line (`- [id] ...`).

    A fact's own text is folded onto its line (`fact_line`), so only the renderer starts a line with an id.
    """
    return tuple(_FACT_LINE.findall(text))


_SUMMARY_LINE = re.compile(r"^ *- \[(s-[0-9]{8}-[0-9]+d)\]", re.MULTILINE)


def block_summary_ids(text: str) -> tuple[str, ...]:
    """The summary ids a rendered section carries, in order: one per summary line (`- [s-…] ...`)."""
    return tuple(_SUMMARY_LINE.findall(text))
