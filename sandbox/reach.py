"""What a recursive reader (grep, glob) may be handed: the search root split into uniform pieces.

A directory whose every descendant gets the same read verdict is handed over whole; any other directory (the
data dir, agents/, another agent's directory) is split into its entries, and denied entries, symlinks and
special files are dropped. Readers never follow symlinks, so a piece can only reach what the policy allowed.
"""

from __future__ import annotations

from sandbox.errors import SandboxError
from sandbox.policy import Deny, Policy, decide, read_uniform
from sandbox.safe_open import list_entries

__all__ = ["TooBroadError", "search_roots"]


class TooBroadError(SandboxError):
    """The search root splits into more pieces than a reader may be handed."""


def search_roots(policy: Policy, root: str, *, is_dir: bool, limit: int = 256) -> list[str]:
    """Split canonical `root` into the pieces a recursive reader may search.

    The caller has already decided `root` itself (allowed, or approved by a person).

    Args:
        policy: the run's policy.
        root: a canonical path.
        is_dir: whether `root` is a directory (a file is its own single piece).
        limit: the most pieces returned.

    Returns:
        Canonical paths of directories and regular files, in name order.

    Raises:
        TooBroadError: more than `limit` pieces.
        UnsafeFileError: a symlink on the way to `root`.
        OSError: a directory could not be listed.
    """
    if not is_dir or read_uniform(policy, root):
        return [root]
    pieces: list[str] = []
    for entry in list_entries(root):
        child = f"{root.rstrip('/')}/{entry.name}"
        if entry.kind not in ("dir", "file") or isinstance(decide(policy, "read", child), Deny):
            continue
        pieces.extend(search_roots(policy, child, is_dir=entry.kind == "dir", limit=limit))
        if len(pieces) > limit:
            raise TooBroadError("the search root is too broad; give a narrower path")
    return pieces
