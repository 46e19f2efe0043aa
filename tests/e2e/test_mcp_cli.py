"""`hearth mcp add|list|remove`: a person gives an agent MCP servers from the terminal, checked before written."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

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


def _servers(data_dir: Path) -> list[dict[str, object]]:
    settings = json.loads((data_dir / "agents/ann/settings.json").read_text(encoding="utf-8"))
    servers: list[dict[str, object]] = settings.get("mcpServers", [])
    return servers


def test_a_person_adds_lists_and_removes_a_server_and_a_bad_one_is_refused_with_nothing_written(
    tmp_path: Path,
) -> None:
    async def prepare() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})

    asyncio.run(prepare())
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

    removed = _hearth(tmp_path, "mcp remove", "ann", "notes")
    assert removed.returncode == 0, removed.stderr
    assert _servers(tmp_path) == []
    assert "(ann has no MCP servers)" in _hearth(tmp_path, "mcp list", "ann").stdout
