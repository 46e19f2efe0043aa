"""Trust: who may make a fact standing, whose re-proposal a tombstone stops, and what a run's reading allows.

What the user said, or a person wrote or confirmed, is `confirmed`. What came from a peer agent, a tool
result or a file is `proposed` until a person reviews it. Where the content came from is decided by the
host from what the run has read (`Provenance`), not by the model's label: the label can lower trust, never
raise it. A run exposed to untrusted content confirms only what its user's own words support (the host
checks, `host.memory.support`); only those words (or a person) bring a tombstoned fact back; its retraction
of a confirmed fact waits for review unless the user asked for it; a correction is never more trusted than
the fact it corrects.
"""

from __future__ import annotations

from dataclasses import dataclass

from host.memory.support import asks_to_forget, supported_by

__all__ = [
    "BASES",
    "SOURCES",
    "Provenance",
    "CLEAN",
    "valid_source",
    "decide_trust",
    "correction_trust",
    "note_basis",
    "may_reassert",
    "retraction_waits",
    "is_suppressible",
    "is_explicit",
]

SOURCES = ("user", "agent", "extractor", "human")
"""Sources without a suffix; `peer:<agentId>` and `tool:<name>` complete the set."""

BASES = ("user", "agent", "file")
"""Where content came from, besides `peer:<agentId>` and `tool:<name>`."""


@dataclass(frozen=True, slots=True)
class Provenance:
    """What the host knows about a run when its model writes memory.

    `user_words` are the user's own messages of the run (none for a run a peer woke); `untrusted` names,
    newest first, every source of content the model had taken in that is neither the user's nor the host's
    (`tool:<name>`, `peer:<id>`). A run with no untrusted content is clean.
    """

    user_words: tuple[str, ...] = ()
    untrusted: tuple[str, ...] = ()

    @property
    def exposed(self) -> bool:
        return bool(self.untrusted)


CLEAN = Provenance()
"""A run that has read nothing but the user's words and its own memory."""


def valid_source(source: str) -> bool:
    """Whether `source` is a record source of DESIGN section 4, or `mcp:<client>` (another tool's proposal)."""
    if source in SOURCES:
        return True
    prefix, _, rest = source.partition(":")
    return prefix in ("peer", "tool", "mcp") and bool(rest)


def _from_elsewhere(basis: str | None) -> bool:
    return basis is not None and basis != "user"


def decide_trust(source: str, basis: str | None) -> str:
    """`confirmed` or `proposed` for a new fact from `source` whose content came from `basis`.

    Args:
        source: the actor writing the record.
        basis: where the content came from, when known (`user`, `agent`, `file`, `tool:<n>`, `peer:<id>`).
    """
    if source in ("user", "human"):
        return "confirmed"
    if source == "agent":
        return "proposed" if _from_elsewhere(basis) else "confirmed"
    if source == "extractor":
        return "confirmed" if basis == "user" else "proposed"
    return "proposed"


def correction_trust(source: str, basis: str | None, corrected: str) -> str:
    """The trust of a correction: its own evidence's, and never above the fact it corrects (unless a person's)."""
    trust = decide_trust(source, basis)
    return trust if corrected == "confirmed" or source == "human" else "proposed"


def note_basis(text: str, claimed: str | None, provenance: Provenance) -> str:
    """The basis the host records for what the model writes: `user` only when the content rests on the user.

    Args:
        text: the fact as it would be stored.
        claimed: the model's `basis` label (`user`, `tool`, `file`, `peer` or None); it can only lower trust.
        provenance: what the run has read.
    """
    if claimed not in (None, "user"):
        return str(claimed)
    if not provenance.exposed or supported_by(text, provenance.user_words):
        return "user"
    return provenance.untrusted[0]


def may_reassert(text: str, provenance: Provenance) -> bool:
    """Whether the model may bring a tombstoned fact back: in a clean run, or resting on the user's own words."""
    return not provenance.exposed or supported_by(text, provenance.user_words)


def retraction_waits(trust: str, text: str | None, record_id: str, provenance: Provenance) -> bool:
    """Whether the model's retraction of a fact must wait for a person's review.

    A confirmed fact retracted in a run that has read untrusted content waits, unless the user's own words in
    that run ask to forget it; a proposed fact, or any fact in a clean run, is retracted at once.
    """
    if trust != "confirmed" or not provenance.exposed:
        return False
    return not asks_to_forget(text, record_id, provenance.user_words)


def is_suppressible(source: str, reassert: bool) -> bool:
    """Whether a tombstone stops this writer from bringing a fact back."""
    if source in ("user", "human"):
        return False
    return not (source == "agent" and reassert)


def is_explicit(source: str) -> bool:
    """Explicit writers bump the prompt epoch; the extractor's confirmed additions are background."""
    return source in ("user", "agent", "human")
