"""Memory through the real host: a SIGKILL mid-burst, a person editing MEMORY.md, and erase."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from protocol.errors import JsonRpcError
from tests.support.host_process import HostProcess, scripted_model

ECHO = {"match": ".*", "reply": "ok"}


def test_killing_the_host_mid_burst_loses_no_acknowledged_memory_write(tmp_path: Path) -> None:
    acknowledged: list[str] = []

    async def burst() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            enough = asyncio.Event()

            async def note(i: int) -> None:
                try:
                    result = await host.call("memory.note", {"agentId": "ann", "text": f"Fact number {i} is true."})
                except JsonRpcError:
                    return
                acknowledged.append(result["record"]["id"])
                if len(acknowledged) >= 40:
                    enough.set()

            writers = [asyncio.create_task(note(i)) for i in range(400)]
            async with asyncio.timeout(60):
                await enough.wait()
            assert host.process is not None
            os.kill(host.process.pid, signal.SIGKILL)
            await asyncio.gather(*writers)

    asyncio.run(burst())
    assert len(acknowledged) >= 40

    async def check() -> dict[str, Any]:
        async with HostProcess(tmp_path) as host:
            listing = await host.call("memory.list", {"agentId": "ann", "view": "all"})
            ids = {record["id"] for record in listing["records"]}
            missing = [i for i in acknowledged if i not in ids]
            assert missing == [], f"{len(missing)} acknowledged writes were lost"
            result: dict[str, Any] = await host.call("memory.verify", {"agentId": "ann"})
            return result

    report = asyncio.run(check())
    assert report["ok"] is True and report["count"] >= len(acknowledged)


def test_a_persons_edit_of_memory_md_is_imported_as_a_human_event(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            await host.call("memory.note", {"agentId": "ann", "text": "The user likes green tea."})
            view_path = tmp_path / "agents/ann/memory/MEMORY.md"
            view = view_path.read_text(encoding="utf-8")
            assert "green tea" in view
            seen = len(host.events)
            view_path.write_text(view.replace("## Notes\n", "## Notes\n\n- The user plays the cello.\n"), "utf-8")
            await host.wait_for("memory.changed", lambda p: p["agentId"] == "ann", after=seen)
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            texts = {r["text"]: r for r in current["records"]}
            assert texts["The user plays the cello."]["source"] == "human"
            assert texts["The user likes green tea."]["source"] == "human"
            history = await host.call("memory.history", {"agentId": "ann"})
            assert len(history["records"]) == 2, "the host's own rewrite of MEMORY.md was not taken for an edit"

    asyncio.run(main())


def test_erase_removes_the_text_from_every_derived_file_and_the_chain_still_verifies(tmp_path: Path) -> None:
    secret_text = "The user's childhood nickname was Bumblebee."

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            noted = await host.call("memory.note", {"agentId": "ann", "text": secret_text})
            await host.call("memory.note", {"agentId": "ann", "text": "The user lives near the sea."})
            await host.send_and_wait("ann", "hello")
            assert "Bumblebee" in (tmp_path / "agents/ann/prompt-cache.json").read_text(encoding="utf-8")
            record_id = noted["record"]["id"]
            await host.call("memory.erase", {"agentId": "ann", "recordId": record_id, "reason": "asked to"})
            report = await host.call("memory.verify", {"agentId": "ann"})
            assert report["ok"] is True
            history = await host.call("memory.history", {"agentId": "ann", "recordId": record_id})
            assert [r["op"] for r in history["records"]][-1] == "erase"
            await host.send_and_wait("ann", "hello again")

    asyncio.run(main())
    agent_dir = tmp_path / "agents/ann"
    for path in [agent_dir / "prompt-cache.json", *sorted((agent_dir / "memory").iterdir())]:
        if path.is_file():
            assert b"Bumblebee" not in path.read_bytes(), f"{path.name} still holds the erased text"
    assert b"near the sea" in (agent_dir / "memory/ledger.jsonl").read_bytes()
    assert "near the sea" in (agent_dir / "prompt-cache.json").read_text(encoding="utf-8")
