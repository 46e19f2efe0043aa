"""What every confined program shares: one system view, the sandbox's flags, and an environment built anew."""

from __future__ import annotations

import os
import sys

import pytest

from sandbox import landlock
from sandbox.confinement import SEARCH_PATH, base_env, bwrap_prefix, landlock_argv, system_trees


def test_the_bubblewrap_prefix_unshares_everything_and_shares_the_network_only_when_asked() -> None:
    closed = bwrap_prefix("/usr/bin/bwrap", network=False)
    opened = bwrap_prefix("/usr/bin/bwrap", network=True)
    assert closed[0] == "/usr/bin/bwrap" and "--unshare-all" in closed and "--die-with-parent" in closed
    assert closed[closed.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in closed and "--share-net" in opened
    assert closed[-6:] == ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    assert ["--ro-bind-try", "/usr", "/usr"] == closed[closed.index("/usr") - 1 : closed.index("/usr") + 2]


def test_the_system_trees_are_canonical_and_exist() -> None:
    trees = system_trees()
    assert os.path.realpath("/usr") in trees and len(set(trees)) == len(trees)
    assert all(os.path.exists(tree) and os.path.realpath(tree) == tree for tree in trees)


def test_the_base_environment_is_the_allowlist_and_nothing_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-nope")
    env = base_env("/w", "/t", "bubblewrap")
    assert env == {
        "PATH": SEARCH_PATH,
        "HOME": "/w",
        "TMPDIR": "/t",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HEARTH_SANDBOX": "bubblewrap",
    }
    assert base_env("/w", "/t", "landlock", path="/opt/bin")["PATH"] == "/opt/bin"


def test_the_landlock_command_runs_the_launcher_isolated_with_the_spec_it_was_given() -> None:
    rules = landlock.LandlockRules(read_only=("/usr",), read_write=("/w",), network=False)
    argv = landlock_argv(sys.executable, 4, rules, "/w", ("/usr/bin/true",))
    assert argv[:4] == (sys.executable, "-I", "-S", landlock.__file__)
    assert landlock.LaunchSpec.from_json(argv[4]) == landlock.LaunchSpec(rules, 4, "/w", ("/usr/bin/true",))
