"""Canonical paths and component-wise containment.

A canonical path is absolute, has no `.`/`..` parts and no symlink in any existing part: symlinks are resolved
up to the deepest existing ancestor and the rest is kept as written. Containment compares whole components, so
`agents/a1` never contains `agents/a10`. Every decision of the policy is made on a canonical path.
"""

from __future__ import annotations

import os
import posixpath

from sandbox.errors import PathEscapeError

__all__ = ["canonical_path", "is_within", "parts_under", "display_path"]


def canonical_path(raw: str, base: str, *, follow_final: bool = True) -> str:
    """Make a path from the model canonical.

    Args:
        raw: the path as the model wrote it; relative paths are relative to `base`, absolute ones stand alone.
        base: an absolute, canonical directory (the run's workspace).
        follow_final: False for writes: the last part is kept as a name in its canonical parent, so a final
            symlink is never resolved here and the safe opener refuses to write through it.

    Returns:
        The canonical absolute path.

    Raises:
        PathEscapeError: `raw` is not a string or holds a NUL byte, or `base` is not absolute.
    """
    if not isinstance(raw, str):
        raise PathEscapeError("path must be a string")
    if "\x00" in raw:
        raise PathEscapeError("path contains a NUL byte")
    if not base.startswith("/"):
        raise PathEscapeError("base directory must be absolute")
    joined = posixpath.join(base, raw) if raw else base
    if follow_final:
        return os.path.realpath(joined)
    parent, name = posixpath.split(joined.rstrip("/") or "/")
    if name in ("", ".", ".."):
        # The last part names a directory by reference, not an entry that could be a symlink.
        return os.path.realpath(joined)
    return posixpath.join(os.path.realpath(parent or "/"), name)


def is_within(path: str, root: str) -> bool:
    """Whether canonical `path` is `root` or lies beneath it, compared component by component.

    Args:
        path: a canonical absolute path.
        root: a canonical absolute directory.

    Returns:
        True when every component of `root` is a leading component of `path`.
    """
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def parts_under(path: str, root: str) -> tuple[str, ...] | None:
    """The components of canonical `path` below `root`, `()` for `root` itself, None when outside it."""
    if not is_within(path, root):
        return None
    rest = path[len(root) :].strip("/")
    return tuple(rest.split("/")) if rest else ()


def display_path(path: str, base: str) -> str:
    """How a tool result names `path`: relative to `base` (the workspace) when inside it, else absolute."""
    under = parts_under(path, base)
    if under is None:
        return path
    return "/".join(under) if under else "."
