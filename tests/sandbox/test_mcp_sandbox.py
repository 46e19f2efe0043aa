"""The MCP server sandbox: what it binds, what it hides, and the environment it builds (issue 15)."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest

from sandbox import ShellSandbox, build_policy, is_within
from sandbox.mcp_sandbox import ServerProgram, resolve_program, server_env, server_launch, server_read_paths

BWRAP = ShellSandbox("bubblewrap", "/usr/bin/bwrap", "/usr/bin/bash")
LANDLOCK = ShellSandbox("landlock", sys.executable, "/usr/bin/bash", 4)
SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_notes.py")


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "agents/ann/scratch").mkdir(parents=True)
    (data / "agents/ann/memory").mkdir(parents=True)
    return data


def test_the_read_paths_hold_the_interpreter_and_the_script_but_nothing_of_the_data_dir(tmp_path: Path) -> None:
    data = _data(tmp_path)
    planted = data / "agents/ann/scratch/tool.py"
    planted.write_text("print()", encoding="utf-8")
    policy = build_policy(str(data), "ann")
    paths = server_read_paths(policy, ServerProgram(sys.executable, (SERVER, str(planted))))
    assert any(is_within(os.path.realpath(sys.executable), p) for p in paths)
    assert any(is_within(os.path.realpath(sysconfig.get_paths()["purelib"]), p) for p in paths), "the venv"
    assert any(is_within(SERVER, p) for p in paths)
    assert not any(is_within(p, policy.data_dir) for p in paths)
    assert not any(is_within(p, tree) for p in paths for tree in paths if tree != p), "no path inside another"


def test_a_tree_holding_the_data_dir_is_bound_under_bubblewrap_but_not_granted_under_landlock(tmp_path: Path) -> None:
    data = _data(tmp_path)
    policy = build_policy(str(data), "ann")
    program = ServerProgram(sys.executable, (str(tmp_path),))
    assert os.path.realpath(tmp_path) in server_read_paths(policy, program)
    assert os.path.realpath(tmp_path) not in server_read_paths(policy, program, landlock_rules=True)


def test_bubblewrap_hides_the_data_dir_after_the_binds_and_mounts_no_memory(tmp_path: Path) -> None:
    data = _data(tmp_path)
    policy = build_policy(str(data), "ann", network=True)
    launch = server_launch(BWRAP, policy, ServerProgram(sys.executable, (str(tmp_path),)), secrets={})
    argv = list(launch.argv)
    hide = argv.index(policy.data_dir) - 1
    assert argv[hide] == "--tmpfs"
    bound = [i for i, arg in enumerate(argv) if arg == "--ro-bind" and argv[i + 1] == os.path.realpath(tmp_path)]
    assert bound and bound[0] < hide, "the data dir is hidden after every bind"
    assert policy.memory_dir not in argv
    assert "--share-net" not in argv, "the agent's network setting is not the server's"
    assert argv[argv.index("--bind") + 1 : argv.index("--bind") + 3] == [policy.workspace, policy.workspace]
    assert argv[argv.index("--") + 1 :] == [sys.executable, str(tmp_path)]


def test_only_a_server_with_network_gets_the_network(tmp_path: Path) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    launch = server_launch(BWRAP, policy, ServerProgram(sys.executable, (), network=True), secrets={})
    assert "--share-net" in launch.argv


def test_landlock_grants_the_workspace_and_its_temp_dir_only_for_writing(tmp_path: Path) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    launch = server_launch(LANDLOCK, policy, ServerProgram(sys.executable, (SERVER,)), secrets={}, tmp_dir="/tmp/t1")
    spec = launch.argv[-1]
    assert f'"read_write": ["{policy.workspace}", "/tmp/t1"]' in spec
    assert policy.memory_dir not in spec and "secrets" not in spec
    with pytest.raises(ValueError):
        server_launch(LANDLOCK, policy, ServerProgram(sys.executable, ()), secrets={})


def test_the_environment_is_built_not_inherited_and_secrets_stay_out_of_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_TEST_LEAK", "kernel-only")
    policy = build_policy(str(_data(tmp_path)), "ann")
    program = ServerProgram(sys.executable, (), env=(("MODE", "test"), ("LANG", "en_US.UTF-8")))
    launch = server_launch(BWRAP, policy, program, secrets={"TOKEN": "s3cret-value"})
    env = dict(launch.env)
    assert "HEARTH_TEST_LEAK" not in env
    assert env["HOME"] == policy.workspace and env["MODE"] == "test" and env["LANG"] == "en_US.UTF-8"
    assert env["TOKEN"] == "s3cret-value"
    assert not any("s3cret-value" in arg for arg in launch.argv)
    assert {"PATH", "HOME", "TERM", "SHELL", "USER", "LOGNAME"} <= set(env), "the mcp client copies these otherwise"


def test_secrets_override_env_and_env_overrides_the_allowlist(tmp_path: Path) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    env = dict(server_env(policy, ServerProgram(sys.executable, (), env=(("HOME", "/x"),)), "/tmp", "b", {"A": "1"}))
    assert env["HOME"] == "/x" and env["A"] == "1"


def test_a_program_is_found_by_path_or_name_and_a_missing_one_is_none(tmp_path: Path) -> None:
    assert resolve_program(sys.executable) == os.path.abspath(sys.executable)
    assert resolve_program("sh") is not None
    assert resolve_program("no-such-program-hearth") is None
    assert resolve_program(str(tmp_path / "missing")) is None
