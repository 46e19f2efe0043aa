"""Text for the search index and FTS5 queries built from free text: the recall path's cheap retrieval craft.

Indexed text and queries go through the same FTS5 tokenizer (Porter stemming over unicode61, so "moved"
finds "moving"). Han and kana runs carry no spaces between words, so both sides also get overlapping
bigrams of those runs. A query keeps its content words (English stopwords dropped), each quoted, OR-joined,
so a message that shares only some words with a fact still finds it and BM25 ranks by how much it shares.
"""

from __future__ import annotations

import re

__all__ = ["FTS_TOKENIZER", "index_body", "query_terms", "match_expression"]

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUNS = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing done down during each either ever every few for from further get got
    had has have having he her here hers herself him himself his how i if in into is it its itself just let me
    might more most must my myself no nor not now of off on once only or other others our ours ourselves out over
    own quite rather really same shall she should so some such than that the their theirs them themselves then
    there these they this those through thus to too under until up upon us very was we were what whatever when
    whenever where whether which while who whom whose why will with within without would yet you your yours
    yourself yourselves s t d ll m re ve o y don didn doesn isn wasn weren won wouldn couldn shouldn aren hasn
    haven hadn ain
    """.split()
)


def _bigrams(run: str) -> list[str]:
    if len(run) <= 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_body(text: str, key: str | None = None) -> str:
    """The text the index stores for a fact: its words, its key's words, and bigrams of Han and kana runs."""
    body = _CJK_RUN.sub(lambda match: " " + " ".join(_bigrams(match.group())) + " ", text)
    if key:
        body += "\n" + re.sub(r"[._:/\-]+", " ", key)
    return body


def query_terms(text: str, *, max_terms: int = 48) -> list[str]:
    """The content words of `text`, lower-cased and de-duplicated, Han and kana runs as bigrams."""
    terms: list[str] = []
    seen: set[str] = set()
    for match in _RUNS.finditer(text):
        run = match.group()
        if _CJK_RUN.fullmatch(run):
            candidates = _bigrams(run)
        else:
            word = run.lower()
            if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
                continue
            candidates = [word]
        for term in candidates:
            if term not in seen:
                seen.add(term)
                terms.append(term)
        if len(terms) >= max_terms:
            break
    return terms[:max_terms]


def match_expression(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression that ORs the quoted terms, or None when there are none."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
