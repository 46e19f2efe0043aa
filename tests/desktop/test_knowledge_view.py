"""The shell's Knowledge view driven by Pilot against a real host (issue 26): a person admits a folder, sees
its sources and the file that could not be read, searches it and sees why a passage matched, pauses the
source and removes it after a confirmation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable, Input, Label

from desktop.shell import HearthApp
from desktop.shell.knowledge_view import KnowledgeView
from tests.desktop.pilot import TOOLS, type_text, until
from tests.support.documents import write_corpus
from tests.support.host_process import HostProcess

SIZE = (140, 44)


def test_a_person_admits_searches_pauses_and_removes_a_folder_in_the_knowledge_view(tmp_path: Path) -> None:
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "docs")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 no")

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "Ann", "settings": TOOLS})
            app = HearthApp(data)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: app.current == "ann")
                await pilot.press("f9")
                view = app.query_one(KnowledgeView)
                await pilot.press("ctrl+o")
                await until(pilot, lambda: app.screen.query("#text").first(Input) is not None)
                app.screen.query_one("#text", Input).value = str(docs)
                await pilot.press("enter")
                await until(pilot, lambda: [s["state"] for s in view.sources.values()] == ["ready"], timeout=60)
                [source] = view.sources.values()
                assert source["files"] == 3 and [f["path"] for f in source["failed"]] == [str(docs / "broken.pdf")]
                state = str(app.query_one("#knowledge-state").render())
                assert "1 source(s)" in state
                app.query_one("#knowledge-query", Input).focus()
                await type_text(pilot, "quillfeather brush")
                await pilot.press("enter")
                await until(pilot, lambda: bool(view.hits))
                [hit] = view.hits.values()
                assert hit["citation"] == f"{docs / 'manual.html'}:8-9"
                await until(
                    pilot, lambda: "why: words #1 (quillfeather, brush)" in str(app.query_one("#passage").render())
                )
                app.query_one("#sources", DataTable).focus()
                await pilot.press("p")
                await until(pilot, lambda: [s["state"] for s in view.sources.values()] == ["paused"])
                await pilot.press("d")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                question = str(app.screen.query_one(".dialog-question", Label).render())
                assert question.startswith(f"Remove {docs}?")
                await pilot.press("n")
                await until(pilot, lambda: not app.screen.query("#yes"))
                assert len((await host.call("knowledge.list", {"agentId": "ann"}))["sources"]) == 1
                await pilot.press("d")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                await pilot.press("y")
                await until(pilot, lambda: not view.sources)
            assert (await host.call("knowledge.list", {"agentId": "ann"}))["sources"] == []

    asyncio.run(main())
