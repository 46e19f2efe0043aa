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

__all__ = ["speaker_of", "name_candidates", "without_names"]

_NAME_WORD = r"[A-Z][\w'’.-]{0,39}"
_LABEL = re.compile(rf"\s*({_NAME_WORD}(?: {_NAME_WORD}){{0,2}}):\s+\S")
_POSSESSIVE = r"(?:['’]s)?"


def speaker_of(text: str | None) -> str | None:
    """The name a log entry's text starts with ("Name: ..."), up to three capitalised words, or None."""
    if not text:
        return None
    match = _LABEL.match(text)
    return match.group(1) if match else None


def name_candidates(query: str) -> list[str]:
    """Every run of one to three capitalised words in `query` (a name it may hold), longest first."""
    plain = re.sub(r"(\w)['’]s\b", r"\1", query)
    words = re.findall(_NAME_WORD, plain)
    runs = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
    return sorted((run for run in runs if re.search(rf"(?<!\w){re.escape(run)}(?!\w)", plain)), key=lambda r: -len(r))


def without_names(query: str, names: Collection[str]) -> str:
    """`query` with each of `names` (and its possessive) taken out; the query itself if nothing else is left."""
    if not names:
        return query
    pattern = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    rest = re.sub(rf"\b(?:{pattern}){_POSSESSIVE}(?!\w)", " ", query)
    rest = re.sub(r"\s+", " ", rest).strip()
    return rest if re.search(r"\w", rest) else query
