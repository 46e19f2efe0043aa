"""An MCP server's command resolved as the person's shell would run it, a version manager's shim included (25.4)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from host.runs.mcp_program import Resolved, Unresolved, resolve_command


def _manager(root: Path, answer: str, *, code: int = 0) -> Path:
    """A pyenv-like tree: `root/libexec/pyenv which NAME` prints `answer`; `root/shims/tool` runs it."""
    (root / "libexec").mkdir(parents=True)
    (root / "shims").mkdir()
    manager = root / "libexec/pyenv"
    manager.write_text(
        f'#!/bin/sh\n[ "$1" = which ] || exit 9\necho "{answer}"\necho "said on stderr" >&2\nexit {code}\n',
        encoding="utf-8",
    )
    shim = root / "shims/tool"
    shim.write_text(f'#!/usr/bin/env bash\nset -e\nexec "{manager}" exec "${{0##*/}}" "$@"\n', encoding="utf-8")
    for path in (manager, shim):
        path.chmod(0o755)
    return shim


def test_a_path_or_a_name_on_path_is_taken_as_the_shell_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_command(sys.executable) == Resolved(sys.executable)
    found = resolve_command("sh")
    assert isinstance(found, Resolved) and os.path.isabs(found.path)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/server").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "bin/server").chmod(0o755)
    assert resolve_command("~/bin/server") == Resolved(str(tmp_path / "bin/server"))


@pytest.mark.parametrize("command", ["./server", "bin/server", "no-such-program-hearth", "/nowhere/server"])
def test_a_relative_path_or_a_missing_program_is_refused_with_a_reason(command: str) -> None:
    found = resolve_command(command)
    assert isinstance(found, Unresolved) and command in found.reason


def test_a_shim_is_resolved_by_asking_its_manager_and_by_name_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shim = _manager(tmp_path / "fakeenv", sys.executable)
    assert resolve_command(str(shim)) == Resolved(sys.executable), "the shim's program, never the shim"
    monkeypatch.setenv("PATH", f"{shim.parent}:{os.environ['PATH']}")
    assert resolve_command("tool") == Resolved(sys.executable)


def test_a_shim_whose_manager_names_nothing_is_refused_with_what_the_manager_said(tmp_path: Path) -> None:
    shim = _manager(tmp_path / "brokenenv", "", code=1)
    found = resolve_command(str(shim))
    assert isinstance(found, Unresolved) and "pyenv shim" in found.reason and "said on stderr" in found.reason
    elsewhere = _manager(tmp_path / "otherenv", "relative/python")
    assert isinstance(resolve_command(str(elsewhere)), Unresolved), "an answer that is no absolute program"


def test_a_script_that_is_no_shim_is_run_as_it_is(tmp_path: Path) -> None:
    script = tmp_path / "shims/server"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexec python3 -m server\n", encoding="utf-8")
    script.chmod(0o755)
    assert resolve_command(str(script)) == Resolved(str(script))
