"""The sensitive-content gate: credentials, keys, tokens, passwords and card numbers never enter memory.

Every write path (tools, RPC, extraction, MEMORY.md import) calls `check_sensitive` before anything is
stored or sent to a model. The reason names the kind of secret, never the secret itself. Card numbers
must pass the Luhn check, so an ordinary long number (an order id, a phone number) is not refused.
"""

from __future__ import annotations

import re

from host.memory.errors import SensitiveContentError

__all__ = ["check_sensitive", "ensure_not_sensitive", "luhn_valid"]

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("an API key", re.compile(r"\bsk-(?:ant-|proj-|live-)?[A-Za-z0-9_\-]{20,}")),
    ("an API key", re.compile(r"\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}")),
    ("an API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/\-]{20,}=*", re.IGNORECASE)),
    ("a password in a URL", re.compile(r"[a-z][a-z0-9+.\-]*://[^\s/:@]+:[^\s/@]+@", re.IGNORECASE)),
    (
        "a password or secret",
        re.compile(
            r"\b(?:password|passwd|passphrase|pass\s*code|pin(?:\s*code)?|secret(?:\s*key)?|api[\s_-]?key|"
            r"access[\s_-]?token|auth[\s_-]?token|private[\s_-]?key|client[\s_-]?secret|token)"
            r"(?:\s+(?:is|was|=|:)|\s*[:=])\s*[\"'`]?[^\s\"'`]{3,}",
            re.IGNORECASE,
        ),
    ),
    ("a password or secret", re.compile(r"(?:密码|口令|密碼|パスワード|비밀번호)\s*(?:是|为|為|は|:|：|=)\s*\S{3,}")),
)

# 13 to 19 digits, optionally grouped by single spaces or dashes, as card numbers are written.
_CARD_CANDIDATE = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum that every payment card number satisfies."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def check_sensitive(text: str) -> str | None:
    """Say why `text` must not be stored, or None when it may be.

    Args:
        text: the candidate content (a fact's text, a reason).

    Returns:
        A short reason such as "it looks like an API key", or None.
    """
    for label, pattern in _PATTERNS:
        if pattern.search(text):
            return f"it looks like {label}"
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits) and len(set(digits)) > 1:
            return "it looks like a payment card number"
    return None


def ensure_not_sensitive(*texts: str | None) -> None:
    """Refuse the write when any of `texts` holds a secret.

    Raises:
        SensitiveContentError: with `data={"reason": ...}`; the message never quotes the text.
    """
    for text in texts:
        if text is None:
            continue
        reason = check_sensitive(text)
        if reason is not None:
            raise SensitiveContentError(
                f"Not stored: {reason}. Secrets are never kept in memory.", data={"reason": reason}
            )
