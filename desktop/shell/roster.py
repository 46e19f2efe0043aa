"""The agents as the shell shows them: the host's view of each (status, model, the runs waiting behind
the current one, its next scheduled wake, its model use against a daily cap) plus what only the shell knows:
how many replies arrived while it was not on show, whether its last turn failed, the text of the messages it
sent that wait in the host's queue, and the questions that wait for a person (shown when the agent is,
whichever client started the run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from desktop.describe import describe_model
from protocol.models.agents import AgentInfo

__all__ = ["AgentState", "status_of", "agent_prompt", "next_wake", "spending"]

_STYLE = {"idle": "green", "running": "yellow", "queued": "cyan", "error": "red"}


@dataclass(slots=True)
class AgentState:
    info: AgentInfo
    unread: int = 0
    failed: bool = False
    sent: dict[str, str] = field(default_factory=dict)
    """runId → text of this shell's messages, for showing them while they wait."""
    questions: dict[str, dict[str, object]] = field(default_factory=dict)
    """toolCallId → the `agent.tool` pending event of each question that waits for a person's answer."""
    wake: str | None = None
    """When its next schedule fires (the host's `nextDue`), if one is active."""
    budget: dict[str, Any] | None = None
    """Its `budget.get`: today's model use and the daily caps."""

    @property
    def queue(self) -> list[str]:
        """The waiting runs in order, as a person reads them."""
        return [self.sent.get(run.run_id) or _describe_waiting(run.kind, run.from_agent) for run in self.info.queue]


def _describe_waiting(kind: str, from_agent: str | None) -> str:
    return {
        "user": "a message (sent from elsewhere)",
        "wake": f"a message from {from_agent or 'an agent'}",
        "answer": f"an answer from {from_agent or 'an agent'}",
        "work": "a Work instruction",
    }.get(kind, kind)


def next_wake(schedules: list[dict[str, Any]]) -> str | None:
    """The earliest `nextDue` of an agent's schedules (None: nothing will wake it)."""
    return min((s["nextDue"] for s in schedules if s.get("nextDue")), default=None)


def spending(budget: dict[str, Any] | None) -> str:
    """Today's use against the agent's cap (`3/50 req today`, `budget spent`); empty without a cap."""
    if budget is None:
        return ""
    limits, today = budget["limits"], budget["today"]
    if budget["spent"]:
        return "budget spent"
    if limits.get("requestsPerDay"):
        return f"{today['requests']}/{limits['requestsPerDay']} req today"
    if limits.get("tokensPerDay"):
        return f"{today['tokens']}/{limits['tokensPerDay']} tokens today"
    return ""


def status_of(state: AgentState) -> str:
    """`idle`, `running`, `queued` or `error` (an idle agent whose last turn failed)."""
    if state.info.status == "idle" and state.failed:
        return "error"
    return state.info.status


def agent_prompt(state: AgentState) -> Text:
    """Two lines for the agent list: name, status and unread count; then the model."""
    status = status_of(state)
    unread = f"  {state.unread} new" if state.unread else ""
    queued = f"  +{len(state.queue)} queued" if state.queue else ""
    asks = "  asks you" if state.questions else ""
    wake = f" · next {state.wake[5:10]} {state.wake[11:16]}" if state.wake else ""
    spent = spending(state.budget)
    return Text.assemble(
        ("● ", _STYLE.get(status, "white")),
        (state.info.name, "bold"),
        f"  {status}",
        (asks, "bold yellow"),
        (unread, "bold magenta"),
        (queued, "cyan"),
        "\n  ",
        (describe_model(state.info.settings.model), "dim"),
        (wake, "cyan"),
        (f" · {spent}" if spent else "", "red" if spent == "budget spent" else "dim"),
    )
