"""An imported archive's transcript, checked line by line as it streams in and written as this host writes it.

Each line must be a transcript event of a type this host knows, in `seq` order; only that type's fields are
written out, so no line carries settings or anything else along. A line is never held past `LINE_CAP`
bytes: a longer one is refused while it streams.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from host.errors import InvalidRequestError
from host.store.durable import NewFile
from protocol.models.transcript import TRANSCRIPT_EVENT, TranscriptEvent

__all__ = ["LINE_CAP", "TranscriptCopy"]

LINE_CAP = 16 << 20
"""The longest transcript line an archive may hold, in bytes."""


class TranscriptCopy:
    """Writes the events fed to it, in chunks of the member's bytes, to a new file `target` (mode 0600).

    `refuse` makes the error for a bad line (the archive's error type); `close` writes the last line, fsyncs
    and returns the number of events.
    """

    def __init__(self, target: Path, refuse: type[InvalidRequestError]) -> None:
        self._target = target
        self._refuse = refuse
        self._file = NewFile(target, "the imported transcript")
        self._pending: list[bytes] = []  # the pieces of the line not yet ended
        self._pending_size = 0
        self.count = 0
        self._last_seq = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the member.

        Raises:
            InvalidRequestError (`refuse`): a line is too long, not JSON, not a known event, or out of order.
            StorageError: the file could not be written.
        """
        *ended, rest = chunk.split(b"\n")
        if ended:
            self._line(b"".join([*self._pending, ended[0]]))
            for line in ended[1:]:
                self._line(line)
            self._pending, self._pending_size = [], 0
        if rest:
            self._pending.append(rest)
            self._pending_size += len(rest)
        if self._pending_size > LINE_CAP:
            number = self.count + 1
            raise self._refuse(
                f"transcript line {number} of the archive is longer than the {LINE_CAP >> 20} MiB a line may hold; "
                "nothing was imported",
                data={"member": "transcript.jsonl", "line": number, "cap": LINE_CAP},
            )

    def close(self) -> int:
        """Write the last line (one without a newline is taken as it is), fsync, close; the number of events."""
        try:
            if self._pending_size:
                self._line(b"".join(self._pending))
            self._file.finish()
        finally:
            self.discard()
        return self.count

    def discard(self) -> None:
        """Close the file without finishing it (the caller removes it)."""
        self._file.discard()

    def _line(self, line: bytes) -> None:
        self.count += 1
        event = self._event(line)
        if event.seq <= self._last_seq:
            raise self._refuse(f"transcript line {self.count} of the archive is out of order")
        self._last_seq = event.seq
        fields = event.model_dump(mode="json", exclude_unset=True)  # as given: no default of a newer field added
        text = json.dumps(fields, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._file.write(text.encode("utf-8"))

    def _event(self, line: bytes) -> TranscriptEvent:
        try:
            value = json.loads(line)
        except ValueError:
            raise self._refuse(f"transcript line {self.count} of the archive is not JSON") from None
        try:
            return TRANSCRIPT_EVENT.validate_python(value)
        except ValidationError:
            kind = value.get("type") if isinstance(value, dict) else None
            raise self._refuse(
                f"transcript line {self.count} of the archive is not a transcript event this host knows (type {kind!r})"
            ) from None
