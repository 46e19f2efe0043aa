"""Secrets in documents: found by memory's sensitive-content gate and masked before a chunk is stored.

A chunk the gate passes is stored as it is. In one it refuses, each line the gate refuses has its words that
are keys by their shape masked, then, if it still does not pass, the shortest tail of the line that makes it
pass (a value follows its keyword); a chunk that still does not pass is masked whole. So a key inside a
document is never stored, searched, returned or shown to a model; what is masked says only what kind it was.
"""

from __future__ import annotations

import re

from host.memory.gate import find_sensitive

__all__ = ["MASK", "mask_secrets"]

MASK = "(hidden: {label})"
"""What replaces a secret. It reads as no value to the gate (after "password is" or "key:", "hidden" is a
description of one), so masking the value is enough and the keyword before it stays."""
_WORD = re.compile(r"\S+")
_MAX_TAIL = 64
"""Words tried as the start of the masked tail of a line before the whole line is masked."""


def _mask_line(line: str, label: str) -> str:
    words = list(_WORD.finditer(line))
    masked = [find_sensitive(word.group()) is not None for word in words]

    def render(flags: list[bool]) -> str:
        out, last, hiding = [], 0, False
        for word, hidden in zip(words, flags, strict=True):
            out.append(line[last : word.start()] if not (hiding and hidden) else "")
            if not hidden:
                out.append(word.group())
            elif not hiding:
                out.append(MASK.format(label=label))  # a run of hidden words is one mask
            hiding, last = hidden, word.end()
        out.append(line[last:])
        return "".join(out)

    # A word that is a secret by its shape (a token, a key) is masked on its own.
    candidate = render(masked)
    if find_sensitive(candidate) is None:
        return candidate
    # Otherwise the value follows its keyword ("password is ...", "key: ..."): mask the shortest tail of
    # the line after which it passes. Masking the keyword alone could pass and leave the value standing.
    for start in range(len(words) - 1, max(-1, len(words) - 1 - _MAX_TAIL), -1):
        candidate = render([hidden or number >= start for number, hidden in enumerate(masked)])
        if find_sensitive(candidate) is None:
            return candidate
    return MASK.format(label=label)


def mask_secrets(text: str) -> tuple[str, int]:
    """`text` with every secret the gate finds masked, and how many lines were changed."""
    finding = find_sensitive(text)
    if finding is None:
        return text, 0
    lines = text.split("\n")
    changed = 0
    for index, line in enumerate(lines):
        found = find_sensitive(line)
        if found is not None:
            lines[index] = _mask_line(line, found.label)
            changed += 1
    masked = "\n".join(lines)
    if find_sensitive(masked) is not None:
        return MASK.format(label=finding.label), max(changed, 1)  # a secret across lines: nothing is kept
    return masked, max(changed, 1)
