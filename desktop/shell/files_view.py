"""An agent's directory, read-only: its files as a tree (scratch workspace first), a file's text, and the
transcript as the host stores it. Everything is read through the host (`agent.files`, `agent.readFile`,
`agent.transcript`); the shell never opens the agent's directory itself. The view stays live: what the host
announces for the agent (a message, a tool's result, a run's end, a memory change) reads it again (the open
folders, the file on show, the transcript) when it is on screen, or as soon as it is shown; `r` reads it again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import ContentSwitcher, Tab, Tabs, TextArea, Tree
from textual.widgets.tree import TreeNode

from desktop.describe import describe_event
from protocol.errors import JsonRpcError

__all__ = ["FilesView"]

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
TRANSCRIPT_PAGE = 500


class FilesView(Vertical):
    BINDINGS = [Binding("r", "reload", "Refresh")]

    def __init__(self, call: Call, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
        self.agent_id: str | None = None
        self._open: set[str] = set()
        """The folders the person opened (paths), opened again when the tree is read again."""
        self._file: str | None = None
        self._stale = False

    def compose(self) -> ComposeResult:
        # Tabs and a switcher rather than a nested TabbedContent, which would fight the outer one over focus.
        yield Tabs(Tab("Files", id="files-pane"), Tab("Transcript", id="transcript-pane"), id="files-tabs")
        with ContentSwitcher(initial="files-pane", id="files-switch"):
            with Horizontal(id="files-pane"):
                yield Tree("agent", id="file-tree")
                yield TextArea("", read_only=True, id="file-text", show_line_numbers=True)
            yield TextArea("", read_only=True, id="transcript-pane")

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        if event.tab.id is not None:
            self.query_one("#files-switch", ContentSwitcher).current = event.tab.id

    def show(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self._open, self._file, self._stale = set(), None, False
        tree = self.query_one("#file-tree", Tree)
        tree.clear()
        tree.root.set_label(agent_id)
        tree.root.data = ""
        self.query_one("#file-text", TextArea).load_text("")
        self.load_folder(tree.root)
        self.load_transcript()

    def changed(self) -> None:
        """The host announced a change to the agent on show: read it again now, or once the view is shown."""
        if self.is_on_screen:
            self.action_reload()
        else:
            self._stale = True

    def on_show(self) -> None:
        if self._stale:
            self.action_reload()

    def action_reload(self) -> None:
        self._stale = False
        self.load_folder(self.query_one("#file-tree", Tree).root)
        self.load_transcript()
        if self._file is not None:
            self.load_file(self._file)

    @work(group="files")
    async def load_folder(self, node: TreeNode[Any]) -> None:
        if self.agent_id is None:
            return
        try:
            listing = await self._call("agent.files", {"agentId": self.agent_id, "path": node.data or ""})
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error", title="files")
            return
        node.remove_children()
        # Folders first, the scratch workspace before everything: it is what the agent works in.
        entries = sorted(listing["entries"], key=lambda e: (e["name"] != "scratch", e["kind"] != "dir", e["name"]))
        for entry in entries:
            label = entry["name"] + ("/" if entry["kind"] == "dir" else " →" if entry["kind"] == "symlink" else "")
            if entry["kind"] == "dir":
                child = node.add(label, data=entry["path"], allow_expand=True)
                if entry["path"] in self._open:
                    self.load_folder(child)
            else:
                node.add_leaf(f"{label}  {entry['size']} B" if entry["kind"] == "file" else label, data=entry["path"])
        node.expand()

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Any]) -> None:
        if event.node is not event.node.tree.root:
            self._open.add(str(event.node.data))
            if not event.node.children:
                self.load_folder(event.node)

    def on_tree_node_collapsed(self, event: Tree.NodeCollapsed[Any]) -> None:
        self._open.discard(str(event.node.data))

    def on_tree_node_selected(self, event: Tree.NodeSelected[Any]) -> None:
        if event.node.allow_expand or event.node.data is None or event.node is event.node.tree.root:
            return
        self._file = str(event.node.data)
        self.load_file(self._file)

    @work(exclusive=True, group="file-text")
    async def load_file(self, path: str) -> None:
        if self.agent_id is None:
            return
        view = self.query_one("#file-text", TextArea)
        try:
            found = await self._call("agent.readFile", {"agentId": self.agent_id, "path": path})
        except JsonRpcError as exc:
            view.load_text(f"{path}: {exc.message}")
            return
        if found.get("binary"):
            view.load_text(f"{path}: {found['size']} bytes, not text")
        else:
            tail = f"\n… ({found['size']} bytes in all; the rest is not shown)" if found.get("truncated") else ""
            view.load_text(found.get("text", "") + tail)

    @work(exclusive=True, group="transcript")
    async def load_transcript(self) -> None:
        if self.agent_id is None:
            return
        try:
            page = await self._call("agent.transcript", {"agentId": self.agent_id, "limit": TRANSCRIPT_PAGE})
        except JsonRpcError as exc:
            self.query_one("#transcript-pane", TextArea).load_text(exc.message)
            return
        lines = [f"#{e['seq']:<5} {e.get('ts', '')[:19]}  {describe_event(e)}" for e in page["events"]]
        if page.get("hasMore"):
            lines.insert(0, f"(older events are not shown; the last {TRANSCRIPT_PAGE} are)")
        self.query_one("#transcript-pane", TextArea).load_text("\n".join(lines) or "(nothing yet)")
