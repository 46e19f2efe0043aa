"""Who said a log entry, and which of those people a question names.

A log entry that records what someone said starts with their label and a colon ("Caroline: ...", "maren: ...",
"Tomas Berg: ...", "dana_k: ..."). A label is compared as its key (case folded), and a person is also named by
the first part of a label of several parts ("Tomas" for "Tomas Berg", "Dana" for "dana_k"); a full name in a
question names a one-word label by its first word, and a name of six letters or more spelled another way
names the one label spelled like it ("Muhammad" for "Muhhamed": `same_name`). Only labels that a standing
entry has count, so a name nobody in the memory speaks under changes nothing. A question's lower-case words
are names only when it is written without capitals (a cased question capitalises names); function words and
headings ("Note:") never are."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from host.memory.query import STOPWORDS

__all__ = [
    "speaker_of",
    "speaker_key",
    "name_forms",
    "NameCandidate",
    "name_candidates",
    "match_speakers",
    "without_names",
    "same_name",
    "MAX_CANDIDATES",
]

_NAME_WORD = r"[^\W\d_][\w'’.-]{0,39}"
_LABEL = re.compile(rf"\s*({_NAME_WORD}(?: {_NAME_WORD}){{0,2}}):\s+\S")
_POSSESSIVE = r"(?:['’]s)?"
_WORD = re.compile(rf"(?<![\w'’.-]){_NAME_WORD}(?![\w'’-])")
_PARTS = re.compile(r"[\s_.-]+")
_SENTENCE_END = re.compile(r"[.?!:;]\s*$")
HEADINGS = frozenset(
    "note notes update edit ps re fw fwd fyi todo reminder warning tip question answer summary example source "
    "subject step reply quote".split()
)
"""Labels that head a line ("Note: ...") rather than name who spoke."""
MAX_CANDIDATES = 200
"""Names looked up per query, so a long message costs a bounded lookup."""
VARIANT_LETTERS = 6
"""The shortest name another spelling of which still names its speaker (shorter names differ too often)."""
_VOWELS = str.maketrans("", "", "aeiouy")


def _plain(word: str) -> str:
    """A word as compared: case folded, a trailing full stop dropped unless the word is an initial ("J.")."""
    word = word.casefold()
    return word if len(word) <= 2 else word.rstrip(".")


def _written(word: str) -> str:
    return word if len(word) <= 2 else word.rstrip(".")


def _is_name_word(word: str) -> bool:
    plain = _plain(word)
    return plain not in HEADINGS and (plain not in STOPWORDS or plain.endswith("."))


def speaker_of(text: str | None) -> str | None:
    """The label a log entry's text starts with ("Name: ..."), up to three words of any case, as written; None
    when there is none, or when a word of it is a function word or a heading ("I think: ...", "Note: ...")."""
    if not text:
        return None
    match = _LABEL.match(text)
    if match is None or not all(_is_name_word(word) for word in match.group(1).split()):
        return None
    return match.group(1)


def speaker_key(label: str) -> str:
    """A label as the index keeps and compares it: its words case folded, one space between them."""
    return " ".join(_plain(word) for word in label.split())


def name_forms(key: str) -> set[str]:
    """The names a speaker's key answers to: the key, and the first part of a key of several parts."""
    forms = {key}
    parts = [part for part in _PARTS.split(key) if part]
    if len(parts) > 1 and len(parts[0]) > 1 and parts[0] not in STOPWORDS:
        forms.add(parts[0])
    return forms


@dataclass(frozen=True, slots=True)
class NameCandidate:
    """A run of one to three words of a question that may name someone: as compared, and as written."""

    key: str
    written: str


def _cased(query: str, words: list[re.Match[str]]) -> bool:
    """Whether `query` capitalises words (a capital past a sentence's start, "I" aside): then only capitalised
    words may be names; in a question written all in lower case, any word may be."""
    for word in words:
        starts = not query[: word.start()].strip() or _SENTENCE_END.search(query[: word.start()]) is not None
        if word.group()[0].isupper() and not starts and word.group() != "I":
            return True
    return False


def name_candidates(query: str, limit: int = MAX_CANDIDATES) -> list[NameCandidate]:
    """Every run of one to three words in `query` that may name someone (possessives dropped), longest first,
    at most `limit` (a long message is read from its start)."""
    plain = re.sub(r"(\w)['’]s\b", r"\1", query)
    words = list(_WORD.finditer(plain))
    cased = _cased(plain, words)
    usable = [(not cased or w.group()[0].isupper()) and _is_name_word(w.group()) for w in words]
    runs: dict[str, NameCandidate] = {}
    for at, first in enumerate(words):
        if not usable[at]:
            continue
        run = [_written(first.group())]
        runs.setdefault(speaker_key(run[0]), NameCandidate(speaker_key(run[0]), run[0]))
        for step, (before, after) in enumerate(zip(words[at : at + 2], words[at + 1 : at + 3], strict=False)):
            ends = len(before.group()) > 2 and before.group().endswith(".")
            if ends or plain[before.end() : after.start()] != " " or not usable[at + step + 1]:
                break
            run.append(_written(after.group()))
            written = " ".join(run)
            runs.setdefault(speaker_key(written), NameCandidate(speaker_key(written), written))
        if len(runs) >= limit:
            break
    return sorted(runs.values(), key=lambda candidate: -len(candidate.written))[:limit]


def _skeleton(word: str) -> str:
    """A word's first letter and its other consonants, each run of one letter counted once."""
    rest = word[1:].translate(_VOWELS)
    return word[:1] + "".join(letter for n, letter in enumerate(rest) if n == 0 or rest[n - 1] != letter)


def same_name(one: str, other: str) -> bool:
    """Whether two different one-word names of `VARIANT_LETTERS` or more are one name spelled two ways: the
    same first and last letter and the same consonants ("muhammad", "muhhamed"; not "summer", "samara")."""
    return (
        one != other
        and min(len(one), len(other)) >= VARIANT_LETTERS
        and one.isalpha()
        and other.isalpha()
        and one[-1] == other[-1]
        and _skeleton(one) == _skeleton(other)
    )


def match_speakers(candidates: Iterable[NameCandidate], speakers: Iterable[str]) -> dict[str, set[str]]:
    """The speakers' keys that `candidates` name, each with the candidates' written forms that name it.

    A candidate that is no speaker's name form names the one speaker whose form it spells another way.
    """
    by_form: dict[str, list[str]] = {}
    for key in speakers:
        for form in name_forms(key):
            by_form.setdefault(form, []).append(key)
    named: dict[str, set[str]] = {}
    for candidate in candidates:
        keys = by_form.get(candidate.key, [])
        if not keys:
            variants = {key for form, owners in by_form.items() if same_name(candidate.key, form) for key in owners}
            keys = list(variants) if len(variants) == 1 else []
        for key in keys:
            named.setdefault(key, set()).add(candidate.written)
    return named


def without_names(query: str, names: Collection[str]) -> str:
    """`query` with each of `names` (as written, any case, and its possessive) taken out; the query itself if
    nothing else is left."""
    if not names:
        return query
    pattern = "|".join(r"\s+".join(map(re.escape, name.split())) for name in sorted(names, key=len, reverse=True))
    rest = re.sub(rf"(?<![\w'’-])(?:{pattern}){_POSSESSIVE}(?![\w'’-])", " ", query, flags=re.IGNORECASE)
    rest = re.sub(r"\s+", " ", rest).strip()
    return rest if re.search(r"\w", rest) else query
