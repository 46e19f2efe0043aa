"""The system prompt frozen per epoch in `prompt-cache.json`, and the one call a turn makes to get its prompt.

Within an epoch the system prompt is byte-identical from turn to turn, so the provider's cache holds. A new
epoch starts when the memory's epoch mark moves (an explicit write or correction, any retraction or erase,
a person's review or edit), when identity, roster or memory switch change, or on `bump_epoch` (compaction,
erase). Background additions reach the model through the per-turn recall block instead. A missing or
corrupt cache file means a live render, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from host.prompt.identity import AgentIdentity, PromptSegment, RosterEntry, build_system_prompt, join_segments
from host.store.atomic import write_bytes_atomic

if TYPE_CHECKING:
    from host.memory.recall import RecallBlock
    from host.memory.section import MemorySection

__all__ = [
    "CACHE_FILE",
    "MemorySource",
    "AssembledPrompt",
    "FrozenPrompt",
    "assemble_prompt",
    "bump_epoch",
    "load_frozen",
]

logger = logging.getLogger(__name__)

CACHE_FILE = "prompt-cache.json"
_VERSION = 1


class MemorySource(Protocol):
    """What the prompt needs from an agent's memory (`MemoryStore` provides it)."""

    @property
    def epoch_mark(self) -> int: ...

    @property
    def last_seq(self) -> int: ...

    def prompt_section(self, *, max_bytes: int, max_lines: int, tools: bool = True) -> MemorySection: ...

    def recall_block(self, text: str, *, since_seq: int, exclude_ids: tuple[str, ...] = ()) -> RecallBlock | None: ...

    def replayed_recall(self, events: Sequence[Mapping[str, Any]], epoch: int, budget: int) -> dict[int, str]: ...


@dataclass(frozen=True, slots=True)
class FrozenPrompt:
    """One epoch's frozen system prompt and what it was built from. `segments` is None after a bump."""

    epoch: int
    inputs: str
    memory_mark: int
    frozen_seq: int
    segments: tuple[PromptSegment, ...] | None
    shown_ids: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class AssembledPrompt:
    """A turn's prompt: the frozen system text (and its segments), the per-turn recall block, the epoch."""

    system: str
    segments: tuple[PromptSegment, ...]
    recall: RecallBlock | None
    epoch: int

    @property
    def recall_block(self) -> str | None:
        """The recall block's text as chosen for this turn."""
        return self.recall.text if self.recall is not None else None


def _inputs_digest(identity: AgentIdentity, roster: Sequence[RosterEntry], limits: tuple[int, int, bool] | None) -> str:
    value = [
        identity.agent_id,
        identity.name,
        identity.instructions,
        identity.tools_note,
        identity.in_work,
        sorted(set(roster)),
        limits,
    ]
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode("utf-8")).hexdigest()


def load_frozen(agent_dir: Path) -> FrozenPrompt | None:
    """The cache file's content, or None when it is missing or unreadable (logged)."""
    path = agent_dir / CACHE_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        segments = raw.get("segments")
        return FrozenPrompt(
            epoch=int(raw["epoch"]),
            inputs=str(raw.get("inputs", "")),
            memory_mark=int(raw.get("memoryMark", 0)),
            frozen_seq=int(raw.get("frozenSeq", 0)),
            segments=None
            if segments is None
            else tuple(PromptSegment(str(s["name"]), str(s["text"])) for s in segments),
            shown_ids=tuple(str(i) for i in raw.get("shownIds", ())),
            reason=str(raw.get("reason", "")),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        logger.warning("%s is unreadable (%s); rendering the prompt live", path, exc)
        return None


def _save(agent_dir: Path, frozen: FrozenPrompt) -> None:
    value: dict[str, Any] = {
        "version": _VERSION,
        "epoch": frozen.epoch,
        "reason": frozen.reason,
        "frozenAt": datetime.now(UTC).isoformat(),
        "inputs": frozen.inputs,
        "memoryMark": frozen.memory_mark,
        "frozenSeq": frozen.frozen_seq,
        "segments": None if frozen.segments is None else [{"name": s.name, "text": s.text} for s in frozen.segments],
        "shownIds": list(frozen.shown_ids),
    }
    data = (json.dumps(value, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    try:
        write_bytes_atomic(agent_dir / CACHE_FILE, data)
    except OSError as exc:
        logger.warning("could not write %s (%s); the next turn renders again", agent_dir / CACHE_FILE, exc)


def bump_epoch(agent_dir: Path, reason: str) -> int:
    """Start a new epoch now: the frozen text is dropped at once and the next turn renders afresh.

    Args:
        agent_dir: the agent's directory.
        reason: why (compaction, erase), kept in the file for people reading it.

    Returns:
        The new epoch number.
    """
    old = load_frozen(agent_dir)
    epoch = (old.epoch if old else 0) + 1
    _save(agent_dir, FrozenPrompt(epoch, "", -1, 0, None, (), reason))
    return epoch


def assemble_prompt(
    agent_dir: Path,
    identity: AgentIdentity,
    roster: Sequence[RosterEntry],
    memory: MemorySource | None,
    latest_user_text: str,
    *,
    max_bytes: int = 6000,
    max_lines: int = 60,
    memory_tools: bool = True,
) -> AssembledPrompt:
    """Everything a turn needs from the prompt: call once per turn.

    Args:
        agent_dir: the agent's directory (holds `prompt-cache.json`).
        identity: the agent's identity and instructions.
        roster: teammates as (agent id, name, one line).
        memory: the agent's memory, or None when memory is off (no section, no recall block).
        latest_user_text: the message this turn answers; it drives the recall block.
        max_bytes: the memory section's byte bound.
        max_lines: the memory section's line bound.
        memory_tools: whether the model is offered the memory tools (the section describes only what it has).

    Returns:
        The system prompt (frozen for the epoch), its segments, the recall block, and the epoch.
    """
    limits = (max_bytes, max_lines, memory_tools) if memory is not None else None
    inputs = _inputs_digest(identity, roster, limits)
    mark = memory.epoch_mark if memory is not None else 0
    frozen = load_frozen(agent_dir)
    if frozen is None or frozen.segments is None or frozen.inputs != inputs or frozen.memory_mark != mark:
        if frozen is None:
            epoch, reason = 1, "new"
        elif frozen.segments is None:
            epoch, reason = frozen.epoch, frozen.reason
        else:
            epoch, reason = frozen.epoch + 1, "memory" if frozen.inputs == inputs else "identity or roster"
        section = (
            memory.prompt_section(max_bytes=max_bytes, max_lines=max_lines, tools=memory_tools)
            if memory is not None
            else None
        )
        segments = build_system_prompt(identity, roster, section.text if section is not None else None)
        frozen = FrozenPrompt(
            epoch=epoch,
            inputs=inputs,
            memory_mark=mark,
            frozen_seq=memory.last_seq if memory is not None else 0,
            segments=segments,
            shown_ids=section.shown_ids if section is not None else (),
            reason=reason,
        )
        _save(agent_dir, frozen)
    segments = frozen.segments or ()
    recall = None
    if memory is not None:
        recall = memory.recall_block(latest_user_text, since_seq=frozen.frozen_seq, exclude_ids=frozen.shown_ids)
    return AssembledPrompt(join_segments(segments), segments, recall, frozen.epoch)
