"""Run scheduling: one model turn of one agent, from the message that starts it to `agent.ended`.

An agent has at most one run here, queued for a slot or running; what waits behind a busy agent waits in
its inbox (`host.together.delivery`), which starts the next run when this one ends. Runs of different
agents go on at once up to `max_concurrent`; the rest wait in arrival order. A run ends exactly once,
with `idle`, `error` or `cancelled`, and its end is written to its transcript before it is announced.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from host.errors import BusyError, KernelUnavailableError
from host.store.agents import Agent, AgentStore
from host.store.transcript import Transcript
from host.supervisor import KernelSupervisor
from protocol.errors import RUN_FAILED, JsonRpcError
from protocol.models.host import AgentEndedEvent, AgentErrorEvent, RunInfo
from protocol.models.kernel import RunRef, TurnCancelResult, TurnStartParams, TurnStartResult
from protocol.models.transcript import AssistantEvent, EndReason, RunEndedEvent, StopReason, UsageInfo, UserEvent

__all__ = ["Run", "RunOrigin", "RunManager", "Notify", "TurnPreparer", "TranscriptOf"]

logger = logging.getLogger(__name__)

Notify = Callable[[str, BaseModel], Awaitable[None]]
TurnPreparer = Callable[[Agent, str], Awaitable[TurnStartParams]]
TranscriptOf = Callable[["Run"], Transcript]

KERNEL_WAIT_SECONDS = 30.0
CANCEL_GRACE_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class RunOrigin:
    """What started a run: a person's message, a peer's wake (and how far down a chain), or a Work instruction.

    `work_id` makes it a Work run: its transcript, prompt, tools and sandbox are the Work's. `project_root` is a
    directory the person opened the run on (an editor's project): its policy lets the run read it.
    """

    kind: Literal["user", "wake", "answer", "work"] = "user"
    from_agent: str | None = None
    hops: int = 0
    request_id: str | None = None
    work_id: str | None = None
    project_root: str | None = None


@dataclass(slots=True)
class Run:
    run_id: str
    agent_id: str
    origin: RunOrigin = field(default_factory=RunOrigin)
    state: Literal["queued", "running", "ended"] = "queued"
    reason: EndReason | None = None
    partial: list[str] = field(default_factory=list)
    finished: asyncio.Event = field(default_factory=asyncio.Event)


class RunManager:
    """Queues, starts, tracks and ends runs.

    Args:
        store: the agent store (transcripts live there).
        kernel: the kernel supervisor runs are sent to.
        notify: sends an event to the shell.
        prepare: builds a run's `turn.start` params for an agent (prompt, messages, model, tools, policy).
        max_concurrent: how many runs may be in the kernel at once.
    """

    def __init__(
        self,
        store: AgentStore,
        kernel: KernelSupervisor,
        notify: Notify,
        prepare: TurnPreparer,
        *,
        max_concurrent: int,
        on_status: Callable[[str], Awaitable[None]],
        transcripts: TranscriptOf | None = None,
    ) -> None:
        self._store = store
        self._kernel = kernel
        self._notify = notify
        self._prepare = prepare
        self._on_status = on_status
        self._transcripts = transcripts or (lambda run: store.transcript(run.agent_id))
        self.max_concurrent = max_concurrent
        self._runs: dict[str, Run] = {}
        self._by_agent: dict[str, Run] = {}
        self._queue: deque[Run] = deque()
        self._running = 0
        self._wake = asyncio.Event()
        self._tasks: asyncio.TaskGroup | None = None
        self.end_hooks: list[Callable[[Run], Awaitable[None]]] = []

    def status(self, agent_id: str) -> Literal["idle", "queued", "running"]:
        run = self._by_agent.get(agent_id)
        return "idle" if run is None or run.state == "ended" else run.state

    def active_run(self, agent_id: str) -> Run | None:
        run = self._by_agent.get(agent_id)
        return run if run is not None and run.state != "ended" else None

    def runs(self) -> list[RunInfo]:
        return [
            RunInfo(run_id=run.run_id, agent_id=run.agent_id, state=run.state)
            for run in self._runs.values()
            if run.state != "ended"
        ]

    def transcript_of(self, run: Run) -> Transcript:
        """Where `run`'s events are written: its agent's transcript, or its own in a Work."""
        return self._transcripts(run)

    async def send(self, agent_id: str, text: str) -> tuple[str, int]:
        """Append the user's message to an idle agent's transcript, then queue a run for it.

        Returns:
            (runId, seq of the user message).

        Raises:
            BusyError: the agent already has a run queued or running.
        """
        return await self.start(agent_id, UserEvent(text=text).model_dump(mode="json"))

    async def start(
        self, agent_id: str, event: dict[str, Any], *, run_id: str | None = None, origin: RunOrigin | None = None
    ) -> tuple[str, int]:
        """Append the event that starts a run (a user message or a wake), then queue the run for a slot.

        Returns:
            (runId, seq of the event).

        Raises:
            BusyError: the agent already has a run queued or running.
        """
        self._store.get(agent_id)
        active = self.active_run(agent_id)
        if active is not None:
            raise BusyError(
                f"agent {agent_id!r} is busy with run {active.run_id}; wait for it to end or cancel it",
                data={"runId": active.run_id},
            )
        run = Run(run_id=run_id or f"run-{uuid.uuid4().hex[:12]}", agent_id=agent_id, origin=origin or RunOrigin())
        stored = self.transcript_of(run).append(event)
        self._runs[run.run_id] = run
        self._by_agent[agent_id] = run
        self._queue.append(run)
        self._wake.set()
        await self._on_status(agent_id)
        return run.run_id, int(stored["seq"])

    async def serve(self) -> None:
        """Start queued runs as slots free up, until cancelled."""
        async with asyncio.TaskGroup() as tasks:
            self._tasks = tasks
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue and self._running < self.max_concurrent:
                    run = self._queue.popleft()
                    self._running += 1
                    tasks.create_task(self._execute(run))

    async def _execute(self, run: Run) -> None:
        try:
            run.state = "running"
            await self._on_status(run.agent_id)
            if self._kernel.state != "up" and not await self._kernel.wait_up(KERNEL_WAIT_SECONDS):
                raise KernelUnavailableError("the kernel is not running, and did not come back in time")
            agent = self._store.get(run.agent_id)
            params = await self._prepare(agent, run.run_id)
            if run.finished.is_set():  # cancelled while the turn was being prepared
                return
            await self._kernel.request("turn.start", params, TurnStartResult)
            await run.finished.wait()
        except JsonRpcError as exc:
            await self.end(run, "error", error=exc.message, code=exc.code)
        except Exception as exc:  # a run task must never take the scheduler down
            logger.exception("run %s failed", run.run_id)
            await self.end(run, "error", error=f"internal error: {type(exc).__name__}")
        finally:
            self._running -= 1
            self._wake.set()
            await self._on_status(run.agent_id)

    async def end(
        self,
        run: Run,
        reason: EndReason,
        *,
        error: str | None = None,
        code: int = RUN_FAILED,
        usage: UsageInfo | None = None,
        stop_reason: StopReason | None = None,
    ) -> None:
        """End `run` once: keep any streamed text, record the end, then announce it."""
        if run.state == "ended":
            return
        if run in self._queue:
            self._queue.remove(run)
        run.state = "ended"
        run.reason = reason
        transcript = self.transcript_of(run) if self._store.exists(run.agent_id) else None
        if transcript is not None and run.partial:
            partial = AssistantEvent(run_id=run.run_id, text="".join(run.partial), partial=True)
            transcript.append(partial.model_dump(mode="json"))
        run.partial.clear()
        ended = RunEndedEvent(run_id=run.run_id, reason=reason, error=error, usage=usage, stop_reason=stop_reason)
        if transcript is not None:
            transcript.append(ended.model_dump(mode="json"))
        self._runs.pop(run.run_id, None)
        run.finished.set()
        for hook in self.end_hooks:
            await hook(run)
        await self._notify(
            "agent.ended",
            AgentEndedEvent(
                agent_id=run.agent_id,
                run_id=run.run_id,
                reason=reason,
                error=error,
                usage=usage,
                stop_reason=stop_reason,
                error_code=code if reason == "error" else None,
            ),
        )
        if reason == "error" and error:
            await self._notify(
                "agent.error", AgentErrorEvent(agent_id=run.agent_id, run_id=run.run_id, code=code, message=error)
            )

    async def cancel(self, agent_id: str) -> bool:
        """Stop the agent's run: a queued run ends at once; a running one is asked to stop, then ended."""
        run = self.active_run(agent_id)
        if run is None:
            return False
        if run.state == "queued":
            await self.end(run, "cancelled")
            return True
        try:
            await self._kernel.request("turn.cancel", RunRef(run_id=run.run_id), TurnCancelResult, timeout=2)
            async with asyncio.timeout(CANCEL_GRACE_SECONDS):
                await run.finished.wait()
        except (JsonRpcError, TimeoutError):
            logger.warning("run %s did not confirm its cancellation; ending it here", run.run_id)
        await self.end(run, "cancelled")
        return True

    async def cancel_agent(self, agent_id: str) -> bool:
        """`cancel` for a shell: an unknown agent is NOT_FOUND rather than "nothing to cancel".

        Raises:
            NotFoundError: there is no such agent.
        """
        self._store.get(agent_id)
        return await self.cancel(agent_id)

    async def end_all_running(self, reason: EndReason, error: str | None, code: int = RUN_FAILED) -> None:
        """End every run in the kernel (the kernel died, or the host is stopping)."""
        for run in [run for run in self._runs.values() if run.state == "running"]:
            await self.end(run, reason, error=error, code=code)

    async def cancel_all(self) -> None:
        for run in list(self._runs.values()):
            await self.end(run, "cancelled")

    def running(self, run_id: str) -> Run | None:
        """The run with this id if it is in the kernel now."""
        run = self._runs.get(run_id)
        return run if run is not None and run.state == "running" else None

    def get(self, run_id: str) -> Run | None:
        """The run with this id if it has not ended."""
        return self._runs.get(run_id)
