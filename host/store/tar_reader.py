"""A bounded reader of a tar stream: each 512-byte header is parsed here, and data is handed out in chunks.

`tarfile` reads a pax or GNU extended header whole into memory before its caller sees the entry; this reader
reports every entry (name, kind, declared size) before reading a byte of its data and never interprets an
extended header, so the caller refuses what it does not want first. It never seeks: a pipe reads as a file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["CHUNK", "Readable", "TarEntry", "TarFormatError", "TarReader"]

BLOCK = 512
CHUNK = 1 << 20
EntryKind = Literal["file", "link", "extended", "other"]

_KINDS: dict[bytes, EntryKind] = {
    b"0": "file",
    b"\x00": "file",
    b"7": "file",  # contiguous file: a regular file to every reader
    b"1": "link",
    b"2": "link",
    b"x": "extended",  # pax header of the next entry
    b"g": "extended",  # pax global header
    b"L": "extended",  # GNU long name
    b"K": "extended",  # GNU long link name
    b"X": "extended",  # Solaris pax header
}


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class TarFormatError(ValueError):
    """The stream is not a tar archive, or ends inside an entry."""


@dataclass(frozen=True, slots=True)
class TarEntry:
    """One entry's header: its name as stored, what it is, and how many data bytes follow."""

    name: str
    kind: EntryKind
    size: int


class TarReader:
    """Reads entries from `stream` (decompressed tar bytes) in order.

    Use `entries()`; before asking for the next entry, read the current one's data with `chunks()` or not at
    all (what is left of it is skipped).
    """

    def __init__(self, stream: Readable) -> None:
        self._stream = stream
        self._left = 0  # data bytes of the current entry not yet read
        self._pad = 0  # padding after them, up to the next block

    def entries(self) -> Iterator[TarEntry]:
        """Every entry up to the end-of-archive block (or the end of the stream at an entry boundary)."""
        while True:
            self._skip_rest()
            block = self._read_upto(BLOCK)
            if not block.strip(b"\x00"):
                return  # a zero block (or nothing at all) ends the archive
            if len(block) < BLOCK:
                raise TarFormatError("the archive ends inside a tar header")
            entry = _parse(block)
            self._left, self._pad = entry.size, -entry.size % BLOCK
            yield entry

    def chunks(self) -> Iterator[bytes]:
        """The current entry's data, in chunks of at most `CHUNK` bytes.

        Raises:
            TarFormatError: the stream ends before the entry's declared size.
        """
        while self._left:
            data = self._read_upto(min(self._left, CHUNK))
            if not data:
                raise TarFormatError("the archive ends inside a member")
            self._left -= len(data)
            yield data

    def _skip_rest(self) -> None:
        for _ in self.chunks():
            pass
        if self._pad:
            if len(self._read_upto(self._pad)) < self._pad:
                raise TarFormatError("the archive ends inside a member")
            self._pad = 0

    def _read_upto(self, size: int) -> bytes:
        """Up to `size` bytes: fewer only at the end of the stream."""
        parts: list[bytes] = []
        while size:
            data = self._stream.read(size)
            if not data:
                break
            parts.append(data)
            size -= len(data)
        return b"".join(parts)


def _parse(block: bytes) -> TarEntry:
    stored = _number(block[148:156], "checksum")
    # The checksum field counts as eight spaces; old writers summed the bytes as signed.
    unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
    signed = sum(b - 256 if b > 127 else b for b in block[:148] + block[156:]) + 8 * 32
    if stored not in (unsigned, signed):
        raise TarFormatError("a tar header's checksum does not match: the file is damaged or not a tar archive")
    name = _text(block[0:100])
    if block[257:263] == b"ustar\x00":
        prefix = _text(block[345:500])
        name = f"{prefix}/{name}" if prefix else name
    return TarEntry(name, _KINDS.get(block[156:157], "other"), _number(block[124:136], "size"))


def _text(field: bytes) -> str:
    return field.split(b"\x00", 1)[0].decode("utf-8", errors="replace")


def _number(field: bytes, what: str) -> int:
    """An octal header number, or GNU's base-256 form (first byte 0x80) for large values."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    digits = field.replace(b"\x00", b" ").strip()
    try:
        return int(digits, 8) if digits else 0
    except ValueError:
        raise TarFormatError(f"a tar header's {what} is not a number: the file is not a tar archive") from None
