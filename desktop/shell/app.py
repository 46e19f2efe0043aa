"""The reference desktop shell: a Textual app that talks to the host only through the wire.

Agents on the left (status, unread count, model); on the right the selected agent's chat, memory and
files. Every host call runs in a worker, so the shell never freezes while the host works; every event
arrives as a `HostEvent` message. If the host dies, the shell says so and offers to restart it.
Works get their tab only when the host offers `work.*` methods; each agent's next scheduled wake and its
use against a daily cap show in the agent list when the host offers `schedule.*` and `budget.*`.
The Knowledge view shows the selected agent's knowledge (F9), or a Work's when opened from the Works view.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from desktop.receipts import receipt_ids, saw_line
from desktop.shell.chat_view import ChatView
from desktop.shell.dialogs import AgentDialog, ConfirmDialog, HostLostDialog, TextDialog
from desktop.shell.entries import ApprovalPrompt
from desktop.shell.files_view import FilesView
from desktop.shell.knowledge_view import KnowledgeOwner, KnowledgeView
from desktop.shell.memory_view import MemoryView
from desktop.shell.roster import AgentState, agent_prompt, next_wake
from desktop.shell.session import HostEvent, HostLost, HostSession
from desktop.shell.style import CSS
from desktop.shell.works_view import WorksView
from protocol.errors import METHOD_NOT_FOUND, JsonRpcError
from protocol.models.agents import AgentInfo

__all__ = ["HearthApp"]

RECEIPT_LOOKBACK = 200
"""Newest transcript lines searched for an ended run's receipt (its tool calls and replies follow it)."""

_RUN_EVENTS = {"agent.started", "agent.delta", "agent.message", "agent.tool", "agent.ended"}


class HearthApp(App[None]):
    TITLE = "Hearth"
    CSS = CSS
    BINDINGS = [
        Binding("ctrl+n", "new_agent", "New agent"),
        Binding("f2", "rename", "Rename"),
        Binding("ctrl+s", "settings", "Settings"),
        Binding("f8", "delete", "Delete"),
        Binding("f3", "tab('chat')", "Chat"),
        Binding("f4", "tab('memory')", "Memory"),
        Binding("f5", "tab('files')", "Files"),
        Binding("f6", "next_agent", "Next agent"),
        Binding("f7", "tab('works')", "Works"),
        Binding("f9", "tab('knowledge')", "Knowledge"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, data_dir: Path, *, verbose: bool = False, first_agent: str | None = "Assistant") -> None:
        """`first_agent` is made (on the default, embedded model) when the host has no agent at all."""
        super().__init__()
        self.first_agent = first_agent
        self.session = HostSession(self, data_dir, verbose=verbose)
        self.agents: dict[str, AgentState] = {}
        self._early_questions: list[dict[str, Any]] = []  # offered by the host before the agents were listed
        self.current: str | None = None
        self.kernel = "starting"
        self.model_state = ""
        self.changed = asyncio.Event()
        """Set whenever the shell has handled something from the host, an event or an answer (tests wait on it)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="")
        with Horizontal():
            with Vertical(id="sidebar"):
                yield Static("Agents", classes="heading")
                yield OptionList(id="agents")
                yield Static("connecting to the host…", id="host-status")
            with TabbedContent(id="main", initial="chat"):
                with TabPane("Chat (F3)", id="chat"):
                    yield ChatView(id="chat-view")
                with TabPane("Memory (F4)", id="memory"):
                    yield MemoryView(self.call, id="memory-view")
                with TabPane("Files (F5)", id="files"):
                    yield FilesView(self.call, id="files-view")
                with TabPane("Works (F7)", id="works-tab"):
                    yield WorksView(self.call, self._agent_names, id="works-view")
                with TabPane("Knowledge (F9)", id="knowledge"):
                    yield KnowledgeView(self.call, id="knowledge-view")
        yield Footer()

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self.session.call(method, params)
        finally:
            self._settled()  # an answer is something from the host too: the caller shows it before it next waits

    def on_mount(self) -> None:
        self.connect()

    def _settled(self) -> None:
        self.changed.set()

    @work(exclusive=True, group="connect")
    async def connect(self) -> None:
        self._show_status("connecting to the host…")
        try:
            await self.session.connect()
            status = await self.call("host.status", {})
            listing = await self.call("agent.list", {})
            if not listing["agents"] and self.first_agent:
                await self.call("agent.create", {"name": self.first_agent})
                listing = await self.call("agent.list", {})
        except JsonRpcError as exc:
            self._show_status(f"no host: {exc.message}")
            self.push_screen(HostLostDialog(exc.message), self._restart_or_quit)
            return
        await self._offer_works()
        self.kernel = status["kernel"]["state"]
        self.agents = {a["agentId"]: AgentState(AgentInfo.model_validate(a)) for a in listing["agents"]}
        self._take_early_questions()
        for agent_id in self.agents:
            await self._own_time(agent_id)
        self._render_roster()
        if self.current not in self.agents:
            self.current = next(iter(self.agents), None)
        if self.current is not None:
            self.select(self.current)
        self._settled()

    def _take_early_questions(self) -> None:
        """Questions the host offered while the agents were not yet known go to their agents now."""
        early, self._early_questions = self._early_questions, []
        for question in early:
            state = self.agents.get(str(question.get("agentId")))
            if state is None:
                self._early_questions.append(question)
            else:
                state.questions[str(question.get("toolCallId"))] = question

    async def _offer_works(self) -> None:
        """Show the Works tab only when the host has `work.*` methods."""
        main = self.query_one("#main", TabbedContent)
        try:
            await self.call("work.list", {})
        except JsonRpcError as exc:
            if exc.code == METHOD_NOT_FOUND:
                main.hide_tab("works-tab")
                return
        main.show_tab("works-tab")
        self.query_one("#works-view", WorksView).refresh_works()

    async def _own_time(self, agent_id: str) -> None:
        """Read the agent's next wake and today's spending (nothing when the host has no schedules)."""
        state = self.agents.get(agent_id)
        if state is None:
            return
        try:
            schedules = (await self.call("schedule.list", {"agentId": agent_id}))["schedules"]
            state.budget = await self.call("budget.get", {"agentId": agent_id})
        except JsonRpcError as exc:
            if exc.code != METHOD_NOT_FOUND:
                self.notify(exc.message, severity="error")
            return
        state.wake = next_wake(schedules)

    @work(group="receipts")
    async def show_receipt(self, agent_id: str, run_id: str) -> None:
        """Beside a live answer, as beside one read back: which facts from memory its request carried."""
        try:
            page = await self.call("agent.transcript", {"agentId": agent_id, "limit": RECEIPT_LOOKBACK})
        except JsonRpcError:
            return  # the answer stands without it; reading the chat again shows it
        receipt = next((e for e in page["events"] if e.get("type") == "receipt" and e.get("runId") == run_id), None)
        if receipt is not None and receipt_ids(receipt) and agent_id == self.current:
            self.query_one("#chat-view", ChatView).saw(saw_line(receipt))
        self._settled()

    @work(group="own-time")
    async def refresh_own_time(self, agent_id: str) -> None:
        await self._own_time(agent_id)
        self._refresh_agent(agent_id)
        self._settled()

    def _host_line(self) -> None:
        words = {"up": "ready", "starting": "kernel starting…", "down": "kernel restarting…"}
        kernel = words.get(self.kernel, self.kernel)
        model_words = {"loading": " · embedded model loading…", "failed": " · embedded model failed"}
        model = model_words.get(self.model_state, "")
        count = f"{len(self.agents)} agent" + ("" if len(self.agents) == 1 else "s")
        self._show_status(f"host: {kernel} · {count}{model}")

    def _show_status(self, text: str) -> None:
        """Show `text` on the status line; nothing once it is gone (closing takes the main widgets down, and a
        worker still finishing, a roster load on a busy machine, must not end the app then)."""
        for status in self.query("#host-status").results(Static):
            status.update(text)

    def _render_roster(self) -> None:
        agents = self.query_one("#agents", OptionList)
        highlighted = self.current
        agents.clear_options()
        agents.add_options([Option(agent_prompt(state), id=agent_id) for agent_id, state in self.agents.items()])
        if highlighted in self.agents:
            agents.highlighted = list(self.agents).index(highlighted)
        self._host_line()

    def _refresh_agent(self, agent_id: str) -> None:
        if agent_id in self.agents:
            self.query_one("#agents", OptionList).replace_option_prompt(agent_id, agent_prompt(self.agents[agent_id]))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.select(event.option.id)

    @work(exclusive=True, group="select")
    async def select(self, agent_id: str) -> None:
        state = self.agents.get(agent_id)
        if state is None:
            return
        self.current = agent_id
        state.unread = 0
        self._refresh_agent(agent_id)
        try:
            page = await self.call("agent.transcript", {"agentId": agent_id, "limit": 200})
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error")
            return
        if self.current != agent_id:
            return
        chat = self.query_one("#chat-view", ChatView)
        chat.show(state.info, page["events"])
        for question in list(state.questions.values()):  # asked while the agent was not on show, or elsewhere
            chat.host_event("agent.tool", question)
        chat.set_queue(state.queue)
        self.query_one("#memory-view", MemoryView).show(agent_id)
        self.query_one("#files-view", FilesView).show(agent_id)
        self.query_one("#knowledge-view", KnowledgeView).show(KnowledgeOwner.agent(agent_id, state.info.name))
        self.sub_title = state.info.name
        chat.query_one("#prompt").focus()
        self._settled()

    def on_host_event(self, event: HostEvent) -> None:
        try:
            self._host_event(event.method, event.params)
        except NoMatches:
            if self.screen_stack and self.screen_stack[0].query("#host-status"):
                raise  # the main widgets stand: a real fault
            # An event that came before the main widgets were composed, or as the app closed: nothing shows it.

    def _host_event(self, method: str, params: dict[str, Any]) -> None:
        agent_id = params.get("agentId")
        if method == "agent.updated" and isinstance(agent_id, str):
            self._agent_updated(agent_id, params.get("agent"))
        elif method == "agent.tool" and params.get("status") == "pending" and agent_id not in self.agents:
            self._early_questions.append(params)
        elif method in _RUN_EVENTS and isinstance(agent_id, str) and agent_id in self.agents:
            state = self.agents[agent_id]
            _track_questions(state, method, params)
            if agent_id == self.current:
                self.query_one("#chat-view", ChatView).host_event(method, params)
                if _changes_files(method, params):
                    self.query_one("#files-view", FilesView).changed()
                if method == "agent.ended":
                    self.show_receipt(agent_id, str(params.get("runId")))
            elif method == "agent.message":
                state.unread += 1
            if method == "agent.ended":
                state.failed = params.get("reason") == "error"
                state.sent.pop(str(params.get("runId")), None)
                if state.budget is not None and any(state.budget["limits"].values()):
                    self.refresh_own_time(agent_id)
            self._refresh_agent(agent_id)
        elif method in ("schedule.updated", "schedule.fired"):
            owner = (params.get("schedule") or params.get("firing") or {}).get("agentId")
            for known in [owner] if owner in self.agents else list(self.agents):
                self.refresh_own_time(known)
        elif method == "agent.warning":
            self.notify(str(params.get("message", "")), severity="warning", title=str(agent_id or "warning"))
        elif method in ("memory.changed", "memory.proposed") and agent_id == self.current:
            self.query_one("#memory-view", MemoryView).refresh_facts()
            self.query_one("#files-view", FilesView).changed()  # MEMORY.md and the ledger grew
            if method == "memory.proposed":
                count = len(params.get("records", []))
                self.notify(f"{count} fact(s) wait for your review (F4)", title="memory")
        elif method == "knowledge.progress":
            self.query_one("#knowledge-view", KnowledgeView).progress(params)
        elif method == "knowledge.suggested":
            self.query_one("#knowledge-view", KnowledgeView).suggested(params)
            who = params["suggestion"]["agentId"]
            name = self.agents[who].info.name if who in self.agents else who
            self.notify(f"{name} suggested a document; you decide in its Knowledge view (F9)", title="knowledge")
        elif method == "mcp.status" and agent_id == self.current:
            self.query_one("#chat-view", ChatView).host_event(method, params)
        elif method in ("work.updated", "work.event"):
            self.query_one("#works-view", WorksView).refresh_works()
        elif method == "model.status":
            self.model_state = str(params.get("state", ""))
            if self.model_state == "failed":
                self.notify(str(params.get("error") or "the embedded model failed to load"), severity="error")
            self._host_line()
        elif method in ("kernel.up", "kernel.down"):
            self.kernel = "up" if method == "kernel.up" else "down"
            self._host_line()
        self._settled()

    def _agent_updated(self, agent_id: str, raw: dict[str, Any] | None) -> None:
        if raw is None:
            self.agents.pop(agent_id, None)
            if self.current == agent_id:
                self.current = next(iter(self.agents), None)
                if self.current is not None:
                    self.select(self.current)
            self._render_roster()
            return
        info = AgentInfo.model_validate(raw)
        if agent_id not in self.agents:
            self.agents[agent_id] = AgentState(info)
            self._take_early_questions()
            self._render_roster()
        else:
            state = self.agents[agent_id]
            state.info = info
            waiting = {run.run_id for run in info.queue}
            state.sent = {run_id: text for run_id, text in state.sent.items() if run_id in waiting}
            self._refresh_agent(agent_id)
        if agent_id == self.current:
            chat = self.query_one("#chat-view", ChatView)
            chat.agent = info
            chat.set_queue(self.agents[agent_id].queue)
            if not chat.waiting_for_person or info.status == "idle":
                chat.set_status(info.status)

    def on_chat_view_send(self, message: ChatView.Send) -> None:
        if message.agent_id in self.agents:
            self.send(message.agent_id, message.text)

    @work(group="send")
    async def send(self, agent_id: str, text: str) -> None:
        """Send a message; to a busy agent the host queues it, and the shell shows it waiting."""
        try:
            sent = await self.call("agent.send", {"agentId": agent_id, "text": text})
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error", title="not sent")
            return
        state = self.agents.get(agent_id)
        if state is not None:
            state.failed = False
            if sent.get("position"):
                state.sent[sent["runId"]] = text
                if agent_id == self.current:
                    self.query_one("#chat-view", ChatView).set_queue(state.queue)
                self._refresh_agent(agent_id)

    @work(group="send")
    async def on_chat_view_cancel(self, message: ChatView.Cancel) -> None:
        """Stop: the running turn, and the messages this shell sent that wait behind it."""
        state = self.agents.get(message.agent_id)
        waiting = list(state.sent) if state is not None else []
        try:
            # The waiting ones first: once the running turn ends, the next would start.
            for run_id in waiting:
                await self.call("agent.cancel", {"agentId": message.agent_id, "runId": run_id})
            cancelled = (await self.call("agent.cancel", {"agentId": message.agent_id}))["cancelled"]
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error")
            return
        if state is not None:
            state.sent.clear()
        if waiting:
            self.notify(f"dropped {len(waiting)} queued message(s)")
        elif not cancelled:
            self.notify("nothing is running")

    @work(group="decide")
    async def on_approval_prompt_decided(self, message: ApprovalPrompt.Decided) -> None:
        chat = self.query_one("#chat-view", ChatView)
        params = {"agentId": self.current, "toolCallId": message.prompt.tool_call_id, "decision": message.decision}
        try:
            await self.call("agent.decideTool", params)
        except JsonRpcError as exc:
            chat.decided(message.prompt, message.decision, error=exc.message)
            return
        chat.decided(message.prompt, message.decision)
        self._settled()

    def _later(self, job: Coroutine[Any, Any, None]) -> None:
        """Run a dialog's follow-up host call in a worker, so the shell stays responsive."""
        self.run_worker(job, group="agents")

    def _agent_names(self) -> dict[str, str]:
        return {agent_id: state.info.name for agent_id, state in self.agents.items()}

    def action_tab(self, tab: str) -> None:
        state = self.agents.get(self.current or "")
        if tab == "knowledge" and state is not None:
            # F9 is the selected agent's knowledge, even when the view was showing a Work's.
            view = self.query_one("#knowledge-view", KnowledgeView)
            owner = KnowledgeOwner.agent(state.info.agent_id, state.info.name)
            if view.owner != owner:
                view.show(owner)
        pane = "works-tab" if tab == "works" else tab
        self.query_one("#main", TabbedContent).active = pane
        # Focus moves into the pane on show; a focus left in a hidden pane would switch the tab back.
        targets = {"chat": "#prompt", "memory": "#facts", "files": "#file-tree", "works": "#works"}
        target = {**targets, "knowledge": "#knowledge-query"}[tab]
        self.query_one(target).focus()

    def on_works_view_open_knowledge(self, message: WorksView.OpenKnowledge) -> None:
        self.query_one("#knowledge-view", KnowledgeView).show(KnowledgeOwner.work(message.work_id, message.name))
        self.query_one("#main", TabbedContent).active = "knowledge"
        self.query_one("#knowledge-query").focus()

    def action_next_agent(self) -> None:
        ids = list(self.agents)
        if ids:
            at = ids.index(self.current) if self.current in ids else -1
            self.select(ids[(at + 1) % len(ids)])

    def action_new_agent(self) -> None:
        self.push_screen(AgentDialog(), lambda answer: self._later(self._create(answer)))

    async def _create(self, params: dict[str, Any] | None) -> None:
        if not params:
            return
        try:
            created = await self.call("agent.create", params)
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error", title="not created")
            return
        self.agents.setdefault(created["agentId"], AgentState(AgentInfo.model_validate(created)))
        self._render_roster()
        self.select(created["agentId"])

    def action_rename(self) -> None:
        state = self.agents.get(self.current or "")
        if state is not None:
            self.push_screen(
                TextDialog(f"Rename {state.info.name}", state.info.name),
                lambda answer: self._later(self._rename(answer)),
            )

    async def _rename(self, name: str | None) -> None:
        if name and self.current:
            await self._update({"agentId": self.current, "name": name})

    def action_settings(self) -> None:
        state = self.agents.get(self.current or "")
        if state is not None:
            self.push_screen(AgentDialog(state.info), lambda answer: self._later(self._save_settings(answer)))

    async def _save_settings(self, params: dict[str, Any] | None) -> None:
        if params and self.current:
            await self._update({"agentId": self.current, **params})

    async def _update(self, params: dict[str, Any]) -> None:
        try:
            await self.call("agent.update", params)
        except JsonRpcError as exc:
            self.notify(exc.message, severity="error", title="not saved")

    def action_delete(self) -> None:
        state = self.agents.get(self.current or "")
        if state is None:
            return
        question = f"Delete {state.info.name} ({state.info.agent_id})? Its directory goes to the trash."
        self.push_screen(ConfirmDialog(question, "Delete"), lambda answer: self._later(self._delete(answer)))

    async def _delete(self, yes: bool | None) -> None:
        if yes and self.current:
            try:
                await self.call("agent.delete", {"agentId": self.current})
            except JsonRpcError as exc:
                self.notify(exc.message, severity="error", title="not deleted")

    def on_host_lost(self, event: HostLost) -> None:
        self._show_status(f"host: gone ({event.reason})")
        self.push_screen(HostLostDialog(event.reason), self._restart_or_quit)
        self._settled()

    def _restart_or_quit(self, restart: bool | None) -> None:
        if restart:
            self.connect()
        else:
            self.exit()

    async def on_unmount(self) -> None:
        await self.session.close()


def _track_questions(state: AgentState, method: str, params: dict[str, Any]) -> None:
    """Keep `state.questions` to the ones still open: a question leaves once its call runs or its run ends."""
    if method == "agent.tool":
        call_id = str(params.get("toolCallId"))
        if params.get("status") == "pending":
            state.questions[call_id] = params
        else:
            state.questions.pop(call_id, None)
    elif method == "agent.ended":
        run_id = params.get("runId")
        state.questions = {call: q for call, q in state.questions.items() if q.get("runId") != run_id}


def _changes_files(method: str, params: dict[str, Any]) -> bool:
    """Whether a run event wrote the agent's transcript or may have changed its files (not a streamed delta)."""
    if method == "agent.tool":
        return params.get("status") == "completed"
    return method in ("agent.started", "agent.message", "agent.ended")
