"""`hearth mcp add|list|remove`: a person gives an agent MCP servers from the terminal, checked before written."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.npm_registry import NEEDS_NPX, NEEDS_REGISTRY

NOTES = str(REPO_ROOT / "tests/support/mcp_notes.py")


def _hearth(data_dir: Path, action: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", *action.split(), "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=REPO_ROOT,
        timeout=120,
    )


def _servers_of(data_dir: Path, agent: str) -> list[dict[str, object]]:
    settings = json.loads((data_dir / f"agents/{agent}/settings.json").read_text(encoding="utf-8"))
    servers: list[dict[str, object]] = settings.get("mcpServers", [])
    return servers


def _servers(data_dir: Path) -> list[dict[str, object]]:
    return _servers_of(data_dir, "ann")


def test_a_person_adds_lists_and_removes_a_server_and_a_bad_one_is_refused_with_nothing_written(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:  # the commands attach to this host through its socket
            await host.call("agent.create", {"name": "ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})
            await asyncio.to_thread(_add_list_refuse_and_remove, tmp_path)

    asyncio.run(main())


def _add_list_refuse_and_remove(tmp_path: Path) -> None:
    assert _hearth(tmp_path, "secrets set", "notes-token", stdin="tok-cli-1\n").returncode == 0
    added = _hearth(
        tmp_path,
        "mcp add",
        "ann",
        "notes",
        "--secret-env",
        "NOTES_TOKEN=notes-token",
        "--tool",
        "add",
        "--",
        sys.executable,
        NOTES,
        "--verbose",
    )
    assert added.returncode == 0, added.stderr
    (server,) = _servers(tmp_path)
    assert server["args"] == [NOTES, "--verbose"] and server["secretEnv"] == {"NOTES_TOKEN": "notes-token"}
    assert server["tools"] == ["add"] and server["network"] is False
    listed = _hearth(tmp_path, "mcp list", "ann")
    assert listed.returncode == 0 and "notes  [stopped]" in listed.stdout and "NOTES_TOKEN←notes-token" in listed.stdout
    assert "tok-cli-1" not in listed.stdout

    for refused in (
        _hearth(tmp_path, "mcp add", "ann", "notes", "--", sys.executable),
        _hearth(tmp_path, "mcp add", "ann", "Bad_Name", "--", sys.executable),
        _hearth(tmp_path, "mcp add", "ann", "gone", "--", "no-such-program-hearth"),
        _hearth(tmp_path, "mcp add", "ann", "other", "--secret-env", "T=never-stored", "--", sys.executable),
        _hearth(tmp_path, "mcp add", "ann", "other", "--env", "NOEQUALS", "--", sys.executable),
        _hearth(tmp_path, "mcp remove", "ann", "missing"),
    ):
        assert refused.returncode == 1 and refused.stderr.startswith("hearth: "), refused.stderr
        assert [s["name"] for s in _servers(tmp_path)] == ["notes"]
    bad_name = _hearth(tmp_path, "mcp add", "ann", "Bad_Name", "--", sys.executable)
    assert "name: must match ^[a-z0-9-]{1,40}$" in bad_name.stderr, "what a name must be, not a pydantic code alone"

    removed = _hearth(tmp_path, "mcp remove", "ann", "notes")
    assert removed.returncode == 0, removed.stderr
    assert _servers(tmp_path) == []
    assert "(ann has no MCP servers)" in _hearth(tmp_path, "mcp list", "ann").stdout


PLAIN = str(REPO_ROOT / "tests/support/mcp_plain.py")
WHERE = [
    {"match": "^where$", "on": "user", "toolCalls": [{"name": "mcp__plain__where", "arguments": {}}]},
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"TOOL SAID: \1"},
    {"match": "^hello$", "on": "user", "reply": "hello there"},
]


async def _agent_with(host: HostProcess, name: str) -> None:
    settings = {**scripted_model(*WHERE), "toolPermission": "always"}
    await host.call("agent.create", {"name": name, "settings": settings})


async def _hearth_beside(host: HostProcess, action: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`hearth ACTION` while the test's host runs, so the command attaches to it instead of starting its own."""
    return await asyncio.to_thread(_hearth, host.data_dir, action, *args)


def _python3_is_a_shim() -> bool:
    found = shutil.which("python3")
    return found is not None and os.path.basename(os.path.dirname(found)) == "shims"


@pytest.mark.skipif(not _python3_is_a_shim(), reason="python3 on PATH is not a version manager's shim here")
def test_a_python3_that_is_a_pyenv_shim_is_resolved_as_the_shell_would_and_the_server_starts(tmp_path: Path) -> None:
    """Issue 25.4: the shim needs its manager's tree, which the sandbox does not show; the host runs what it runs."""
    shell_runs = subprocess.run(["python3", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True)

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await _agent_with(host, "ann")
            added = await _hearth_beside(host, "mcp add", "ann", "plain", "--", "python3", PLAIN)
            assert added.returncode == 0, added.stderr
            assert _servers(tmp_path)[0]["command"] == "python3", "the settings keep what the person typed"
            ended = await host.send_and_wait("ann", "where", timeout=60)
            text = host.texts("ann", ended["runId"])
            assert text.startswith(f"TOOL SAID: MODULE: {os.path.realpath(PLAIN)}"), text
            listed = await asyncio.to_thread(_hearth, tmp_path, "mcp list", "ann")
            assert "plain  [ready, 6 tools]" in listed.stdout, listed.stdout
            python = text.split("PYTHON: ", 1)[1].split()[0]
            assert os.path.realpath(python) == os.path.realpath(shell_runs.stdout.strip()), text

    asyncio.run(main())


@NEEDS_NPX
def test_a_failed_start_shows_its_stderr_and_its_likely_cause_in_mcp_list_and_mcp_status(tmp_path: Path) -> None:
    """Issue 25.4: npx without the network, a module that is not installed; the turn still works."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await _agent_with(host, "ann")
            for name, command in (
                ("memory", ["npx", "-y", "@modelcontextprotocol/server-memory"]),
                ("missing", [sys.executable, "-m", "no_such_module_hearth"]),
            ):
                added = await _hearth_beside(host, "mcp add", "ann", name, "--", *command)
                assert added.returncode == 0, added.stderr
            ended = await host.send_and_wait("ann", "hello", timeout=120)
            assert host.texts("ann", ended["runId"]) == "hello there"
            failed = {p["server"]: p for m, p in host.events if m == "mcp.status" and p["state"] == "failed"}
            assert set(failed) == {"memory", "missing"}, host.events
            assert "ENOTCACHED" in failed["memory"]["stderrTail"] and "--network" in failed["memory"]["cause"]
            assert "No module named no_such_module_hearth" in failed["missing"]["stderrTail"]
            assert "no_such_module_hearth" in failed["missing"]["cause"]
            listed = await asyncio.to_thread(_hearth, tmp_path, "mcp list", "ann")
            assert listed.returncode == 0, listed.stderr
            memory, missing = listed.stdout.split("\nmissing  ")
            assert "likely cause:" in memory and "--network" in memory and "ENOTCACHED" in memory, listed.stdout
            assert "likely cause:" in missing and "No module named" in missing, listed.stdout

    asyncio.run(main())


def _readme_commands() -> list[list[str]]:
    """The `hearth mcp` lines of the README's MCP example, as argv lists (continuation lines joined)."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in text.splitlines() if line.startswith(".venv/bin/hearth mcp ")]


@NEEDS_REGISTRY
@pytest.mark.timeout(300)
def test_the_readme_example_works_as_written(tmp_path: Path) -> None:
    """Issue 25.4: the README's server starts under Hearth as written, and npm's cache stays out of scratch."""
    add, listing, remove = _readme_commands()
    assert add[:4] == [".venv/bin/hearth", "mcp", "add", "researcher"] and "--network" in add
    server = add[4]
    graph = {"tool": f"mcp__{server}__read_graph", "arguments": {}}
    rules = [
        # The scripted model's small context window gets the finder pair for this server's schemas.
        {"match": "^graph$", "on": "user", "toolCalls": [{"name": "mcp_call", "arguments": graph}]},
        {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"TOOL SAID: \1"},
    ]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await _agent_with(host, "researcher")
            added = await _hearth_beside(host, "mcp add", *add[3:])
            assert added.returncode == 0, added.stderr
            await host.call("agent.update", {"agentId": "researcher", "settings": scripted_model(*rules)})
            ended = await host.send_and_wait("researcher", "graph", timeout=240)
            text = host.texts("researcher", ended["runId"])
            assert text.startswith("TOOL SAID: ") and '"entities"' in text, text
            listed = await asyncio.to_thread(_hearth, tmp_path, "mcp list", *listing[3:])
            assert f"{server}  [ready, " in listed.stdout, listed.stdout

    asyncio.run(main())
    scratch = tmp_path / "agents/researcher/scratch"
    assert not (scratch / ".npm").exists(), "npm's cache is kept out of the agent's workspace"
    assert (tmp_path / f"agents/researcher/mcp/{server}/home/.npm").is_dir()
    assert _hearth(tmp_path, "mcp remove", *remove[3:]).returncode == 0
    assert _servers_of(tmp_path, "researcher") == []
