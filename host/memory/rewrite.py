"""A recall question rewritten by the agent's own model into search words: one small request, cached.

A question that names a category ("what food does she like?") or asks for an inference ("is she a
bookworm?") shares no word with the turns that answer it ("I baked a lava cake", "I finished three novels").
The agent's model turns it into the words such turns would say; they vote as one weaker words list beside
the question's own (`ranking.py`), so a poor rewrite costs little. A rewrite is cached by the model and the
question's text, so a repeated question costs nothing; the embedded local model is never asked (it is too
small, and its one generation lock would hold up the person's next turn). `HEARTH_RECALL_REWRITE=off` stops it.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from host.memory.query import query_terms

__all__ = [
    "SWITCH",
    "REWRITE_MARK",
    "MAX_REWRITE_TERMS",
    "REWRITE_OUTPUT_TOKENS",
    "REWRITE_SECONDS",
    "Rewrite",
    "Rewriter",
    "RewriteCache",
    "rewrite_enabled",
    "rewrite_prompt",
    "rewrite_terms",
]

SWITCH = "HEARTH_RECALL_REWRITE"
"""Set to `off` to never ask a model to rewrite a recall question."""
REWRITE_MARK = "Turn this question about past conversations into search words"
MAX_REWRITE_TERMS = 24
"""Search words kept from one rewrite (a long reply is read from its start)."""
REWRITE_OUTPUT_TOKENS = 64
"""The most tokens a rewrite may answer with."""
REWRITE_SECONDS = 20.0
"""How long a recall waits for its rewrite before it searches with the question alone."""


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The words a model gave for one question, what the request cost, and whether it came from the cache."""

    terms: tuple[str, ...]
    input_tokens: int
    output_tokens: int
    cached: bool = False

    def footer(self) -> str:
        """The line a recall reply ends with, so the model sees what its search cost."""
        if self.cached:
            return f"(The search also used {len(self.terms)} words from an earlier rewrite of this question: no cost.)"
        return (
            f"(The search also used {len(self.terms)} words from a rewrite of the question by your model: "
            f"{self.input_tokens} tokens in, {self.output_tokens} out.)"
        )


Rewriter = Callable[[str], Awaitable[Rewrite | None]]
"""`rewrite(question)`: the model's search words for a question, or None (switched off, or it failed)."""


def rewrite_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


def rewrite_prompt(question: str) -> str:
    """The one message of a rewrite request."""
    return (
        f"{REWRITE_MARK}. The words go to a keyword search over what people said. Give the concrete words an "
        "answering message would contain: examples of any category the question names (for 'what food': "
        "dishes and foods), and words for what the question infers (for 'is she a bookworm': reading, books, "
        "novels). At most 20 words on one line, no names, no explanation.\n\n"
        f"Question: {question}"
    )


def rewrite_terms(reply: str, question: str) -> tuple[str, ...]:
    """The search words of a rewrite reply that the question does not already hold, at most MAX_REWRITE_TERMS."""
    asked = set(query_terms(question))
    return tuple(term for term in query_terms(reply) if term not in asked)[:MAX_REWRITE_TERMS]


class RewriteCache:
    """Rewrites by (model, question), the newest `size` kept; a hit is returned marked `cached`."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._kept: OrderedDict[tuple[str, str], Rewrite] = OrderedDict()

    def get(self, model: str, question: str) -> Rewrite | None:
        found = self._kept.get((model, question))
        if found is None:
            return None
        self._kept.move_to_end((model, question))
        return Rewrite(found.terms, 0, 0, cached=True)

    def put(self, model: str, question: str, rewrite: Rewrite) -> None:
        self._kept[(model, question)] = rewrite
        while len(self._kept) > self._size:
            self._kept.popitem(last=False)
