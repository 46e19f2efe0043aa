"""Anthropic provider against a real local HTTP server speaking the Messages event stream."""

from __future__ import annotations

from typing import Any

from kernel.providers.anthropic import AnthropicProvider
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
from kernel.providers.retry import RetryPolicy
from protocol.errors import PROVIDER_ERROR
from tests.kernel.providers.fake_llm_server import (
    FakeClock,
    FakeModelServer,
    anthropic_finish,
    anthropic_start,
    anthropic_stream,
    anthropic_text_block,
    anthropic_tool_block,
    error_reply,
)
from tests.kernel.providers.streaming import run, run_failing, text_of

KEY = "sk-ant-test-0123456789-secret"


def config(server: FakeModelServer, **overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {"provider": "anthropic", "name": "claude-test", "base_url": server.url, "api_key": KEY}
    values.update(overrides)
    return ModelConfig(**values)


def simple_request(cfg: ModelConfig) -> ModelRequest:
    return ModelRequest(cfg, (Message("system", "Be brief."), Message("user", "hi")))


def test_text_streams_and_usage_counts_cache_reads_and_writes(model_server: FakeModelServer) -> None:
    model_server.script(
        anthropic_stream(
            anthropic_start(10, cache_read=2000, cache_write=300),
            *anthropic_text_block(0, "Hel", "lo"),
            *anthropic_finish(output_tokens=7),
        )
    )
    events = run(AnthropicProvider(config(model_server)), simple_request(config(model_server)))
    assert events == [
        TextDelta("Hel"),
        TextDelta("lo"),
        UsageReport(Usage(input_tokens=2310, output_tokens=7, cached_input_tokens=2000, cache_write_tokens=300)),
        StreamEnd("end_turn"),
    ]
    sent = model_server.requests[0]
    assert sent.path == "/v1/messages"
    assert KEY in sent.headers["authorization"]
    assert sent.body["stream"] is True


def test_tool_use_input_split_across_deltas_is_assembled(model_server: FakeModelServer) -> None:
    model_server.script(
        anthropic_stream(
            anthropic_start(),
            *anthropic_text_block(0, "Looking."),
            *anthropic_tool_block(1, "toolu_1", "grep", '{"pat', 'tern": ', '"todo"}'),
            *anthropic_tool_block(2, "toolu_2", "list_files"),
            *anthropic_finish("tool_use"),
        )
    )
    events = run(AnthropicProvider(config(model_server)), simple_request(config(model_server)))
    assert events[:3] == [
        TextDelta("Looking."),
        ToolCallReady(ToolCall("toolu_1", "grep", {"pattern": "todo"})),
        ToolCallReady(ToolCall("toolu_2", "list_files", {})),
    ]
    assert events[-1] == StreamEnd("tool_use")


def test_the_last_system_block_carries_the_cache_breakpoint(model_server: FakeModelServer) -> None:
    model_server.script(anthropic_stream(anthropic_start(), *anthropic_text_block(0, "ok"), *anthropic_finish()))
    cfg = config(model_server)
    req = ModelRequest(
        cfg,
        (
            Message("system", "identity and rules"),
            Message("system", "memory section", cache_breakpoint=True),
            Message("user", "find todos"),
            Message("assistant", "", tool_calls=(ToolCall("toolu_1", "grep", {"pattern": "todo"}),)),
            Message("tool", "a.txt:1: todo", tool_call_id="toolu_1"),
        ),
        (ToolDefinition("grep", "search files", {"type": "object"}),),
    )
    run(AnthropicProvider(cfg), req)
    body = model_server.requests[0].body
    assert body["system"] == [
        {"type": "text", "text": "identity and rules"},
        {"type": "text", "text": "memory section", "cache_control": {"type": "ephemeral"}},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "find todos"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": "todo"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt:1: todo"}]},
    ]
    assert body["tools"] == [{"name": "grep", "description": "search files", "input_schema": {"type": "object"}}]
    assert body["max_tokens"] == cfg.max_output_tokens


def test_a_breakpoint_marked_later_moves_the_cache_control_off_the_system_prompt(model_server: FakeModelServer) -> None:
    model_server.script(anthropic_stream(anthropic_start(), *anthropic_text_block(0, "ok"), *anthropic_finish()))
    cfg = config(model_server)
    req = ModelRequest(
        cfg,
        (Message("system", "rules"), Message("user", "old question", cache_breakpoint=True), Message("user", "new")),
    )
    run(AnthropicProvider(cfg), req)
    body = model_server.requests[0].body
    assert body["system"] == [{"type": "text", "text": "rules"}]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "old question", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "new"},
            ],
        }
    ]


def test_429_with_retry_after_is_retried_once_without_really_sleeping(
    model_server: FakeModelServer, clock: FakeClock
) -> None:
    model_server.script(
        error_reply(429, "rate limited", headers={"retry-after": "20"}, kind="rate_limit_error"),
        anthropic_stream(anthropic_start(), *anthropic_text_block(0, "fine"), *anthropic_finish()),
    )
    events = run(AnthropicProvider(config(model_server), clock=clock), simple_request(config(model_server)))
    assert text_of(events) == "fine"
    assert len(model_server.requests) == 2
    assert clock.sleeps == [20.0]


def test_overloaded_529_is_retried_per_the_table_then_gives_a_clear_error(
    model_server: FakeModelServer, clock: FakeClock
) -> None:
    model_server.script(*(error_reply(529, "Overloaded", kind="overloaded_error") for _ in range(2)))
    provider = AnthropicProvider(config(model_server), clock=clock, policy=RetryPolicy(max_attempts=2))
    events, error = run_failing(provider, simple_request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert error.status == 529
    assert "overloaded" in error.message
    assert events == []
    assert len(model_server.requests) == 2


def test_an_error_event_before_any_text_is_retried(model_server: FakeModelServer, clock: FakeClock) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    model_server.script(
        anthropic_stream(anthropic_start(), ("error", overloaded)),
        anthropic_stream(anthropic_start(), *anthropic_text_block(0, "second"), *anthropic_finish()),
    )
    events = run(AnthropicProvider(config(model_server), clock=clock), simple_request(config(model_server)))
    assert text_of(events) == "second"
    assert len(model_server.requests) == 2


def test_401_is_not_retried_and_the_error_never_shows_the_key(model_server: FakeModelServer, clock: FakeClock) -> None:
    model_server.script(error_reply(401, f"invalid x-api-key {KEY}", kind="authentication_error"))
    _, error = run_failing(AnthropicProvider(config(model_server), clock=clock), simple_request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert error.status == 401
    assert len(model_server.requests) == 1
    assert clock.sleeps == []
    for text in (str(error), repr(error), repr(error.to_object())):
        assert KEY not in text
    assert "hearth secrets set anthropic" in error.message


def test_a_stream_cut_after_text_keeps_the_partial_text_and_says_interrupted(
    model_server: FakeModelServer, clock: FakeClock
) -> None:
    model_server.script(anthropic_stream(anthropic_start(), *anthropic_text_block(0, "Part", "ial")[:3], cut=True))
    events, error = run_failing(
        AnthropicProvider(config(model_server), clock=clock), simple_request(config(model_server))
    )
    assert text_of(events) == "Partial"
    assert error.code == PROVIDER_ERROR
    assert "interrupted" in error.message
    assert len(model_server.requests) == 1


def test_malformed_json_in_an_event_is_a_provider_error(model_server: FakeModelServer) -> None:
    model_server.script(
        anthropic_stream(
            anthropic_start(), *anthropic_text_block(0, "ok")[:2], ("content_block_delta", '{"type": "content_bl')
        )
    )
    events, error = run_failing(AnthropicProvider(config(model_server)), simple_request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert text_of(events) == "ok"


def test_malformed_tool_input_gives_a_clear_error(model_server: FakeModelServer) -> None:
    model_server.script(
        anthropic_stream(
            anthropic_start(),
            *anthropic_tool_block(0, "toolu_1", "grep", '{"pattern": '),
            *anthropic_finish("tool_use"),
        )
    )
    events, error = run_failing(AnthropicProvider(config(model_server)), simple_request(config(model_server)))
    assert error.code == PROVIDER_ERROR
    assert "grep" in error.message
    assert events == []


def test_the_public_api_without_a_key_fails_before_any_request(model_server: FakeModelServer) -> None:
    cfg = ModelConfig(provider="anthropic", name="claude-test")
    _, error = run_failing(AnthropicProvider(cfg), simple_request(cfg))
    assert error.code == PROVIDER_ERROR
    assert "hearth secrets set anthropic" in error.message
    assert model_server.requests == []


def test_a_loopback_server_may_be_called_without_a_key(model_server: FakeModelServer) -> None:
    model_server.script(anthropic_stream(anthropic_start(), *anthropic_text_block(0, "local"), *anthropic_finish()))
    cfg = config(model_server, api_key=None)
    assert text_of(run(AnthropicProvider(cfg), simple_request(cfg))) == "local"
    assert model_server.requests[0].headers["authorization"] == "Bearer no-key"
