"""The shell's Knowledge view driven by Pilot against a real host (issue 26): a person admits a folder, sees
its sources and the file that could not be read, searches it and sees why a passage matched, pauses the
source and removes it after a confirmation; a Work's knowledge, opened from the Works view, is its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input, Label, TabbedContent

from desktop.shell import HearthApp
from desktop.shell.knowledge_view import KnowledgeOwner, KnowledgeView
from desktop.shell.works_view import WorksView
from tests.desktop.pilot import TOOLS, type_text, until
from tests.support.documents import write_corpus
from tests.support.host_process import HostProcess
from tests.support.knowledge_host import admit

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


def test_a_works_knowledge_is_opened_from_the_works_view_admitted_listed_and_searched_apart_from_the_agents(
    tmp_path: Path,
) -> None:
    """Issue 26: the view only ever named an agent; a Work's knowledge had no place in the shell."""
    data, mine, shared = tmp_path / "data", tmp_path / "mine", tmp_path / "shared"
    for folder, word in ((mine, "amaranth"), (shared, "bittern")):
        folder.mkdir()
        (folder / "note.md").write_text(f"# Note\n\nThe {word} is kept here.\n", encoding="utf-8")

    def titled() -> str:
        return str(app.query_one("#knowledge-owner").render())

    async def search(pilot: Any, query: str) -> None:
        app.query_one("#knowledge-query", Input).value = query
        app.query_one("#knowledge-query", Input).focus()
        await pilot.press("enter")

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "Ann", "settings": TOOLS})
            await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            [own] = await admit(host, {"agentId": "ann"}, str(mine))
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: app.current == "ann")
                await pilot.press("f9")
                view = app.query_one(KnowledgeView)
                await until(pilot, lambda: list(view.sources) == [own["sourceId"]])
                assert titled() == "Knowledge of Ann (ann)"
                await pilot.press("f7")
                await until(pilot, lambda: app.query_one(WorksView).current == "launch")
                assert app.active_bindings["k"].binding.description == "Work's knowledge"  # in the footer
                await pilot.press("k")
                await until(pilot, lambda: view.owner == KnowledgeOwner.work("launch", "Launch"))
                assert app.query_one("#main", TabbedContent).active == "knowledge"
                assert titled().startswith("Knowledge of the Work Launch (launch)")
                await until(pilot, lambda: "0 source(s)" in str(app.query_one("#knowledge-state").render()))
                assert view.sources == {}, "the agent's source is not the Work's"
                await pilot.press("ctrl+o")
                await until(pilot, lambda: app.screen.query("#text").first(Input) is not None)
                assert "the Work Launch's members" in str(app.screen.query_one(".dialog-question", Label).render())
                app.screen.query_one("#text", Input).value = str(shared)
                await pilot.press("enter")
                await until(pilot, lambda: [s["state"] for s in view.sources.values()] == ["ready"], timeout=60)
                [work_source] = view.sources.values()
                assert work_source["path"] == str(shared) and work_source["sourceId"] != own["sourceId"]
                # Only the Work's own `knowledge.progress` says it watches and has read a new file: the view
                # follows the Work on show.
                state = app.query_one("#knowledge-state")
                await until(pilot, lambda: "watching its folders" in str(state.render()), timeout=60)
                (shared / "more.md").write_text("# More\n\nThe heron came later.\n", encoding="utf-8")
                await until(pilot, lambda: [s["files"] for s in view.sources.values()] == [2], timeout=60)
                await search(pilot, "bittern")
                await until(pilot, lambda: bool(view.hits))
                assert [h["citation"] for h in view.hits.values()] == [f"{shared / 'note.md'}:3"]
                await search(pilot, "amaranth")
                await until(pilot, lambda: "Nothing matched 'amaranth'" in str(app.query_one("#passage").render()))
                assert view.hits == {}
                # F9 is the agent's knowledge again: its own source, not the Work's.
                await pilot.press("f9")
                await until(pilot, lambda: list(view.sources) == [own["sourceId"]])
                assert titled() == "Knowledge of Ann (ann)"
                await search(pilot, "bittern")
                await until(pilot, lambda: "Nothing matched 'bittern'" in str(app.query_one("#passage").render()))
                await search(pilot, "amaranth")
                await until(pilot, lambda: bool(view.hits))
                assert [h["citation"] for h in view.hits.values()] == [f"{mine / 'note.md'}:3"]
            work_listing = await host.call("knowledge.list", {"workId": "launch"})
            agent_listing = await host.call("knowledge.list", {"agentId": "ann"})
            assert [s["path"] for s in work_listing["sources"]] == [str(shared)]
            assert [s["path"] for s in agent_listing["sources"]] == [str(mine)]

    app = HearthApp(data)
    asyncio.run(main())


def test_an_agents_suggested_documents_are_listed_and_a_person_accepts_or_declines_each_in_the_view(
    tmp_path: Path,
) -> None:
    """Issue 26: an agent suggests a document; the view shows it with its reason, and only the person's
    `a` (after a confirmation) admits it, with add's checks; `x` declines."""
    data, garden = tmp_path / "data", tmp_path / "garden"
    garden.mkdir()
    note = garden / "lilies.md"
    note.write_text("# Lilies\n\nThe gloriosa climbs by its leaf tips.\n", encoding="utf-8")
    asks = [
        (str(note), "[bold]the lilies[/bold] you asked about"),
        (str(data), "everything"),
        (str(garden / "roses.md"), "roses"),
    ]
    rules = [
        {
            "match": "^suggest$",
            "on": "user",
            "toolCalls": [{"name": "suggest_document", "arguments": {"path": p, "reason": r}} for p, r in asks],
        },
        {"match": ".", "on": "tool", "reply": "suggested"},
    ]

    def question() -> str:
        return str(app.screen.query_one(".dialog-question", Label).render())

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call(
                "agent.create", {"name": "Ann", "settings": {"model": {"provider": "scripted", "rules": rules}}}
            )
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: app.current == "ann")
                await pilot.press("f9")
                view = app.query_one(KnowledgeView)
                table = app.query_one("#suggestions", DataTable)
                await until(pilot, lambda: view.owner is not None and not table.display)
                await host.idle_turn("ann", "suggest")  # its `knowledge.suggested` refreshes the view
                await until(pilot, lambda: [s["path"] for s in view.suggestions.values()] == [p for p, _ in asks])
                assert table.display and "3 document(s) suggested by Ann" in str(
                    app.query_one("#suggestions-state").render()
                )
                ids = list(view.suggestions)
                table.focus()
                await pilot.press("a")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                assert (
                    question()
                    == f"Admit {note} for Ann? It suggested it because: [bold]the lilies[/bold] you asked about"
                )
                await pilot.press("n")
                await until(pilot, lambda: not app.screen.query("#yes"))
                assert (await host.call("knowledge.list", {"agentId": "ann"}))["sources"] == []
                await pilot.press("a")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                await pilot.press("y")
                await until(pilot, lambda: [s["path"] for s in view.sources.values()] == [str(note)], timeout=60)
                await until(pilot, lambda: list(view.suggestions) == ids[1:])
                # The data dir is refused as add refuses it, and stays for the person to decline.
                table.focus()
                table.move_cursor(row=0)
                await pilot.press("a")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                await pilot.press("y")
                await until(pilot, lambda: not app.screen.query("#yes"))
                await app.workers.wait_for_complete()  # the accept has been answered
                refused = await host.call("knowledge.suggestions", {"agentId": "ann"})
                assert [s["suggestionId"] for s in refused["suggestions"]] == ids[1:]
                await pilot.press("x")
                await until(pilot, lambda: list(view.suggestions) == ids[2:])
                await pilot.press("x")
                await until(pilot, lambda: view.suggestions == {} and not table.display)
            assert (await host.call("knowledge.suggestions", {"agentId": "ann"}))["suggestions"] == []
            listing = await host.call("knowledge.list", {"agentId": "ann"})
            assert [s["path"] for s in listing["sources"]] == [str(note)]
            async with asyncio.timeout(60):  # accepting, like adding, returns before the file is read
                while listing["sources"][0]["state"] != "ready":
                    await asyncio.sleep(0.1)
                    listing = await host.call("knowledge.list", {"agentId": "ann"})
            hits = (await host.call("knowledge.search", {"agentId": "ann", "query": "gloriosa"}))["hits"]
            assert [h["path"] for h in hits] == [str(note)]

    app = HearthApp(data)
    asyncio.run(main())
