"""The desktop shell driven by Pilot against a real `hearth host` process with scripted agents (issue 13).

The test keeps its own stdio connection to the host (as a desktop shell's launcher would) and checks on
the host what the person did in the shell: an agent created, a tool approved, a fact confirmed, a fact
forgotten, a turn cancelled, messages queued behind a busy turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Label, OptionList, Switch, TabbedContent, TextArea, Tree

from desktop.shell import HearthApp, chat_view
from desktop.shell.chat_view import ChatView
from desktop.shell.dialogs import TextDialog
from desktop.shell.entries import ApprovalPrompt, Notice, ReplyEntry, ToolEntry, UserEntry
from desktop.shell.memory_view import MemoryView
from desktop.shell.session import HostEvent
from tests.desktop.pilot import TOOLS, type_text, until
from tests.support.host_process import HostProcess, scripted_model

SIZE = (120, 40)


def _replies(app: HearthApp) -> list[str]:
    return [entry.text for entry in app.query(ReplyEntry)]


def _tools(app: HearthApp) -> list[str]:
    return [entry.outcome for entry in app.query(ToolEntry)]


async def _say(pilot: Any, text: str) -> None:
    pilot.app.query_one("#prompt", Input).focus()
    await type_text(pilot, text)
    await pilot.press("enter")


@contextlib.asynccontextmanager
async def _shell(
    data_dir: Path, agent_id: str, *, size: tuple[int, int] = SIZE, **options: Any
) -> AsyncIterator[tuple[HearthApp, Any]]:
    """The shell attached to the host running on `data_dir`, once it shows `agent_id`'s chat."""
    app = HearthApp(data_dir, **options)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.current == agent_id and app.query_one(ChatView).agent is not None)
        yield app, pilot


def test_a_first_run_gets_an_assistant_and_a_person_creates_another_agent(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            app = HearthApp(tmp_path)
            async with app.run_test(size=SIZE) as pilot:
                await until(
                    pilot, lambda: app.session.connected and "host:" in str(app.query_one("#host-status").render())
                )
                await pilot.press("ctrl+n")
                await until(pilot, lambda: app.screen.query("#name").first(Input) is not None)
                await type_text(pilot, "Field Notes")
                await pilot.press("enter")
                await until(pilot, lambda: "field-notes" in app.agents and app.current == "field-notes")
                listed = await host.call("agent.list")
                names = [(a["agentId"], a["name"], a["settings"]["model"]["provider"]) for a in listed["agents"]]
                assert names == [("assistant", "Assistant", "local"), ("field-notes", "Field Notes", "local")]
                options = app.query_one("#agents", OptionList)
                assert options.option_count == 2 and "Field Notes" in str(options.get_option_at_index(1).prompt)

    asyncio.run(main())


def test_a_host_event_that_comes_as_the_shell_closes_is_let_go(tmp_path: Path) -> None:
    """A host event reaching the shell while its widgets were being taken down (as it closed) ended the app with
    NoMatches; while the widgets stand, a missing one is still a fault."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            app = HearthApp(tmp_path)
            async with app.run_test(size=SIZE) as pilot:
                await until(
                    pilot, lambda: app.session.connected and "host:" in str(app.query_one("#host-status").render())
                )
                app.on_host_event(HostEvent("kernel.up", {}))  # the widgets stand: shown
                assert "ready" in str(app.query_one("#host-status").render())
                # Closing takes the main widgets down; the status line going first is the case that ended the app
                # (the views stay, so their own loads, still in flight on a busy machine, find what they need).
                await app.query_one("#host-status").remove()
                app.on_host_event(HostEvent("kernel.down", {}))
                app.on_host_event(HostEvent("model.status", {"state": "failed", "error": "gone"}))
                assert app.kernel == "down", "the state is kept; there is nothing to show it in"

                async def a_roster_load_finishing() -> None:
                    app._render_roster()

                await app.run_worker(a_roster_load_finishing()).wait()  # a worker that ends now ends the app no more
            assert (await host.call("ping")) == {}

    asyncio.run(main())


def test_chat_streams_the_reply_and_a_tool_is_approved_in_place_while_a_refused_one_asks_nobody(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ops", "settings": TOOLS})
            async with _shell(tmp_path, "ops") as (app, pilot):
                await _say(pilot, "say hello from the model")
                await until(pilot, lambda: "hello from the model" in _replies(app))
                await _say(pilot, "run echo approved-in-place")
                await until(pilot, lambda: bool(app.query(ApprovalPrompt)))
                prompt = app.query_one(ApprovalPrompt)
                assert "echo approved-in-place" in str(prompt.query_one("#question").render())
                await pilot.press("y")
                await until(pilot, lambda: any("shell said: approved-in-place" in r for r in _replies(app)))
                assert prompt.decision == "allow_once"
                assert any(outcome.startswith("→ approved-in-place") for outcome in _tools(app))
                # A hard-denied command is refused by the sandbox itself: no question, shown as refused.
                await _say(pilot, "run rm -rf /")
                await until(pilot, lambda: any(o.startswith("refused") for o in _tools(app)))
                assert len(app.query(ApprovalPrompt)) == 1
            transcript = (await host.call("agent.transcript", {"agentId": "ops"}))["events"]
            assert [e["reason"] for e in transcript if e["type"] == "ended"] == ["idle", "idle", "idle"]

    asyncio.run(main())


def test_a_message_another_client_sends_shows_in_the_open_chat_with_its_reply_and_a_typed_one_shows_once(
    tmp_path: Path,
) -> None:
    """The test's own connection to the host is the other client (as `hearth chat` or an editor would be)."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ops", "settings": TOOLS})
            async with _shell(tmp_path, "ops") as (app, pilot):
                await host.call("agent.send", {"agentId": "ops", "text": "say from the other client"})
                await until(pilot, lambda: "from the other client" in _replies(app))
                await _say(pilot, "say typed here")
                await until(pilot, lambda: "typed here" in _replies(app))
                said = [str(entry.render()) for entry in app.query(UserEntry)]
                assert said == ["you: say from the other client", "you: say typed here"]

    asyncio.run(main())


def test_a_question_asked_before_the_shell_attached_or_while_another_agent_was_shown_is_asked_on_show(
    tmp_path: Path,
) -> None:
    """Issue 25.1: the shell showed "running…" and no question for a run another client had started."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("Ops", "Writer"):
                await host.call("agent.create", {"name": name, "settings": TOOLS})
            sent = await host.call("agent.send", {"agentId": "ops", "text": "run echo asked-before"})
            await host.wait_for("agent.tool", lambda p: p["runId"] == sent["runId"] and p["status"] == "pending")
            async with _shell(tmp_path, "ops") as (app, pilot):
                # Offered when the shell attached, and asked in Ops's chat.
                await until(pilot, lambda: bool(app.query(ApprovalPrompt)))
                assert "asks you" in str(app.query_one("#agents", OptionList).get_option("ops").prompt)
                app.select("writer")
                await until(pilot, lambda: app.current == "writer" and not app.query(ApprovalPrompt))
                app.select("ops")
                await until(pilot, lambda: app.current == "ops" and bool(app.query(ApprovalPrompt)))
                app.query_one(ApprovalPrompt).focus()
                await pilot.press("y")
                await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
                assert "shell said: asked-before" in host.texts("ops", sent["runId"])
                await until(
                    pilot, lambda: "asks you" not in str(app.query_one("#agents", OptionList).get_option("ops").prompt)
                )

    asyncio.run(main())


def test_a_long_message_shows_cut_with_what_it_leaves_out_and_whole_once_read_from_the_transcript(
    tmp_path: Path,
) -> None:
    """Issue 22.8: `agent.started` carries the first 2,000 characters; the shell says how much more there is."""
    text = "say " + "w" * 5000

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ops", "settings": TOOLS})
            async with _shell(tmp_path, "ops") as (app, pilot):
                await host.call("agent.send", {"agentId": "ops", "text": text})
                await until(pilot, lambda: "w" * 5000 in _replies(app))
                said = [str(entry.render()) for entry in app.query(UserEntry)]
                marker = "… (3,004 more characters: the whole message is in the transcript)"
                assert said == [f"you: {text[:2000]}{marker}"]
                app.select("ops")
                await until(pilot, lambda: [str(e.render()) for e in app.query(UserEntry)] == [f"you: {text}"])

    asyncio.run(main())


def test_messages_typed_while_busy_wait_in_the_queue_and_a_cancel_stops_the_turn_and_drops_them(
    tmp_path: Path,
) -> None:
    """A turn waiting on an approval stays busy for as long as the test needs, so nothing here is a race."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ops", "settings": TOOLS})
            async with _shell(tmp_path, "ops") as (app, pilot):
                await _say(pilot, "run echo first")
                await until(pilot, lambda: len(app.query(ApprovalPrompt)) == 1)
                await _say(pilot, "say queued one")
                await until(pilot, lambda: app.agents["ops"].queue == ["say queued one"])
                assert "queued 1: say queued one" in str(app.query_one("#queue").render())
                app.query_one(ApprovalPrompt).focus()
                await pilot.press("y")
                await until(pilot, lambda: "queued one" in _replies(app) and not app.agents["ops"].queue)
                await _say(pilot, "run echo second")
                await until(pilot, lambda: len(app.query(ApprovalPrompt)) == 2)
                await _say(pilot, "say never sent")
                await until(pilot, lambda: app.agents["ops"].queue == ["say never sent"])
                await pilot.press("escape")
                await until(pilot, lambda: any("cancelled" in str(n.render()) for n in app.query(Notice)))
                assert app.agents["ops"].queue == []
                assert app.query(ApprovalPrompt)[1].decision is None  # settled by the end, not answered
            transcript = (await host.call("agent.transcript", {"agentId": "ops"}))["events"]
            users = [e["text"] for e in transcript if e["type"] == "user"]
            assert users == ["run echo first", "say queued one", "run echo second"]
            assert [e["reason"] for e in transcript if e["type"] == "ended"] == ["idle", "idle", "cancelled"]

    asyncio.run(main())


def test_a_cancelled_tool_call_no_longer_says_running_and_words_replace_the_wait_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25.8: a cancelled call read "running…" forever; the note about a slow start stayed while text streamed."""
    dawdle = {"match": "^dawdle$", "on": "user", "reply": "abc", "chunkChars": 1, "delayMs": 2500}
    settings = {"model": {"provider": "scripted", "rules": [dawdle, *TOOLS["model"]["rules"]]}}

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ops", "settings": settings})
            async with _shell(tmp_path, "ops") as (app, pilot):
                status = app.query_one("#status")
                await _say(pilot, "run sleep 60")
                await until(pilot, lambda: len(app.query(ApprovalPrompt)) == 1)
                app.query_one(ApprovalPrompt).focus()
                await pilot.press("y")
                await until(pilot, lambda: _tools(app) == ["running…"])
                app.query_one("#prompt", Input).focus()
                await pilot.press("escape")
                await until(pilot, lambda: any("cancelled" in str(n.render()) for n in app.query(Notice)))
                assert _tools(app) == ["cancelled"]
                # The slow-start note is due at once (the view's timer would show it after SLOW_START).
                monkeypatch.setattr(chat_view, "SLOW_START", 0.0)
                view = app.query_one(ChatView)
                await _say(pilot, "dawdle")
                await until(
                    pilot, lambda: bool(app.query(UserEntry)) and "dawdle" in str(app.query(UserEntry)[-1].render())
                )
                view._explain_wait()
                assert "first words" in str(status.render()), str(status.render())
                await until(pilot, lambda: any(text.startswith("a") for text in _replies(app)))
                assert "replying" in str(status.render()), str(status.render())
                await until(pilot, lambda: "abc" in _replies(app))

    asyncio.run(main())


def test_a_person_confirms_a_proposed_fact_and_forgets_another_which_leaves_the_list(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann", "settings": TOOLS})
            for text in ("web says The library closes at six.", "web says The bakery sells rye."):
                await host.send_and_wait("ann", text)
            tea = (await host.call("memory.note", {"agentId": "ann", "text": "The user likes tea."}))["record"]
            bikes = (await host.call("memory.note", {"agentId": "ann", "text": "The user bikes."}))["record"]
            proposed = (await host.call("memory.list", {"agentId": "ann", "view": "proposed"}))["records"]
            library = next(r["id"] for r in proposed if "library" in r["text"])
            async with _shell(tmp_path, "ann") as (app, pilot):
                await pilot.press("f4")
                memory = app.query_one(MemoryView)
                table = app.query_one("#facts", DataTable)
                assert app.query_one("#main", TabbedContent).active == "memory"
                await until(pilot, lambda: set(memory.records) == {tea["id"], bikes["id"]})
                table.move_cursor(row=table.get_row_index(tea["id"]))
                await until(pilot, lambda: "likes tea" in str(app.query_one("#story").render()))
                assert "source: a person" in str(app.query_one("#story").render())
                await pilot.press("r")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                await pilot.press("y")
                await until(pilot, lambda: set(memory.records) == {bikes["id"]})
                # The review queue: confirm the library fact; the bakery stays proposed.
                memory.query_one("#memory-views").active = "view-proposed"
                await until(pilot, lambda: library in memory.records and len(memory.records) == 2)
                table.move_cursor(row=table.get_row_index(library))
                await until(pilot, lambda: "library closes" in str(app.query_one("#story").render()))
                await pilot.press("c")
                await until(pilot, lambda: set(memory.records) != {library} and library not in memory.records)
            current = (await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"]
            assert {r["id"] for r in current} == {bikes["id"], library}
            still = (await host.call("memory.list", {"agentId": "ann", "view": "proposed"}))["records"]
            assert [r["text"] for r in still] == ["The bakery sells rye."]
            retracted = (await host.call("memory.list", {"agentId": "ann", "view": "retracted"}))["records"]
            assert [r["id"] for r in retracted] == [tea["id"]]

    asyncio.run(main())


def test_a_person_searches_erases_after_a_confirmation_and_edits_a_proposed_fact(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann", "settings": TOOLS})
            await host.send_and_wait("ann", "web says The library closes at six.")
            tea = (await host.call("memory.note", {"agentId": "ann", "text": "The user likes tea."}))["record"]
            bikes = (await host.call("memory.note", {"agentId": "ann", "text": "The user bikes."}))["record"]
            await host.send_and_wait("ann", "say The user likes tea.")
            (library,) = (await host.call("memory.list", {"agentId": "ann", "view": "proposed"}))["records"]
            async with _shell(tmp_path, "ann") as (app, pilot):
                await pilot.press("f4")
                memory = app.query_one(MemoryView)
                table = app.query_one("#facts", DataTable)
                await until(pilot, lambda: set(memory.records) == {tea["id"], bikes["id"]})
                await _answer_text_dialog(pilot, "slash", "bikes")
                await until(pilot, lambda: set(memory.records) == {bikes["id"]})
                await _answer_text_dialog(pilot, "slash", "")
                await until(pilot, lambda: set(memory.records) == {tea["id"], bikes["id"]})
                # Escape leaves a search for the whole view.
                await _answer_text_dialog(pilot, "slash", "bikes")
                await until(pilot, lambda: set(memory.records) == {bikes["id"]})
                await pilot.press("escape")
                await until(pilot, lambda: set(memory.records) == {tea["id"], bikes["id"]})
                # Erase asks first: "n" keeps the fact, "y" erases it and only it.
                table.move_cursor(row=table.get_row_index(tea["id"]))
                await until(pilot, lambda: "likes tea" in str(app.query_one("#story").render()))
                await pilot.press("z")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                question = str(app.screen.query_one(".dialog-question", Label).render())
                assert question.startswith("Erase “The user likes tea.” for good?")
                await pilot.press("n")
                await until(pilot, lambda: not app.screen.query("#yes"))
                assert (await host.call("memory.list", {"agentId": "ann", "view": "retracted"}))["records"] == []
                await pilot.press("z")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                # The person may also scrub the conversation: "s" turns the dialog's switch on.
                await pilot.press("s")
                await until(pilot, lambda: app.screen.query_one("#option", Switch).value)
                await pilot.press("y")
                await until(pilot, lambda: set(memory.records) == {bikes["id"]})
                # A proposed fact edited in the review queue is confirmed with the person's words.
                memory.query_one("#memory-views").active = "view-proposed"
                await until(pilot, lambda: set(memory.records) == {library["id"]})
                await until(pilot, lambda: "library closes" in str(app.query_one("#story").render()))
                await _answer_text_dialog(pilot, "e", "The library closes at seven.")
                await until(pilot, lambda: not memory.records)
            current = (await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"]
            assert sorted(r["text"] for r in current) == ["The library closes at seven.", "The user bikes."]
            every = (await host.call("memory.list", {"agentId": "ann", "view": "all"}))["records"]
            assert "The user likes tea." not in str(every), "the erased text is gone from every view"
            events = (await host.call("agent.transcript", {"agentId": "ann"}))["events"]
            asked = next(n for n, e in enumerate(events) if e["type"] == "user" and e["text"].startswith("say "))
            said = [events[asked]["text"], next(e["text"] for e in events[asked:] if e["type"] == "assistant")]
            assert said == ["say [erased]", "[erased]"], "the switch scrubbed the conversation too"

    asyncio.run(main())


async def _fill_dialog(pilot: Any, text: str, *, key: str = "enter") -> None:
    """Put `text` in the text dialog on show (or about to be) and leave it with `key`."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, TextDialog))
    dialog = app.screen
    dialog.query_one("#text", Input).value = text
    await pilot.press(key)
    await until(pilot, lambda: app.screen is not dialog)


async def _answer_text_dialog(pilot: Any, key: str, text: str) -> None:
    """Open a text dialog with `key`, replace what it holds with `text` and submit it."""
    app = pilot.app
    await pilot.press(key)
    await until(pilot, lambda: app.screen.query("#text").first(Input) is not None)
    app.screen.query_one("#text", Input).value = text
    await pilot.press("enter")
    await until(pilot, lambda: not app.screen.query("#text"))


def test_the_shell_says_when_the_host_dies_and_restarts_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann"})
            async with _shell(tmp_path, "ann", first_agent=None) as (app, pilot):
                assert host.process is not None
                host.process.kill()
                await host.process.wait()
                await until(pilot, lambda: app.screen.query("#restart").first() is not None)
                assert not app.session.connected
                await pilot.press("r")
                await until(pilot, lambda: app.session.connected and app.session.started_host and "ann" in app.agents)
                status = await app.call("host.status", {})
                assert status["pid"] != host.process.pid

    asyncio.run(main())


def test_rename_settings_and_delete_after_a_confirmation_reach_the_host(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann"})
            await host.call("agent.create", {"name": "Bob"})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await pilot.press("f2")
                await until(pilot, lambda: app.screen.query("#text").first() is not None)
                app.screen.query_one("#text", Input).value = ""
                await type_text(pilot, "Annie")
                await pilot.press("enter")
                await until(pilot, lambda: app.agents["ann"].info.name == "Annie")
                await pilot.press("ctrl+s")
                await until(pilot, lambda: app.screen.query("#memory").first() is not None)
                await pilot.click("#memory")
                await until(pilot, lambda: app.screen.query_one("#memory", Switch).value is False)
                await pilot.press("ctrl+s")
                await until(pilot, lambda: app.agents["ann"].info.settings.memory is False)
                await pilot.press("f8")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                await pilot.press("n")  # not confirmed: nothing is deleted
                await pilot.press("f8")
                await until(pilot, lambda: app.screen.query("#yes").first() is not None)
                await pilot.press("y")
                await until(pilot, lambda: "ann" not in app.agents and app.current == "bob")
            listed = await host.call("agent.list")
            assert [(a["agentId"], a["name"]) for a in listed["agents"]] == [("bob", "Bob")]
            trashed = list((tmp_path / "trash").iterdir())
            assert len(trashed) == 1 and trashed[0].name.startswith("ann")

    asyncio.run(main())


def test_a_model_that_cannot_be_used_is_shown_with_the_fix(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            keyless = {"model": {"provider": "openai", "name": "gpt-4o-mini"}}
            await host.call("agent.create", {"name": "Ann", "settings": keyless})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await _say(pilot, "hello")
                await until(pilot, lambda: any("error:" in str(n.render()) for n in app.query(Notice)))
                shown = "\n".join(str(n.render()) for n in app.query(Notice))
                assert "hearth secrets set openai" in shown and "ctrl+s" in shown
                assert "error" in str(app.query_one("#agents", OptionList).get_option_at_index(0).prompt)

    asyncio.run(main())


def test_a_work_shows_its_members_board_and_timeline_and_follows_its_changes(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann"})
            await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            await host.call("work.taskCreate", {"workId": "launch", "title": "Write the notes", "expectedRevision": 0})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await pilot.press("f7")
                board = app.query_one("#work-board", DataTable)
                await until(pilot, lambda: board.row_count == 1)
                assert app.query_one("#main", TabbedContent).active == "works-tab"
                assert "members: ann" in str(app.query_one("#work-members").render())
                assert board.get_row_at(0)[:2] == ["Write the notes", "todo"]
                await host.call("work.post", {"workId": "launch", "text": "kick-off at nine"})
                timeline = app.query_one("#work-timeline", TextArea)
                await until(pilot, lambda: "kick-off at nine" in timeline.text)

    asyncio.run(main())


def test_files_and_the_transcript_follow_what_the_agent_does_on_screen_and_once_shown_again(tmp_path: Path) -> None:
    """Issue 25.6: F5 was a snapshot taken when the agent was selected (`transcript.jsonl 0 B` after a talk)."""

    def labels(node: Any) -> list[str]:
        return [str(child.label) for child in node.children]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann", "settings": {**TOOLS, "toolPermission": "always"}})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await pilot.press("f5")
                tree = app.query_one("#file-tree", Tree)
                transcript = app.query_one("#transcript-pane", TextArea)
                await until(pilot, lambda: any(label.startswith("scratch") for label in labels(tree.root)))
                scratch = next(node for node in tree.root.children if str(node.label).startswith("scratch"))
                scratch.expand()
                await until(pilot, lambda: scratch.is_expanded)
                assert "(nothing yet)" in transcript.text
                await host.send_and_wait("ann", "run echo hello > made.txt")
                await until(pilot, lambda: "run echo hello" in transcript.text)
                scratch = next(node for node in tree.root.children if str(node.label).startswith("scratch"))
                await until(pilot, lambda: any(label.startswith("made.txt") for label in labels(scratch)))
                # Away from F5 the view waits; shown again, it reads what happened meanwhile.
                await pilot.press("f3")
                await host.send_and_wait("ann", "say while you were away")
                assert "while you were away" not in transcript.text
                await pilot.press("f5")
                await until(pilot, lambda: "while you were away" in transcript.text)

    asyncio.run(main())


def test_a_person_makes_a_work_in_the_works_view_by_its_name_and_its_members_names(tmp_path: Path) -> None:
    """Issue 25.9: the empty view named a wire method; now it says how a person makes a Work, and `n` does."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("Ann", "Bob", "Cy"):
                await host.call("agent.create", {"name": name})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await pilot.press("f7")
                said = str(app.query_one("#work-members").render())
                assert "Press n to make one" in said and "work.create" not in said
                await pilot.press("n")
                await _fill_dialog(pilot, "Nobody", key="escape")
                await pilot.press("n")
                await _fill_dialog(pilot, "Launch")
                await _fill_dialog(pilot, "ann, BOB, zed")
                await until(
                    pilot, lambda: bool(app._notifications) and "no agent named zed" in str(list(app._notifications))
                )
                assert (await host.call("work.list", {}))["works"] == [], "an unknown member makes no Work"
                await pilot.press("n")
                await _fill_dialog(pilot, "Launch")
                await _fill_dialog(pilot, "ann, BOB")
                await until(pilot, lambda: "members: ann, bob" in str(app.query_one("#work-members").render()))
            (made,) = (await host.call("work.list", {}))["works"]
            assert (made["name"], made["members"]) == ("Launch", ["ann", "bob"])

    asyncio.run(main())


def test_the_agent_list_shows_each_agents_next_wake_and_its_use_against_a_cap(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path, env={"HEARTH_TEST_CLOCK": "1800000000"}) as host:
            await host.call("settings.set", {"timeZone": "UTC"})
            await host.call("agent.create", {"name": "Ops", "settings": TOOLS})
            await host.call("agent.create", {"name": "Zed", "settings": TOOLS})
            await host.call("schedule.add", {"agentId": "ops", "everySeconds": 3600, "message": "say tick"})
            await host.call("budget.set", {"agentId": "ops", "requestsPerDay": 50})
            async with _shell(tmp_path, "ops") as (app, pilot):
                options = app.query_one("#agents", OptionList)

                def prompt(index: int) -> str:
                    return str(options.get_option_at_index(index).prompt)

                await until(pilot, lambda: "next 01-15 09:00" in prompt(0) and "0/50 req today" in prompt(0))
                assert "next" not in prompt(1) and "req today" not in prompt(1)  # no schedule, no cap: nothing
                await host.call("schedule.add", {"agentId": "zed", "everySeconds": 600, "message": "say tock"})
                await until(pilot, lambda: "next 01-15 08:10" in prompt(1))
                await _say(pilot, "say hello")
                await until(pilot, lambda: "/50 req today" in prompt(0) and "0/50" not in prompt(0))

    asyncio.run(main())


def test_a_failed_mcp_server_shows_in_the_chat_with_its_likely_cause_and_stderr(tmp_path: Path) -> None:
    """Issue 25.4: the failure is not silent; the turn still answers."""
    missing = {"name": "missing", "command": sys.executable, "args": ["-m", "no_such_module_hearth"]}
    rules = [{"match": "^hello$", "on": "user", "reply": "hello there"}]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            settings = {"model": {"provider": "scripted", "rules": rules}, "mcpServers": [missing]}
            await host.call("agent.create", {"name": "Ann", "settings": settings})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await _say(pilot, "hello")
                await until(pilot, lambda: any("MCP server missing" in str(n.render()) for n in app.query(Notice)))
                shown = "\n".join(str(n.render()) for n in app.query(Notice))
                assert "likely cause:" in shown and "No module named no_such_module_hearth" in shown, shown
                await until(pilot, lambda: "hello there" in _replies(app))

    asyncio.run(main())


def test_a_live_answer_shows_which_facts_it_saw_and_one_that_saw_none_shows_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            echo = {"match": r"^say (.*)$", "reply": r"\1"}
            await host.call("agent.create", {"name": "Ann", "settings": scripted_model(echo)})
            async with _shell(tmp_path, "ann") as (app, pilot):
                await type_text(pilot, "say hello")  # memory is empty: this answer saw no fact
                await pilot.press("enter")
                await until(pilot, lambda: _replies(app) == ["hello"])
                noted = await host.call("memory.note", {"agentId": "ann", "text": "The user's bike is red"})
                await type_text(pilot, "say again")
                await pilot.press("enter")
                saw = f"this reply saw {noted['record']['id']}"
                await until(pilot, lambda: saw in [str(n.render()) for n in app.query(Notice)])
                assert _replies(app) == ["hello", "again"]
                assert [str(n.render()) for n in app.query(Notice)] == [saw], "only the answer that saw a fact"

    asyncio.run(main())


def test_a_reply_read_back_from_the_transcript_shows_which_facts_it_saw_and_one_that_saw_none_shows_nothing(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            echo = {"match": r"^say (.*)$", "reply": r"\1"}
            await host.call("agent.create", {"name": "Ann", "settings": scripted_model(echo)})
            await host.idle_turn("ann", "say hello")  # memory is empty: this reply saw no fact
            noted = await host.call("memory.note", {"agentId": "ann", "text": "The user's bike is red"})
            await host.idle_turn("ann", "say again")
            async with _shell(tmp_path, "ann") as (app, pilot):
                await until(pilot, lambda: _replies(app) == ["hello", "again"])
                notices = [str(n.render()) for n in app.query(Notice)]
                assert notices == [f"this reply saw {noted['record']['id']}"]

    asyncio.run(main())
