"""What a schedule's `watch` saw: a print of the files under a path in the agent's workspace.

The print is a hash of every entry's relative path, size and modification time (by `lstat`: a link is
a link, never followed), so two equal prints mean nothing under the path changed between two firings.
A path that leaves the workspace, or more than `MAX_ENTRIES` entries, gives no print (never "unchanged").
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePosixPath

from host.errors import InvalidRequestError
from sandbox import is_within

__all__ = ["MAX_ENTRIES", "check_watch", "watch_print"]

MAX_ENTRIES = 20_000


def check_watch(path: str) -> str:
    """`path` if it can name a place in a workspace: relative, no `..`, no NUL.

    Raises:
        InvalidRequestError: it cannot.
    """
    parts = PurePosixPath(path).parts
    if "\0" in path or not parts or PurePosixPath(path).is_absolute() or ".." in parts:
        raise InvalidRequestError(f"watch must be a relative path inside the agent's workspace, not {path!r}")
    return str(PurePosixPath(*parts))


def watch_print(workspace: Path, path: str) -> str | None:
    """The print of `workspace/path` now (blocking: call it in a worker); None when there is none to give."""
    root = workspace / path
    try:
        if not is_within(str(root.resolve()), str(workspace.resolve())):
            return None
    except OSError:
        return None
    digest = hashlib.sha256()
    count = 0
    try:
        top = os.lstat(root)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return None
    digest.update(f"{top.st_mode}:{top.st_size}:{top.st_mtime_ns}\n".encode())
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            count += 1
            if count > MAX_ENTRIES:
                return None
            full = os.path.join(directory, name)
            try:
                info = os.lstat(full)
            except OSError:
                continue
            relative = os.path.relpath(full, root)
            digest.update(f"{relative}\0{info.st_mode}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()
