"""Erased text taken out of the copies it left, in place: transcripts, their torn tails, views kept aside.

A `TextScrub` holds the texts of one erase (each as written and with its spaces folded, as a fact line
shows it). In a transcript the replies of the memory tools and recall text stored by earlier versions are
derived copies of memory and always lose it; the conversation's own words (messages, replies, tool calls,
other tools' results, summaries) lose it only when the person asks (`conversation`), and are counted
otherwise. A changed line keeps its length: each span becomes `[erased]` (or as many `*` when shorter) and
the line is padded with spaces after its closing brace, so no line moves, its seq stays, and nothing is
renamed under the transcript's writer. Other files (a torn tail, a view kept aside) lose every occurrence.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DERIVED_TOOLS",
    "ERASED",
    "FilePass",
    "Only",
    "TextScrub",
    "scrub_file",
    "scrub_transcript",
    "without_erased",
]

logger = logging.getLogger(__name__)

ERASED = "[erased]"
"""What stands where an erased text was."""

DERIVED_TOOLS = frozenset({"memory_note", "memory_recall", "memory_correct", "memory_forget"})
"""The tools whose results are rendered from memory (the memory tools), so an erase takes its text out of them."""

# The parts of an event that are the conversation's own words (a Work timeline entry keeps `data` too, a
# line of the requests book a question and an answer).
_CONVERSATION = ("text", "content", "summary", "error", "data", "question", "answer")

_BLOCK = 1 << 20  # a transcript is read and searched this many bytes at a time
_RECALL = b'"recall"'  # a context event that may keep recall text stored by earlier versions
_MIN_CUT = 4  # the shortest start of a text a torn line may end with that is taken out as well

Only = Callable[[dict[str, Any]], bool]
"""Which events of a file a pass may change (the others are left whole and not counted)."""


_RECORD_ID = re.compile(r"\[(m-[0-9a-f]{12})\]")


def without_erased(reply: str, erased: Callable[[str], bool]) -> str:
    """A memory tool's reply with the rest of each line that names an erased record replaced by `[erased]`.

    For a reply recorded after the fact it shows was erased (worked out just before, recorded just after):
    no erase's pass reaches it any more and its text is no longer known, but the record's id is on its line.
    """
    lines = reply.split("\n")
    for number, line in enumerate(lines):
        named = next((m for m in _RECORD_ID.finditer(line) if erased(m[1])), None)
        if named is not None:
            lines[number] = f"{line[: named.end()]} {ERASED}"
    return "\n".join(lines)


def _filler(length: int) -> str:
    return ERASED if length >= len(ERASED) else "*" * length


def _replace_all(value: str, texts: tuple[str, ...]) -> str:
    for text in texts:
        if text in value:
            value = value.replace(text, _filler(len(text.encode("utf-8"))))
    return value


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _scrubbed_value(value: Any, texts: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _replace_all(value, texts)
    if isinstance(value, dict):
        return {key: _scrubbed_value(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed_value(item, texts) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class FilePass:
    """One pass over a transcript: where it stopped (the end of its last complete line) and what it found.

    `derived`: lines whose derived copies were scrubbed; `held`: lines whose conversation still holds a
    text (after the pass); `scrubbed`: lines whose conversation was scrubbed.
    """

    end: int = 0
    derived: int = 0
    held: int = 0
    scrubbed: int = 0


class TextScrub:
    """The texts one erase takes out (longest first, so a folded form never splits a longer one)."""

    def __init__(self, texts: Iterable[str]) -> None:
        forms = {form for text in texts for form in (text, " ".join(text.split())) if form.strip()}
        self.texts = tuple(sorted(forms, key=lambda t: (-len(t), t)))
        # The forms a file may hold a text in: raw, and JSON-escaped as this host writes it and as ASCII.
        encoded = {
            form
            for text in self.texts
            for form in (
                text.encode(),
                json.dumps(text)[1:-1].encode(),
                json.dumps(text, ensure_ascii=False)[1:-1].encode(),
            )
        }
        self._bytes = tuple(sorted(encoded, key=lambda b: (-len(b), b)))

    def __bool__(self) -> bool:
        return bool(self.texts)

    def text(self, value: str) -> str:
        """`value` with every text replaced by its filler (a message held outside a transcript)."""
        return _replace_all(value, self.texts)

    def candidate_lines(self, data: bytes) -> list[tuple[int, int]]:
        """The (start, end) of each line of `data` that may hold a text or stored recall text, in order."""
        spans: set[tuple[int, int]] = set()
        for needle in (*self._bytes, _RECALL) if self.texts else (_RECALL,):
            found = data.find(needle)
            while found >= 0:
                line_start = data.rfind(b"\n", 0, found) + 1
                line_end = (data.find(b"\n", found + len(needle)) + 1) or len(data)
                spans.add((line_start, line_end))
                found = data.find(needle, line_end)
        return sorted(spans)

    def may_hold(self, data: bytes) -> bool:
        """Whether `data` holds one of the texts in any of the forms a file may keep it (raw or JSON-escaped)."""
        return any(form in data for form in self._bytes)

    def raw(self, data: bytes, *, torn: bool = False) -> bytes:
        """`data` with every occurrence replaced by a filler of the same length (for files that are not events).

        With `torn` each line is a write cut short: one that ends with the start of a text loses that too.
        """
        for form in self._bytes:
            if form in data:
                data = data.replace(form, _filler(len(form)).ljust(len(form)).encode())
        if torn:
            data = b"".join(self._cut_end(line) for line in data.splitlines(keepends=True))
        return data

    def _cut_end(self, line: bytes) -> bytes:
        body = line.rstrip(b"\n")
        for form in self._bytes:
            for length in range(len(form) - 1, _MIN_CUT - 1, -1):
                if body.endswith(form[:length]):
                    filler = _filler(length).ljust(length).encode()
                    return body[:-length] + filler + line[len(body) :]
        return line

    def event(self, event: dict[str, Any], *, conversation: bool) -> tuple[dict[str, Any], bool, bool]:
        """The event with its derived copies scrubbed (and its conversation, when asked).

        Returns:
            (the event, whether a derived copy changed, whether the conversation holds a text).
        """
        out = dict(event)
        kind = event.get("type")
        derived = False
        if kind == "context" and isinstance(event.get("recall"), str):
            out["recall"] = None  # recall text stored by earlier versions: derived, never replayed
            derived = True
        derived_key = "content" if kind == "tool" and event.get("name") in DERIVED_TOOLS else None
        if derived_key is not None and isinstance(event.get(derived_key), str):
            scrubbed = _replace_all(event[derived_key], self.texts)
            derived = scrubbed != event[derived_key]
            out[derived_key] = scrubbed
        holds = False
        for key in _CONVERSATION:
            if key == derived_key or key not in event:
                continue
            if any(text in value for value in _strings(event[key]) for text in self.texts):
                holds = True
                if conversation:
                    out[key] = _scrubbed_value(event[key], self.texts)
        calls = event.get("toolCalls")
        if isinstance(calls, list) and any(text in value for value in _strings(calls) for text in self.texts):
            holds = True
            if conversation:
                out["toolCalls"] = _scrubbed_value(calls, self.texts)
        return out, derived, holds

    def line(self, line: bytes, *, conversation: bool, only: Only | None = None) -> tuple[bytes, bool, bool]:
        """One transcript line (newline included) scrubbed to the same length; see `event`.

        Returns:
            (the line, whether a derived copy changed, whether the conversation held a text); the line is the
            same object when nothing changed.
        """
        if not self.may_hold(line) and not (_RECALL in line and b'"context"' in line):
            return line, False, False
        try:
            event = json.loads(line)
        except ValueError:
            return line, False, False
        if not isinstance(event, dict) or (only is not None and not only(event)):
            return line, False, False
        out, derived, holds = self.event(event, conversation=conversation)
        if out == event:
            return line, derived, holds
        body = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if len(body) + 1 > len(line):
            # Not from this host's writer: a filler is never longer than its text, but another writer's
            # number formats may be shorter than Python's.
            logger.warning("a transcript line could not be scrubbed in place (%d bytes)", len(line))
            return line, False, holds
        return body + b" " * (len(line) - 1 - len(body)) + b"\n", derived, holds


def scrub_transcript(
    path: Path, scrub: TextScrub, *, conversation: bool, start: int = 0, only: Only | None = None
) -> FilePass:
    """Scrub every complete line of the transcript at `path` from byte `start` on, in place, then fsync.

    The file may be any JSON-lines file of events (a Work timeline, the requests book); `only` limits the
    pass to some of its events. The file is read in blocks searched as bytes, and only the lines that hold a
    text (or stored recall) are parsed, so a long transcript costs a byte search, not a parse.

    Safe beside the transcript's writer: only complete lines are rewritten, each to its own length, and a
    line being appended (no newline yet) is where the pass stops.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return FilePass(start)
    derived = held = scrubbed = 0
    offset = start
    carry = b""
    try:
        while block := os.pread(fd, _BLOCK, offset + len(carry)):
            data = carry + block
            complete = data.rfind(b"\n") + 1
            for line_start, line_end in scrub.candidate_lines(data[:complete]):
                line = data[line_start:line_end]
                new, changed, holds = scrub.line(line, conversation=conversation, only=only)
                if new is not line:
                    os.pwrite(fd, new, offset + line_start)
                    derived += changed
                    scrubbed += conversation and holds
                elif holds:
                    held += 1
            offset, carry = offset + complete, data[complete:]
        if derived or scrubbed:
            os.fsync(fd)
    finally:
        os.close(fd)
    return FilePass(offset, derived, held, scrubbed)


def scrub_file(path: Path, scrub: TextScrub, *, torn: bool = False) -> bool:
    """Replace every occurrence in the file at `path` in place (same length), fsynced; whether it changed.

    `torn`: the file holds lines cut short (a torn tail set aside), so a line's end may hold a text's start.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    new = scrub.raw(data, torn=torn)
    if new == data:
        return False
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, new, 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True
