"""The MCP server sandbox: what it binds, what it hides, and the environment it builds (issues 15, 21.4)."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest

from sandbox import ShellSandbox, build_policy, is_within
from sandbox.mcp_sandbox import (
    ServerProgram,
    server_dir,
    server_env,
    server_home,
    server_launch,
    server_program_refusal,
    server_read_paths,
)

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
    paths = server_read_paths(policy, ServerProgram("notes", sys.executable, (SERVER, str(planted))))
    assert any(is_within(os.path.realpath(sys.executable), p) for p in paths)
    assert any(is_within(os.path.realpath(sysconfig.get_paths()["purelib"]), p) for p in paths), "the venv"
    assert any(is_within(SERVER, p) for p in paths)
    assert not any(is_within(p, policy.data_dir) for p in paths)
    assert not any(is_within(p, tree) for p in paths for tree in paths if tree != p), "no path inside another"


def test_a_tree_holding_the_data_dir_is_bound_under_bubblewrap_but_not_granted_under_landlock(tmp_path: Path) -> None:
    data = _data(tmp_path)
    policy = build_policy(str(data), "ann")
    program = ServerProgram("notes", sys.executable, (str(tmp_path),))
    assert os.path.realpath(tmp_path) in server_read_paths(policy, program)
    assert os.path.realpath(tmp_path) not in server_read_paths(policy, program, landlock_rules=True)


def test_bubblewrap_hides_the_data_dir_after_the_binds_and_mounts_no_memory(tmp_path: Path) -> None:
    data = _data(tmp_path)
    policy = build_policy(str(data), "ann", network=True)
    launch = server_launch(BWRAP, policy, ServerProgram("notes", sys.executable, (str(tmp_path),)), secrets={})
    argv = list(launch.argv)
    hide = argv.index(policy.data_dir) - 1
    assert argv[hide] == "--tmpfs"
    bound = [i for i, arg in enumerate(argv) if arg == "--ro-bind" and argv[i + 1] == os.path.realpath(tmp_path)]
    assert bound and bound[0] < hide, "the data dir is hidden after every bind"
    assert policy.memory_dir not in argv
    assert "--share-net" not in argv, "the agent's network setting is not the server's"
    binds = [argv[i + 1 : i + 3] for i, arg in enumerate(argv) if arg == "--bind"]
    home = server_home(policy, "notes")
    assert binds == [[policy.workspace, policy.workspace], [home, home]], "the only writable places"
    remount = argv.index("--remount-ro")
    assert argv[remount + 1] == policy.data_dir and remount > max(i for i, a in enumerate(argv) if a == "--bind")
    assert argv[remount + 2 : remount + 4] == ["--remount-ro", "/"]
    assert argv[argv.index("--chdir") + 1] == server_dir(policy, "notes") != policy.workspace
    assert argv[argv.index("--") + 1 :] == [sys.executable, str(tmp_path)]


def test_only_a_server_with_network_gets_the_network(tmp_path: Path) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    launch = server_launch(BWRAP, policy, ServerProgram("notes", sys.executable, (), network=True), secrets={})
    assert "--share-net" in launch.argv


def test_landlock_grants_the_workspace_and_its_temp_dir_only_for_writing(tmp_path: Path) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    launch = server_launch(
        LANDLOCK, policy, ServerProgram("notes", sys.executable, (SERVER,)), secrets={}, tmp_dir="/tmp/t1"
    )
    spec = launch.argv[-1]
    assert f'"read_write": ["{policy.workspace}", "{server_home(policy, "notes")}", "/tmp/t1"]' in spec
    assert f'"cwd": "{server_dir(policy, "notes")}"' in spec
    assert policy.memory_dir not in spec and "secrets" not in spec
    with pytest.raises(ValueError):
        server_launch(LANDLOCK, policy, ServerProgram("notes", sys.executable, ()), secrets={})


def test_the_environment_is_built_not_inherited_and_secrets_stay_out_of_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_TEST_LEAK", "kernel-only")
    policy = build_policy(str(_data(tmp_path)), "ann")
    program = ServerProgram("notes", sys.executable, (), env=(("MODE", "test"), ("LANG", "en_US.UTF-8")))
    launch = server_launch(BWRAP, policy, program, secrets={"TOKEN": "s3cret-value"})
    env = dict(launch.env)
    assert "HEARTH_TEST_LEAK" not in env
    assert env["HOME"] == server_home(policy, "notes") and env["HEARTH_WORKSPACE"] == policy.workspace
    assert env["MODE"] == "test" and env["LANG"] == "en_US.UTF-8"
    assert env["TOKEN"] == "s3cret-value"
    assert not any("s3cret-value" in arg for arg in launch.argv)
    assert {"PATH", "HOME", "TERM", "SHELL", "USER", "LOGNAME"} <= set(env), "the mcp client copies these otherwise"


def test_secrets_override_env_and_env_overrides_the_allowlist_but_never_the_places_the_sandbox_sets(
    tmp_path: Path,
) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    program = ServerProgram("notes", sys.executable, (), env=(("HOME", "/x"), ("LANG", "C"), ("A", "env")))
    env = dict(server_env(policy, program, "/tmp", "b", {"A": "secret"}))
    assert env["HOME"] == server_home(policy, "notes") and env["LANG"] == "C" and env["A"] == "secret"


def test_python_is_kept_from_its_working_directory_and_user_site_and_package_managers_know_when_offline(
    tmp_path: Path,
) -> None:
    policy = build_policy(str(_data(tmp_path)), "ann")
    offline = dict(server_env(policy, ServerProgram("notes", sys.executable, ()), "/tmp", "b", {}))
    online = dict(server_env(policy, ServerProgram("notes", sys.executable, (), network=True), "/tmp", "b", {}))
    for env in (offline, online):
        assert env["PYTHONSAFEPATH"] == "1" and env["PYTHONNOUSERSITE"] == "1"
        assert env["XDG_CACHE_HOME"] == server_home(policy, "notes") + "/.cache" and env["PWD"] == server_dir(
            policy, "notes"
        )
    assert offline["npm_config_offline"] == "true" and offline["PIP_NO_INDEX"] == "1" and offline["UV_OFFLINE"] == "1"
    assert not {"npm_config_offline", "PIP_NO_INDEX", "UV_OFFLINE"} & set(online)


def test_a_loader_variable_that_reaches_the_sandbox_is_dropped_from_env_and_secrets(tmp_path: Path) -> None:
    """Defence in depth (issue 21.4): the kernel refuses such a server first; the environment never carries one."""
    policy = build_policy(str(_data(tmp_path)), "ann")
    planted = f"{policy.workspace}/x.so"
    program = ServerProgram("notes", sys.executable, (), env=(("LD_PRELOAD", planted), ("PYTHONPATH", "."), ("K", "v")))
    env = dict(server_env(policy, program, "/tmp", "b", {"NODE_OPTIONS": "--require ./x.js", "TOKEN": "t"}))
    assert not {"LD_PRELOAD", "PYTHONPATH", "NODE_OPTIONS"} & set(env) and env["K"] == "v" and env["TOKEN"] == "t"


def test_a_program_whose_install_tree_lies_in_the_data_dir_is_refused_and_one_outside_is_not(tmp_path: Path) -> None:
    data = _data(tmp_path)
    scratch = data / "agents/ann/scratch"
    (scratch / "venv/bin").mkdir(parents=True)
    (scratch / "venv/pyvenv.cfg").write_text(f"home = {os.path.dirname(sys.executable)}\n", encoding="utf-8")
    (scratch / "venv/bin/python").symlink_to(os.path.realpath(sys.executable))
    script = tmp_path / "outside/server"
    script.parent.mkdir()
    script.write_text(f"#!{scratch}/venv/bin/python\nprint()\n", encoding="utf-8")
    canonical = os.path.realpath(data)
    assert server_program_refusal(canonical, str(scratch / "venv/bin/python")) is not None, "named in the workspace"
    assert server_program_refusal(canonical, str(script)) is not None, "its interpreter is in the workspace"
    assert server_program_refusal(canonical, sys.executable) is None
    assert server_program_refusal(canonical, "/bin/sh") is None
