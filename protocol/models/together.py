"""Wire models for agents working together: the host-executed tools the model calls, and queued runs.

Each tool's arguments are one model (camelCase, unknown fields refused); its docstring is the tool's
description for the model, and its JSON Schema the tool's input schema, so the model, the docs and the
schema export read the same definition. `HOST_TOOLS` lists every tool by its exact name.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.base import Params, WireModel

__all__ = [
    "RequestStatus",
    "QueuedRunKind",
    "QueuedRun",
    "SendToAgentArgs",
    "AskAgentArgs",
    "ReplyToAgentArgs",
    "CreateAgentArgs",
    "ReadAgentTranscriptArgs",
    "CheckAgentArgs",
    "StopAgentArgs",
    "PostToWorkArgs",
    "HandoffTaskArgs",
    "ReadWorkTimelineArgs",
    "PEER_TOOLS",
    "WORK_TOOLS",
    "HOST_TOOLS",
    "REQUEST_ID_PATTERN",
]

REQUEST_ID_PATTERN = r"^q-[0-9a-f]{12}$"
"""A durable request's id."""

RequestStatus = Literal["answered", "timeout", "failed", "refused"]
"""How a request ended: every request ends with exactly one of these."""

QueuedRunKind = Literal["user", "wake", "answer", "work", "schedule"]
"""What a queued run answers: a person's message, a peer's wake, a request's outcome, a Work instruction, or a
schedule's firing."""

AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN, description="The other agent's id, as the roster shows it.")]


class QueuedRun(WireModel):
    """A run waiting for its agent (its message is written to the transcript when the run starts)."""

    run_id: str
    kind: QueuedRunKind
    position: int = Field(description="1 is next after the running turn.")
    from_agent: str | None = None
    request_id: str | None = None
    work_id: str | None = None


class SendToAgentArgs(Params):
    """Send a message to another agent. It reaches that agent as a message from you (not from the user) and
    wakes it; you get no reply through this tool (it answers at once). Use ask_agent when you need an answer.
    `priority: true` interrupts what the other agent is doing; use it only when it cannot wait."""

    agent_id: AgentId
    message: str = Field(min_length=1, max_length=20_000)
    priority: bool = False


class AskAgentArgs(Params):
    """Ask another agent a question. The host records the request and answers this call at once; you are
    woken later with the answer as a new message, or with why there is none (timeout, failed, refused).
    End your turn after asking unless you have other work."""

    agent_id: AgentId
    question: str = Field(min_length=1, max_length=20_000)
    timeout_seconds: int = Field(default=300, ge=1, le=86_400, description="How long to wait for the answer.")


class ReplyToAgentArgs(Params):
    """Answer a request another agent sent you (its id is in the question's header). Without this call,
    your final message of the turn the question started is sent as the answer."""

    request_id: str = Field(pattern=REQUEST_ID_PATTERN)
    answer: str = Field(min_length=1, max_length=20_000)


class CreateAgentArgs(Params):
    """Create a new teammate agent (same model as you). At most one per turn: creating agents in bulk is a
    person's decision, and a loop that creates agents could fill the machine."""

    name: str = Field(min_length=1, max_length=200)
    instructions: str = Field(default="", max_length=20_000)


class ReadAgentTranscriptArgs(Params):
    """Read what another agent was told and said recently: messages, replies and the names of the tools it
    used. Never its memory, its tool results or anything it keeps private."""

    agent_id: AgentId
    limit: int = Field(default=30, ge=1, le=200, description="At most this many entries, newest last.")


class CheckAgentArgs(Params):
    """See whether another agent is idle or working, how many runs wait for it, and your open requests."""

    agent_id: AgentId


class StopAgentArgs(Params):
    """Stop another agent: cancel what it is doing, drop what waits for it, and refuse the requests sent to it."""

    agent_id: AgentId


class PostToWorkArgs(Params):
    """Post a note to this Work's timeline, where every member and the person see it."""

    text: str = Field(min_length=1, max_length=20_000)


class HandoffTaskArgs(Params):
    """Hand a task on the Work's board back with a summary: `review` (ready to check), `blocked` (cannot go
    on; say why) or `done`. `deliverables` are paths of files you made in the Work's shared files. Give the
    board revision you last saw; a stale one is refused with the current one."""

    task_id: str = Field(pattern=r"^t-[0-9]{1,6}$")
    summary: str = Field(min_length=1, max_length=20_000)
    status: Literal["review", "blocked", "done"]
    deliverables: list[str] = Field(default_factory=list, max_length=50)
    expected_revision: int = Field(ge=0)


class ReadWorkTimelineArgs(Params):
    """Read this Work's timeline (posts, task changes, handoffs, instructions) and its task board."""

    limit: int = Field(default=30, ge=1, le=200)
    after_seq: int | None = Field(default=None, ge=0, description="Only entries after this one.")


PEER_TOOLS: dict[str, type[BaseModel]] = {
    "send_to_agent": SendToAgentArgs,
    "ask_agent": AskAgentArgs,
    "reply_to_agent": ReplyToAgentArgs,
    "create_agent": CreateAgentArgs,
    "read_agent_transcript": ReadAgentTranscriptArgs,
    "check_agent": CheckAgentArgs,
    "stop_agent": StopAgentArgs,
}
"""Tools of an agent's direct runs for reaching its teammates."""

WORK_TOOLS: dict[str, type[BaseModel]] = {
    "post_to_work": PostToWorkArgs,
    "handoff_task": HandoffTaskArgs,
    "read_work_timeline": ReadWorkTimelineArgs,
}
"""Tools of a Work run, besides the Work's own memory tools."""

HOST_TOOLS: dict[str, type[BaseModel]] = {**PEER_TOOLS, **WORK_TOOLS}
