"""The values the store takes and gives: note requests, write outcomes, change notices, and their checks.

Checks run before the lock is taken and before anything is written: a malformed or sensitive request
never reaches the ledger.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime

from host.memory.errors import InvalidMemoryRequestError
from host.memory.fold import Fact
from host.memory.gate import ensure_not_sensitive
from host.memory.records import TIERS, Record, to_instant

__all__ = [
    "MAX_TEXT_CHARS",
    "Clock",
    "ErasureReport",
    "EventSink",
    "MemoryEvent",
    "NoteItem",
    "WriteOutcome",
    "clean_text",
    "parse_instant",
    "check_key",
    "check_item",
]

MAX_TEXT_CHARS = 4000
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,99}$")

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """A change notice for the host: `changed` after every write, `proposed` for facts awaiting review,
    `set_aside` when a MEMORY.md that could not be imported was kept aside (`kept_as`, `problem`)."""

    kind: str
    agent_id: str
    op: str
    record_ids: tuple[str, ...]
    epoch_bumped: bool
    facts: tuple[Fact, ...] = ()
    kept_as: str | None = None
    problem: str | None = None


EventSink = Callable[[MemoryEvent], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class NoteItem:
    """One fact to assert (see `MemoryStore.note` for the fields)."""

    text: str
    key: str | None = None
    tier: str = "note"
    valid_from: str | None = None
    valid_until: str | None = None
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """What an erase left in the conversation: messages that still hold the text (no conversation scrub was
    asked for), and messages whose text it scrubbed (it was), in its transcripts and in copies elsewhere."""

    held: int = 0
    scrubbed: int = 0


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What a write did.

    `kind` is one of recorded, proposed, duplicate, suppressed, corrected, retracted, confirmed, rejected,
    edited, erased, unchanged. `fact` is the fact that now carries the content (the existing one for a
    duplicate, the target for a retraction); `related` are other facts worth naming (live candidates
    for the same key, or the tombstoned fact); `records` are the ledger records appended; `erasure` what an
    erase left in the conversation.
    """

    kind: str
    records: tuple[Record, ...] = ()
    fact: Fact | None = None
    related: tuple[Fact, ...] = ()
    tombstone_id: str | None = None
    erasure: ErasureReport | None = None


def clean_text(text: str, what: str = "text") -> str:
    """`text` stripped.

    Raises:
        InvalidMemoryRequestError: it is empty or longer than MAX_TEXT_CHARS.
    """
    cleaned = text.strip()
    if not cleaned:
        raise InvalidMemoryRequestError(f"{what} is empty")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise InvalidMemoryRequestError(f"{what} is longer than {MAX_TEXT_CHARS} characters")
    return cleaned


def check_key(key: str | None) -> None:
    """Refuse a malformed fact key.

    Raises:
        InvalidMemoryRequestError: `key` is not a short slug such as `user.home_city`.
    """
    if key is not None and not _KEY.match(key):
        raise InvalidMemoryRequestError("key must be a short slug such as user.home_city")


def parse_instant(value: str | None, name: str) -> str | None:
    """An ISO 8601 date or date-time in the ledger's instant form (None stays None).

    Raises:
        InvalidMemoryRequestError: `value` is not ISO 8601 (the message names the field `name`).
    """
    if value is None:
        return None
    try:
        return to_instant(value)
    except ValueError as exc:
        raise InvalidMemoryRequestError(f"{name} is not an ISO 8601 date or date-time") from exc


def check_item(item: NoteItem) -> NoteItem:
    """`item` checked and normalised: tier, key, instants, text, and the sensitive-content gate.

    Raises:
        InvalidMemoryRequestError: a malformed field.
        SensitiveContentError: the text or key holds a secret.
    """
    if item.tier not in TIERS:
        raise InvalidMemoryRequestError(f"tier must be one of {', '.join(TIERS)}")
    check_key(item.key)
    valid_from, valid_until = parse_instant(item.valid_from, "validFrom"), parse_instant(item.valid_until, "validUntil")
    if valid_from and valid_until and valid_until <= valid_from:
        raise InvalidMemoryRequestError("validUntil must be after validFrom")
    text = clean_text(item.text)
    ensure_not_sensitive(text, item.key)
    return replace(item, text=text, valid_from=valid_from, valid_until=valid_until)
