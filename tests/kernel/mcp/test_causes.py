"""The likely cause of a failed MCP start, told from the program, its network setting and its stderr (issue 25.4)."""

from __future__ import annotations

from kernel.mcp.causes import is_package_runner, likely_cause
from kernel.mcp.spec import ServerSpec

OFFLINE = ServerSpec("s", "/usr/bin/npx")
ONLINE = ServerSpec("s", "/usr/bin/npx", network=True)
ENOTCACHED = "npm error code ENOTCACHED\nnpm error request to https://registry.npmjs.org/x failed"


def test_a_shim_is_named_with_how_to_find_the_real_program() -> None:
    cause = likely_cause(ServerSpec("s", "/root/.pyenv/shims/python3"), "/root/.pyenv/shims/python3", "pyenv: no")
    assert cause is not None and "shim" in cause and "pyenv which python3" in cause


def test_no_network_is_named_for_a_runner_that_could_not_fetch_or_said_nothing_and_not_when_it_had_the_network() -> (
    None
):
    for tail in (ENOTCACHED, ""):
        cause = likely_cause(OFFLINE, "/usr/bin/npx", tail)
        assert cause is not None and "no network" in cause and "--network" in cause and "npx" in cause
    python = ServerSpec("s", "/usr/bin/python3")
    cause = likely_cause(python, "/usr/bin/python3", "socket.gaierror: [Errno -3] Temporary failure in name resolution")
    assert cause is not None and "no network" in cause
    assert likely_cause(ONLINE, "/usr/bin/npx", "") is None
    assert likely_cause(ONLINE, "/usr/bin/npx", ENOTCACHED) is None


def test_a_missing_module_or_path_is_named() -> None:
    python = ServerSpec("s", "/venv/bin/python")
    for tail in (
        "/venv/bin/python: No module named notes_server",
        "ModuleNotFoundError: No module named 'notes_server'",
    ):
        cause = likely_cause(python, "/venv/bin/python", tail)
        assert cause is not None and "'notes_server'" in cause and "working directory" in cause
    node = likely_cause(ONLINE, "/usr/bin/node", "Error: Cannot find module 'left-pad'")
    assert node is not None and "'left-pad'" in node
    for tail in (
        "python: can't open file '/home/me/srv/server.py': [Errno 2] No such file or directory",
        "FileNotFoundError: [Errno 2] No such file or directory: '/home/me/srv/config.json'",
        "Error: ENOENT: no such file or directory, open '/home/me/srv/config.json'",
    ):
        cause = likely_cause(python, "/venv/bin/python", tail)
        assert cause is not None and "/home/me/srv/" in cause and "HEARTH_WORKSPACE" in cause, tail


def test_nothing_is_guessed_when_nothing_points_anywhere() -> None:
    python = ServerSpec("s", "/venv/bin/python")
    assert likely_cause(python, "/venv/bin/python", "Traceback: ValueError: bad config") is None
    assert likely_cause(python, "/venv/bin/python", "") is None
    assert is_package_runner("/usr/local/bin/uvx") and not is_package_runner("/usr/bin/python3")
