"""The memory section of the system prompt and the per-turn recall block: pure rendering, bounded.

The section is bounded in bytes and lines and always ends with a count of what did not fit and how to
recall it, so nothing is cut silently. Priority when it is full: conflicts (they need a decision), then
profile facts, then notes and log entries newest first. Proposed facts are never rendered as facts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from host.memory.fold import Fact, Standing

__all__ = ["MemorySection", "SectionLimits", "render_section", "render_recall_block", "fact_line", "MEMORY_RULES"]

MEMORY_RULES = (
    "You have a long-term memory kept by Hearth. The facts below come from it; treat them as true unless "
    "the user says otherwise. Tools: memory_note keeps one fact the user told you (give a key such as "
    "user.home_city to a fact that has one current value); memory_correct replaces a fact that was wrong or "
    "has changed (by its [id]); memory_forget removes one when the user asks; memory_recall searches. "
    "Facts recalled for a message arrive after it in a <memory-recall> block."
)

_TIER_NAMES = {"profile": "profile", "note": "notes", "log": "log entries"}


@dataclass(frozen=True, slots=True)
class SectionLimits:
    max_bytes: int = 6000
    max_lines: int = 60


@dataclass(frozen=True, slots=True)
class MemorySection:
    """The rendered section, the ids it shows, and how many standing facts it left out."""

    text: str
    shown_ids: tuple[str, ...]
    hidden: int


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


def _blocks(standing: Standing) -> list[tuple[str, list[str], tuple[str, ...]]]:
    """(tier, lines, ids) per item in priority order; a conflict is one item of several lines."""
    items: list[tuple[str, list[str], tuple[str, ...]]] = []
    for conflict in standing.conflicts:
        lines = [
            f"- CONFLICT on {conflict.key}: these records disagree; ask the user which holds, then correct or "
            "forget the wrong one:"
        ]
        lines += ["  - " + fact_line(fact, with_key=False) for fact in conflict.facts]
        items.append(("conflict", lines, tuple(fact.id for fact in conflict.facts)))
    by_tier: dict[str, list[Fact]] = {"profile": [], "note": [], "log": []}
    for fact in standing.current:
        by_tier.setdefault(fact.tier, []).append(fact)
    items += [("profile", ["- " + fact_line(f)], (f.id,)) for f in by_tier.pop("profile")]
    for tier, facts in by_tier.items():
        items += [(tier, ["- " + fact_line(f)], (f.id,)) for f in sorted(facts, key=lambda f: -f.seq)]
    return items


def render_section(standing: Standing, limits: SectionLimits = SectionLimits()) -> MemorySection:
    """The memory section for the system prompt.

    Args:
        standing: the standing facts and conflicts now.
        limits: the byte and line bounds of the whole section, footer included.

    Returns:
        The section text, the ids shown, and the count of facts left out (named in the footer).
    """
    header = ["## Memory", MEMORY_RULES, ""]
    total = len(standing.current) + sum(len(c.facts) for c in standing.conflicts)
    footer_reserve = 2
    used_bytes = sum(len(line.encode("utf-8")) + 1 for line in header) + 220  # room for the footer line
    used_lines = len(header) + footer_reserve
    body: list[str] = []
    shown: list[str] = []
    hidden: Counter[str] = Counter()
    for tier, lines, ids in _blocks(standing):
        size = sum(len(line.encode("utf-8")) + 1 for line in lines)
        if used_lines + len(lines) > limits.max_lines or used_bytes + size > limits.max_bytes:
            hidden[tier] += len(ids)
            continue
        body += lines
        shown += ids
        used_lines += len(lines)
        used_bytes += size
    if not total:
        footer = "No facts are stored yet."
    elif not hidden:
        footer = f"All {total} standing facts are shown."
    else:
        detail = ", ".join(f"{n} {_TIER_NAMES.get(tier, tier)}" for tier, n in sorted(hidden.items()))
        footer = (
            f"{sum(hidden.values())} of {total} standing facts did not fit here ({detail}); "
            "call memory_recall with a few words to find them."
        )
    text = "\n".join([*header, *body, *([""] if body else []), footer])
    return MemorySection(text, tuple(shown), sum(hidden.values()))


def render_recall_block(recalled: Sequence[Fact], added: Sequence[Fact], more_added: int) -> str | None:
    """The per-turn block: facts recalled for the message and background additions since the freeze.

    Args:
        recalled: facts the search found for the latest message, best first.
        added: facts added in the background since the system prompt was frozen, newest first.
        more_added: how many further background additions were left out.

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
            lines.append(f"({more_added} more were added; call memory_recall to find them.)")
    return "\n".join(lines) if lines else None
