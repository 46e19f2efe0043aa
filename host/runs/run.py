"""One run of one agent, as the host tracks it: its state, its streamed text, and its feed.

A run moves `queued` → `running` → `ended`, and only forward: `ended` is final whoever gets there
first. While it is in the kernel, everything the kernel sends about it, and any request from the host
to stop it, goes through its feed in arrival order, and the run's own task is the one consumer: so a
run's transcript lines are written in order and one run's disk work never holds up another's stream.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel

from protocol.errors import RUN_FAILED
from protocol.models.host import KernelState
from protocol.models.kernel import TurnDeltaEvent, TurnEndedEvent, TurnMessageEvent, TurnToolEvent
from protocol.models.transcript import EndReason

__all__ = ["Barrier", "KernelLink", "Run", "RunInput", "RunOrigin", "Stop", "TurnEvent"]

R = TypeVar("R", bound=BaseModel)

TurnEvent = TurnDeltaEvent | TurnMessageEvent | TurnToolEvent
"""What the kernel streams about a run before its end."""


@dataclass(frozen=True, slots=True)
class RunOrigin:
    """What started a run: a person's message, a peer's wake (and how far down a chain), a Work instruction,
    or a schedule's firing.

    `work_id` makes it a Work run: its transcript, prompt, tools and sandbox are the Work's. `project_root` is a
    directory the person opened the run on (an editor's project): its policy lets the run read it. `chain_id`
    and `path` are the chain of messages the run is part of (`host.together.chains`), `path` ending with this
    run's agent; `firing_id` names the schedule firing that started it.
    """

    kind: Literal["user", "wake", "answer", "work", "schedule"] = "user"
    from_agent: str | None = None
    hops: int = 0
    request_id: str | None = None
    work_id: str | None = None
    project_root: str | None = None
    chain_id: str | None = None
    path: tuple[str, ...] = ()
    firing_id: str | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    """The host ends a run that is in the kernel (cancel, kernel gone, shutdown) after what arrived before."""

    reason: EndReason
    error: str | None = None
    code: int = RUN_FAILED


@dataclass(frozen=True, slots=True)
class Barrier:
    """Set once the run's task has recorded everything the kernel sent before it (or the run ended)."""

    reached: asyncio.Event = field(default_factory=asyncio.Event)


RunInput = TurnEvent | TurnEndedEvent | Stop | Barrier | None
"""A feed item; None only wakes the run's task after its run was ended from outside."""


@dataclass(slots=True, eq=False)
class Run:
    run_id: str
    agent_id: str
    origin: RunOrigin = field(default_factory=RunOrigin)
    state: Literal["queued", "running", "ended"] = "queued"
    reason: EndReason | None = None
    partial: list[str] = field(default_factory=list)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the end is recorded (just before it is announced): the agent is free for its next run."""
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the end hooks have run too (the next run may have started): what a cancel waits for."""
    feed: asyncio.Queue[RunInput] = field(default_factory=asyncio.Queue)
    following: bool = False
    """The run's task reads its feed: the turn is in the kernel, and a stop goes through the feed."""

    def fold_unread_text(self) -> None:
        """Keep the text of kernel events still in the feed of a run ended from outside; free its barriers."""
        while not self.feed.empty():
            item = self.feed.get_nowait()
            if isinstance(item, TurnDeltaEvent):
                self.partial.append(item.text)
            elif isinstance(item, TurnMessageEvent) and item.text:
                self.partial[:] = [item.text]  # a completed message replaces the deltas that built it
            elif isinstance(item, Barrier):
                item.reached.set()

    @property
    def ended(self) -> bool:
        """Whether `end` has begun for this run (it cannot be undone); checked again after every await."""
        return self.state == "ended"


class KernelLink(Protocol):
    """What runs need of the kernel supervisor (a fake in the scheduler's tests)."""

    @property
    def state(self) -> KernelState: ...

    async def wait_up(self, timeout: float) -> bool: ...

    async def request(self, method: str, params: BaseModel, result_type: type[R], *, timeout: float = 60.0) -> R: ...
