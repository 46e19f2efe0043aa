"""Durable appends: a record is acknowledged only once every byte of it is on disk, or it is not kept at all.

`append_durably` loops over short writes and fsyncs; when any step fails (a full disk, a quota, an I/O
error) it truncates the file back to the size it had, so the file is exactly as it was before, and
raises a `StorageError` that names the file and says nothing was stored. `storage_errors` maps the
`OSError` of any other write the same way. `create_durably` makes a new file's name survive a power cut.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from host.errors import StorageError

__all__ = ["append_durably", "create_durably", "fsync_dir", "storage_error", "storage_errors", "write_all"]

logger = logging.getLogger(__name__)


def fsync_dir(directory: Path) -> None:
    """Make the names in `directory` (a file just created, renamed or removed) survive a power cut."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data`: `os.write` may write only part of it (a nearly full disk, a signal)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # never seen on a regular file, but a zero-length write would loop forever
            raise OSError(errno.EIO, "the write made no progress")
        view = view[written:]


def storage_error(path: Path, exc: OSError, what: str) -> StorageError:
    """The named error for a write of `what` to `path` that failed with `exc`."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        message = f"the disk is full: {what} was not stored ({path})"
    else:
        message = f"could not write {path} ({exc.strerror or exc}): {what} was not stored"
    return StorageError(message, path=str(path), cause=exc)


@contextmanager
def storage_errors(path: Path, what: str) -> Iterator[None]:
    """Turn an `OSError` raised inside into the `StorageError` for `path`.

    Raises:
        StorageError: the write failed; the message says `what` was not stored.
    """
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        raise storage_error(path, exc, what) from exc


def _truncate_back(fd: int, path: Path, size: int) -> None:
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        # The cut bytes stay as a torn last line; opening the file again moves them aside.
        logger.exception("%s: could not cut a failed write back to %d bytes", path, size)


def append_durably(path: Path, data: bytes, what: str) -> None:
    """Append `data` to `path` and fsync it; on failure leave `path` as it was.

    Raises:
        StorageError: nothing of `data` is in the file (STORAGE_FULL when the disk is full).
    """
    with storage_errors(path, what):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        size = os.fstat(fd).st_size
        try:
            write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            _truncate_back(fd, path, size)
            raise storage_error(path, exc, what) from exc
    finally:
        os.close(fd)


def create_durably(path: Path, *, mode: int = 0o644) -> bool:
    """Create `path` empty (with permission bits `mode`) if it is missing, and fsync its directory so the new
    name survives a power cut.

    Returns:
        Whether the file was created now.

    Raises:
        StorageError: the file could not be created.
    """
    with storage_errors(path, "a new file"):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            return False
        os.close(fd)
        fsync_dir(path.parent)
    return True


class NewFile:
    """A file made new (it must not exist yet), written in pieces, and fsynced by `finish`.

    Args:
        path: where; an existing file there is a StorageError, never overwritten.
        what: what the file holds, for the error a person sees.
        mode: its permission bits.

    Raises:
        StorageError: it cannot be created or written (any method).
    """

    def __init__(self, path: Path, what: str, *, mode: int = 0o600) -> None:
        self.path = path
        self._what = what
        with storage_errors(path, what):
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def write(self, data: bytes) -> None:
        with storage_errors(self.path, self._what):
            write_all(self._fd, data)

    def finish(self) -> None:
        """Make what was written durable and close the file."""
        try:
            with storage_errors(self.path, self._what):
                os.fsync(self._fd)
        finally:
            self.discard()

    def discard(self) -> None:
        """Close the file without making it durable (the caller removes it); a second call does nothing."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
