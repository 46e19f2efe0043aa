"""A tool call's question belongs to the agent, not to the client first shown it (issue 25.1): a `hearth chat`
killed while it was asked leaves the question to the next client that attaches, and with nobody there to
answer it ends by the agent's default after its `approvalTimeout`, with the reason in the transcript."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.tmux import Terminal

RULES = [
    {"match": r"^run (.+)$", "on": "user", "toolCalls": [{"name": "shell", "arguments": {"command": r"\1"}}]},
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"shell said: \1"},
]


def _chat(data: Path) -> str:
    # exec: the pane's process is the chat itself, so the test can kill it as a crash would.
    argv = shlex.join([sys.executable, "-m", "hearth", "--data-dir", str(data), "chat", "ops"])
    return f"cd {shlex.quote(str(REPO_ROOT))} && exec {argv}"


def _pane_pid(term: Terminal) -> int:
    return int(term.tmux("list-panes", "-t", "main", "-F", "#{pane_pid}").split()[0])


def _tool_lines(data: Path) -> list[dict[str, Any]]:
    lines = (data / "agents/ops/transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [event for event in map(json.loads, lines) if event["type"] == "tool"]


def test_a_question_whose_chat_died_is_asked_again_in_the_next_chat(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "ops", "settings": scripted_model(*RULES)})
            with Terminal(tmp_path / "first", _chat(data)) as first:
                await asyncio.to_thread(first.wait_for, lambda s: s.rstrip().endswith("you>"))
                first.send("run echo asked-twice", literal=True)
                first.send("Enter")
                await asyncio.to_thread(first.wait_for, lambda s: "wants to run: echo asked-twice" in s)
                os.kill(_pane_pid(first), signal.SIGKILL)
            with Terminal(tmp_path / "second", _chat(data)) as second:
                asked = await asyncio.to_thread(second.wait_for, lambda s: "wants to run: echo asked-twice" in s)
                assert "allow (y)es once" in asked
                second.send("y", "Enter")
                await host.wait_for("agent.ended", lambda p: p["agentId"] == "ops")
                await asyncio.to_thread(second.wait_for, lambda s: s.rstrip().endswith("you>"))
                second.send("C-d")
            assert "asked-twice" in _tool_lines(data)[0]["content"]

    asyncio.run(main())


def test_with_nobody_to_answer_a_question_is_denied_after_its_timeout_and_the_transcript_says_why(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"

    async def main() -> None:
        # The test's own connection shows no questions, so once the chat is gone nobody can answer.
        async with HostProcess(data) as host:
            settings = {**scripted_model(*RULES), "approvalTimeout": 5}
            await host.call("agent.create", {"name": "ops", "settings": settings})
            with Terminal(tmp_path, _chat(data)) as term:
                await asyncio.to_thread(term.wait_for, lambda s: s.rstrip().endswith("you>"))
                term.send("run touch never-made", literal=True)
                term.send("Enter")
                await asyncio.to_thread(term.wait_for, lambda s: "wants to run: touch never-made" in s)
                os.kill(_pane_pid(term), signal.SIGKILL)
            ended = await host.wait_for("agent.ended", lambda p: p["agentId"] == "ops", timeout=60)
            assert ended["reason"] == "idle"
            tool = _tool_lines(data)[0]
            assert tool["content"].startswith("denied: the command was not approved")
            assert "nobody was there to answer for 5 s, so it was denied by default" in tool["content"]
            assert not (data / "agents/ops/scratch/never-made").exists()

    asyncio.run(main())
