"""The approval desk, driven in memory: the kernel asks, the shell is shown the exact action, a person decides."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import NOT_FOUND, JsonRpcError
from tests.support.memory_host import MemoryHost


def _reader(path: Path) -> dict[str, Any]:
    """A scripted agent that reads `path` (outside its data dir, so it asks) and then says what it got."""
    rules = [
        {"match": "^read$", "on": "user", "toolCalls": [{"name": "read_file", "arguments": {"path": str(path)}}]},
        {"match": "(?s)^(.*)$", "on": "tool", "reply": r"tool said: \1"},
    ]
    return {"model": {"provider": "scripted", "rules": rules}}


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside.txt"
    outside.write_text("the outside text", encoding="utf-8")
    return tmp_path / "data", outside


async def _asked_to_read(host: MemoryHost, outside: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ann asks to read `outside`: her `agent.send` answer and the pending `agent.tool` question."""
    await host.call("agent.create", {"name": "ann", "settings": _reader(outside)})
    sent = await host.call("agent.send", {"agentId": "ann", "text": "read"})
    pending = await host.wait_for("agent.tool", lambda p: p["runId"] == sent["runId"] and p["status"] == "pending")
    return sent, pending


@pytest.mark.parametrize(("decision", "allowed"), [("allow_once", True), ("deny", False)])
def test_a_pending_read_names_its_action_and_target_and_the_answer_decides(
    tmp_path: Path, decision: str, allowed: bool
) -> None:
    data, outside = _setup(tmp_path)

    async def main() -> None:
        async with MemoryHost(data) as host:
            sent, pending = await _asked_to_read(host, outside)
            assert pending["action"] == "read" and pending["target"] == str(outside)
            params = {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": decision}
            assert await host.call("agent.decideTool", params) == {"accepted": True}
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            text = host.texts("ann", sent["runId"])
            assert ("the outside text" in text) is allowed

    asyncio.run(main())
    assert not (data / "agents/ann/tool-approvals.json").exists(), "a once-answer is not remembered"


def test_an_always_answer_is_remembered_and_not_asked_again(tmp_path: Path) -> None:
    data, outside = _setup(tmp_path)

    async def main() -> None:
        async with MemoryHost(data) as host:
            sent, pending = await _asked_to_read(host, outside)
            params = {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": "allow_always"}
            await host.call("agent.decideTool", params)
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            again = await host.send_and_wait("ann", "read")
            assert "the outside text" in host.texts("ann", again["runId"])
            asked = [p for m, p in host.events if m == "agent.tool" and p["status"] == "pending"]
            assert len(asked) == 1

    asyncio.run(main())
    remembered = (data / "agents/ann/tool-approvals.json").read_text(encoding="utf-8")
    assert str(outside) in remembered and '"allow"' in remembered


def test_a_run_cancelled_while_a_question_is_open_answers_it_deny_and_a_late_decision_is_not_found(
    tmp_path: Path,
) -> None:
    data, outside = _setup(tmp_path)

    async def main() -> None:
        async with MemoryHost(data) as host:
            sent, pending = await _asked_to_read(host, outside)
            await host.call("agent.cancel", {"agentId": "ann"})
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert ended["reason"] == "cancelled"
            with pytest.raises(JsonRpcError) as late:
                params = {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": "allow_once"}
                await host.call("agent.decideTool", params)
            assert late.value.code == NOT_FOUND
            assert "the outside text" not in host.texts("ann", sent["runId"])

    asyncio.run(main())
    assert "the outside text" not in (data / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
