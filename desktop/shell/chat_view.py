"""One agent's chat: the transcript, the streamed reply, tool calls, approvals in place, the queue, the input.

The view renders what the app hands it (a transcript page, then live events) and posts what the person
wants (`Send`, `Cancel`, `ApprovalPrompt.Decided`); the app makes the calls. While a turn runs a spinner
turns; until the first words arrive it says it is waiting (the embedded model takes seconds to load the
first time), so the shell is never silent while the host works.
"""

from __future__ import annotations

import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from desktop.receipts import receipt_ids, saw_line
from desktop.shell.entries import DECISION_WORDS, ApprovalPrompt, Notice, ReplyEntry, ToolEntry, UserEntry
from protocol.models.agents import AgentInfo
from protocol.project_note import without_project_note

__all__ = ["ChatView", "Spinner"]

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SLOW_START = 2.0
"""Seconds without a first word after which the status line explains the wait."""


class Spinner(Static):
    """A spinner that turns only while `spinning`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self._frame = 0
        self.spinning = False

    def on_mount(self) -> None:
        self.set_interval(0.1, self._turn)

    def _turn(self) -> None:
        if self.spinning:
            self._frame = (self._frame + 1) % len(FRAMES)
            self.update(FRAMES[self._frame])

    def set_spinning(self, spinning: bool) -> None:
        self.spinning = spinning
        self.update(FRAMES[self._frame] if spinning else "")


class ChatView(Vertical):
    BINDINGS = [Binding("escape", "cancel", "Cancel turn")]

    class Send(Message):
        def __init__(self, agent_id: str, text: str) -> None:
            super().__init__()
            self.agent_id = agent_id
            self.text = text

    class Cancel(Message):
        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent: AgentInfo | None = None
        self._reply: ReplyEntry | None = None
        self._tools: dict[str, ToolEntry] = {}
        self._asked: set[str] = set()
        self._prompts: dict[str, ApprovalPrompt] = {}
        self._run_started: float | None = None
        self._got_words = False
        self._saw = ""  # the latest receipt's "this reply saw ..." while its run's lines are replayed

    def compose(self) -> ComposeResult:
        yield Static("", id="chat-title")
        log = VerticalScroll(id="log")
        log.can_focus = False  # the input keeps the focus; the wheel and the keys of the input scroll it
        yield log
        yield Static("", id="queue")
        with Horizontal(id="status-row"):
            yield Spinner(id="spinner")
            yield Static("", id="status")
        prompt = Input(placeholder="Pick or create an agent (ctrl+n) to chat", id="prompt", disabled=True)
        prompt.cursor_blink = False  # a steady cursor: calmer, and every picture of the screen is the same
        yield prompt

    def on_mount(self) -> None:
        self.set_interval(0.5, self._explain_wait)

    @property
    def waiting_for_person(self) -> bool:
        return any(prompt.decision is None for prompt in self._prompts.values())

    @property
    def log_view(self) -> VerticalScroll:
        return self.query_one("#log", VerticalScroll)

    def _add(self, widget: Static | ApprovalPrompt) -> None:
        self.log_view.mount(widget)
        self.log_view.scroll_end(animate=False)

    def show(self, agent: AgentInfo, events: list[dict[str, Any]]) -> None:
        """Show `agent`'s chat from its transcript `events` (oldest first)."""
        self.agent = agent
        self.log_view.remove_children()
        self._reply, self._tools, self._asked, self._prompts = None, {}, set(), {}
        self._saw = ""
        prompt = self.query_one("#prompt", Input)
        prompt.disabled = False
        prompt.placeholder = f"Message {agent.name} (enter to send, esc to cancel a turn)"
        self.query_one("#chat-title", Static).update(f"{agent.name} · {agent.agent_id}")
        for event in events:
            self._replay(event)
        self.set_status(agent.status)

    def _replay(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "user":
            self._add(UserEntry(without_project_note(event.get("text", ""))))
        elif kind == "wake":
            self._add(UserEntry(event.get("text", ""), origin=str(event.get("fromAgent", "an agent"))))
        elif kind == "assistant":
            if event.get("text"):
                self._add(ReplyEntry(self.agent_name, event["text"] + (" (cut short)" if event.get("partial") else "")))
            for call in event.get("toolCalls", []):
                entry = ToolEntry(call["id"], call["name"], call.get("arguments", {}))
                self._tools[call["id"]] = entry
                self._add(entry)
        elif kind == "tool":
            tool = self._tools.get(event.get("toolCallId", ""))
            if tool is not None:
                tool.complete(event.get("content", ""), is_error=bool(event.get("isError")), asked=True)
        elif kind == "receipt" and receipt_ids(event):
            self._saw = saw_line(event)
        elif kind == "ended":
            self._ended(event.get("reason", "idle"), event.get("error"))
            if self._saw:  # beside the answer: which facts from memory its request carried
                self._add(Notice(self._saw))
            self._saw = ""

    @property
    def agent_name(self) -> str:
        return self.agent.name if self.agent is not None else "agent"

    def _ended(self, reason: str, error: str | None) -> None:
        for tool in self._tools.values():
            if tool.running:
                tool.stopped("cancelled" if reason == "cancelled" else "stopped: the turn ended first")
        if reason == "error":
            self._add(Notice(f"error: {error}" + _fix_for(error), error=True))
        elif reason == "cancelled":
            self._add(Notice("cancelled"))

    def host_event(self, method: str, params: dict[str, Any]) -> None:
        """A live event for the agent on show."""
        if method == "agent.started":  # the message a run answers, whichever client (or agent) sent it
            self._replay(_whole_or_marked(params))
        elif method == "agent.delta":
            if not self._got_words:  # the words have begun: what the status said while it waited is stale
                self._got_words = True
                if self._run_started is not None and not self._prompts:
                    self.set_status("running")
            if self._reply is None:
                self._reply = ReplyEntry(self.agent_name)
                self._add(self._reply)
            self._reply.append(params.get("text", ""))
            self.log_view.scroll_end(animate=False)
        elif method == "agent.message":
            message = params.get("message", {})
            if message.get("text"):
                if self._reply is None:
                    self._add(ReplyEntry(self.agent_name, message["text"]))
                else:
                    self._reply.finish(message["text"], partial=bool(message.get("partial")))
            self._reply = None
        elif method == "agent.tool":
            self._tool(params)
        elif method == "agent.ended":
            self._reply = None
            for prompt in self._prompts.values():
                if prompt.decision is None:
                    prompt.settle("the turn ended before an answer")
            self._prompts.clear()
            self._ended(params.get("reason", "idle"), params.get("error"))
        elif method == "mcp.status" and params.get("state") == "failed":
            self._add(Notice(_mcp_failure(params), error=True))

    def saw(self, line: str) -> None:
        """Show a live answer's receipt line ("this reply saw m-...") under it."""
        self._add(Notice(line))

    def _tool(self, params: dict[str, Any]) -> None:
        call_id, status = params.get("toolCallId", ""), params.get("status")
        if status == "pending":
            self._asked.add(call_id)
            action, target = params.get("action") or "?", params.get("target") or "?"
            prompt = ApprovalPrompt(call_id, params.get("name", "?"), action, target, params.get("content"))
            self._prompts[call_id] = prompt
            self._add(prompt)
            prompt.focus()
            self.set_status("waiting")
        elif status == "started":
            self._reply = None
            asked = self._prompts.pop(call_id, None)
            if asked is not None and asked.decision is None:
                asked.settle("answered elsewhere")
            entry = ToolEntry(call_id, params.get("name", "?"), params.get("arguments", {}))
            self._tools[call_id] = entry
            self._add(entry)
        elif status == "completed":
            tool = self._tools.get(call_id)
            if tool is None:
                tool = ToolEntry(call_id, params.get("name", "?"), params.get("arguments", {}))
                self._tools[call_id] = tool
                self._add(tool)
            error = bool(params.get("isError"))
            tool.complete(params.get("content") or "", is_error=error, asked=call_id in self._asked)

    def decided(self, prompt: ApprovalPrompt, decision: str, error: str | None = None) -> None:
        prompt.settle(error or DECISION_WORDS.get(decision, decision))
        self._prompts.pop(prompt.tool_call_id, None)
        self.query_one("#prompt", Input).focus()
        self.set_status("running")

    def set_queue(self, queued: list[str]) -> None:
        lines = [f"queued {i}: {text}" for i, text in enumerate(queued, 1)]
        self.query_one("#queue", Static).update("\n".join(lines))
        self.query_one("#queue", Static).display = bool(lines)

    def set_status(self, status: str) -> None:
        """`idle`, `queued`, `running` or `waiting` (for a person's answer)."""
        spinner = self.query_one("#spinner", Spinner)
        if status == "running" and self._run_started is None:
            self._run_started, self._got_words = time.monotonic(), False
        elif status == "idle":
            self._run_started = None
        spinner.set_spinning(status in ("running", "queued"))
        text = {
            "idle": "",
            "queued": "queued: waiting for a free slot on the host",
            "running": "thinking… (esc to cancel)" if not self._got_words else "replying… (esc to cancel)",
            "waiting": "waiting for your answer above (y once · a always · n deny · d never)",
        }.get(status, status)
        self.query_one("#status", Static).update(text)

    def _explain_wait(self) -> None:
        started = self._run_started
        if started is None or self._got_words or self.agent is None or self._prompts:
            return
        if time.monotonic() - started > SLOW_START:
            what = (
                "the embedded model is loading (the first turn takes about 10 s)"
                if self.agent.settings.model.provider == "local"
                else "waiting for the model's first words"
            )
            self.query_one("#status", Static).update(f"{what}… (esc to cancel)")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text and self.agent is not None:
            event.input.value = ""
            # Shown when its run starts (`agent.started`), in the order the agent answers; until then it waits
            # in the queue line.
            self.post_message(self.Send(self.agent.agent_id, text))

    def action_cancel(self) -> None:
        if self.agent is not None:
            self.post_message(self.Cancel(self.agent.agent_id))


def _mcp_failure(params: dict[str, Any]) -> str:
    """A failed MCP server as the chat shows it: the error, the likely cause, the last lines of its stderr."""
    text = f"MCP server {params.get('server')} failed: {params.get('error') or 'it stopped'}"
    if params.get("cause"):
        text += f"\nlikely cause: {params['cause']}"
    tail = str(params.get("stderrTail") or "").splitlines()[-3:]
    return text + "".join(f"\n  {line}" for line in tail)


def _whole_or_marked(started: dict[str, Any]) -> dict[str, Any]:
    """The message of `agent.started`; a cut one ends by saying how much more the transcript holds."""
    message = dict(started.get("message") or {})
    if started.get("truncated"):
        text = str(message.get("text", ""))
        more = int(started.get("textLength", 0)) - len(text)
        message["text"] = f"{text}… ({more:,} more characters: the whole message is in the transcript)"
    return message


def _fix_for(error: str | None) -> str:
    """A hint for an error the person can fix in the shell."""
    if error and ("API key" in error or "no rule matches" not in error and "model" in error.lower()):
        return "\n  fix: press ctrl+s to pick another model for this agent, or store a key with `hearth secrets set`"
    return ""
