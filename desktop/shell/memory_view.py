"""An agent's memory as a person governs it: current facts, conflicts, the review queue, forgotten facts,
search; the story of the highlighted fact (source, evidence line, what replaced it, its history); and the
acts: confirm, reject, edit, note, forget (retract) and erase, the last two after a confirmation.

Every read and act is a host call made in a worker, so a slow host never freezes the shell.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static, Tab, Tabs

from desktop.describe import describe_trust
from desktop.memory_cmd import record_text
from desktop.memory_story import fact_story, story_lines
from desktop.shell.dialogs import ConfirmDialog, TextDialog
from protocol.errors import JsonRpcError

__all__ = ["MemoryView"]

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
VIEWS = [("current", "Current"), ("proposed", "Review"), ("conflicts", "Conflicts"), ("retracted", "Forgotten")]


class _CallPeer:
    """Lets `fact_story` (written against a peer) make its calls through the shell's session."""

    def __init__(self, call: Call) -> None:
        self._call = call

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self._call(method, params)


class MemoryView(Vertical):
    BINDINGS = [
        Binding("c", "review('confirm')", "Confirm"),
        Binding("x", "review('reject')", "Reject"),
        Binding("e", "edit", "Edit"),
        Binding("r", "retract", "Forget"),
        Binding("z", "erase", "Erase"),
        Binding("a", "note", "Add fact"),
        Binding("slash", "search", "Search"),
        Binding("escape", "clear_search", "Clear search"),
    ]

    def __init__(self, call: Call, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
        self.agent_id: str | None = None
        self.view = "current"
        self.query_text: str | None = None
        self.records: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Tabs(*(Tab(label, id=f"view-{name}") for name, label in VIEWS), id="memory-views")
        yield DataTable(id="facts", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="story-box"):
            yield Static("Highlight a fact to see why it is believed.", id="story")

    def on_mount(self) -> None:
        self.query_one("#facts", DataTable).add_columns("id", "trust", "fact", "source")

    def show(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.refresh_facts()

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        if event.tab.id is not None:
            self.view = event.tab.id.removeprefix("view-")
            self.query_text = None
            self.refresh_facts()

    @work(exclusive=True, group="memory-list")
    async def refresh_facts(self) -> None:
        if self.agent_id is None:
            return
        agent_id = self.agent_id
        try:
            if self.query_text:
                found = await self._call("memory.search", {"agentId": agent_id, "query": self.query_text})
                records = [hit["record"] for hit in found["hits"]]
            else:
                listing = await self._call("memory.list", {"agentId": agent_id, "view": self.view})
                records = list(listing["records"])
                for conflict in listing.get("conflicts", []):
                    records += conflict["records"]
        except JsonRpcError as exc:
            self.query_one("#story", Static).update(f"memory: {exc.message}")
            return
        if agent_id != self.agent_id:
            return
        table = self.query_one("#facts", DataTable)
        table.clear()
        self.records = {}
        for record in records:
            if record["id"] in self.records:
                continue
            self.records[record["id"]] = record
            table.add_row(record["id"], describe_trust(record), record_text(record), record["source"], key=record["id"])
        if not records:
            where = f"matching {self.query_text!r}" if self.query_text else f"in the {self.view} view"
            self.query_one("#story", Static).update(f"No facts {where}.")

    def selected(self) -> str | None:
        table = self.query_one("#facts", DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return str(row_key.value) if row_key.value is not None else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.show_story(str(event.row_key.value))

    @work(exclusive=True, group="memory-story")
    async def show_story(self, record_id: str) -> None:
        if self.agent_id is None:
            return
        try:
            story = await fact_story(_CallPeer(self._call), self.agent_id, record_id)
        except JsonRpcError as exc:
            self.query_one("#story", Static).update(f"{record_id}: {exc.message}")
            return
        self.query_one("#story", Static).update("\n".join(story_lines(story)))

    @work(group="memory-act")
    async def act(self, method: str, params: dict[str, Any], done: str) -> None:
        if self.agent_id is None:
            return
        try:
            result = await self._call(method, {"agentId": self.agent_id, **params})
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error", title="memory")
            return
        self.notify(f"{done}: {result.get('outcome', 'done')}", title="memory")
        if result.get("scrubbedMessages"):
            self.notify(f"scrubbed from {result['scrubbedMessages']} message(s) of the conversation", title="memory")
        if result.get("heldInConversation"):
            held = result["heldInConversation"]
            self.notify(f"{held} message(s) of the conversation still hold the text", title="memory")
        self.refresh_facts()

    def action_review(self, decision: str) -> None:
        record_id = self.selected()
        if record_id is not None:
            self.act("memory.review", {"recordId": record_id, "decision": decision}, decision)

    def action_edit(self) -> None:
        record_id = self.selected()
        if record_id is None:
            return
        current = str(self.records.get(record_id, {}).get("text") or "")

        def edited(text: str | None) -> None:
            if text:
                self.act("memory.review", {"recordId": record_id, "decision": "edit", "text": text}, "edited")

        self.app.push_screen(TextDialog(f"Edit {record_id} (and confirm it)", current), edited)

    def _confirmed(self, question: str, yes: str, method: str, record_id: str, done: str) -> None:
        def answered(ok: bool | None) -> None:
            if ok:
                self.act(method, {"recordId": record_id}, done)

        self.app.push_screen(ConfirmDialog(question, yes), answered)

    def action_retract(self) -> None:
        record_id = self.selected()
        if record_id is not None:
            text = self.records.get(record_id, {}).get("text") or record_id
            question = f"Forget “{text}”? It leaves the agent's memory; the audit trail keeps it."
            self._confirmed(question, "Forget", "memory.retract", record_id, "forgotten")

    def action_erase(self) -> None:
        record_id = self.selected()
        if record_id is None:
            return
        text = self.records.get(record_id, {}).get("text") or record_id
        question = f"Erase “{text}” for good? Its text is removed everywhere and cannot come back."
        dialog = ConfirmDialog(question, "Erase", option="also from the conversation's messages")

        def answered(ok: bool | None) -> None:
            if ok:
                self.act("memory.erase", {"recordId": record_id, "scrubConversation": dialog.option_on}, "erased")

        self.app.push_screen(dialog, answered)

    def action_note(self) -> None:
        def noted(text: str | None) -> None:
            if text:
                self.act("memory.note", {"text": text}, "noted")

        self.app.push_screen(TextDialog("A fact for the agent to remember", placeholder="e.g. I live in Lyon"), noted)

    def action_search(self) -> None:
        def searched(text: str | None) -> None:
            self.query_text = text
            self.refresh_facts()

        self.app.push_screen(TextDialog("Search memory", self.query_text or ""), searched)

    def action_clear_search(self) -> None:
        """Back to the whole view from a search's hits."""
        if self.query_text:
            self.query_text = None
            self.refresh_facts()
