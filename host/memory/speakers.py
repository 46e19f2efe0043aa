"""Who said a log entry, and which of those people a question names.

A log entry that records what someone said starts with their name and a colon ("Caroline: I went to a
support group yesterday"). A question that names such a person ("What did Caroline research?") is about
what that person said, so recall gives their entries a vote of their own (`ranking.py`), and the meaning
query leaves their names out: a sentence embedder matches a name with the entries that address the person
("Thanks, Caroline!"), which are the other speaker's, not with what the person said.
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["speaker_of", "name_candidates", "without_names", "MAX_CANDIDATES"]

_NAME_WORD = r"[A-Z][\w'’.-]{0,39}"
_LABEL = re.compile(rf"\s*({_NAME_WORD}(?: {_NAME_WORD}){{0,2}}):\s+\S")
_POSSESSIVE = r"(?:['’]s)?"
_WORD = re.compile(rf"(?<![\w'’.-]){_NAME_WORD}(?![\w'’-])")
MAX_CANDIDATES = 200
"""Names looked up per query, so a long message costs a bounded lookup."""


def speaker_of(text: str | None) -> str | None:
    """The name a log entry's text starts with ("Name: ..."), up to three capitalised words, or None."""
    if not text:
        return None
    match = _LABEL.match(text)
    return match.group(1) if match else None


def name_candidates(query: str, limit: int = MAX_CANDIDATES) -> list[str]:
    """Every run of one to three capitalised words in `query` (a name it may hold), longest first, at most
    `limit` (a long message is read from its start)."""
    plain = re.sub(r"(\w)['’]s\b", r"\1", query)
    words = list(_WORD.finditer(plain))
    runs: dict[str, None] = {}
    for at, first in enumerate(words):
        run = [first.group()]
        runs[run[0]] = None
        for before, after in zip(words[at : at + 2], words[at + 1 : at + 3], strict=False):
            if plain[before.end() : after.start()] != " ":
                break
            run.append(after.group())
            runs[" ".join(run)] = None
        if len(runs) >= limit:
            break
    return sorted(runs, key=lambda run: -len(run))[:limit]


def without_names(query: str, names: Collection[str]) -> str:
    """`query` with each of `names` (and its possessive) taken out; the query itself if nothing else is left."""
    if not names:
        return query
    pattern = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    rest = re.sub(rf"\b(?:{pattern}){_POSSESSIVE}(?!\w)", " ", query)
    rest = re.sub(r"\s+", " ", rest).strip()
    return rest if re.search(r"\w", rest) else query
