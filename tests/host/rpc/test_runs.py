"""The run methods through the host's RPC layer, in memory: send answers with the stored seq, cancel, decide."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

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
    assert users == {1: "say one", 6: "say two"}  # each run writes its receipt too


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


def _note(match: str, text: str) -> dict[str, Any]:
    return {"match": match, "on": "user", "toolCalls": [{"name": "memory_note", "arguments": {"text": text}}]}


def test_an_attached_file_is_kept_apart_reaches_the_model_as_file_content_and_a_fact_on_it_is_proposed(
    tmp_path: Path,
) -> None:
    """Issue 21.7: an attachment inlined in the message made the fact resting on it confirmed."""
    rules = [
        # Matches only when the model was given the file, fenced after the typed words.
        _note(r"(?s)^remember this\n\n\[Attached file file:///p/cv\.md.*\n```\nThe user's employer", "The user's "
              "employer is Attachco-X."),
        _note(r"^my employer is Typedco$", "The user's employer is Typedco."),
        {"match": r"(?s).*", "on": "tool", "reply": "noted"},
    ]  # fmt: skip
    attached = [{"uri": "file:///p/cv.md", "text": "The user's employer is Attachco-X."}]

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
            with pytest.raises(JsonRpcError) as empty:
                await host.call("agent.send", {"agentId": "ann", "text": ""})
            assert empty.value.code == INVALID_PARAMS
            for params in (
                {"agentId": "ann", "text": "remember this", "attachments": attached},
                {"agentId": "ann", "text": "", "attachments": attached},
            ):
                sent = await host.call("agent.send", params)
                await host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r)
            proposed = await host.call("memory.list", {"agentId": "ann", "view": "proposed"})
            assert [r["text"] for r in proposed["records"]] == ["The user's employer is Attachco-X."]
            sent = await host.call("agent.send", {"agentId": "ann", "text": "my employer is Typedco"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert [r["text"] for r in current["records"]] == ["The user's employer is Typedco."]

    asyncio.run(main())
    events = [json.loads(line) for line in (tmp_path / "agents/ann/transcript.jsonl").read_text().splitlines()]
    users = [(e["text"], e.get("attachments")) for e in events if e["type"] == "user"]
    assert users == [("remember this", attached), ("", attached), ("my employer is Typedco", None)]
