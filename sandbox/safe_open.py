"""Opening files so that what is opened is exactly the canonical path the policy checked.

Directories are reached by walking from `/` one component at a time with O_NOFOLLOW, so no symlink anywhere on
the way is traversed, even one swapped in after the check; the final component is opened with O_NOFOLLOW too,
and the open descriptor is checked again (its /proc/self/fd link, its type, and for a file with more than one
name that it is none of the run's protected files) before any byte moves. Writes go to a fresh temp file in the
pinned parent directory and are renamed over the name: a final symlink is refused, never followed, and a
hard-linked file is replaced rather than written through.
"""

from __future__ import annotations

import errno
import os
import posixpath
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from sandbox.errors import AccessDeniedError, UnsafeFileError
from sandbox.policy import Allow, Policy, decide
from sandbox.protected import PROTECTED_REASON, ProtectedFiles

__all__ = [
    "Beneath",
    "Entry",
    "fd_path",
    "open_dir",
    "open_read",
    "pin_path",
    "write_atomic",
    "list_entries",
    "opened",
]

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# The /proc/self/fd link of a pinned file is followed on purpose: it names that very inode, never a path.
_REOPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry, described without following it (`info`: its `lstat`, for a regular file)."""

    name: str
    kind: Literal["file", "dir", "symlink", "other"]
    size: int
    link_target: str | None = None
    info: os.stat_result | None = None


def fd_path(fd: int) -> str:
    """The path the kernel reports for an open descriptor (its /proc/self/fd link)."""
    return os.readlink(f"/proc/self/fd/{fd}")


def _verify(fd: int, path: str, *, close_on_error: bool = True) -> None:
    """Check again after open: the descriptor must name exactly the checked path."""
    try:
        actual: str | None = fd_path(fd)
    except OSError:
        actual = None
    if actual == path:
        return
    if close_on_error:
        os.close(fd)
    if actual is None:
        raise UnsafeFileError("cannot confirm what was opened (/proc is not available)")
    raise UnsafeFileError(f"{path} changed while it was being opened")


def open_dir(path: str, *, create_for: Policy | None = None) -> int:
    """Open canonical directory `path` as an O_PATH descriptor without traversing any symlink.

    Args:
        path: a canonical absolute directory path.
        create_for: when given, missing directories that this policy allows writing are created.

    Returns:
        An O_PATH descriptor of the directory; the caller closes it.

    Raises:
        UnsafeFileError: a component is a symlink or not a directory, or the result is not `path`.
        AccessDeniedError: a missing directory may not be created under `create_for`.
        FileNotFoundError: a component is missing and may not be created.
    """
    fd = os.open("/", _DIR_FLAGS)
    current = ""
    for part in [p for p in path.split("/") if p]:
        current = f"{current}/{part}"
        try:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if create_for is None:
                    raise
                if not isinstance(decide(create_for, "write", current), Allow):
                    raise AccessDeniedError(f"may not create the directory {current}") from None
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafeFileError(f"{current} is a symbolic link or not a directory") from exc
            raise
        except AccessDeniedError:
            os.close(fd)
            raise
        os.close(fd)
        fd = next_fd
    _verify(fd, path or "/")
    return fd


@contextmanager
def opened(fd: int) -> Iterator[int]:
    """Close `fd` when the block ends."""
    try:
        yield fd
    finally:
        os.close(fd)


def open_read(path: str, *, protected: ProtectedFiles | None = None) -> int:
    """Open canonical regular file `path` for reading, never through a symlink, nor into a protected file.

    Args:
        path: a canonical absolute path the policy allowed.
        protected: the run's protected files: what is opened must be none of them, whatever its name (a hard
            link in a project to another agent's memory). Only a file with more than one name can be one: its
            name is checked after the `fstat`, so one unlinked in between is refused as a changed path.

    Returns:
        A read-only descriptor; the caller closes it.

    Raises:
        UnsafeFileError: a symlink on the way or at the end, a changed path, or not a regular file.
        AccessDeniedError: the file is one of `protected`.
        IsADirectoryError: `path` is a directory.
        OSError: the file is missing or unreadable.
    """
    parent, name = posixpath.split(path)
    with opened(open_dir(parent)) as dir_fd:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFileError(f"{path} is a symbolic link") from exc
            raise
    info = os.fstat(fd)
    _verify(fd, path)
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeFileError(f"{path} is not a regular file")
    if protected is not None and info.st_nlink > 1 and protected.current().holds(info):
        os.close(fd)
        raise AccessDeniedError(f"{path} is a hard link to {PROTECTED_REASON}")
    return fd


class Beneath:
    """Regular files beneath a pinned directory, opened for reading by relative path without following any symlink.

    Each directory on the way is opened with O_NOFOLLOW from the pinned one, so nothing outside it is reached
    whatever is swapped in; the directories stay open while consecutive paths share them (give paths in sorted
    order). `with Beneath(fd) as files:` closes them at the end (the pinned descriptor stays the caller's).
    """

    def __init__(self, root_fd: int) -> None:
        self._root = root_fd
        self._chain: list[tuple[str, int]] = []

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc: object) -> None:
        self._cut(0)

    def _cut(self, keep: int) -> None:
        for _, fd in self._chain[keep:]:
            os.close(fd)
        del self._chain[keep:]

    def open(self, relative: str) -> tuple[int, os.stat_result] | None:
        """A read-only descriptor of the regular file at `relative` (`""`: the pinned file itself, reopened through
        its descriptor) and its `fstat`, or None when there is none (missing, a symlink on the way or at the end,
        a special file, unreadable, or a `..` in the path)."""
        parts = relative.split("/") if relative else []
        if any(part in ("", ".", "..") for part in parts):
            return None
        dirs, name = parts[:-1], parts[-1:]
        keep = 0
        while keep < min(len(dirs), len(self._chain)) and self._chain[keep][0] == dirs[keep]:
            keep += 1
        self._cut(keep)
        try:
            for part in dirs[keep:]:
                parent = self._chain[-1][1] if self._chain else self._root
                self._chain.append((part, os.open(part, _DIR_FLAGS, dir_fd=parent)))
            if name:
                fd = os.open(
                    name[0], _READ_FLAGS | os.O_NOCTTY, dir_fd=self._chain[-1][1] if self._chain else self._root
                )
            else:
                fd = os.open(f"/proc/self/fd/{self._root}", _REOPEN_FLAGS)
        except OSError:
            return None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return None
        return fd, info


def pin_path(path: str) -> int:
    """An O_PATH descriptor of canonical `path` (a directory or a regular file), never a symlink.

    Raises:
        UnsafeFileError: a symlink on the way or at the end, or neither a directory nor a regular file.
        OSError: the path is missing.
    """
    parent, name = posixpath.split(path)
    if not name:
        return open_dir("/")
    with opened(open_dir(parent)) as dir_fd:
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        os.close(fd)
        raise UnsafeFileError(f"{path} is a symbolic link or a special file")
    _verify(fd, path)
    return fd


def write_atomic(policy: Policy, path: str, data: bytes) -> None:
    """Replace (or create) the file at canonical `path` with `data`, atomically.

    Missing parent directories are created where `policy` allows writing them.

    Raises:
        UnsafeFileError: the target is a symlink or not a regular file, or a parent is a symlink.
        AccessDeniedError: a missing parent may not be created.
        OSError: the write failed (disk full, permissions).
    """
    parent, name = posixpath.split(path)
    with opened(open_dir(parent, create_for=policy)) as dir_fd:
        try:
            existing: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISLNK(existing.st_mode):
            raise UnsafeFileError(f"{path} is a symbolic link; writes never follow symbolic links")
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise UnsafeFileError(f"{path} is not a regular file")
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o644
        temp = f".hearth-{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        try:
            with opened(fd):
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, mode)
            _verify(dir_fd, parent, close_on_error=False)
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            raise


def list_entries(path: str) -> list[Entry]:
    """The entries of canonical directory `path`, sorted by name, described without following symlinks.

    Raises:
        UnsafeFileError: a symlink on the way.
        OSError: the directory is missing or unreadable.
    """
    with opened(open_dir(path)) as dir_fd, opened(os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=dir_fd)) as fd:
        entries: list[Entry] = []
        for item in os.scandir(fd):
            try:
                info = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode):
                entries.append(Entry(item.name, "symlink", 0, os.readlink(item.name, dir_fd=fd)))
            elif stat.S_ISDIR(info.st_mode):
                entries.append(Entry(item.name, "dir", 0))
            elif stat.S_ISREG(info.st_mode):
                entries.append(Entry(item.name, "file", info.st_size, info=info))
            else:
                entries.append(Entry(item.name, "other", 0))
    return sorted(entries, key=lambda entry: entry.name)
