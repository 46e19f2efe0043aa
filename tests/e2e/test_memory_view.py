"""Issue 11.2 through the real host: a person's MEMORY.md edit is never lost, nothing is retracted that nobody
removed, and a file that does not parse is kept aside without stopping the watch of any agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scripts.memory_view_figures import edits_among_notes, kills_mid_write
from tests.support.host_process import HostProcess


def test_hand_edits_among_arriving_notes_and_turns_are_all_kept_once(tmp_path: Path) -> None:
    counts = asyncio.run(edits_among_notes(tmp_path, edits=15, notes=60, turns=3))
    assert (counts.lost, counts.duplicated, counts.unasked_retractions) == (0, 0, 0)


def test_hosts_killed_mid_write_past_the_view_window_retract_nothing_and_lose_no_acknowledged_note(
    tmp_path: Path,
) -> None:
    counts = asyncio.run(kills_mid_write(tmp_path, cycles=3, base_notes=510))
    assert counts.acknowledged > 510
    assert (counts.unasked_retractions, counts.missing_acknowledged) == (0, 0)


def test_a_binary_view_is_kept_aside_the_person_is_told_and_the_watch_goes_on_for_everyone(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name})
                await host.call("memory.note", {"agentId": name, "text": f"The user told {name} about the lake."})
            ann_view = tmp_path / "agents/ann/memory/MEMORY.md"
            ann_view.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
            told = await host.wait_for("memory.viewSetAside", lambda p: p["agentId"] == "ann")
            assert (tmp_path / "agents/ann/memory" / told["keptAs"]).read_bytes().startswith(b"\x89PNG")
            listing = await host.call("memory.list", {"agentId": "ann"})
            assert [r["text"] for r in listing["records"]] == ["The user told ann about the lake."]
            assert "about the lake" in ann_view.read_text(encoding="utf-8")

            bob_view = tmp_path / "agents/bob/memory/MEMORY.md"
            after = len(host.events)
            text = bob_view.read_text(encoding="utf-8")
            bob_view.write_text(
                text.replace("## Notes\n\n", "## Notes\n\n- The user swims at dawn.\n"), encoding="utf-8"
            )
            await host.wait_for("memory.changed", lambda p: p["agentId"] == "bob", after=after)
            listing = await host.call("memory.list", {"agentId": "bob"})
            assert "The user swims at dawn." in [r["text"] for r in listing["records"]]
            history = await host.call("memory.history", {"agentId": "ann"})
            assert not [r for r in history["records"] if r["op"] == "retract"]

    asyncio.run(main())
