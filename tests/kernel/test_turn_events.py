"""A run's events reach the host as notifications in the order they happen; a summary keeps only its text."""

from __future__ import annotations

import asyncio

from kernel.loop import ToolOutcome
from kernel.providers.base import ToolCall, Usage
from kernel.turn_events import TextCollector, TurnNotifier
from protocol.dispatch import Router
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair
from tests.support.shell import EventRecorder


def test_each_event_of_a_run_is_one_notification_naming_the_run_in_order() -> None:
    async def main() -> list[tuple[str, dict[str, object]]]:
        kernel_end, host_end = memory_transport_pair()
        recorder = EventRecorder()
        host = JsonRpcPeer(host_end, recorder, name="kernel")
        kernel = JsonRpcPeer(kernel_end, Router(), name="host")
        reading = asyncio.create_task(host.serve())
        call = ToolCall("c1", "grep", {"pattern": "tea"})
        events = TurnNotifier(kernel, "r1")
        await events.delta("Hel")
        await events.message("Hello", (call,), Usage(input_tokens=3, output_tokens=1), False)
        await events.tool_started(call)
        await events.tool_completed(call, ToolOutcome("no match", is_error=True))
        async with asyncio.timeout(5), recorder.changed:
            await recorder.changed.wait_for(lambda: len(recorder.events) == 4)
        await kernel_end.close()
        reading.cancel()
        return recorder.events

    events = asyncio.run(main())
    assert [method for method, _ in events] == ["turn.delta", "turn.message", "turn.tool", "turn.tool"]
    assert all(params["runId"] == "r1" for _, params in events)
    delta, message, started, completed = (params for _, params in events)
    assert delta["text"] == "Hel" and message["toolCalls"][0]["name"] == "grep"
    assert message["usage"]["inputTokens"] == 3 and message["partial"] is False
    assert started["status"] == "started" and started.get("content") is None
    assert completed["status"] == "completed" and completed["content"] == "no match" and completed["isError"]


def test_the_text_collector_keeps_the_streamed_text_and_nothing_else() -> None:
    async def main() -> list[str]:
        collector = TextCollector()
        call = ToolCall("c1", "grep", {})
        await collector.delta("one ")
        await collector.message("ignored", (call,), None, False)
        await collector.tool_started(call)
        await collector.tool_completed(call, ToolOutcome("ignored too"))
        await collector.delta("two")
        return collector.parts

    assert asyncio.run(main()) == ["one ", "two"]
