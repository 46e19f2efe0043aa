"""Recall text that versions before record-id blocks stored in `context` events, removed in place.

Such text is never replayed (blocks are rendered from memory now), but an erase must leave no copy of a
fact's text in any derived place, and these were derived. `scrub_stored_recall` overwrites each stored
`"recall": "…"` value with `null` padded by spaces to the same length: the line stays valid JSON, keeps its
length and its seq, and nothing is renamed under the transcript's writer. What the user and the assistant
said is not touched.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

__all__ = ["scrub_stored_recall"]

logger = logging.getLogger(__name__)

_KEY = re.compile(rb'"recall"\s*:\s*"')


def _scrubbed(line: bytes) -> bytes | None:
    """The line with its stored recall text replaced, or None when it holds none."""
    if b'"recall"' not in line or b'"context"' not in line:
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") != "context" or not isinstance(event.get("recall"), str):
        return None
    match = _KEY.search(line)
    if match is None:
        return None
    start = match.end() - 1  # the opening quote of the value
    text = line.decode("utf-8")
    char_start = len(line[:start].decode("utf-8"))
    _, char_end = json.JSONDecoder().raw_decode(text, char_start)
    end = len(text[:char_end].encode("utf-8"))
    value = line[start:end]
    return line[:start] + b"null" + b" " * (len(value) - 4) + line[end:]


def scrub_stored_recall(transcript: Path) -> int:
    """Overwrite every stored recall text in `transcript` in place; returns how many events were scrubbed."""
    try:
        fd = os.open(transcript, os.O_RDWR)
    except FileNotFoundError:
        return 0
    scrubbed = 0
    try:
        with os.fdopen(os.dup(fd), "rb") as handle:
            offset = 0
            for line in handle:
                new = _scrubbed(line) if line.endswith(b"\n") else None
                if new is not None and len(new) == len(line):
                    os.pwrite(fd, new, offset)
                    scrubbed += 1
                offset += len(line)
        if scrubbed:
            os.fsync(fd)
            logger.info("%s: removed the recall text of %d stored blocks", transcript, scrubbed)
    finally:
        os.close(fd)
    return scrubbed
