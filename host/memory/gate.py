"""The sensitive-content gate: credentials, keys, tokens, passwords and card numbers never enter memory.

Every write path (the model's tools, the extractor, the `memory.*` RPC, a MEMORY.md edit) calls
`ensure_not_sensitive` before anything is stored or sent to a model. Text is normalised first (NFKC, and
every format character removed: zero-width spaces and joiners, soft hyphens, bidi marks), so a secret split
by an invisible character is still seen. The detectors are in `host.memory.secret_shapes`. A refusal names
the rule and the kind of secret, never the secret itself. `redact_arguments` keeps a refused secret out of
the transcript, where the model's memory tool calls are recorded.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from host.memory.errors import SensitiveContentError
from host.memory.secret_shapes import Finding, find_secret, luhn_valid

__all__ = [
    "Finding",
    "normalise_for_gate",
    "find_sensitive",
    "check_sensitive",
    "ensure_not_sensitive",
    "luhn_valid",
    "redact_arguments",
]


def normalise_for_gate(text: str) -> str:
    """`text` as the detectors read it: NFKC, with format characters (category Cf) removed."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(char for char in folded if unicodedata.category(char) != "Cf")


def find_sensitive(text: str) -> Finding | None:
    """The rule that refuses `text`, or None when it may be stored."""
    return find_secret(normalise_for_gate(text))


def check_sensitive(text: str) -> str | None:
    """Say why `text` must not be stored, or None when it may be.

    Args:
        text: the candidate content (a fact's text, a key, a reason).

    Returns:
        A short reason such as "it looks like an API key", or None.
    """
    finding = find_sensitive(text)
    return None if finding is None else f"it looks like {finding.label}"


def ensure_not_sensitive(*texts: str | None) -> None:
    """Refuse the write when any of `texts` holds a secret.

    Raises:
        SensitiveContentError: with `data={"reason": ..., "rule": ...}`; the message never quotes the text.
    """
    for text in texts:
        if text is None:
            continue
        finding = find_sensitive(text)
        if finding is not None:
            reason = f"it looks like {finding.label}"
            raise SensitiveContentError(
                f"Not stored: {reason} (rule {finding.rule}). Secrets are never kept in memory.",
                data={"reason": reason, "rule": finding.rule},
            )


def redact_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A memory tool call's arguments with every string the gate refuses replaced by a note of the rule."""
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        finding = find_sensitive(value) if isinstance(value, str) else None
        out[name] = value if finding is None else f"[withheld by Hearth: it looked like {finding.label}]"
    return out
