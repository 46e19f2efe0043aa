"""Issue 22.12 end to end: a turn sends the kernel only what is new, and the model still gets the whole
conversation, turn after turn, after the kernel was killed and after the host restarted. Through the real
host and kernel over their pipes, against the local fake OpenAI server.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from tests.support.fake_model import EXTRACTION_MARK, ChatServer, model_settings, say
from tests.support.host_process import HostProcess

TEXTS = [
    "I am planting tomatoes and basil in the garden this spring.",
    "The basil goes by the kitchen window where it gets the morning sun.",
    "My neighbour Ines gave me three kinds of tomato seeds last week.",
    "We will water everything from the rain barrel behind the shed.",
    "Next year I want to add a row of peppers along the fence.",
]


async def _turn(host: HostProcess, text: str) -> None:
    after = len(host.events)
    await host.idle_turn("ann", text)
    await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann", after=after)


def test_the_model_gets_the_whole_conversation_every_turn_across_a_killed_kernel_and_a_restarted_host(
    tmp_path: Path,
) -> None:
    server = ChatServer(otherwise=say("noted"))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "agentId": "ann", "settings": model_settings(server)})
            for text in TEXTS[:3]:
                await _turn(host, text)
            kernel_pid = (await host.call("host.status"))["kernel"]["pid"]
            after = len(host.events)
            os.kill(kernel_pid, signal.SIGKILL)
            await host.wait_for("kernel.up", after=after, timeout=60)
            await _turn(host, TEXTS[3])
        async with HostProcess(tmp_path) as host:
            await _turn(host, TEXTS[4])

    try:
        asyncio.run(main())
    finally:
        server.stop()
    chats = [body["messages"] for body in server.chats()]
    assert len(chats) == 5
    assert chats[0][0]["role"] == "system" and chats[0][1:] == [{"role": "user", "content": TEXTS[0]}]
    for before, after, text in zip(chats, chats[1:], TEXTS[1:], strict=False):
        reply: list[dict[str, Any]] = [{"role": "assistant", "content": "noted"}, {"role": "user", "content": text}]
        assert after == [*before, *reply]
    extractions = [recorded.body["messages"] for recorded in server.extractions]
    assert len(extractions) == 5
    for chat, asked in zip(chats, extractions, strict=True):
        assert asked[:-1] == [*chat, {"role": "assistant", "content": "noted"}]
        assert EXTRACTION_MARK in asked[-1]["content"]
