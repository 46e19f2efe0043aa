"""Inspection from the terminal (issue 13): `hearth agents`, `hearth inspect`, `hearth memory AGENT ...`,
readable by default and `--json` for scripts, giving exactly the facts `memory.list` gives; agents are
found by id or name in any case, and an unknown one is a clear error with a non-zero exit."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

RULES = [
    {
        "match": r"^web says (.*)$",
        "on": "user",
        "toolCalls": [{"name": "memory_note", "arguments": {"text": r"\1", "basis": "tool"}}],
    },
    {"match": ".*", "reply": "ok"},
]


def _hearth(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", *args], input=stdin, capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
    )


def _json(*args: str) -> Any:
    done = _hearth(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_inspection_commands_show_what_the_host_holds_while_a_shell_owns_it(tmp_path: Path) -> None:
    data = str(tmp_path)

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann Lee", "settings": scripted_model(*RULES)})
            await host.call("agent.create", {"name": "Bob", "settings": {"knowledge": False}})
            await host.send_and_wait("ann-lee", "web says The museum opens at ten.")
            tea = (await host.call("memory.note", {"agentId": "ann-lee", "text": "The user likes tea."}))["record"]
            await host.call("memory.note", {"agentId": "ann-lee", "text": "Home is Lyon.", "key": "user.home"})
            await host.call("memory.note", {"agentId": "ann-lee", "text": "Home is Oslo.", "key": "user.home"})
            current = await host.call("memory.list", {"agentId": "ann-lee", "view": "current"})
            proposed = await host.call("memory.list", {"agentId": "ann-lee", "view": "proposed"})
            museum = proposed["records"][0]
            cli = await asyncio.to_thread(_commands, data, current, proposed, tea["id"], museum["id"])
            assert cli == "ok"

    asyncio.run(main())


def _commands(data: str, current: dict[str, Any], proposed: dict[str, Any], tea: str, museum: str) -> str:
    # The same facts as memory.list, by JSON, whatever the case of the name and wherever --data-dir stands.
    assert _json("--data-dir", data, "memory", "ANN LEE", "list") == current
    assert _json("memory", "ann-lee", "review", "--data-dir", data) == proposed
    inspected = _json("inspect", "Ann Lee", "--data-dir", data)
    assert [r["id"] for r in inspected["memory"]["current"]] == [r["id"] for r in current["records"]]
    assert (
        inspected["memory"]["conflicts"] == current["conflicts"]
        and inspected["memory"]["proposed"] == proposed["records"]
    )
    assert inspected["directory"]["sandbox"]["workspace"].endswith("/agents/ann-lee/scratch")
    agents = _json("agents", "--data-dir", data)
    assert [a["agentId"] for a in agents["agents"]] == ["ann-lee", "bob"]

    table = _hearth("agents", "--data-dir", data)
    assert table.returncode == 0 and table.stdout.splitlines()[0].split()[:3] == ["ID", "NAME", "STATUS"]
    assert "ann-lee" in table.stdout and "scripted" in table.stdout
    rows = {line.split()[0]: line for line in table.stdout.splitlines()[1:]}
    assert "knowledge on" in rows["ann-lee"] and "knowledge off" in rows["bob"], "each agent's own switch"
    shown = _hearth("inspect", "ann-lee", "--data-dir", data).stdout
    shown_facts = ("1 waiting for review", "likes tea", "museum")
    for expected in ("prompt", "epoch", "workspace", "knowledge on", "read-only", *shown_facts):
        assert expected in shown, expected
    listing = _hearth("memory", "ann-lee", "list", "--data-dir", data).stdout
    assert all(r["id"] in listing for r in current["records"]) and museum not in listing
    conflicts = _hearth("memory", "ann-lee", "conflicts", "--data-dir", data).stdout
    assert "conflict on user.home" in conflicts and "Lyon" in conflicts and "Oslo" in conflicts
    why = _hearth("memory", "ann-lee", "why", museum, "--data-dir", data).stdout
    assert "proposed" in why and "evidence: transcript #" in why and "museum" in why.lower()
    history = _hearth("memory", "ann-lee", "history", tea, "--data-dir", data).stdout
    assert tea in history and "assert" in history
    out = Path(data) / "export.json"
    assert _hearth("memory", "ann-lee", "export", "--out", str(out), "--data-dir", data).returncode == 0
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert {r["id"] for r in exported["facts"]} >= {tea, museum} and exported["history"]
    verified = _hearth("memory", "ann-lee", "verify", "--data-dir", data)
    assert verified.returncode == 0 and verified.stdout.startswith("ok:")
    # The older order still works.
    assert _hearth("memory", "list", "ann-lee", "--data-dir", data).stdout == listing

    for args in (("inspect", "nobody"), ("memory", "nobody", "list"), ("memory", "list", "nobody")):
        missing = _hearth(*args, "--data-dir", data)
        assert missing.returncode == 1 and "no agent 'nobody'" in missing.stderr, args
    return "ok"


def test_version_and_help_answer_without_a_host(tmp_path: Path) -> None:
    version = _hearth("--version")
    assert version.returncode == 0 and version.stdout.startswith("hearth ")
    helped = _hearth("--help")
    assert helped.returncode == 0 and "inspect" in helped.stdout and "web" in helped.stdout
    assert not (tmp_path / "host.lock").exists()


def test_chat_finds_an_agent_by_its_name_in_any_case_instead_of_making_another(tmp_path: Path) -> None:
    """Issue 13: `hearth chat "My Helper"` twice made my-helper-2; `Assistant` after `assistant` made assistant-2."""
    data = str(tmp_path)
    for name in ("My Helper", "my helper", "MY-HELPER", "assistant", "Assistant"):
        done = _hearth("chat", name, "--provider", "scripted", "--data-dir", data, stdin="")
        assert done.returncode == 0, done.stderr
    agents = _json("agents", "--data-dir", data)
    assert sorted(a["agentId"] for a in agents["agents"]) == ["assistant", "my-helper"]


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    """`hearth agents --json | head` (issue 25.9): the pipe's reader is gone before the command writes."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for n in range(3):
                await host.call("agent.create", {"name": f"Agent {n}"})
            done = await asyncio.to_thread(_with_closed_stdout, "--data-dir", str(tmp_path), "agents", "--json")
            assert done.returncode == 1
            assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr

    asyncio.run(main())


def _with_closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read what the command prints
    try:
        return subprocess.run(
            [sys.executable, "-m", "hearth", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            timeout=120,
        )
    finally:
        os.close(write_end)


LOADED = """import runpy, sys
sys.argv = {argv!r}
try:
    runpy.run_module("hearth", run_name="__main__")
except SystemExit:
    pass
print("LOADED", sorted(m for m in ("asyncio", "pydantic", "jsonrpcserver") if m in sys.modules))
"""
"""Runs `hearth` as `python -m hearth` would, then says which of the heavy modules it loaded."""


def test_hearth_agents_against_a_running_host_loads_no_event_loop_and_no_wire_model(tmp_path: Path) -> None:
    """Issue 25.2: the listing is one blocking call; without a host it still starts one the usual way."""

    def agents(data_dir: Path) -> subprocess.CompletedProcess[str]:
        argv = ["hearth", "agents", "--data-dir", str(data_dir)]
        script = LOADED.format(argv=argv)
        return subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
        )

    async def main() -> None:
        async with HostProcess(tmp_path / "running") as host:
            await host.call("agent.create", {"name": "Ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})
            listed = await asyncio.to_thread(agents, tmp_path / "running")
            assert "ann" in listed.stdout and "Ann" in listed.stdout, listed.stderr
            assert "LOADED []" in listed.stdout, listed.stdout

    asyncio.run(main())
    alone = agents(tmp_path / "empty")
    assert "(no agents yet" in alone.stdout, alone.stderr
    assert "LOADED ['asyncio'" in alone.stdout, "with no host running it starts one through the event loop"
