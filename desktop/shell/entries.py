"""The pieces a chat is made of: a person's message, the agent's (streamed) reply, a tool call, an approval
question answered in place, and a notice. Each is a small widget; none talks to the host itself.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Label, Static

from desktop.describe import describe_request
from desktop.tables import one_line

__all__ = ["UserEntry", "ReplyEntry", "ToolEntry", "ApprovalPrompt", "Notice", "DECISION_WORDS"]

DECISION_WORDS = {
    "allow_once": "allowed once",
    "allow_always": "always allowed",
    "deny": "denied",
    "deny_always": "never allowed",
}


class UserEntry(Static):
    def __init__(self, text: str, *, origin: str = "you") -> None:
        super().__init__(Text.assemble((f"{origin}: ", "bold"), text), classes="entry user")


class ReplyEntry(Static):
    """The agent's reply; `append` adds streamed text as it arrives."""

    def __init__(self, name: str, text: str = "") -> None:
        super().__init__(classes="entry reply")
        self._name = name
        self.text = text
        self._render_text()

    def _render_text(self) -> None:
        self.update(Text.assemble((f"{self._name}: ", "bold"), self.text))

    def append(self, delta: str) -> None:
        self.text += delta
        self._render_text()

    def finish(self, text: str, *, partial: bool = False) -> None:
        self.text = text + (" (cut short)" if partial else "")
        self._render_text()


def _arguments(arguments: dict[str, Any]) -> str:
    if set(arguments) == {"command"}:
        return str(arguments["command"])
    return json.dumps(arguments, ensure_ascii=False)


class ToolEntry(Static):
    """A tool call: its name and arguments while it runs, then a short result (or why it was refused)."""

    def __init__(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        super().__init__(classes="entry tool")
        self.tool_call_id = tool_call_id
        self._head = f"⚙ {name} {one_line(_arguments(arguments), 100)}"
        self.outcome = "running…"
        self._render_line("running…", "")

    def _render_line(self, outcome: str, style: str) -> None:
        self.outcome = outcome
        self.update(Text.assemble((self._head, "bold"), "  ", (outcome, style)))

    @property
    def running(self) -> bool:
        return self.outcome == "running…"

    def stopped(self, why: str) -> None:
        """The turn ended with the call unfinished (cancelled, failed): it no longer says it runs."""
        self._render_line(why, "yellow")

    def complete(self, content: str, *, is_error: bool, asked: bool) -> None:
        if is_error and content.startswith("denied:"):
            word = "denied by you" if asked else "refused"
            self._render_line(f"{word}: {one_line(content.removeprefix('denied:'), 120)}", "red")
        elif is_error:
            self._render_line(f"failed: {one_line(content, 120)}", "red")
        else:
            self._render_line(f"→ {one_line(content, 120) or '(no output)'}", "green")


class ApprovalPrompt(Vertical, can_focus=True):
    """A tool call waiting for a person: the exact action and target, and four answers, each with a key."""

    BINDINGS = [
        Binding("y", "decide('allow_once')", "Allow once"),
        Binding("a", "decide('allow_always')", "Always"),
        Binding("n", "decide('deny')", "Deny"),
        Binding("d", "decide('deny_always')", "Never"),
    ]

    class Decided(Message):
        def __init__(self, prompt: ApprovalPrompt, decision: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.decision = decision

    def __init__(self, tool_call_id: str, name: str, action: str, target: str, summary: str | None) -> None:
        super().__init__(classes="entry approval")
        self.tool_call_id = tool_call_id
        self._question = f"The agent {describe_request(name, action, target)}"
        self._summary = summary
        self.decision: str | None = None

    def compose(self) -> ComposeResult:
        yield Label(Text(self._question, style="bold"), id="question")
        if self._summary:
            yield Label(one_line(self._summary, 160), classes="hint")
        with Horizontal(classes="approval-buttons"):
            yield Button("Once (y)", id="allow_once", variant="success")
            yield Button("Always (a)", id="allow_always")
            yield Button("Deny (n)", id="deny", variant="warning")
            yield Button("Never (d)", id="deny_always", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, decision: str) -> None:
        if self.decision is None:
            self.decision = decision
            self.post_message(self.Decided(self, decision))

    def settle(self, outcome: str) -> None:
        """Replace the buttons with what happened (the person's answer, or that the run ended first)."""
        self.remove_children()
        self.mount(Label(Text.assemble((self._question, "bold"), "  ", (outcome, "italic"))))
        self.can_focus = False


class Notice(Static):
    def __init__(self, text: str, *, error: bool = False) -> None:
        super().__init__(Text(text, style="bold red" if error else "italic"), classes="entry notice")
