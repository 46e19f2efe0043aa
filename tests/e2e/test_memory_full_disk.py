"""Issue 11.3 through the real host on a small tmpfs: a full disk never costs an acknowledged note.

A note refused for want of space leaves no fragment (the next note is not appended to one, and a restart
finds every acknowledged note); a note whose ledger append succeeded is acknowledged even though the view
and the index could not be written (no inode left for their temporary files).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from protocol.errors import STORAGE_FAILED, JsonRpcError
from tests.support.host_process import HostProcess
from tests.support.small_disk import fill, small_tmpfs

LONG = "The user keeps a garden diary in which every entry describes the weather and the roses. " * 44


def fill_inodes(directory: Path) -> list[Path]:
    made: list[Path] = []
    with contextlib.suppress(OSError):
        while True:
            path = directory / f"inode-{len(made)}"
            path.touch()
            made.append(path)
    return made


async def texts(host: HostProcess) -> list[str]:
    listing = await host.call("memory.list", {"agentId": "ann", "view": "current"})
    return [record["text"] for record in listing["records"]]


def test_a_note_refused_by_a_full_disk_leaves_no_fragment_and_loses_nothing(tmp_path: Path) -> None:
    assert len(LONG) < 4000
    with small_tmpfs(tmp_path / "data", "size=6m,mode=0700") as data:

        async def main() -> None:
            async with HostProcess(data) as host:
                await host.call("agent.create", {"name": "ann"})
                await host.call("memory.note", {"agentId": "ann", "text": "The user likes tea."})
                ledger = data / "agents/ann/memory/ledger.jsonl"
                size = ledger.stat().st_size
                filler = fill(data / "filler")
                with pytest.raises(JsonRpcError) as refused:
                    await host.call("memory.note", {"agentId": "ann", "text": LONG})
                assert refused.value.code == STORAGE_FAILED
                assert ledger.stat().st_size == size, "the failed append was cut back"
                filler.unlink()
                await host.call("memory.note", {"agentId": "ann", "text": "The user likes rain."})
            async with HostProcess(data) as host:
                assert await texts(host) == ["The user likes tea.", "The user likes rain."]
                assert (await host.call("memory.verify", {"agentId": "ann"}))["ok"]
            for line in (data / "agents/ann/memory/ledger.jsonl").read_bytes().splitlines():
                json.loads(line)

        asyncio.run(main())


def test_a_note_whose_ledger_append_succeeded_is_acknowledged_though_the_view_cannot_be_written(
    tmp_path: Path,
) -> None:
    with small_tmpfs(tmp_path / "data", "size=16m,nr_inodes=400,mode=0700") as data:

        async def main() -> None:
            async with HostProcess(data) as host:
                await host.call("agent.create", {"name": "ann"})
                await host.call("memory.note", {"agentId": "ann", "text": "The user likes tea."})
                fillers = fill_inodes(data)
                assert fillers
                done = await host.call("memory.note", {"agentId": "ann", "text": "The user likes rain."})
                assert done["outcome"] == "recorded"
                for path in fillers:
                    path.unlink()
                await host.call("memory.note", {"agentId": "ann", "text": "The user likes jazz."})
                view = (data / "agents/ann/memory/MEMORY.md").read_text(encoding="utf-8")
                assert "The user likes rain." in view and "The user likes jazz." in view
            async with HostProcess(data) as host:
                assert await texts(host) == ["The user likes tea.", "The user likes rain.", "The user likes jazz."]
                assert (await host.call("memory.verify", {"agentId": "ann"}))["ok"]

        asyncio.run(main())
