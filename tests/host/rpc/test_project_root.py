"""A message's project root (`agent.send` `projectRoot`), in memory: the run may read it without asking, a run
without one may not, and a root that cannot be one is refused before anything is written or queued."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from host.together.inbox import Inbox, InboxItem
from protocol.errors import INVALID_PARAMS, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

READ = {"match": r"^read (\S+)$", "on": "user", "toolCalls": [{"name": "read_file", "arguments": {"path": r"\1"}}]}
SAID = {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"tool said: \1"}


def test_a_run_reads_its_project_root_without_asking_and_a_run_without_one_asks(tmp_path: Path) -> None:
    data, project = tmp_path / "data", tmp_path / "project"
    project.mkdir()
    (project / "plan.txt").write_text("the project plan", encoding="utf-8")

    async def main() -> None:
        async with MemoryHost(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(READ, SAID)})
            params: dict[str, Any] = {"agentId": "ann", "text": f"read {project}/plan.txt"}
            opened = await host.call("agent.send", {**params, "projectRoot": str(project)})
            await host.wait_for("agent.ended", lambda p: p["runId"] == opened["runId"])
            assert "the project plan" in host.texts("ann", opened["runId"])
            closed = await host.call("agent.send", params)
            pending = await host.wait_for("agent.tool", lambda p: p["status"] == "pending")
            assert pending["runId"] == closed["runId"] and pending["target"] == f"{project}/plan.txt"
            decision = {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": "deny"}
            await host.call("agent.decideTool", decision)
            await host.wait_for("agent.ended", lambda p: p["runId"] == closed["runId"])
            assert "the project plan" not in host.texts("ann", closed["runId"])

    asyncio.run(main())


def test_a_project_root_that_cannot_be_one_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    data, elsewhere = tmp_path / "data", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file.txt").write_text("x", encoding="utf-8")

    async def main() -> None:
        async with MemoryHost(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(READ, SAID)})
            bad = [
                "relative/dir",
                str(tmp_path / "missing"),
                str(elsewhere / "file.txt"),
                "/",
                "/proc",
                str(data),
                str(data / "agents/ann/scratch"),
                str(tmp_path),
            ]
            for root in bad:
                with pytest.raises(JsonRpcError) as refused:
                    await host.call("agent.send", {"agentId": "ann", "text": "read x", "projectRoot": root})
                assert refused.value.code == INVALID_PARAMS, root
            kept = await host.call("agent.send", {"agentId": "ann", "text": "read x", "projectRoot": str(elsewhere)})
            await host.wait_for("agent.ended", lambda p: p["runId"] == kept["runId"])

    asyncio.run(main())
    transcript = (data / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
    assert transcript.count('"type":"user"') == 1, "only the message with a good root was written"


def test_a_waiting_message_keeps_its_project_root_in_the_inbox_file(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    inbox.write(inbox.pushed(InboxItem("run-1", "user", "read it", project_root="/home/p/proj")))
    inbox.write(inbox.pushed(InboxItem("run-2", "user", "no project")))
    again = Inbox(tmp_path / "inbox.json")
    assert [(item.run_id, item.project_root) for item in again.items] == [("run-1", "/home/p/proj"), ("run-2", None)]
