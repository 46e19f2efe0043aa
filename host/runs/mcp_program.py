"""An MCP server's command, resolved on the host as the person's shell would run it, before the kernel confines it.

A path is taken as written (`~` expanded); a relative one is refused, since it would depend on the host's
working directory. A name is looked up on the host's `PATH`. A version manager's shim (pyenv, rbenv, nodenv,
asdf, mise, volta, ...) is a script or link that runs the manager, whose own tree the sandbox does not show, so
the manager is asked which program the shim would run (`pyenv which python3`, in the host's environment and
working directory, as the shell would), and that program is what the kernel starts. A manager's answer is kept
for the host's life: asking runs a subprocess, and the settings name the shim, so a restart picks up a change.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

__all__ = ["Resolved", "Unresolved", "resolve_command"]

_MANAGERS = frozenset({"pyenv", "rbenv", "nodenv", "goenv", "jenv", "plenv", "phpenv", "asdf", "mise", "rtx", "volta"})
# `exec "<root>/libexec/pyenv" exec "$program" "$@"` (pyenv and its kin), `exec asdf exec "python3" "$@"` (asdf).
_SHIM_EXEC = re.compile(rb'^\s*exec\s+"?([^"\s]+)"?\s+exec\b', re.MULTILINE)
_ASK_TIMEOUT = 10.0
_ANSWERS: dict[tuple[str, str], str] = {}
"""(manager, name) → the program it named, kept for the host's life; a failure is asked again next time."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """The program to start, absolute (never a shim)."""

    path: str


@dataclass(frozen=True, slots=True)
class Unresolved:
    """Why the command names no program the kernel could start, fit to show the person."""

    reason: str


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _shim_manager(path: str) -> str | None:
    """The manager a shim at `path` runs, or None when `path` is no shim."""
    real = os.path.realpath(path)
    linked = os.path.basename(real) != os.path.basename(path)  # a manager run as itself is no shim
    if linked and os.path.basename(real) in ("mise", "rtx"):
        return real
    if linked and os.path.basename(real) == "volta-shim":
        return os.path.join(os.path.dirname(real), "volta")
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    found = _SHIM_EXEC.search(head) if head.startswith(b"#!") else None
    if found is None or os.path.basename(found[1].decode("utf-8", "replace")) not in _MANAGERS:
        return None
    manager = found[1].decode("utf-8", "replace")
    return manager if os.path.isabs(manager) else shutil.which(manager)


def _ask(manager: str, name: str) -> str | Unresolved:
    """What `manager which name` names, or what the manager said instead."""
    if (manager, name) in _ANSWERS:
        return _ANSWERS[(manager, name)]
    try:
        done = subprocess.run(
            [manager, "which", name], capture_output=True, text=True, timeout=_ASK_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Unresolved(str(exc))
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    path = lines[-1] if lines else ""
    if done.returncode != 0 or not os.path.isabs(path) or not _executable(path):
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[0]
        return Unresolved(said[:200])
    _ANSWERS[(manager, name)] = path
    return path


def resolve_command(command: str) -> Resolved | Unresolved:
    """The program `command` runs for the person, found as their shell would find it.

    Args:
        command: the server's command as configured: a path, or a name on the host's `PATH`.

    Returns:
        The absolute program (a shim's program, never the shim), or why there is none.
    """
    if "/" in command:
        path = os.path.expanduser(command)
        if not os.path.isabs(path):
            return Unresolved(f"the program {command!r} is a relative path; give an absolute one, or a name on PATH")
        path = os.path.normpath(path)
    else:
        found = shutil.which(command)
        if found is None:
            return Unresolved(f"the program {command!r} was not found on the host's PATH")
        path = os.path.abspath(found)
    if not _executable(path):
        return Unresolved(f"the program {command!r} was not found (give a path, or a name on the host's PATH)")
    manager = _shim_manager(path)
    if manager is None:
        return Resolved(path)
    name, tool = os.path.basename(path), os.path.basename(manager)
    answer = _ask(manager, name)
    if isinstance(answer, str):
        return Resolved(answer)
    return Unresolved(
        f"{path} is a {tool} shim, which cannot run inside the sandbox, and `{tool} which {name}` named no "
        f"program ({answer.reason}); give the program's own path"
    )
