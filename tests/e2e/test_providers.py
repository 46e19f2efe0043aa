"""Real providers through the host and kernel, against a local server that speaks their streaming APIs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.kernel.providers.fake_llm_server import (
    FakeModelServer,
    anthropic_finish,
    anthropic_start,
    anthropic_stream,
    anthropic_text_block,
    error_reply,
    openai_chunk,
    openai_stream,
    openai_usage,
)
from tests.support.fake_model import say
from tests.support.host_process import HostProcess


def _run(
    tmp_path: Path, server: FakeModelServer, model: dict[str, Any], text: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    async def main() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        async with HostProcess(tmp_path) as host:
            await host.call("secrets.set", {"name": model["provider"], "value": "sk-test-key"})
            await host.call("agent.create", {"name": "ann", "settings": {"model": {**model, "baseUrl": server.url}}})
            ended = await host.send_and_wait("ann", text)
            page = await host.call("agent.transcript", {"agentId": "ann"})
            return ended, page["events"]

    server.start()
    try:
        return asyncio.run(main())
    finally:
        server.stop()


def test_anthropic_usage_with_cached_tokens_is_in_the_transcript_and_the_end_event(tmp_path: Path) -> None:
    server = FakeModelServer()
    server.script(
        anthropic_stream(
            anthropic_start(1000, cache_read=900),
            *anthropic_text_block(0, "Hi from Claude."),
            *anthropic_finish(output_tokens=7),
        )
    )
    ended, events = _run(tmp_path, server, {"provider": "anthropic", "name": "claude-test"}, "hello")
    assert ended["reason"] == "idle"
    assert ended["usage"]["cachedInputTokens"] == 900
    assistant = next(e for e in events if e["type"] == "assistant")
    assert assistant["text"] == "Hi from Claude." and assistant["usage"]["cachedInputTokens"] == 900
    system = server.requests[0].body["system"]
    assert system[-1]["cache_control"] == {"type": "ephemeral"}


def test_a_stream_cut_in_the_middle_keeps_the_partial_text_and_ends_with_a_clear_error(tmp_path: Path) -> None:
    server = FakeModelServer()
    server.script(openai_stream(openai_chunk({"content": "Hello wor"}), done=False, cut=True))
    ended, events = _run(tmp_path, server, {"provider": "openai", "name": "gpt-test"}, "hello")
    assert ended["reason"] == "error" and "interrupted" in ended["error"]
    kinds = [(e["type"], e.get("text"), e.get("partial")) for e in events]
    assert [k for k in kinds if k[0] == "assistant"] == [("assistant", "Hello wor", True)]
    assert events[-1]["type"] == "ended" and events[-1]["reason"] == "error"


def test_a_rate_limit_is_retried_and_the_turn_succeeds(tmp_path: Path) -> None:
    server = FakeModelServer()
    usage = openai_usage(50, 3, cached=32)
    server.script(
        error_reply(429, "slow down", headers={"retry-after": "0"}),
        say("Fine.", usage=usage),
    )
    ended, events = _run(tmp_path, server, {"provider": "openai", "name": "gpt-test"}, "hello")
    assert ended["reason"] == "idle" and len(server.requests) == 2
    assert ended["usage"]["cachedInputTokens"] == 32
    assert json.dumps(events).count('"partial": true') == 0
