"""OpenAI-compatible provider against a real local HTTP server speaking the chat-completions stream."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kernel.errors import BadModelConfigError
from kernel.providers.base import (
    Message,
    ModelConfig,
    ModelRequest,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolDefinition,
    Usage,
    UsageReport,
)
from kernel.providers.openai_compat import OpenAICompatProvider
from kernel.providers.retry import RetryPolicy
from protocol.errors import INVALID_PARAMS, PROVIDER_ERROR
from tests.kernel.providers.fake_llm_server import (
    FakeClock,
    FakeModelServer,
    Reply,
    error_reply,
    openai_chunk,
    openai_stream,
    openai_usage,
)
from tests.kernel.providers.streaming import collect, run, run_failing, text_of

KEY = "sk-test-0123456789abcdef-secret"


def chunk(
    content: str | None = None, *, tool_calls: list[dict[str, Any]] | None = None, finish: str | None = None
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return openai_chunk(delta, finish)


def config(server: FakeModelServer, **overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {"provider": "openai", "name": "gpt-test", "base_url": server.url + "/v1", "api_key": KEY}
    values.update(overrides)
    return ModelConfig(**values)


def request(cfg: ModelConfig, *messages: Message, tools: tuple[ToolDefinition, ...] = ()) -> ModelRequest:
    msgs = messages or (Message("system", "You are terse."), Message("user", "hi"))
    return ModelRequest(cfg, msgs, tools)


def test_plain_text_streams_as_deltas_then_usage_then_end(model_server: FakeModelServer, clock: FakeClock) -> None:
    model_server.script(openai_stream(chunk("Hel"), chunk("lo"), chunk(finish="stop"), openai_usage(12, 2)))
    events = run(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert events == [
        TextDelta("Hel"),
        TextDelta("lo"),
        UsageReport(Usage(input_tokens=12, output_tokens=2)),
        StreamEnd("end_turn"),
    ]
    sent = model_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["messages"] == [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]


def test_two_parallel_tool_calls_split_across_chunks_are_assembled(model_server: FakeModelServer) -> None:
    model_server.script(
        openai_stream(
            chunk(
                tool_calls=[
                    {"index": 0, "id": "call_a", "type": "function", "function": {"name": "grep", "arguments": ""}}
                ]
            ),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"pat'}}]),
            chunk(
                tool_calls=[
                    {"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": '{"pa'}}
                ]
            ),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": 'tern": "todo"}'}}]),
            chunk(tool_calls=[{"index": 1, "function": {"arguments": 'th": "a.txt"}'}}]),
            chunk(finish="tool_calls"),
            openai_usage(40, 30),
        )
    )
    events = run(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert events == [
        ToolCallReady(ToolCall("call_a", "grep", {"pattern": "todo"})),
        ToolCallReady(ToolCall("call_b", "read", {"path": "a.txt"})),
        UsageReport(Usage(input_tokens=40, output_tokens=30)),
        StreamEnd("tool_use"),
    ]


def test_cached_prompt_tokens_are_read_into_usage(model_server: FakeModelServer) -> None:
    model_server.script(openai_stream(chunk("ok"), chunk(finish="stop"), openai_usage(2048, 1, cached=1920)))
    events = run(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert UsageReport(Usage(input_tokens=2048, output_tokens=1, cached_input_tokens=1920)) in events


def test_tools_and_tool_history_are_sent_in_chat_completions_shape(model_server: FakeModelServer) -> None:
    model_server.script(openai_stream(chunk("done"), chunk(finish="stop")))
    cfg = config(model_server)
    req = request(
        cfg,
        Message("user", "find todos"),
        Message("assistant", "", tool_calls=(ToolCall("call_a", "grep", {"pattern": "todo"}),)),
        Message("tool", "a.txt:1: todo", tool_call_id="call_a"),
        tools=(ToolDefinition("grep", "search files", {"type": "object", "properties": {}}),),
    )
    run(OpenAICompatProvider(cfg), req)
    body = model_server.requests[0].body
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "grep", "arguments": '{"pattern": "todo"}'}}
        ],
    }
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "call_a", "content": "a.txt:1: todo"}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "search files",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert body["max_tokens"] == cfg.max_output_tokens


def test_429_with_retry_after_is_retried_once_without_really_sleeping(
    model_server: FakeModelServer, clock: FakeClock
) -> None:
    model_server.script(
        error_reply(429, "slow down", headers={"retry-after": "30"}),
        openai_stream(chunk("fine"), chunk(finish="stop")),
    )
    # A real 30 s wait would trip the 10 s timeout in `collect`.
    events = run(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert text_of(events) == "fine"
    assert len(model_server.requests) == 2
    assert clock.sleeps == [30.0]


def test_500_is_retried_per_the_table_then_gives_a_clear_error(model_server: FakeModelServer, clock: FakeClock) -> None:
    model_server.script(
        *(error_reply(500, "boom") for _ in range(3)), openai_stream(chunk("never"), chunk(finish="stop"))
    )
    policy = RetryPolicy(max_attempts=3)
    events, error = run_failing(
        OpenAICompatProvider(config(model_server), clock=clock, policy=policy), request(config(model_server))
    )
    assert error.code == PROVIDER_ERROR
    assert error.status == 500
    assert error.retryable is True
    assert events == []
    assert len(model_server.requests) == 3
    assert clock.sleeps == [0.5, 1.0]


def test_401_is_not_retried_and_the_error_never_shows_the_key(model_server: FakeModelServer, clock: FakeClock) -> None:
    model_server.script(
        error_reply(401, f"Incorrect API key provided: {KEY}"), openai_stream(chunk("never"), chunk(finish="stop"))
    )
    _, error = run_failing(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert error.status == 401
    assert len(model_server.requests) == 1
    assert clock.sleeps == []
    for text in (str(error), repr(error), error.message, repr(error.to_object())):
        assert KEY not in text
    assert "hearth secrets set openai" in error.message


def test_400_carries_the_providers_message_with_the_key_scrubbed(model_server: FakeModelServer) -> None:
    model_server.script(error_reply(400, f"bad temperature; your key {KEY} is fine"))
    _, error = run_failing(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert error.status == 400
    assert "bad temperature" in error.message
    assert KEY not in error.message
    assert len(model_server.requests) == 1


def test_404_says_the_model_was_not_found(model_server: FakeModelServer) -> None:
    model_server.script(error_reply(404, "The model `gpt-test` does not exist"))
    _, error = run_failing(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert error.status == 404
    assert "'gpt-test'" in error.message
    assert len(model_server.requests) == 1


def test_a_stream_cut_after_text_keeps_the_partial_text_and_is_not_retried(
    model_server: FakeModelServer, clock: FakeClock
) -> None:
    model_server.script(
        openai_stream(chunk("The answer "), chunk("is"), done=False, cut=True),
        openai_stream(chunk("again"), chunk(finish="stop")),
    )
    events, error = run_failing(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert text_of(events) == "The answer is"
    assert error.code == PROVIDER_ERROR
    assert "interrupted" in error.message
    assert len(model_server.requests) == 1
    assert clock.sleeps == []


def test_a_connection_dropped_before_any_text_is_retried(model_server: FakeModelServer, clock: FakeClock) -> None:
    model_server.script(Reply(pieces=[], cut=True), openai_stream(chunk("second try"), chunk(finish="stop")))
    events = run(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert text_of(events) == "second try"
    assert len(model_server.requests) == 2
    assert clock.sleeps == [0.5]


def test_a_stream_that_ends_without_a_finish_reason_is_an_error(
    model_server: FakeModelServer, clock: FakeClock
) -> None:
    model_server.script(openai_stream(chunk("half"), done=True))
    events, error = run_failing(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert text_of(events) == "half"
    assert error.code == PROVIDER_ERROR
    assert "interrupted" in error.message


def test_malformed_json_in_a_chunk_is_a_provider_error(model_server: FakeModelServer) -> None:
    model_server.script(openai_stream(chunk("ok"), '{"choices": [', chunk(finish="stop")))
    events, error = run_failing(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert text_of(events) == "ok"


def test_malformed_json_before_any_text_is_not_retried(model_server: FakeModelServer, clock: FakeClock) -> None:
    model_server.script(openai_stream("not json at all"), openai_stream(chunk("never"), chunk(finish="stop")))
    events, error = run_failing(OpenAICompatProvider(config(model_server), clock=clock), request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert "malformed" in error.message
    assert events == []
    assert len(model_server.requests) == 1


def test_malformed_tool_call_arguments_give_a_clear_error(model_server: FakeModelServer) -> None:
    model_server.script(
        openai_stream(
            chunk(
                tool_calls=[
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "grep", "arguments": '{"pattern": '},
                    }
                ]
            ),
            chunk(finish="tool_calls"),
        )
    )
    events, error = run_failing(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert "grep" in error.message
    assert not any(isinstance(e, ToolCallReady) for e in events)


def test_a_remote_api_without_a_key_fails_before_any_request(model_server: FakeModelServer) -> None:
    cfg = ModelConfig(provider="openai", name="gpt-test", base_url="https://llm.example.invalid/v1")
    _, error = run_failing(OpenAICompatProvider(cfg), request(cfg))
    assert error.code == PROVIDER_ERROR
    assert "hearth secrets set openai" in error.message
    assert model_server.requests == []


def test_a_loopback_server_may_be_called_without_a_key(model_server: FakeModelServer) -> None:
    model_server.script(openai_stream(chunk("local"), chunk(finish="stop")))
    cfg = config(model_server, api_key=None)
    events = run(OpenAICompatProvider(cfg), request(cfg))
    assert text_of(events) == "local"
    assert model_server.requests[0].headers["authorization"] == "Bearer no-key"


def test_a_model_without_a_name_is_a_config_error(model_server: FakeModelServer) -> None:
    cfg = config(model_server, name="")
    with pytest.raises(BadModelConfigError) as caught:
        asyncio.run(collect(OpenAICompatProvider(cfg), request(cfg), []))
    assert caught.value.code == INVALID_PARAMS
    assert model_server.requests == []


def test_ollama_style_stop_with_tool_calls_still_ends_as_tool_use(model_server: FakeModelServer) -> None:
    model_server.script(
        openai_stream(
            chunk(
                tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
            ),
            chunk(finish="stop"),
        )
    )
    events = run(OpenAICompatProvider(config(model_server)), request(config(model_server)))
    assert events[0] == ToolCallReady(ToolCall("c1", "ls", {}))
    assert events[-1] == StreamEnd("tool_use")
