"""Programs the kernel runs outside the OS sandbox (rg, bwrap): resolved once, refused where an agent could write.

`trusted_program` makes a candidate canonical (every symlink resolved) and checks it is a regular executable
file that no other user can replace (neither it nor a directory above it is world-writable without the
sticky bit) and that lies in none of the given roots (the data dir). `program_refusal` is the per-run check,
pure: a program inside the data dir, or inside any root a write of the run could reach, is refused, so a
program an agent can write is never executed, whatever the permission mode.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from sandbox.paths import is_within
from sandbox.policy import Deny, Policy, decide

__all__ = ["TrustedProgram", "Unavailable", "trusted_program", "program_refusal"]


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A capability that cannot be offered here (no OS sandbox, no safe rg); `reason` is told to the agent."""

    reason: str


@dataclass(frozen=True, slots=True)
class TrustedProgram:
    """A program resolved once to a canonical path that passed the checks."""

    name: str
    path: str


def _replaceable_by_others(path: str) -> str | None:
    """The first of `path` and its directories that another user could change, if any."""
    current = path
    while True:
        info = os.stat(current)
        shared_dir = stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX
        if info.st_mode & stat.S_IWOTH and not shared_dir:
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def trusted_program(name: str, candidate: str | None, *, forbidden: Iterable[str] = ()) -> TrustedProgram | Unavailable:
    """Resolve and check one program, once, before anything runs it.

    Args:
        name: what the program is, for the reason (`ripgrep (rg)`).
        candidate: the path found (on PATH, beside the interpreter), or None when nothing was found.
        forbidden: canonical roots the program may not lie in (the data dir).

    Returns:
        The program at its canonical path, or `Unavailable(reason)`.
    """
    if candidate is None:
        return Unavailable(f"{name} is not installed")
    path = os.path.realpath(candidate)
    try:
        info = os.stat(path)
        loose = _replaceable_by_others(path)
    except OSError:
        return Unavailable(f"{name} could not be found at {path}")
    if not stat.S_ISREG(info.st_mode) or not os.access(path, os.X_OK):
        return Unavailable(f"{name} at {path} is not an executable file")
    if loose is not None:
        return Unavailable(f"{name} at {path} is refused: {loose} can be changed by other users")
    for root in forbidden:
        if is_within(path, root):
            return Unavailable(f"{name} at {path} is refused: it lies in Hearth's data dir")
    return TrustedProgram(name, path)


def program_refusal(policy: Policy, path: str) -> str | None:
    """Why the run of `policy` may not execute canonical `path`, or None when it may.

    A program in the data dir is refused even where this run could not write it (another agent's scratch),
    and so is one in any root this run could write with a person's yes.
    """
    if is_within(path, policy.data_dir) or any(is_within(path, root) for root in policy.writable_roots):
        return "it lies where an agent can write"
    if not isinstance(decide(policy, "write", path), Deny):
        return "the sandbox policy lets this run write it"
    return None
