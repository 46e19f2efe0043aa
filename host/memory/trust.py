"""Trust: who may make a fact standing, and whose re-proposal a tombstone stops.

What the user said, or a person wrote or confirmed, is `confirmed`. What came from a peer agent, a tool
result or a file is `proposed` until a person reviews it. The agent's own notes on the user's behalf
are confirmed unless it says the fact came from elsewhere. A tombstoned fact comes back only through
the user or a person (or the agent relaying the user's explicit request, marked `reassert`).
"""

from __future__ import annotations

__all__ = ["BASES", "SOURCES", "valid_source", "decide_trust", "is_suppressible", "is_explicit"]

SOURCES = ("user", "agent", "extractor", "human")
"""Sources without a suffix; `peer:<agentId>` and `tool:<name>` complete the set."""

BASES = ("user", "agent", "file")
"""Where content came from, besides `peer:<agentId>` and `tool:<name>`."""


def valid_source(source: str) -> bool:
    """Whether `source` is one of the record sources of DESIGN section 4."""
    if source in SOURCES:
        return True
    prefix, _, rest = source.partition(":")
    return prefix in ("peer", "tool") and bool(rest)


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


def is_suppressible(source: str, reassert: bool) -> bool:
    """Whether a tombstone stops this writer from bringing a fact back."""
    if source in ("user", "human"):
        return False
    return not (source == "agent" and reassert)


def is_explicit(source: str) -> bool:
    """Explicit writers bump the prompt epoch; the extractor's confirmed additions are background."""
    return source in ("user", "agent", "human")
