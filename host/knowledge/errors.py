"""The knowledge base's typed errors, each with its wire code (docs/errors.md)."""

from __future__ import annotations

from host.errors import ConflictError, InvalidRequestError, NotFoundError

__all__ = [
    "KnowledgeOffError",
    "SourceNotFoundError",
    "InadmissiblePathError",
    "OverlappingSourceError",
    "SuggestionNotFoundError",
    "TooManySuggestionsError",
]


class KnowledgeOffError(ConflictError):
    """Knowledge is off for this agent: nothing is admitted, searched or watched until it is on again."""


class SourceNotFoundError(NotFoundError):
    """No source, or no chunk, with that id in this base."""


class InadmissiblePathError(InvalidRequestError):
    """The path cannot be admitted (missing, not a file or folder, inside the data dir, a system tree)."""


class OverlappingSourceError(InadmissiblePathError):
    """The path would read what an admitted source of the same base reads already; the message names it."""


class SuggestionNotFoundError(NotFoundError):
    """No pending document suggestion with that id for this agent (accepted, declined, or never made)."""


class TooManySuggestionsError(ConflictError):
    """The agent has as many suggestions waiting for a person as it may; it is told to wait."""
