"""Issue 24: memory over months, through the real host and kernel with a scripted model.

Old log entries reach the model through summaries of their spans, and an erase rebuilds the summary
without the erased entry (no byte of it left under the data dir) while the entry beside it stays quoted.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from tests.e2e.test_memory_erase import holders
from tests.support.fake_model import ChatServer, model_settings, say, system_text
from tests.support.host_process import HostProcess

OLD_TRIP = "Went hiking on Mount Tamalpais with Ines."
OLD_MEAL = "Cooked saffron risotto for the neighbours."
RECENT = "Booked the dentist for Friday."


def summary_lines(system: str) -> list[str]:
    return [line for line in system.splitlines() if re.match(r"^- \[s-\d{8}-\d+d\] ", line)]


def test_an_erased_log_entry_leaves_its_summary_and_every_file_while_its_neighbour_stays_summarised(
    tmp_path: Path,
) -> None:
    server = ChatServer(otherwise=say("ok"))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            ids = {}
            for text, day in ((OLD_TRIP, "2025-03-10"), (OLD_MEAL, "2025-03-11"), (RECENT, None)):
                params = {"agentId": "ann", "text": text, "tier": "log"} | ({"validFrom": day} if day else {})
                ids[text] = (await host.call("memory.note", params))["record"]["id"]
            await host.idle_turn("ann", "Hello there")
            system = system_text(server.requests[-1].body)
            (summary,) = [line for line in summary_lines(system) if OLD_TRIP in line]
            assert OLD_MEAL in summary and ids[OLD_TRIP] in summary, summary
            assert f"- [{ids[RECENT]}] {RECENT}" in system, "a recent entry is shown in full"
            assert f"- [{ids[OLD_TRIP]}] {OLD_TRIP}" not in system, "an old one only through its summary"
            erased = await host.call("memory.erase", {"agentId": "ann", "recordId": ids[OLD_TRIP]})
            assert erased["outcome"] == "erased"
            await host.idle_turn("ann", "Anything else?")
            system = system_text(server.requests[-1].body)
            (summary,) = [line for line in summary_lines(system) if OLD_MEAL in line]
            assert "Tamalpais" not in system and ids[OLD_TRIP] not in summary, summary
            assert "1 log entry" in summary, "the summary was rebuilt from the entries that stand"

    try:
        asyncio.run(main())
    finally:
        server.stop()
    data = tmp_path / "data"
    assert holders(data, b"Tamalpais") == [], "no summary row, frozen prompt or other file keeps it"
    assert holders(data, OLD_MEAL.encode()) != []
