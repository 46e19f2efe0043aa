"""host.knowledge: the documents a person admits for an agent or a Work, kept apart from its memory.

Files and folders are parsed (Markdown, HTML, PDF, text, code), cut into chunks that keep their headings and
lines, masked of secrets, indexed by words and by meaning, watched, and searched by rank fusion. The model
reaches them only through its knowledge tools, as untrusted document content; with knowledge off, nothing
of it is offered, watched or indexed. `KnowledgeHub` is the part the host wires in.
"""

import typing

if typing.TYPE_CHECKING:
    from host.knowledge.base import KnowledgeBase, Owner
    from host.knowledge.errors import (
        InadmissiblePathError,
        KnowledgeOffError,
        OverlappingSourceError,
        SourceNotFoundError,
        SuggestionNotFoundError,
        TooManySuggestionsError,
    )
    from host.knowledge.hub import Admission, KnowledgeHub, KnowledgeStatus
    from host.knowledge.search import DEFAULT_KNOWLEDGE_RANKING, KnowledgeHit, KnowledgeRanking, search_chunks

__all__ = [
    "DEFAULT_KNOWLEDGE_RANKING",
    "Admission",
    "InadmissiblePathError",
    "KnowledgeBase",
    "KnowledgeHit",
    "KnowledgeHub",
    "KnowledgeOffError",
    "KnowledgeRanking",
    "KnowledgeStatus",
    "OverlappingSourceError",
    "Owner",
    "SourceNotFoundError",
    "SuggestionNotFoundError",
    "TooManySuggestionsError",
    "search_chunks",
]

_HOMES = {
    name: f"host.knowledge.{module}"
    for module, names in {
        "base": ("KnowledgeBase", "Owner"),
        "errors": (
            "InadmissiblePathError",
            "KnowledgeOffError",
            "OverlappingSourceError",
            "SourceNotFoundError",
            "SuggestionNotFoundError",
            "TooManySuggestionsError",
        ),
        "hub": ("Admission", "KnowledgeHub", "KnowledgeStatus"),
        "search": ("DEFAULT_KNOWLEDGE_RANKING", "KnowledgeHit", "KnowledgeRanking", "search_chunks"),
    }.items()
    for name in names
}


def __getattr__(name: str) -> object:
    # Loaded when first asked for: the reading process imports this package and needs none of these.
    from host.lazy_exports import load_export

    return load_export(__name__, _HOMES, name)
