"""What a memory call needs of its run's provenance, kept per agent so a call does not read the transcript.

`run_provenance` over the whole transcript, newest first, reads the run back to the message that started it,
then on to the newest untrusted line before that (a tool result or a peer's message anywhere exposes a run).
The tracker keeps exactly those lines (the run's, and that one) as lines are appended, reading only what was
appended since its last read (`Transcript.read_after`); it reads afresh when the file is another one, shorter,
or rewritten in place. Whether a line is untrusted is `run_provenance`'s own call, asked of that line alone.
"""

from __future__ import annotations

from typing import Any

from host.memory.trust import Provenance
from host.runs.provenance import run_provenance
from host.store.transcript import Mark, Transcript

__all__ = ["ProvenanceTracker"]

_STARTS = ("user", "wake")


def _untrusted(event: dict[str, Any]) -> bool:
    return bool(run_provenance([event]).untrusted)


class ProvenanceTracker:
    """One agent's run provenance, kept. `lines_read` counts the transcript lines read, for tests."""

    def __init__(self) -> None:
        self.lines_read = 0
        self._mark: Mark | None = None
        self._run: list[dict[str, Any]] = []  # from the message that started the latest run, oldest first
        self._before: dict[str, Any] | None = None  # the newest untrusted line before that message
        self._newest: dict[str, Any] | None = None  # the newest untrusted line of all

    def provenance(self, transcript: Transcript) -> Provenance:
        """`run_provenance(transcript.read_backwards())`, from the lines kept and those appended since."""
        appended = transcript.read_after(self._mark) if self._mark is not None else None
        if appended is None:
            self._read_all(transcript)
        else:
            events, self._mark = appended
            self.lines_read += len(events)
            for event in events:
                self._add(event)
        return run_provenance([*reversed(self._run), *([self._before] if self._before is not None else [])])

    def _add(self, event: dict[str, Any]) -> None:
        if event.get("type") in _STARTS:
            self._before, self._run = self._newest, []
        self._run.append(event)
        if _untrusted(event):
            self._newest = event

    def _read_all(self, transcript: Transcript) -> None:
        """From the end back to the latest run's start, then on to the newest untrusted line before it."""
        self._mark = transcript.mark()
        self._run, self._before, self._newest = [], None, None
        started = False
        for event in transcript.read_backwards(self._mark.size):
            self.lines_read += 1
            untrusted = _untrusted(event)
            if self._newest is None and untrusted:
                self._newest = event
            if not started:
                self._run.append(event)
                started = event.get("type") in _STARTS
            elif untrusted:
                self._before = event
                break
        self._run.reverse()
