"""The model loop with the scripted model: tool rounds, errors as results, cancellation keeps the partial."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kernel.loop import ToolOutcome, TurnOutcome, run_turn
from kernel.providers.base import Message, ModelConfig, StreamEnd, TextDelta, ToolCall, ToolDefinition, Usage
from kernel.providers.scripted import ScriptedProvider
from kernel.turn_tools import TurnTools
from protocol.errors import PROVIDER_ERROR, REQUEST_TIMEOUT, RequestTimeoutError


class Recorder:
    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []
        self.streaming = asyncio.Event()

    async def delta(self, text: str) -> None:
        self.log.append(("delta", text))
        self.streaming.set()

    async def message(self, text: str, calls: tuple[ToolCall, ...], usage: Usage | None, partial: bool) -> None:
        self.log.append(("message", (text, [c.name for c in calls], partial)))

    async def tool_started(self, call: ToolCall) -> None:
        self.log.append(("started", call.name))

    async def tool_completed(self, call: ToolCall, outcome: ToolOutcome) -> None:
        self.log.append(("completed", (call.name, outcome.content, outcome.is_error)))


class EchoTool:
    definition = ToolDefinition(
        "echo", "Echo the text.", {"type": "object", "properties": {"text": {"type": "string"}}}
    )

    async def run(self, arguments: dict[str, Any], ctx: Any) -> ToolOutcome:
        return ToolOutcome(f"echo: {arguments.get('text')}")


class BrokenTool:
    definition = ToolDefinition("broken", "Always fails.", {"type": "object"})

    async def run(self, arguments: dict[str, Any], ctx: Any) -> ToolOutcome:
        raise RuntimeError("bug")


def _turn(rules: list[dict[str, Any]], call_host: Any = None, text: str = "go") -> tuple[TurnOutcome, Recorder]:
    config = ModelConfig(provider="scripted", options={"rules": rules})
    recorder = Recorder()

    async def no_host(call: ToolCall) -> ToolOutcome:
        raise RequestTimeoutError("host did not answer")

    host_tools = (ToolDefinition("memory_note", "Note a fact.", {"type": "object"}),)
    turn_tools = TurnTools({"echo": EchoTool(), "broken": BrokenTool()}, None, host_tools, call_host or no_host)
    outcome = asyncio.run(
        run_turn(ScriptedProvider(config), config, [Message("user", text)], turn_tools, recorder, max_steps=5)
    )
    return outcome, recorder


def test_a_tool_round_feeds_the_result_back_to_the_model() -> None:
    rules = [
        {
            "match": "^go$",
            "on": "user",
            "reply": "Checking.",
            "toolCalls": [{"name": "echo", "arguments": {"text": "hi"}}],
        },
        {"match": "^echo: (.*)$", "on": "tool", "reply": r"The tool said \1."},
    ]
    outcome, recorder = _turn(rules)
    assert outcome.reason == "idle"
    events = [e for e in recorder.log if e[0] != "delta"]
    assert events == [
        ("message", ("Checking.", ["echo"], False)),
        ("started", "echo"),
        ("completed", ("echo", "echo: hi", False)),
        ("message", ("The tool said hi.", [], False)),
    ]
    assert outcome.usage.output_tokens > 0


def test_unknown_tools_broken_tools_and_host_failures_are_error_results_not_the_end() -> None:
    rules = [
        {
            "match": "^go$",
            "on": "user",
            "toolCalls": [
                {"name": "nosuch", "arguments": {}},
                {"name": "broken", "arguments": {}},
                {"name": "memory_note", "arguments": {"text": "x"}},
            ],
        },
        {"match": ".*", "on": "tool", "reply": "recovered"},
    ]
    outcome, recorder = _turn(rules)
    completed = [e[1] for e in recorder.log if e[0] == "completed"]
    assert [(name, is_error) for name, _, is_error in completed] == [
        ("nosuch", True),
        ("broken", True),
        ("memory_note", True),
    ]
    assert "no tool named 'nosuch'" in completed[0][1] and "echo" in completed[0][1]
    assert "host did not answer" in completed[2][1]
    assert outcome.reason == "idle"
    assert RequestTimeoutError("x").code == REQUEST_TIMEOUT


def test_host_tools_are_answered_by_the_host() -> None:
    async def host(call: ToolCall) -> ToolOutcome:
        return ToolOutcome(f"noted {call.arguments['text']}")

    rules = [
        {"match": "^go$", "on": "user", "toolCalls": [{"name": "memory_note", "arguments": {"text": "tea"}}]},
        {"match": "^noted (.*)$", "on": "tool", "reply": r"ok \1"},
    ]
    outcome, recorder = _turn(rules, call_host=host)
    assert ("completed", ("memory_note", "noted tea", False)) in recorder.log


def test_a_provider_error_ends_the_turn_with_its_code() -> None:
    outcome, _ = _turn([{"match": "^never$"}])
    assert (outcome.reason, outcome.error_code) == ("error", PROVIDER_ERROR)


def test_a_model_that_never_stops_calling_tools_is_cut_at_max_steps() -> None:
    rules = [{"match": ".*", "toolCalls": [{"name": "echo", "arguments": {"text": "again"}}]}]
    outcome, _ = _turn(rules)
    assert outcome.reason == "error" and "5 model calls" in (outcome.error or "")


def test_cancelling_keeps_the_text_streamed_so_far_as_a_partial_message() -> None:
    config = ModelConfig(
        provider="scripted",
        options={"rules": [{"match": ".*", "reply": "abcdefgh" * 50, "chunkChars": 2, "delayMs": 5}]},
    )
    recorder = Recorder()

    async def main() -> None:
        async def no_host(call: ToolCall) -> ToolOutcome:
            return ToolOutcome("unused", True)

        turn_tools = TurnTools({}, None, (), no_host)
        task = asyncio.create_task(
            run_turn(ScriptedProvider(config), config, [Message("user", "go")], turn_tools, recorder, max_steps=1)
        )
        async with asyncio.timeout(5):
            await recorder.streaming.wait()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the turn was not cancelled")

    asyncio.run(main())
    (message,) = [e[1] for e in recorder.log if e[0] == "message"]
    streamed = "".join(e[1] for e in recorder.log if e[0] == "delta")
    assert message == (streamed, [], True)
    assert 0 < len(streamed) < 400


class _Stops:
    """A model that says a fixed text and stops for `reason` (what a provider reports at the end of a stream)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def stream(self, request: Any) -> Any:
        yield TextDelta("partial answer")
        yield StreamEnd(self.reason)


@pytest.mark.parametrize(
    ("provider_reason", "stop_reason"),
    [("max_tokens", "max_tokens"), ("refusal", "refusal"), ("end_turn", "end_turn"), ("stop_sequence", "end_turn")],
)
def test_the_final_answer_keeps_why_the_model_stopped(provider_reason: str, stop_reason: str) -> None:
    config = ModelConfig(provider="scripted")
    tools = TurnTools({}, None, (), lambda call: None)
    outcome = asyncio.run(
        run_turn(_Stops(provider_reason), config, [Message("user", "go")], tools, Recorder(), max_steps=2)
    )
    assert (outcome.reason, outcome.stop_reason) == ("idle", stop_reason)


def test_a_turn_that_fails_has_no_stop_reason() -> None:
    outcome, _ = _turn([{"match": "^never$"}])
    assert outcome.reason == "error" and outcome.stop_reason is None
