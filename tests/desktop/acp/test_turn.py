"""Following one run: the stream reaches the editor in order, each approval becomes a permission question whose
answer is the matching Hearth decision, and a question still open when the run ends is dropped."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from desktop.acp.events import Followed, HostGone
from desktop.acp.turn import PERMISSION_OPTIONS, TurnFollower, decision_for
from protocol.errors import CONNECTION_CLOSED, NOT_FOUND, ConnectionClosedError, JsonRpcError
from protocol.models.host import AgentDeltaEvent, AgentEndedEvent, AgentMessageEvent, AgentToolEvent
from protocol.models.transcript import AssistantEvent, UsageInfo


def _chosen(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))


@pytest.mark.parametrize(
    ("option_id", "decision"),
    [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "deny"),
        ("reject_always", "deny_always"),
    ],
)
def test_each_option_is_a_persisted_hearth_decision(option_id: str, decision: str) -> None:
    assert decision_for(_chosen(option_id)) == decision
    assert option_id in [option.option_id for option in PERMISSION_OPTIONS]


def test_a_cancelled_question_or_an_unknown_option_refuses() -> None:
    assert decision_for(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))) == "deny"
    assert decision_for(_chosen("allow_forever")) == "deny"


class Editor:
    def __init__(self, answer: str | None, hold: asyncio.Event | None = None) -> None:
        self.answer, self.hold = answer, hold
        self.updates: list[dict[str, Any]] = []
        self.asked: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.asked.append(tool_call.title)
        if self.hold is not None:
            await self.hold.wait()
        return _chosen(self.answer or "reject_once")


class Host:
    def __init__(self, answered: asyncio.Event | None = None, late: bool = False) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answered, self.late = answered, late

    async def call(self, method: str, params: dict[str, Any], result_type: Any = None) -> Any:
        self.calls.append((method, params))
        if self.answered is not None:
            self.answered.set()
        if self.late:
            raise JsonRpcError("no tool call awaits a decision", code=NOT_FOUND)
        return {"accepted": True}


def _tool(status: str, **extra: Any) -> AgentToolEvent:
    return AgentToolEvent(agent_id="ann", run_id="r1", tool_call_id="c1", name="write_file", status=status, **extra)


def _ended(run_id: str = "r1") -> AgentEndedEvent:
    return AgentEndedEvent(agent_id="ann", run_id=run_id, reason="idle", stop_reason="end_turn")


def _follow(editor: Editor, host: Host, events: list[Followed], feed_later: list[Followed] | None = None) -> Any:
    async def main() -> Any:
        queue: asyncio.Queue[Followed] = asyncio.Queue()
        for event in events:
            queue.put_nowait(event)
        follower = TurnFollower(editor, host, "ann", "ann", 8192)
        following = asyncio.create_task(follower.follow(queue, "r1"))
        if feed_later is not None:
            assert host.answered is not None
            await asyncio.wait_for(host.answered.wait(), 5)
            for event in feed_later:
                queue.put_nowait(event)
        async with asyncio.timeout(5):
            return await following

    return asyncio.run(main())


def test_the_runs_stream_is_shown_in_order_and_other_runs_are_not() -> None:
    editor, host = Editor(answer=None), Host()
    usage = UsageInfo(input_tokens=100, output_tokens=20)
    events: list[Followed] = [
        AgentDeltaEvent(agent_id="ann", run_id="r0", text="another run's text"),
        AgentDeltaEvent(agent_id="ann", run_id="r1", text="Hel"),
        AgentDeltaEvent(agent_id="ann", run_id="r1", text="lo"),
        AgentMessageEvent(agent_id="ann", run_id="r1", message=AssistantEvent(run_id="r1", text="Hello", usage=usage)),
        _tool("started", arguments={"path": "/p/x", "content": "x"}),
        _tool("completed", content="wrote 1 bytes"),
        _ended("r0"),
        _ended(),
    ]
    ended = _follow(editor, host, events)
    assert ended.run_id == "r1" and ended.stop_reason == "end_turn"
    assert [u["sessionUpdate"] for u in editor.updates] == [
        "agent_message_chunk",
        "agent_message_chunk",
        "usage_update",
        "tool_call",
        "tool_call_update",
    ]
    assert editor.updates[2]["used"] == 120 and editor.updates[2]["size"] == 8192
    assert editor.updates[4]["content"][0]["type"] == "diff", "the completed write kept its started arguments"


def test_an_approval_asks_the_editor_and_sends_its_answer_to_the_host() -> None:
    answered = asyncio.Event()
    editor, host = Editor(answer="allow_always"), Host(answered)
    started = _tool("started", arguments={"path": "/p/x", "content": "x"})
    pending = _tool("pending", action="write", target="/p/x", content="write /p/x")
    _follow(editor, host, [started, pending], feed_later=[_ended()])
    assert editor.asked == ["Write /p/x"]
    assert host.calls == [("agent.decideTool", {"agentId": "ann", "toolCallId": "c1", "decision": "allow_always"})]


def test_an_answer_that_comes_after_the_run_ended_is_dropped_quietly() -> None:
    answered = asyncio.Event()
    editor, host = Editor(answer="allow_once"), Host(answered, late=True)
    _follow(editor, host, [_tool("pending", action="write", target="/p/x")], feed_later=[_ended()])
    assert host.calls[0][1]["decision"] == "allow_once"


def test_a_question_still_open_when_the_run_ends_sends_no_decision() -> None:
    editor, host = Editor(answer="allow_once", hold=asyncio.Event()), Host()
    ended = _follow(editor, host, [_tool("pending", action="write", target="/p/x"), _ended()])
    assert ended.run_id == "r1" and host.calls == []


def test_a_lost_host_ends_the_follow_with_connection_closed() -> None:
    with pytest.raises(ConnectionClosedError) as caught:
        _follow(Editor(answer=None), Host(), [HostGone("the host closed the connection")])
    assert caught.value.code == CONNECTION_CLOSED
