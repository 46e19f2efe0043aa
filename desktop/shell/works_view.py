"""Works, read over the wire (`work.list`, `work.timeline`): each shared room's members, its task board
(status, assignee, the last handoff) and its timeline, refreshed as `work.updated` and `work.event` arrive.
A person makes a Work here (`n`: its name, then its members by name); agents and the host change it.
`k` opens the selected Work's knowledge (the app shows it in the Knowledge view).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from desktop.shell.dialogs import TextDialog
from desktop.tables import one_line
from protocol.errors import JsonRpcError

__all__ = ["WorksView"]

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


EMPTY = "No Works yet. Press n to make one (a name, then the agents in it), or ask an agent to start one."


class WorksView(Horizontal):
    BINDINGS = [Binding("n", "new_work", "New Work"), Binding("k", "knowledge", "Work's knowledge")]

    class OpenKnowledge(Message):
        """A person asked for a Work's knowledge."""

        def __init__(self, work_id: str, name: str) -> None:
            super().__init__()
            self.work_id = work_id
            self.name = name

    def __init__(self, call: Call, agents: Callable[[], dict[str, str]], **kwargs: Any) -> None:
        """`agents()` maps each agent's id to its name (the members a person can name)."""
        super().__init__(**kwargs)
        self._call = call
        self._agents = agents
        self.works: dict[str, dict[str, Any]] = {}
        self.current: str | None = None

    def compose(self) -> ComposeResult:
        yield OptionList(id="works")
        with Vertical(id="work-detail"):
            yield Static(EMPTY, id="work-members")
            yield DataTable(id="work-board", cursor_type="row")
            yield TextArea("", read_only=True, id="work-timeline")

    def on_mount(self) -> None:
        self.query_one("#work-board", DataTable).add_columns("task", "status", "assignee", "last handoff")

    @work(exclusive=True, group="works")
    async def refresh_works(self) -> None:
        try:
            listing = await self._call("work.list", {})
        except JsonRpcError as exc:
            self.query_one("#work-members", Static).update(f"works: {exc.message}")
            return
        self.works = {w["workId"]: w for w in listing["works"]}
        options = self.query_one("#works", OptionList)
        options.clear_options()
        options.add_options(
            [Option(f"{w['name']}\n  {len(w['members'])} members", id=i) for i, w in self.works.items()]
        )
        if self.current not in self.works:
            self.current = next(iter(self.works), None)
        if self.current is not None:
            await self._show(self.current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.current = event.option.id
            self.refresh_works()

    async def _show(self, work_id: str) -> None:
        info = self.works[work_id]
        members = ", ".join(info["members"]) or "nobody yet"
        self.query_one("#work-members", Static).update(f"{info['name']} · members: {members}")
        board = self.query_one("#work-board", DataTable)
        board.clear()
        for task in info.get("tasks", []):
            handoffs = task.get("handoffs") or []
            last = f"{handoffs[-1]['by']}: {one_line(handoffs[-1]['summary'], 60)}" if handoffs else ""
            board.add_row(task["title"], task["status"], task.get("assignee") or "", last, key=task["taskId"])
        try:
            page = await self._call("work.timeline", {"workId": work_id, "limit": 1000})
        except JsonRpcError as exc:
            self.query_one("#work-timeline", TextArea).load_text(exc.message)
            return
        lines = [f"#{e['seq']:<4} {e['actor']} ({e['kind']}): {e['text']}" for e in page["entries"]]
        self.query_one("#work-timeline", TextArea).load_text("\n".join(lines) or "(an empty timeline)")

    def action_knowledge(self) -> None:
        info = self.works.get(self.current or "")
        if info is None:
            self.app.notify("no Work to show the knowledge of yet", severity="warning")
            return
        self.post_message(self.OpenKnowledge(info["workId"], info["name"]))

    def action_new_work(self) -> None:
        def named(name: str | None) -> None:
            if name:
                names = ", ".join(self._agents().values()) or "none yet"
                question = f"Who works in {name}? Agents' names, separated by commas (agents: {names})"

                def chosen(members: str | None) -> None:
                    self._create(name, members or "")

                self.app.push_screen(TextDialog(question), chosen)

        self.app.push_screen(TextDialog("Name of the new Work", placeholder="e.g. Launch"), named)

    @work(group="works-create")
    async def _create(self, name: str, members: str) -> None:
        by_name = {agent_name.casefold(): agent_id for agent_id, agent_name in self._agents().items()}
        wanted = [part.strip() for part in members.split(",") if part.strip()]
        unknown = [part for part in wanted if part.casefold() not in by_name and part not in self._agents()]
        if unknown:
            self.app.notify(f"no agent named {', '.join(unknown)}; the Work was not made", severity="error")
            return
        ids = [by_name.get(part.casefold(), part) for part in wanted]
        try:
            made = await self._call("work.create", {"name": name, "members": ids})
        except JsonRpcError as exc:
            self.app.notify(f"the Work was not made: {exc.message}", severity="error")
            return
        self.current = made["workId"]
        self.refresh_works()
