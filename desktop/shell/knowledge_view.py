"""An agent's or a Work's knowledge as a person keeps it: the admitted sources with their state and counts,
the files that could not be read (and why), a search box whose results say why each passage matched, and the
acts: admit a path, pause or resume a source, remove one (after a confirmation).

The view shows one owner at a time (its title says whose) and every call names that owner only, so an agent's
sources and a Work's never mix. Every read and act is a host call made in a worker; a `knowledge.progress`
event of the owner on show refreshes the sources.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from desktop.knowledge_cmd import already_admitted, describe_match
from desktop.shell.dialogs import ConfirmDialog, TextDialog
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
    ]

    def __init__(self, call: Call, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
        self.owner: KnowledgeOwner | None = None
        self.sources: dict[str, dict[str, Any]] = {}
        self.hits: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Static("Select an agent, or a Work in the Works view (k), to see its knowledge.", id="knowledge-owner")
        yield Static("", id="knowledge-state")
        yield DataTable(id="sources", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="search the documents (enter)", id="knowledge-query")
        yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="passage-box"):
            yield Static("Highlight a source or a result to see it here.", id="passage")

    def on_mount(self) -> None:
        self.query_one("#sources", DataTable).add_columns("id", "state", "path", "files", "chunks", "meaning", "failed")
        self.query_one("#hits", DataTable).add_columns("#", "where", "headings", "why")

    def show(self, owner: KnowledgeOwner) -> None:
        """Show `owner`'s knowledge: what another owner's left on screen goes first."""
        if owner != self.owner:
            self.sources = {}
            self.query_one("#sources", DataTable).clear()
            self.query_one("#knowledge-state", Static).update("")
            self.query_one("#passage", Static).update("Highlight a source or a result to see it here.")
        self.owner = owner
        self.query_one("#knowledge-owner", Static).update(owner.title)
        self.hits = {}
        self.query_one("#hits", DataTable).clear()
        self.refresh_sources()

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
        said = already_admitted(result) if method == "knowledge.add" else []
        self.notify("\n".join(said) or done, title="knowledge")
        self.refresh_sources()

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
