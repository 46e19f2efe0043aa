"""Per-turn recall blocks: chosen from memory, stored as record ids, rendered from the facts as they stand.

A block is derived from memory, not part of the conversation. A turn's `context` event keeps only the ids
it showed (and the counts its footer states); every replay renders them from the facts as they stand, so a
retracted, replaced or erased fact leaves every later request, and no recall text is ever stored. Within a
prompt epoch the rendering is byte-identical (a fact leaves a block only through a removal, and every
removal starts a new epoch). A block is capped in bytes (the cut is stated in it); the blocks of earlier
epochs share a byte budget, newest first, so old ones give way at an epoch change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from host.memory.fold import Fact
from host.memory.section import render_recall_block

__all__ = [
    "RECALL_BLOCK_BYTES",
    "RecallBlock",
    "choose_recall",
    "stands_in_recall",
    "render_block",
    "replayed_recall",
    "replay_budget",
]

RECALL_BLOCK_BYTES = 4000
"""The most bytes one recall block may take (its lines, headings and footer together)."""
REPLAY_SHARE = 0.10
"""The share of the model's context window that recall blocks of earlier epochs may take when replayed."""
_BYTES_PER_TOKEN = 4  # the same estimate compaction uses


@dataclass(frozen=True, slots=True)
class RecallBlock:
    """What one turn's block showed: recalled ids (best first), background additions, and its footer counts.

    `more_added` counts further background additions left out by count; `cut` those left out by the
    byte cap. `text` is the block as rendered when it was chosen.
    """

    recalled: tuple[str, ...]
    added: tuple[str, ...]
    more_added: int
    cut: int
    text: str


def stands_in_recall(fact: Fact | None) -> bool:
    """Whether a fact a block once showed may still be shown: live, confirmed, its text not erased."""
    return fact is not None and fact.status == "live" and fact.trust == "confirmed" and fact.text is not None


def choose_recall(
    recalled: Sequence[Fact], added: Sequence[Fact], more_added: int, *, max_bytes: int = RECALL_BLOCK_BYTES
) -> RecallBlock | None:
    """The block for one turn: as many facts as fit in `max_bytes`, recalled ones first.

    Returns:
        The block, or None when there is nothing to show.
    """
    kept_recalled: list[Fact] = []
    kept_added: list[Fact] = []
    cut = 0
    for fact, into in [*((f, kept_recalled) for f in recalled), *((f, kept_added) for f in added)]:
        into.append(fact)
        text = render_recall_block(kept_recalled, kept_added, more_added, cut + 1)
        if text is not None and len(text.encode("utf-8")) > max_bytes:
            into.pop()
            cut += 1
    text = render_recall_block(kept_recalled, kept_added, more_added, cut)
    if text is None:
        return None
    return RecallBlock(tuple(f.id for f in kept_recalled), tuple(f.id for f in kept_added), more_added, cut, text)


def _standing(ids: object, lookup: Callable[[str], Fact | None]) -> list[Fact]:
    found = [lookup(str(rid)) for rid in ids] if isinstance(ids, list) else []
    return [fact for fact in found if fact is not None and stands_in_recall(fact)]


def render_block(event: Mapping[str, Any], lookup: Callable[[str], Fact | None]) -> str | None:
    """A stored block rendered from the facts as they stand now (None when none of them stands)."""
    recalled, added = _standing(event.get("recalled"), lookup), _standing(event.get("added"), lookup)
    if not recalled and not added:
        return None
    return render_recall_block(recalled, added, int(event.get("moreAdded") or 0), int(event.get("cut") or 0))


def replay_budget(context_window: int) -> int:
    """The bytes that replayed recall blocks of earlier epochs may take for a model of this window."""
    return int(context_window * REPLAY_SHARE * _BYTES_PER_TOKEN)


def replayed_recall(
    events: Sequence[Mapping[str, Any]], epoch: int, budget: int, lookup: Callable[[str], Fact | None]
) -> dict[int, str]:
    """The recall text to attach, by the seq of its `context` event.

    Every block of the current epoch is kept, and the newest block whatever its epoch (it is this turn's);
    blocks of earlier epochs are kept newest first while they fit in `budget` bytes together. Within an
    epoch the choice is stable: earlier epochs' blocks neither grow nor change until the next removal.

    Args:
        events: the transcript since the last compaction, oldest first.
        epoch: the prompt epoch of the turn being built.
        budget: the bytes earlier epochs' blocks may take.
        lookup: a fact by id, as it stands now.
    """
    contexts = [e for e in events if e.get("type") == "context"]
    out: dict[int, str] = {}
    spent = 0
    for position, event in enumerate(reversed(contexts)):
        text = render_block(event, lookup)
        if text is None:
            continue
        if position == 0 or int(event.get("epoch") or 0) >= epoch:
            out[int(event["seq"])] = text
            continue
        size = len(text.encode("utf-8"))
        if spent + size > budget:
            break  # older blocks than one that does not fit are dropped too, so the kept ones stay contiguous
        spent += size
        out[int(event["seq"])] = text
    return out
