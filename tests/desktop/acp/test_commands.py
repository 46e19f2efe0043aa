"""The slash commands: each is one memory call, a refusal is the reply, anything else is a message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from desktop.acp.commands import COMMANDS, run_command
from protocol.errors import CONNECTION_CLOSED, SENSITIVE_CONTENT, ConnectionClosedError, JsonRpcError

ID = "m-0123456789ab"
RECORD = {"id": "m-0123456789ab", "seq": 1, "op": "assert", "source": "human", "observedAt": "2026-01-01T00:00:00Z",
          "trust": "confirmed", "status": "live", "text": "The user likes tea."}  # fmt: skip


class Host:
    def __init__(self, fail: JsonRpcError | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail = fail

    async def call(self, method: str, params: dict[str, Any], result_type: Any = None) -> Any:
        self.calls.append((method, params))
        if self.fail is not None:
            raise self.fail
        if method == "memory.list":
            return {"records": [RECORD], "conflicts": []}
        if method == "memory.explain":
            evidence = {"seq": 3, "type": "user", "speaker": "user", "text": "I like tea"}
            return {"record": RECORD, "evidenceLine": evidence, "history": [RECORD], "summary": "The user said so."}
        return {"outcome": "recorded", "record": RECORD}


def _run(host: Host, text: str) -> str | None:
    return asyncio.run(run_command(host, "ann", text))  # the commands need only `call` of a host link


def test_the_commands_offered_are_the_five_memory_acts() -> None:
    assert [command.name for command in COMMANDS] == ["remember", "forget", "memory", "review", "why"]


@pytest.mark.parametrize(
    ("text", "method", "params"),
    [
        ("/remember The user likes tea.", "memory.note", {"agentId": "ann", "text": "The user likes tea."}),
        (f"/forget {ID} wrong", "memory.retract", {"agentId": "ann", "recordId": ID, "reason": "wrong"}),
        ("/memory", "memory.list", {"agentId": "ann", "view": "current"}),
        ("/review", "memory.list", {"agentId": "ann", "view": "proposed"}),
        (f"/review {ID} reject", "memory.review", {"agentId": "ann", "recordId": ID, "decision": "reject"}),
        (f"/why {ID}", "memory.explain", {"agentId": "ann", "recordId": ID}),
    ],
)  # fmt: skip
def test_each_command_is_answered_by_the_memory_methods(text: str, method: str, params: dict[str, Any]) -> None:
    host = Host()
    reply = _run(host, text)
    assert host.calls[0] == (method, params)
    assert all(called.startswith("memory.") for called, _ in host.calls)
    assert reply is not None and reply != ""


def test_why_tells_the_facts_source_and_history() -> None:
    reply = _run(Host(), f"/why {ID}")
    assert reply is not None
    assert reply.splitlines()[1:3] == ["The user said so.", "it rests on #3, user: I like tea"]


def test_text_that_is_no_command_goes_to_the_agent_and_calls_nothing() -> None:
    host = Host()
    for text in ("remember to buy milk", "/deploy now", "hello"):
        assert _run(host, text) is None
    assert host.calls == []


def test_a_bad_use_is_answered_with_its_usage_and_calls_nothing() -> None:
    host = Host()
    assert _run(host, "/remember") == "Usage: /remember TEXT"
    assert _run(host, "/review m-0123456789ab maybe") == "Usage: /review, or /review ID confirm|reject"
    assert host.calls == []


def test_a_refusal_is_the_reply_but_a_lost_host_is_an_error() -> None:
    refused = Host(JsonRpcError("that looks like a password", code=SENSITIVE_CONTENT))
    assert _run(refused, "/remember my password is hunter2") == "Not done: that looks like a password"
    with pytest.raises(ConnectionClosedError) as caught:
        _run(Host(ConnectionClosedError("host: connection closed")), "/memory")
    assert caught.value.code == CONNECTION_CLOSED
