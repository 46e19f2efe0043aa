"""`hearth` in a real terminal (tmux): the shell shows a streamed reply, and a second terminal's
`hearth memory list` works at the same time, attached to the same host (issue 13)."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

from tests.support.background_host import wait_until_stopped
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.tmux import Terminal, tmux_path

STREAM = {"match": r"^say (.+)$", "reply": r"\1", "chunkChars": 3, "delayMs": 30}


def test_the_shell_streams_a_reply_while_a_second_terminal_lists_memory(tmp_path: Path) -> None:
    data = tmp_path / "data"

    async def prepare() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "Helper", "settings": scripted_model(STREAM)})
            await host.call("memory.note", {"agentId": "helper", "text": "The user drinks green tea."})

    asyncio.run(prepare())
    hearth = shlex.join([sys.executable, "-m", "hearth", "--data-dir", str(data)])
    listed = tmp_path / "listed.txt"
    with Terminal(tmp_path, f"cd {shlex.quote(str(REPO_ROOT))} && {hearth}") as term:
        term.wait_for(lambda screen: "Message Helper" in screen and "host: ready" in screen)
        term.send("say the reply arrives a few letters at a time", literal=True)
        term.send("Enter")
        shown = term.wait_for(lambda screen: "Helper: the reply arrives a few letters at a time" in screen)
        assert "you: say the reply arrives" in shown
        # A second terminal, while the shell holds the host: it attaches instead of failing.
        second = f"{hearth} memory helper list > {shlex.quote(str(listed))} 2>&1; echo exit=$? >> {listed}"
        signal_done = shlex.join([tmux_path(), "-L", term.socket, "wait-for", "-S", "listed"])
        term.tmux("new-window", "-d", "-t", "main", f"cd {shlex.quote(str(REPO_ROOT))} && {second}; {signal_done}")
        term.tmux("wait-for", "listed")
        text = listed.read_text(encoding="utf-8")
        assert "drinks green tea" in text and "exit=0" in text, text
        term.send("C-q")
    wait_until_stopped(data)
