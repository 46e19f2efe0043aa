"""The shell's OS sandbox: detection fails closed, and the bubblewrap command line mirrors the policy."""

from __future__ import annotations

from typing import Any

from sandbox import ShellSandbox, Unavailable, build_policy, bwrap_argv, detect_shell_sandbox
from sandbox.os_sandbox import shell_env

SHELL = ("/usr/bin/bash", "--noprofile", "--norc")


def binds(argv: list[str]) -> list[tuple[str, str]]:
    """(kind, path) for every mount option that takes a source and a destination or a path."""
    out = []
    for i, arg in enumerate(argv):
        if arg in ("--bind", "--ro-bind", "--ro-bind-try", "--bind-try"):
            assert argv[i + 1] == argv[i + 2]
            out.append((arg, argv[i + 1]))
        elif arg in ("--tmpfs", "--proc", "--dev"):
            out.append((arg, argv[i + 1]))
    return out


def test_the_bwrap_argv_mounts_only_the_agents_memory_and_workspace_of_the_data_dir() -> None:
    policy = build_policy("/srv/hearth", "a1")
    argv = bwrap_argv(policy, "/usr/bin/bwrap", SHELL)
    data_mounts = [m for m in binds(argv) if m[1].startswith("/srv/hearth")]
    assert data_mounts == [
        ("--tmpfs", "/srv/hearth"),
        ("--ro-bind-try", "/srv/hearth/agents/a1/memory"),
        ("--bind", "/srv/hearth/agents/a1/scratch"),
    ]
    assert argv[argv.index("--chdir") + 1] == "/srv/hearth/agents/a1/scratch"
    assert argv[-4:] == ["--", *SHELL]


def test_the_bwrap_argv_unshares_everything_and_drops_capabilities() -> None:
    argv = bwrap_argv(build_policy("/srv/hearth", "a1"), "/usr/bin/bwrap", SHELL)
    for flag in ("--die-with-parent", "--new-session", "--unshare-all"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in argv
    assert ("--ro-bind-try", "/usr") in binds(argv) and ("--tmpfs", "/tmp") in binds(argv)


def test_the_network_is_shared_only_when_the_policy_allows_it() -> None:
    argv = bwrap_argv(build_policy("/srv/hearth", "a1", network=True), "/usr/bin/bwrap", SHELL)
    assert "--share-net" in argv


def test_a_work_run_mounts_its_work_read_only_and_its_scratch_writable() -> None:
    policy = build_policy("/srv/hearth", "a1", run_kind="work", work_id="w1")
    data_mounts = [m for m in binds(bwrap_argv(policy, "bwrap", SHELL)) if m[1].startswith("/srv/hearth")]
    assert data_mounts == [
        ("--tmpfs", "/srv/hearth"),
        ("--ro-bind", "/srv/hearth/works/w1"),
        ("--bind", "/srv/hearth/works/w1/scratch"),
    ]


def test_the_shell_environment_is_built_not_inherited(monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-nope")
    env = dict(shell_env(build_policy("/srv/hearth", "a1"), "/tmp", "bubblewrap"))
    assert "OPENAI_API_KEY" not in env and env["HOME"] == "/srv/hearth/agents/a1/scratch"


def test_detection_finds_bubblewrap_here_and_prefers_it() -> None:
    found = detect_shell_sandbox("auto")
    assert isinstance(found, ShellSandbox) and found.kind == "bubblewrap"


def test_turning_the_shell_off_makes_it_unavailable_with_a_reason() -> None:
    off = detect_shell_sandbox("off")
    assert isinstance(off, Unavailable) and "settings" in off.reason


def test_detection_fails_closed_when_bubblewrap_is_missing(monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    detect_shell_sandbox.cache_clear()
    try:
        missing = detect_shell_sandbox("bubblewrap")
    finally:
        detect_shell_sandbox.cache_clear()
    assert isinstance(missing, Unavailable) and "bwrap" in missing.reason
