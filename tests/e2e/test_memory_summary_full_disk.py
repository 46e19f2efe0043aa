"""Issue 24: the disk fills up just as a summary of old log entries is built again, through the real host.

An erase drops the summary of its span; the agent's memory lives on a small tmpfs (mounted on its memory
directory, so the turn's own transcript lines still fit) that is full when the next turn's section builds the
summary again. The turn still gets its section (the summary rendered, not kept), which quotes the entry beside
the erased one and nothing of the erased one; no acknowledged record is lost; once there is room again the
next rendering keeps the summary row.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

from tests.e2e.test_memory_erase import holders
from tests.e2e.test_memory_lifecycle import OLD_MEAL, OLD_TRIP, RECENT, summary_lines
from tests.support.fake_model import ChatServer, model_settings, say, system_text
from tests.support.host_process import HostProcess
from tests.support.small_disk import fill, small_tmpfs

TEA = "The user likes green tea."


def _summary_rows(memory: Path) -> list[tuple[str, str]]:
    """The summary rows the index keeps: (span id, text)."""
    with sqlite3.connect(f"file:{memory / 'index.sqlite'}?mode=ro", uri=True) as db:
        return [(str(r[0]), str(r[1])) for r in db.execute("SELECT id, text FROM summaries ORDER BY id")]


def test_a_full_disk_as_a_summary_is_rebuilt_still_gives_the_turn_its_section_and_keeps_every_record(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    memory = data / "agents/ann/memory"
    server = ChatServer(otherwise=say("ok"))
    server.start()

    async def write_the_log() -> dict[str, str]:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server, extraction="off")})
            ids = {}
            for text, day in ((OLD_TRIP, "2025-03-10"), (OLD_MEAL, "2025-03-11"), (RECENT, None)):
                params = {"agentId": "ann", "text": text, "tier": "log"} | ({"validFrom": day} if day else {})
                ids[text] = (await host.call("memory.note", params))["record"]["id"]
            return ids

    async def fill_at_the_rebuild(ids: dict[str, str]) -> tuple[str, int | None]:
        async with HostProcess(data, stderr_to=tmp_path / "host.log") as host:
            await host.idle_turn("ann", "Hello there")
            kept = _summary_rows(memory)
            assert len(kept) == 1 and OLD_TRIP in kept[0][1], "the first rendering kept the summary"
            erased = await host.call("memory.erase", {"agentId": "ann", "recordId": ids[OLD_TRIP]})
            assert erased["outcome"] == "erased"
            assert _summary_rows(memory) == [], "the erase dropped its span's summary"
            fill(memory / "filler")
            await host.idle_turn("ann", "Anything else?")
            full = system_text(server.requests[-1].body)
            assert _summary_rows(memory) == [], "no room: the summary was rendered, not kept"
            listing = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert sorted(r["text"] for r in listing["records"]) == sorted([OLD_MEAL, RECENT])
        # It stops with the disk still full: the use counts it could not write wait, nothing fails.
        assert host.process is not None
        return full, host.process.returncode

    async def room_again() -> str:
        async with HostProcess(data, stderr_to=tmp_path / "host.log") as host:
            # A new fact moves the epoch, and the next rendering keeps the summary.
            await host.call("memory.note", {"agentId": "ann", "text": TEA})
            await host.idle_turn("ann", "And now?")
            rows = _summary_rows(memory)
            assert len(rows) == 1 and OLD_MEAL in rows[0][1] and "Tamalpais" not in rows[0][1], rows
            listing = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert sorted(r["text"] for r in listing["records"]) == sorted([OLD_MEAL, RECENT, TEA])
            assert (await host.call("memory.verify", {"agentId": "ann"}))["ok"] is True
            return system_text(server.requests[-1].body)

    try:
        ids = asyncio.run(write_the_log())
        # The memory directory moves onto a 2 MiB file system of its own, with everything in it.
        aside = memory.with_name("memory.before")
        memory.rename(aside)
        with small_tmpfs(memory, "size=2m,mode=0700"):
            shutil.copytree(aside, memory, dirs_exist_ok=True)
            shutil.rmtree(aside)
            full, stopped = asyncio.run(fill_at_the_rebuild(ids))
            (memory / "filler").unlink()
            after = asyncio.run(room_again())
            left = holders(data, b"Tamalpais")
    finally:
        server.stop()
    for system in (full, after):
        (summary,) = summary_lines(system)
        assert OLD_MEAL in summary and ids[OLD_MEAL] in summary and "1 log entry" in summary, summary
        assert "Tamalpais" not in system and ids[OLD_TRIP] not in system
        assert f"- [{ids[RECENT]}] {RECENT}" in system
    assert stopped == 0, "a clean stop on the full disk"
    assert TEA in after
    assert left == [], "no file keeps the erased entry's text"
    assert "Traceback" not in (tmp_path / "host.log").read_text(encoding="utf-8")
