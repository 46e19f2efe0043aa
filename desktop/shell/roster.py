"""The agents as the shell shows them: the host's view of each (status, model) plus what only the shell
knows: how many replies arrived while it was not on show, whether its last turn failed, and the messages
a person typed while it was busy, sent one by one as its turns end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from desktop.describe import describe_model
from protocol.models.agents import AgentInfo

__all__ = ["AgentState", "status_of", "agent_prompt"]

_STYLE = {"idle": "green", "running": "yellow", "queued": "cyan", "error": "red"}


@dataclass(slots=True)
class AgentState:
    info: AgentInfo
    unread: int = 0
    failed: bool = False
    queue: list[str] = field(default_factory=list)


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
    return Text.assemble(
        ("● ", _STYLE.get(status, "white")),
        (state.info.name, "bold"),
        f"  {status}",
        (unread, "bold magenta"),
        (queued, "cyan"),
        "\n  ",
        (describe_model(state.info.settings.model), "dim"),
    )
