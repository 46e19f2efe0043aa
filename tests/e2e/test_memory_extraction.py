"""Issue 11.4: background extraction is cheap with paid models. Through the real host and a fake OpenAI
server: the extraction request repeats the turn's prefix (same system prompt, history and tools) with the
instruction last, reports the cached share, runs once per agent at a time covering every turn since the
last, and follows the agent's `extraction` setting."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from tests.kernel.providers.fake_llm_server import Recorded, Reply, openai_usage
from tests.support.fake_model import EXTRACTION_MARK, NO_OPERATIONS, ChatServer, model_settings, say
from tests.support.host_process import HostProcess


class Server(ChatServer):
    """Chat turns get "ok"; extractions get no operations, each one held until `release` is set.

    Every reply reports 1000 prompt tokens, of which an extraction's are 900 cached and a chat turn's none.
    """

    def __init__(self) -> None:
        super().__init__(self._held, otherwise=say("ok", usage=openai_usage(1000, 5, cached=0)))
        self.release = threading.Event()
        self.release.set()

    def _held(self, recorded: Recorded) -> Reply:
        self.release.wait(30)
        return say(NO_OPERATIONS, usage=openai_usage(1000, 5, cached=900))


def test_the_extraction_request_repeats_the_turns_prefix_with_the_instruction_last(tmp_path: Path) -> None:
    server = Server()
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            await host.idle_turn("ann", "I am planting tomatoes and basil in the garden this spring.")
            done = await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann")
            assert done["usage"]["inputTokens"] == 1000 and done["cachedShare"] == 0.9

    try:
        asyncio.run(main())
    finally:
        server.stop()
    (chat,) = server.requests
    (extraction,) = server.extractions
    sent, asked = chat.body, extraction.body
    assert asked["tools"] == sent["tools"], "the same tools, so the provider's cached prefix holds"
    assert asked["messages"][: len(sent["messages"])] == sent["messages"], "the turn's messages come first, unchanged"
    assert asked["messages"][len(sent["messages"])] == {"role": "assistant", "content": "ok"}
    assert EXTRACTION_MARK in asked["messages"][-1]["content"] and asked["messages"][-1]["role"] == "user"
    assert EXTRACTION_MARK not in json.dumps(asked["messages"][:-1])


def test_one_extraction_at_a_time_covers_every_turn_since_the_last(tmp_path: Path) -> None:
    server = Server()
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            server.release.clear()
            await host.idle_turn("ann", "My sister Ines lives in Porto and teaches music.")
            await host.idle_turn("ann", "My brother Tomas moved to Oslo for a job at a shipyard.")
            await host.idle_turn("ann", "Our mother Rosa grows lemons on her balcony in Faro.")
            server.release.set()
            first = await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann")
            await host.wait_for("memory.extracted", lambda p: p["throughSeq"] > first["throughSeq"])

    try:
        asyncio.run(main())
    finally:
        server.stop()
    assert len(server.requests) == 3 and len(server.extractions) == 2, "three turns, two coalesced extractions"
    first, second = (r.body["messages"][-1]["content"] for r in server.extractions)
    assert "Ines" in first and "Tomas" not in first.split("Exchange:")[1]
    exchange = second.split("Exchange:")[1]
    assert "Tomas" in exchange and "Rosa" in exchange and "Ines" not in exchange


def test_extraction_follows_the_agents_setting(tmp_path: Path) -> None:
    server = Server()
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "off", "settings": model_settings(server, extraction="off")})
            await host.call("agent.create", {"name": "two", "settings": model_settings(server, extraction=2)})
            await host.idle_turn("off", "My sister Ines lives in Porto and teaches music.")
            await host.idle_turn("two", "My brother Tomas moved to Oslo for a job at a shipyard.")
            assert not server.extractions
            await host.idle_turn("two", "Our mother Rosa grows lemons on her balcony in Faro.")
            done = await host.wait_for("memory.extracted", lambda p: p["agentId"] == "two")
            assert done["operations"] == 0
            await host.idle_turn("off", "My cousin Marta builds boats in Lagos.")
            agent = await host.call("agent.get", {"agentId": "two"})
            assert agent["settings"]["extraction"] == 2

    try:
        asyncio.run(main())
    finally:
        server.stop()
    (only,) = server.extractions
    exchange = only.body["messages"][-1]["content"].split("Exchange:")[1]
    assert "Tomas" in exchange and "Rosa" in exchange
