"""Real signals to a real host mid-turn (issue 10 item 10): SIGTERM and SIGINT stop it as `shutdown` does,
and a run that a SIGKILL left open is closed first thing at the next start."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from host.recovery import HOST_STOPPED
from tests.support.host_process import HostProcess, scripted_model

LONG_REPLY = "Once upon a time there was a host that streamed a long story. " * 8
RULES = [
    {"match": "^tell", "on": "user", "reply": LONG_REPLY, "chunkChars": 6, "delayMs": 40},
    {"match": "^hi", "on": "user", "reply": "hello again"},
]


def _transcript(data_dir: Path, agent_id: str) -> list[dict[str, Any]]:
    lines = (data_dir / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


async def _wait_gone(pid: int, timeout: float = 30) -> None:
    """Wait for a process we did not start (the kernel) to exit, through a pidfd: no polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    loop.add_reader(fd, gone.set)
    try:
        async with asyncio.timeout(timeout):
            await gone.wait()
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def _start_story(host: HostProcess) -> tuple[str, int]:
    await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
    kernel_pid = (await host.wait_for("kernel.up"))["pid"]
    sent = await host.call("agent.send", {"agentId": "ann", "text": "tell me a story"})
    await host.wait_for("agent.delta", lambda p: p["runId"] == sent["runId"])
    return sent["runId"], kernel_pid


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_mid_turn_keeps_the_partial_text_writes_the_end_and_releases_the_lock(
    tmp_path: Path, number: signal.Signals
) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "host.log"

    async def main() -> None:
        async with HostProcess(data_dir, stderr_to=log) as host:
            assert host.process is not None
            run_id, kernel_pid = await _start_story(host)
            host.process.send_signal(number)
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == run_id)
            assert ended["reason"] == "cancelled"
            async with asyncio.timeout(30):
                assert await host.process.wait() == 0
            await _wait_gone(kernel_pid)
            streamed = host.texts("ann", run_id)
        events = _transcript(data_dir, "ann")
        partial, end = events[-2], events[-1]
        assert partial["type"] == "assistant" and partial["partial"] is True
        assert partial["text"] == streamed and 0 < len(streamed) < len(LONG_REPLY)
        assert (end["type"], end["runId"], end["reason"]) == ("ended", run_id, "cancelled")
        assert not (data_dir / "host.lock").exists()

    asyncio.run(main())
    text = log.read_text(encoding="utf-8")
    assert "Traceback" not in text and "KeyboardInterrupt" not in text


def test_a_run_left_open_by_a_sigkill_is_closed_first_at_the_next_start(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            assert host.process is not None
            run_id, kernel_pid = await _start_story(host)
            host.process.kill()
            await host.process.wait()
            await _wait_gone(kernel_pid)  # its input closed with the host: the kernel does not linger
        before = _transcript(tmp_path, "ann")
        assert not any(e["type"] == "ended" for e in before), "the kill left the run open"
        (tmp_path / "agents/ann/.settings.json.a1b2c3d4.tmp").write_text("{", encoding="utf-8")
        (tmp_path / ".settings.json.zz99yy88.tmp").write_text("{", encoding="utf-8")
        (tmp_path / "agents/ann/scratch/.draft.a1b2c3d4.tmp").write_text("the agent's own", encoding="utf-8")

        async with HostProcess(tmp_path) as host:
            after = _transcript(tmp_path, "ann")
            closed = after[len(before)]
            assert (closed["type"], closed["runId"], closed["reason"], closed["error"]) == (
                "ended",
                run_id,
                "error",
                HOST_STOPPED,
            )
            assert closed["seq"] == before[-1]["seq"] + 1, "nothing was written before the open run was closed"
            # The message that run never answered is delivered again, after the closed run.
            assert after[len(before) + 1]["type"] == "user" and after[len(before) + 1]["text"] == "tell me a story"
            sent = await host.call("agent.send", {"agentId": "ann", "text": "hi there"})
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"], timeout=60)
            assert ended["reason"] == "idle" and host.texts("ann", sent["runId"]) == "hello again"
        assert not (tmp_path / "agents/ann/.settings.json.a1b2c3d4.tmp").exists()
        assert not (tmp_path / ".settings.json.zz99yy88.tmp").exists()
        assert (tmp_path / "agents/ann/scratch/.draft.a1b2c3d4.tmp").exists(), "scratch is the agent's own"

    asyncio.run(main())
    events = _transcript(tmp_path, "ann")
    assert [e["reason"] for e in events if e["type"] == "ended"] == ["error", "idle", "idle"]
