"""Issue 11.4: background extraction is cheap with paid models. Through the real host and a fake OpenAI
server: the extraction request repeats the turn's prefix (same system prompt, history and tools) with the
instruction last, reports the cached share, runs once per agent at a time covering every turn since the
last, and follows the agent's `extraction` setting."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from tests.kernel.providers.fake_llm_server import FakeModelServer, Recorded, Reply, openai_stream
from tests.support.host_process import HostProcess

MARK = "You keep the long-term memory"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _say(text: str, cached: int = 0) -> Reply:
    usage = {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 5,
            "total_tokens": 1005,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }
    return openai_stream(_chunk({"content": text}), _chunk({}, "stop"), usage)


class Server(FakeModelServer):
    """Chat turns get "ok"; extractions get no operations, each one held until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.release.set()
        self.extractions: list[Recorded] = []
        self.chats: list[Recorded] = []

    def _next(self, recorded: Recorded) -> Reply:
        if MARK in json.dumps(recorded.body):
            with self._lock:
                self.extractions.append(recorded)
            self.release.wait(30)
            return _say('{"operations": []}', cached=900)
        with self._lock:
            self.chats.append(recorded)
        return _say("ok")


async def turn(host: HostProcess, agent: str, text: str) -> None:
    sent = await host.call("agent.send", {"agentId": agent, "text": text})
    ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
    assert ended["reason"] == "idle", ended


def _settings(server: Server, **extra: Any) -> dict[str, Any]:
    return {"model": {"provider": "openai", "name": "m", "baseUrl": server.url}, **extra}


def test_the_extraction_request_repeats_the_turns_prefix_with_the_instruction_last(tmp_path: Path) -> None:
    server = Server()
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _settings(server)})
            await turn(host, "ann", "I am planting tomatoes and basil in the garden this spring.")
            done = await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann")
            assert done["usage"]["inputTokens"] == 1000 and done["cachedShare"] == 0.9

    try:
        asyncio.run(main())
    finally:
        server.stop()
    (chat,) = server.chats
    (extraction,) = server.extractions
    sent, asked = chat.body, extraction.body
    assert asked["tools"] == sent["tools"], "the same tools, so the provider's cached prefix holds"
    assert asked["messages"][: len(sent["messages"])] == sent["messages"], "the turn's messages come first, unchanged"
    assert asked["messages"][len(sent["messages"])] == {"role": "assistant", "content": "ok"}
    assert MARK in asked["messages"][-1]["content"] and asked["messages"][-1]["role"] == "user"
    assert MARK not in json.dumps(asked["messages"][:-1])


def test_one_extraction_at_a_time_covers_every_turn_since_the_last(tmp_path: Path) -> None:
    server = Server()
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _settings(server)})
            server.release.clear()
            await turn(host, "ann", "My sister Ines lives in Porto and teaches music.")
            await turn(host, "ann", "My brother Tomas moved to Oslo for a job at a shipyard.")
            await turn(host, "ann", "Our mother Rosa grows lemons on her balcony in Faro.")
            server.release.set()
            first = await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann")
            await host.wait_for("memory.extracted", lambda p: p["throughSeq"] > first["throughSeq"])

    try:
        asyncio.run(main())
    finally:
        server.stop()
    assert len(server.chats) == 3 and len(server.extractions) == 2, "three turns, two coalesced extractions"
    first, second = (r.body["messages"][-1]["content"] for r in server.extractions)
    assert "Ines" in first and "Tomas" not in first.split("Exchange:")[1]
    exchange = second.split("Exchange:")[1]
    assert "Tomas" in exchange and "Rosa" in exchange and "Ines" not in exchange


def test_extraction_follows_the_agents_setting(tmp_path: Path) -> None:
    server = Server()
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "off", "settings": _settings(server, extraction="off")})
            await host.call("agent.create", {"name": "two", "settings": _settings(server, extraction=2)})
            await turn(host, "off", "My sister Ines lives in Porto and teaches music.")
            await turn(host, "two", "My brother Tomas moved to Oslo for a job at a shipyard.")
            assert not server.extractions
            await turn(host, "two", "Our mother Rosa grows lemons on her balcony in Faro.")
            done = await host.wait_for("memory.extracted", lambda p: p["agentId"] == "two")
            assert done["operations"] == 0
            await turn(host, "off", "My cousin Marta builds boats in Lagos.")
            agent = await host.call("agent.get", {"agentId": "two"})
            assert agent["settings"]["extraction"] == 2

    try:
        asyncio.run(main())
    finally:
        server.stop()
    (only,) = server.extractions
    exchange = only.body["messages"][-1]["content"].split("Exchange:")[1]
    assert "Tomas" in exchange and "Rosa" in exchange
