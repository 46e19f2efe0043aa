"""`hearth chat`: the terminal client launches `hearth host` itself and prints streamed replies."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from pathlib import Path

from tests.support.background_host import wait_until_stopped
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.tmux import Terminal


def _chat(data_dir: Path, agent: str, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", "chat", agent, "--data-dir", str(data_dir), *extra],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )


def test_chat_sends_each_line_and_prints_the_streamed_reply(tmp_path: Path) -> None:
    async def prepare() -> None:
        async with HostProcess(tmp_path) as host:
            rules = {"match": r"^my name is (\w+)$", "reply": r"Hello, \1!"}
            await host.call("agent.create", {"name": "greeter", "settings": scripted_model(rules)})

    asyncio.run(prepare())
    done = _chat(tmp_path, "greeter", "my name is Ada\n\nmy name is Grace\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Hello, Ada!", "Hello, Grace!"]
    transcript = (tmp_path / "agents/greeter/transcript.jsonl").read_text(encoding="utf-8")
    assert transcript.count('"type":"user"') == 2
    # The host the chat started stops once its last client has gone, and takes its lock with it.
    wait_until_stopped(tmp_path)
    assert not (tmp_path / "host.lock").exists()


def test_chat_creates_a_missing_agent_and_shows_model_errors_plainly(tmp_path: Path) -> None:
    done = _chat(tmp_path, "newbie", "hello\n", "--provider", "scripted")
    assert done.returncode == 1, "piped input whose run failed exits non-zero (issue 10)"
    assert "[error: scripted model: no rule matches the latest user message: 'hello']" in done.stdout
    assert (tmp_path / "agents/newbie/profile.json").is_file()
    # Piped input cannot be asked, so it is told (issue 25.9).
    assert "no agent was called 'newbie', so a new one was made" in done.stderr


def test_a_mistyped_name_at_a_terminal_asks_before_making_an_agent(tmp_path: Path) -> None:
    """Issue 25.9: `hearth chat reseacher` silently made a second agent."""

    async def prepare() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await host.call(
                "agent.create", {"name": "researcher", "settings": scripted_model({"match": ".*", "reply": "hi"})}
            )

    asyncio.run(prepare())
    chat = shlex.join([sys.executable, "-m", "hearth", "--data-dir", str(tmp_path / "data"), "chat"])
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with Terminal(
        tmp_path / "first", f"cd {shlex.quote(str(REPO_ROOT))} && {chat} reseacher; echo exit=$?; sleep 60"
    ) as term:
        term.wait_for(lambda screen: "[y/N]" in screen)
        assert "No agent is called 'reseacher' (did you mean 'researcher'?)" in term.screen()
        term.send("n", "Enter")
        shown = term.wait_for(lambda screen: "exit=" in screen)
        assert "nothing was made" in shown and "exit=1" in shown
    assert sorted(p.name for p in (tmp_path / "data/agents").iterdir()) == ["researcher"]
    with Terminal(tmp_path / "second", f"cd {shlex.quote(str(REPO_ROOT))} && {chat} reseacher") as term:
        term.wait_for(lambda screen: "[y/N]" in screen)
        term.send("y", "Enter")
        term.wait_for(lambda screen: screen.rstrip().endswith("you>"))
        term.send("C-d")
    assert (tmp_path / "data/agents/reseacher/profile.json").is_file()
    wait_until_stopped(tmp_path / "data")


def test_chat_asks_the_person_before_a_tool_runs_and_obeys_the_answer(tmp_path: Path) -> None:
    rules = [
        {"match": r"^run (.+)$", "on": "user", "toolCalls": [{"name": "shell", "arguments": {"command": r"\1"}}]},
        {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"shell said: \1"},
    ]

    async def prepare() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ops", "settings": scripted_model(*rules)})

    asyncio.run(prepare())
    done = _chat(tmp_path, "ops", "run echo approved-by-a-person\ny\nrun touch refused-file\nn\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[the agent wants to run: ") == 2
    assert "shell said: approved-by-a-person" in done.stdout
    assert "shell said: denied" in done.stdout
    assert not (tmp_path / "agents/ops/scratch/refused-file").exists()


def test_a_chat_behind_a_busy_agent_shows_its_place_and_follows_only_its_own_run(tmp_path: Path) -> None:
    """Issue 25.7: `hearth chat` said nothing while its message waited; it also took another run's end for its own."""
    rules = [
        {"match": r"^long$", "reply": "x" * 40, "chunkChars": 1, "delayMs": 150},
        {"match": r"^hello$", "reply": "hello from the agent"},
    ]
    chat = shlex.join([sys.executable, "-m", "hearth", "--data-dir", str(tmp_path / "data"), "chat", "busy"])

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await host.call("agent.create", {"name": "busy", "settings": scripted_model(*rules)})
            started = await host.call("agent.send", {"agentId": "busy", "text": "long"})
            with Terminal(tmp_path, f"cd {shlex.quote(str(REPO_ROOT))} && {chat}") as term:
                await asyncio.to_thread(term.wait_for, lambda screen: screen.rstrip().endswith("you>"))
                term.send("hello", literal=True)
                term.send("Enter")
                queued = await asyncio.to_thread(term.wait_for, lambda s: "[queued: 1 run goes first" in s)
                assert "x" not in queued.split("you> hello", 1)[1]  # the other run's text is not this chat's
                await host.wait_for("agent.ended", lambda p: p["runId"] == started["runId"])
                shown = await asyncio.to_thread(term.wait_for, lambda s: "hello from the agent" in s)
                assert "[queued" not in shown  # the status line gave way to the reply
                term.send("C-d")

    asyncio.run(main())
