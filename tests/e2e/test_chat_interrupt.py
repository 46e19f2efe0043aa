"""Ctrl-C in a real `hearth chat` (issue 10 item 11): the first cancels the reply and keeps its text, a
second at the prompt leaves cleanly, and the transcript has the run's end. SIGINT goes to the chat's whole
process group, as a terminal's Ctrl-C does: the host the chat started is not in it and goes on."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from tests.support.background_host import wait_until_stopped
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

STORY = "A long story, told slowly, one small piece at a time, so there is time to interrupt it. " * 6
RULES = [
    {"match": "^tell", "on": "user", "reply": STORY, "chunkChars": 5, "delayMs": 40},
    {"match": "^bye", "on": "user", "reply": "goodbye"},
]


async def _read_until(stream: asyncio.StreamReader, seen: bytearray, marker: bytes, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while marker not in seen:
            chunk = await stream.read(4096)
            if not chunk:
                raise AssertionError(f"the chat ended before printing {marker!r}: {bytes(seen)!r}")
            seen += chunk


async def _make_teller(data_dir: Path) -> None:
    async with HostProcess(data_dir) as host:
        await host.call("agent.create", {"name": "teller", "settings": scripted_model(*RULES)})


async def _start_chat(data_dir: Path) -> asyncio.subprocess.Process:
    """`hearth chat teller` on pipes, in its own process group, as a terminal's foreground job."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hearth", "chat", "teller", "--data-dir", str(data_dir),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT, start_new_session=True,
    )  # fmt: skip


def test_ctrl_c_cancels_the_reply_and_a_second_at_the_prompt_leaves(tmp_path: Path) -> None:
    async def main() -> None:
        chat = await _start_chat(tmp_path)
        assert chat.stdin is not None and chat.stdout is not None and chat.stderr is not None
        out = bytearray()
        chat.stdin.write(b"tell me a story\n")
        await chat.stdin.drain()
        await _read_until(chat.stdout, out, STORY[:20].encode())
        os.killpg(chat.pid, signal.SIGINT)
        await _read_until(chat.stdout, out, b"[cancelled]\n")
        # The chat is back at its prompt and still talks to the same host.
        chat.stdin.write(b"bye\n")
        await chat.stdin.drain()
        await _read_until(chat.stdout, out, b"goodbye\n")
        os.killpg(chat.pid, signal.SIGINT)
        async with asyncio.timeout(60):
            rest, errors = await chat.communicate()
        out += rest
        assert chat.returncode == 0, errors
        assert b"Traceback" not in errors and b"KeyboardInterrupt" not in errors
        text = out.decode("utf-8")
        assert text.endswith("goodbye\n\n"), "leaving at the prompt ends with a newline"
        shown = text[: text.index("\n[cancelled]")]
        assert 20 <= len(shown) < len(STORY) and STORY.startswith(shown)

        lines = (tmp_path / "agents/teller/transcript.jsonl").read_text(encoding="utf-8").splitlines()
        events = [json.loads(line) for line in lines]
        assert [e["type"] for e in events if e["type"] not in ("context", "receipt")] == [
            "user",
            "assistant",
            "ended",
            "user",
            "assistant",
            "ended",
        ]
        partial = events[[e["type"] for e in events].index("assistant")]
        assert partial["partial"] is True and STORY.startswith(partial["text"]) and shown.startswith(partial["text"])
        assert [e["reason"] for e in events if e["type"] == "ended"] == ["cancelled", "idle"]
        wait_until_stopped(tmp_path)  # the host stops by itself once the chat has gone: it was not interrupted
        assert not (tmp_path / "host.lock").exists()

    asyncio.run(_make_teller(tmp_path))
    asyncio.run(main())


def test_ctrl_c_at_the_prompt_leaves_at_once_and_a_piped_failure_exits_non_zero(tmp_path: Path) -> None:
    async def main() -> None:
        chat = await _start_chat(tmp_path)
        assert chat.stdin is not None and chat.stdout is not None
        out = bytearray()
        chat.stdin.write(b"unknown words\n")
        await chat.stdin.drain()
        await _read_until(chat.stdout, out, b"[error: ")
        await _read_until(chat.stdout, out, b"]\n")
        os.killpg(chat.pid, signal.SIGINT)
        async with asyncio.timeout(60):
            _, errors = await chat.communicate()
        assert chat.returncode == 1, errors
        wait_until_stopped(tmp_path)
        assert not (tmp_path / "host.lock").exists()

    asyncio.run(_make_teller(tmp_path))
    asyncio.run(main())
