"""The run methods through the host's RPC layer, in memory: send answers with the stored seq, cancel, decide."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from protocol.errors import INVALID_PARAMS, NOT_FOUND, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

ECHO = {"match": r"^say (.*)$", "reply": r"\1"}


def test_send_answers_with_the_seq_of_the_stored_user_message(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            first = await host.call("agent.send", {"agentId": "ann", "text": "say one"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == first["runId"])
            second = await host.call("agent.send", {"agentId": "ann", "text": "say two"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == second["runId"])
            assert first["seq"] == 1 and second["seq"] > first["seq"] and first["runId"] != second["runId"]

    asyncio.run(main())
    events = [json.loads(line) for line in (tmp_path / "agents/ann/transcript.jsonl").read_text().splitlines()]
    users = {e["seq"]: e["text"] for e in events if e["type"] == "user"}
    assert users == {1: "say one", 5: "say two"}


def test_bad_run_params_are_invalid_and_write_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            for params in ({"agentId": "ann"}, {"agentId": "ann", "text": 5}, {"text": "hi"}):
                with pytest.raises(JsonRpcError) as bad:
                    await host.call("agent.send", params)
                assert bad.value.code == INVALID_PARAMS
            with pytest.raises(JsonRpcError) as undecided:
                params = {"agentId": "ann", "toolCallId": "call-x", "decision": "allow_once"}
                await host.call("agent.decideTool", params)
            assert undecided.value.code == NOT_FOUND
            with pytest.raises(JsonRpcError) as bad_decision:
                params = {"agentId": "ann", "toolCallId": "call-x", "decision": "maybe"}
                await host.call("agent.decideTool", params)
            assert bad_decision.value.code == INVALID_PARAMS

    asyncio.run(main())
    assert not (tmp_path / "agents/ann/transcript.jsonl").exists() or not (
        tmp_path / "agents/ann/transcript.jsonl"
    ).read_text(encoding="utf-8")
