"""An agent's or a Work's knowledge as a person keeps it: the admitted sources with their state and counts,
the files that could not be read (and why), a search box whose results say why each passage matched, and the
acts: admit a path, pause or resume a source, remove one (after a confirmation). An agent's pending document
suggestions are listed under its sources: `a` admits the highlighted one (after a confirmation that shows its
path and the agent's reason), `x` declines it. A Work has none.

The view shows one owner at a time (its title says whose) and every call names that owner only, so an agent's
sources and a Work's never mix. Every read and act is a host call made in a worker; a `knowledge.progress`
event of the owner on show refreshes the sources, a `knowledge.suggested` one of the agent on show its
suggestions. What an agent wrote (a path, a reason) is shown as plain text, never as markup.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from desktop.knowledge_cmd import already_admitted, describe_match
from desktop.shell.dialogs import ConfirmDialog, TextDialog
from desktop.tables import plain_line
from protocol.errors import JsonRpcError

__all__ = ["KnowledgeView", "KnowledgeOwner"]

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class KnowledgeOwner:
    """Whose knowledge is on show: an agent's or a Work's (`key` is the wire's `agentId` or `workId`)."""

    key: Literal["agentId", "workId"]
    id: str
    name: str

    @classmethod
    def agent(cls, agent_id: str, name: str) -> KnowledgeOwner:
        return cls("agentId", agent_id, name)

    @classmethod
    def work(cls, work_id: str, name: str) -> KnowledgeOwner:
        return cls("workId", work_id, name)

    @property
    def params(self) -> dict[str, str]:
        return {self.key: self.id}

    @property
    def title(self) -> str:
        if self.key == "workId":
            return f"Knowledge of the Work {self.name} ({self.id}): its members read it in their Work runs"
        return f"Knowledge of {self.name} ({self.id})"

    @property
    def whose(self) -> str:
        return f"the Work {self.name}'s members" if self.key == "workId" else self.name

    def sent(self, event: dict[str, Any]) -> bool:
        """Whether a `knowledge.progress` event is about this owner's base."""
        other = "workId" if self.key == "agentId" else "agentId"
        return event.get(self.key) == self.id and event.get(other) is None


class KnowledgeView(Vertical):
    BINDINGS = [
        Binding("ctrl+o", "admit", "Admit"),
        Binding("p", "pause", "Pause/resume"),
        Binding("d", "remove", "Remove"),
        Binding("a", "accept", "Accept suggestion"),
        Binding("x", "decline", "Decline suggestion"),
    ]

    def __init__(self, call: Call, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
        self.owner: KnowledgeOwner | None = None
        self.sources: dict[str, dict[str, Any]] = {}
        self.hits: dict[str, dict[str, Any]] = {}
        self.suggestions: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Static("Select an agent, or a Work in the Works view (k), to see its knowledge.", id="knowledge-owner")
        yield Static("", id="knowledge-state")
        yield DataTable(id="sources", cursor_type="row", zebra_stripes=True)
        yield Static("", id="suggestions-state")
        yield DataTable(id="suggestions", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="search the documents (enter)", id="knowledge-query")
        yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="passage-box"):
            yield Static("Highlight a source or a result to see it here.", id="passage")

    def on_mount(self) -> None:
        self.query_one("#sources", DataTable).add_columns("id", "state", "path", "files", "chunks", "meaning", "failed")
        self.query_one("#hits", DataTable).add_columns("#", "where", "headings", "why")
        self.query_one("#suggestions", DataTable).add_columns("suggestion", "path", "reason")
        self._show_suggestions([])

    def show(self, owner: KnowledgeOwner) -> None:
        """Show `owner`'s knowledge: what another owner's left on screen goes first."""
        if owner != self.owner:
            self.sources = {}
            self.query_one("#sources", DataTable).clear()
            self._show_suggestions([])
            self.query_one("#knowledge-state", Static).update("")
            self.query_one("#passage", Static).update("Highlight a source or a result to see it here.")
        self.owner = owner
        self.query_one("#knowledge-owner", Static).update(owner.title)
        self.hits = {}
        self.query_one("#hits", DataTable).clear()
        self.refresh_sources()
        self.refresh_suggestions()

    def suggested(self, event: dict[str, Any]) -> None:
        """A `knowledge.suggested`: the suggestions are read again when they are the agent's on show."""
        owner = self.owner
        if owner is not None and owner.key == "agentId" and event["suggestion"]["agentId"] == owner.id:
            self.refresh_suggestions()

    def progress(self, event: dict[str, Any]) -> None:
        """A base's `knowledge.progress`: the sources are read again when it is the base on show."""
        if self.owner is not None and self.owner.sent(event):
            self.refresh_sources()

    @work(exclusive=True, group="knowledge-list")
    async def refresh_sources(self) -> None:
        owner = self.owner
        if owner is None:
            return
        try:
            listing = await self._call("knowledge.list", owner.params)
        except JsonRpcError as exc:
            if owner == self.owner:
                self.query_one("#knowledge-state", Static).update(f"knowledge: {exc.message}")
            return
        if owner != self.owner:
            return
        if not listing["on"]:
            state = "Knowledge is off for this agent: nothing is watched, read or offered to its model."
        else:
            waiting = f" · {listing['queued']} file(s) waiting to be read" if listing["queued"] else ""
            watching = "watching its folders" if listing["watching"] else "not watching"
            state = f"{len(listing['sources'])} source(s) · {watching}{waiting}"
        self.query_one("#knowledge-state", Static).update(state)
        table = self.query_one("#sources", DataTable)
        table.clear()
        self.sources = {s["sourceId"]: s for s in listing["sources"]}
        for source in listing["sources"]:
            table.add_row(
                source["sourceId"],
                source["state"],
                source["path"],
                source["files"],
                source["chunks"],
                source["embedded"],
                len(source["failed"]) or "",
                key=source["sourceId"],
            )

    @work(exclusive=True, group="knowledge-suggestions")
    async def refresh_suggestions(self) -> None:
        owner = self.owner
        if owner is None or owner.key != "agentId":
            self._show_suggestions([])
            return
        try:
            found = await self._call("knowledge.suggestions", owner.params)
        except JsonRpcError as exc:
            if owner == self.owner:
                self._show_suggestions([])
                self.query_one("#suggestions-state", Static).update(Text(f"suggestions: {exc.message}"))
            return
        if owner == self.owner:
            self._show_suggestions(found["suggestions"])

    def _show_suggestions(self, suggestions: list[dict[str, Any]]) -> None:
        """List the pending suggestions; the table is there only while one is."""
        table = self.query_one("#suggestions", DataTable)
        table.clear()
        self.suggestions = {s["suggestionId"]: s for s in suggestions}
        for s in suggestions:
            path, reason = Text(plain_line(s["path"], 120)), Text(plain_line(s["reason"], 120))
            table.add_row(s["suggestionId"], path, reason, key=s["suggestionId"])
        table.display = bool(suggestions)
        said = (
            f"{len(suggestions)} document(s) suggested by {self.owner.name}, waiting for you: "
            "a admits the highlighted one, x declines it"
            if suggestions and self.owner is not None
            else ""
        )
        self.query_one("#suggestions-state", Static).update(said)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "knowledge-query" and event.value.strip():
            event.stop()
            self.search(event.value.strip())

    @work(exclusive=True, group="knowledge-search")
    async def search(self, query: str) -> None:
        owner = self.owner
        if owner is None:
            return
        try:
            found = await self._call("knowledge.search", {**owner.params, "query": query})
        except JsonRpcError as exc:
            self.query_one("#passage", Static).update(f"search: {exc.message}")
            return
        if owner != self.owner:
            return
        table = self.query_one("#hits", DataTable)
        table.clear()
        self.hits = {}
        for number, hit in enumerate(found["hits"], start=1):
            key = str(hit["chunkId"])
            self.hits[key] = hit
            table.add_row(number, hit["citation"], " > ".join(hit["heading"]), describe_match(hit["why"]), key=key)
        if not found["hits"]:
            self.query_one("#passage", Static).update(f"Nothing matched {query!r}.")
        else:
            table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key is None:
            return
        passage = self.query_one("#passage", Static)
        if event.data_table.id == "hits" and key in self.hits:
            hit = self.hits[key]
            masked = "\n(a secret in this passage is masked)" if hit["masked"] else ""
            passage.update(f"{hit['citation']}\nwhy: {describe_match(hit['why'])}{masked}\n\n{hit['text']}")
        elif event.data_table.id == "sources" and key in self.sources:
            source = self.sources[key]
            failed = [f"not read: {f['path']}: {f['reason']}" for f in source["failed"]]
            pattern = f" ({source['pattern']})" if source.get("pattern") else ""
            lines = [f"{source['path']}{pattern}: {source['state']}", f"added {source['addedAt']}", *failed]
            passage.update("\n".join(lines))
        elif event.data_table.id == "suggestions" and key in self.suggestions:
            s = self.suggestions[key]
            lines = [f"suggested {s['suggestedAt']} in run {s['runId']}", s["path"], f"why: {s['reason']}"]
            passage.update(Text("\n".join(plain_line(line, 5000) for line in lines)))

    def _selected_source(self) -> str | None:
        table = self.query_one("#sources", DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return str(row_key.value) if row_key.value is not None else None

    @work(group="knowledge-act")
    async def act(self, method: str, params: dict[str, Any], done: str) -> None:
        if self.owner is None:
            return
        try:
            result = await self._call(method, {**self.owner.params, **params})
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error", title="knowledge")
            return
        said = already_admitted(result) if method in ("knowledge.add", "knowledge.accept") else []
        self.notify("\n".join(said) or done, title="knowledge")
        self.refresh_sources()
        self.refresh_suggestions()

    def action_admit(self) -> None:
        def admitted(path: str | None) -> None:
            if path:
                full = os.path.abspath(os.path.expanduser(path))
                self.act("knowledge.add", {"paths": [full]}, f"admitted {full}; it is being read")

        if self.owner is not None:
            question = f"A file or folder for {self.owner.whose} to work from"
            self.app.push_screen(TextDialog(question, placeholder="~/notes"), admitted)

    def action_pause(self) -> None:
        source_id = self._selected_source()
        if source_id is not None:
            paused = self.sources[source_id]["state"] != "paused"
            done = "paused" if paused else "resumed"
            self.act("knowledge.pause", {"sourceId": source_id, "paused": paused}, f"{source_id} {done}")

    def action_remove(self) -> None:
        source_id = self._selected_source()
        if source_id is None:
            return
        path = self.sources[source_id]["path"]

        def answered(ok: bool | None) -> None:
            if ok:
                self.act("knowledge.remove", {"sourceId": source_id}, f"removed {path}")

        question = f"Remove {path}? Its text, chunks and vectors leave the disk; the files themselves stay."
        self.app.push_screen(ConfirmDialog(question, "Remove"), answered)

    def _selected_suggestion(self) -> dict[str, Any] | None:
        table = self.query_one("#suggestions", DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return self.suggestions.get(str(row_key.value))

    def action_accept(self) -> None:
        suggestion = self._selected_suggestion()
        if suggestion is None or self.owner is None:
            return
        suggestion_id, path = suggestion["suggestionId"], plain_line(suggestion["path"], 4096)

        def answered(ok: bool | None) -> None:
            if ok:
                self.act("knowledge.accept", {"suggestionId": suggestion_id}, f"admitted {path}; it is being read")

        reason = plain_line(suggestion["reason"], 1000)
        # The dialog's label reads markup: what the agent wrote is escaped so it shows as written.
        question = f"Admit {escape(path)} for {escape(self.owner.name)}? It suggested it because: {escape(reason)}"
        self.app.push_screen(ConfirmDialog(question, "Admit"), answered)

    def action_decline(self) -> None:
        suggestion = self._selected_suggestion()
        if suggestion is not None:
            path = plain_line(suggestion["path"], 200)
            self.act("knowledge.decline", {"suggestionId": suggestion["suggestionId"]}, f"declined {path}")
