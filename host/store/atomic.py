"""Atomic files: a reader sees the old file or the new one, never a mix, even after a crash.

Write to a temporary file in the same directory with its final mode, fsync it, rename (or, to create
without replacing, link) it onto the target, then fsync the directory so the rename itself survives a
power cut. The one copy of this for the host: settings, secrets, prompt cache, MEMORY.md, the ledger rewrite.
A write the disk refuses leaves the old file and no temporary behind, and raises `StorageError` (an
`OSError`) naming the file. Temporaries are named `.<name>.<random>.tmp`; one left by a killed process is
removed at the next start (`remove_stale_temps`).
"""

from __future__ import annotations

import ctypes
import errno
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from host.errors import CorruptFileError
from host.store.durable import fsync_dir, storage_errors

__all__ = [
    "write_json_atomic",
    "write_bytes_atomic",
    "create_bytes_atomic",
    "swap_bytes_atomic",
    "read_json",
    "fsync_dir",
    "remove_stale_temps",
]

_LIBC = ctypes.CDLL(None, use_errno=True)

logger = logging.getLogger(__name__)

# What `tempfile.mkstemp(prefix=".<name>.", suffix=".tmp")` makes: eight characters from its alphabet.
_TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


@contextmanager
def _staged(path: Path, data: bytes, mode: int) -> Iterator[str]:
    """A fsynced temporary file beside `path` holding `data` with `mode`; removed afterwards if still there."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        yield tmp_name
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def write_bytes_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace `path` with `data` atomically, with permission bits `mode` from the start.

    Raises:
        StorageError: the disk refused the write; `path` is unchanged.
    """
    with storage_errors(path, "the new contents"):
        with _staged(path, data, mode) as tmp_name:
            os.replace(tmp_name, path)
        fsync_dir(path.parent)


def create_bytes_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> bool:
    """Create `path` holding `data` (mode `mode` from the start) unless it exists; never replaces a file.

    Returns:
        True when this call created it, False when a file was already there (it is left as it is).

    Raises:
        StorageError: the disk refused the write; nothing was created.
    """
    with storage_errors(path, "the new file"):
        with _staged(path, data, mode) as tmp_name:
            try:
                os.link(tmp_name, path)
            except FileExistsError:
                return False
        fsync_dir(path.parent)
    return True


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: str, second: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    renameat2 = getattr(_LIBC, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(str(second)), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(second))


def swap_bytes_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> bytes | None:
    """Put `data` at `path` atomically and return exactly what it replaced (None: there was no file).

    Where the system can swap two names atomically, nothing written to `path` by anyone else between a
    caller's read and this write is lost: it comes back here. Elsewhere the old bytes are read just before
    the rename, which leaves a small window.
    """
    with _staged(path, data, mode) as tmp_name:
        while True:
            try:
                swapped = _exchange(tmp_name, path)
            except FileNotFoundError:
                try:
                    os.link(tmp_name, path)
                except FileExistsError:
                    continue  # created meanwhile: swap with it
                fsync_dir(path.parent)
                return None
            if swapped:
                old = Path(tmp_name).read_bytes()
                fsync_dir(path.parent)
                return old
            try:
                old_bytes: bytes | None = path.read_bytes()
            except FileNotFoundError:
                old_bytes = None
            os.replace(tmp_name, path)
            fsync_dir(path.parent)
            return old_bytes


def write_json_atomic(path: Path, value: Any) -> None:
    """Replace `path` with `value` as pretty JSON, atomically.

    Raises:
        StorageError: the disk refused the write; `path` is unchanged.
    """
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def read_json(path: Path, default: Any = None) -> Any:
    """Read a JSON file; a missing file gives `default`.

    Raises:
        CorruptFileError: the file exists but is not UTF-8 JSON (the message and `data.path` name it).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return default
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorruptFileError(
            f"{path} is not valid JSON (it is not UTF-8 text: byte {exc.start} is 0x{raw[exc.start]:02x})",
            data={"path": str(path)},
        ) from exc
    except json.JSONDecodeError as exc:
        raise CorruptFileError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})", data={"path": str(path)}
        ) from exc


def remove_stale_temps(directory: Path) -> int:
    """Remove the temporaries that atomic writes into `directory` left when their process was killed.

    Only call this before anything writes there (at start-up, under the host lock): a live writer's
    temporary looks the same.

    Returns:
        How many were removed.
    """
    removed = 0
    try:
        names = [entry.name for entry in os.scandir(directory) if entry.is_file(follow_symlinks=False)]
    except FileNotFoundError:
        return 0
    for name in names:
        if _TEMP_NAME.match(name):
            (directory / name).unlink(missing_ok=True)
            removed += 1
    if removed:
        logger.info("%s: removed %d temporary file(s) left by an interrupted write", directory, removed)
    return removed
