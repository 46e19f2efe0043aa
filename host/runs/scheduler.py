"""Run scheduling: one model turn of one agent, from the message that starts it to `agent.ended`.

An agent has at most one run here, queued for a slot or running; what waits behind a busy agent waits in
its inbox (`host.together.delivery`), which starts the next run when this one ends. Runs of different
agents go on at once up to `max_concurrent`; the rest wait in arrival order. Each started run is one
task that prepares the turn, starts it in the kernel and then consumes the run's feed (see `run.py`).
A run ends exactly once, whatever the interleaving: `end` is the only way to `ended` and nothing moves a
run back. Its end is written to the transcript (and by the end records: the agent's inbox), then
announced, then the end hooks run; each record and hook is guarded, so a failing one never loses
`agent.ended`. An end the disk refuses is announced anyway and written before the agent's next message.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel

from host.errors import BusyError, KernelUnavailableError
from host.runs.end_lines import EndLines
from host.runs.run import Barrier, KernelLink, Run, RunOrigin, Stop, TurnEvent
from host.store.agents import Agent, AgentStore
from host.store.transcript import Transcript
from protocol.errors import RUN_FAILED, JsonRpcError
from protocol.models.host import AgentEndedEvent, AgentErrorEvent, AgentStartedEvent, RunInfo
from protocol.models.kernel import (
    RunRef,
    TurnCancelResult,
    TurnEndedEvent,
    TurnStartParams,
    TurnStartResult,
)
from protocol.models.transcript import EndReason, RunEndedEvent, StopReason, UsageInfo, UserEvent

__all__ = ["Run", "RunOrigin", "RunManager", "Notify", "RecordEvent", "TurnPreparer", "TranscriptOf"]

logger = logging.getLogger(__name__)

Notify = Callable[[str, BaseModel], Awaitable[None]]
TurnPreparer = Callable[[Agent, str], Awaitable[TurnStartParams]]
RecordEvent = Callable[[Run, TurnEvent], Awaitable[None]]
"""Persists one kernel event of a run and passes it on to the shell (`KernelEvents.record`)."""
TranscriptOf = Callable[[Run], Transcript]

KERNEL_WAIT_SECONDS = 30.0
CANCEL_GRACE_SECONDS = 5.0
STOP_GRACE_SECONDS = 5.0


class RunManager:
    """Queues, starts, tracks and ends runs.

    Args:
        store: the agent store (transcripts live there).
        kernel: the kernel supervisor runs are sent to.
        notify: sends an event to the shell.
        prepare: builds a run's `turn.start` params for an agent (prompt, messages, model, tools, policy).
        record: persists and announces one kernel event of a run.
        max_concurrent: how many runs may be in the kernel at once.
        on_status: awaited with an agent id whenever its status changes.
        transcripts: where a run's lines go (default: its agent's transcript; a Work run has its own).
    """

    def __init__(
        self,
        store: AgentStore,
        kernel: KernelLink,
        notify: Notify,
        prepare: TurnPreparer,
        record: RecordEvent,
        *,
        max_concurrent: int,
        on_status: Callable[[str], Awaitable[None]],
        transcripts: TranscriptOf | None = None,
    ) -> None:
        self._store = store
        self._transcripts = transcripts or (lambda run: store.transcript(run.agent_id))
        self._kernel = kernel
        self._notify = notify
        self._prepare = prepare
        self._record = record
        self._on_status = on_status
        self.max_concurrent = max_concurrent
        self._runs: dict[str, Run] = {}
        self._by_agent: dict[str, Run] = {}
        self._queue: deque[Run] = deque()
        self._running = 0
        self._wake = asyncio.Event()
        self._sending: dict[str, asyncio.Lock] = {}
        self._end_lines = EndLines(store, self.transcript_of)
        self._ending: set[Run] = set()  # ended, end hooks not yet done
        self.end_records: list[Callable[[Run], Awaitable[None]]] = []
        """Run once the end is written, before it is announced: what must be on disk when a shell hears of it."""
        self.end_hooks: list[Callable[[Run], Awaitable[None]]] = []
        """Run after the end is announced (start the next run, extract memory, deny open approvals)."""

    def status(self, agent_id: str) -> Literal["idle", "queued", "running"]:
        run = self.active_run(agent_id)
        if run is None:
            return "idle"
        return "running" if run.state == "ended" else run.state

    def active_run(self, agent_id: str) -> Run | None:
        """The agent's run until its end has been recorded and announced."""
        run = self._by_agent.get(agent_id)
        return run if run is not None and not run.finished.is_set() else None

    def runs(self) -> list[RunInfo]:
        return [
            RunInfo(run_id=run.run_id, agent_id=run.agent_id, state=run.state)
            for run in self._runs.values()
            if run.state != "ended"
        ]

    def running(self, run_id: str) -> Run | None:
        """The run with this id if it is in the kernel now."""
        run = self._runs.get(run_id)
        return run if run is not None and run.state == "running" else None

    def get(self, run_id: str) -> Run | None:
        """The run with this id if it has not ended."""
        return self._runs.get(run_id)

    def transcript_of(self, run: Run) -> Transcript:
        """Where `run`'s events are written: its agent's transcript, or its own in a Work."""
        return self._transcripts(run)

    async def send(self, agent_id: str, text: str) -> tuple[str, int]:
        """Append the user's message to an idle agent's transcript, then queue a run for it.

        Returns:
            (runId, seq of the user message).

        Raises:
            BusyError: the agent already has a run queued or running.
            StorageError: the message could not be stored.
        """
        return await self.start(agent_id, UserEvent(text=text).model_dump(mode="json"))

    async def start(
        self, agent_id: str, event: dict[str, Any], *, run_id: str | None = None, origin: RunOrigin | None = None
    ) -> tuple[str, int]:
        """Append the event that starts a run (a user message or a wake, given the run's id), then queue the run.

        Returns:
            (runId, seq of the event): given only once the event is on disk.

        Raises:
            BusyError: the agent already has a run queued or running.
            StorageError: the event (or an earlier end waiting to be written) could not be stored.
        """
        self._store.get(agent_id)
        async with self._sending.setdefault(agent_id, asyncio.Lock()):
            active = self.active_run(agent_id)
            if active is not None:
                raise BusyError(
                    f"agent {agent_id!r} is busy with run {active.run_id}; wait for it to end or cancel it",
                    data={"runId": active.run_id},
                )
            error = await self._end_lines.flush(agent_id)
            if error is not None:
                raise error
            run = Run(run_id=run_id or f"run-{uuid.uuid4().hex[:12]}", agent_id=agent_id, origin=origin or RunOrigin())
            # The message names the run that answers it: a run is known by its id from its first line on.
            stored = await self.transcript_of(run).append_async({**event, "runId": run.run_id})
            self._runs[run.run_id] = run
            self._by_agent[agent_id] = run
            self._queue.append(run)
            self._wake.set()
        started = AgentStartedEvent.model_validate({"agentId": agent_id, "runId": run.run_id, "message": stored})
        await self._notify("agent.started", started)
        await self._announce(agent_id)
        return run.run_id, int(stored["seq"])

    async def deliver(self, event: TurnEvent | TurnEndedEvent) -> None:
        """Hand a kernel event to its run's task; an event for a run that is not running is dropped."""
        run = self.running(event.run_id)
        if run is not None:
            run.feed.put_nowait(event)
        # The kernel's events arrive in bursts that are read without a pause in between: yield after each,
        # so a burst for one run never holds up a ping, or another run's events, for its whole length.
        await asyncio.sleep(0)

    async def caught_up(self, run_id: str) -> None:
        """Wait until the run's task has recorded every kernel event that arrived before this call.

        The kernel's requests about a run (an approval, a host tool call) are answered in their own tasks;
        this keeps them behind the events it sent first, so a shell sees a tool start before its question
        and a host tool finds the message that called it in the transcript.
        """
        run = self.running(run_id)
        if run is None:
            return
        barrier = Barrier()
        run.feed.put_nowait(barrier)
        await barrier.reached.wait()

    async def serve(self) -> None:
        """Start queued runs as slots free up, until cancelled."""
        async with asyncio.TaskGroup() as tasks:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue and self._running < self.max_concurrent:
                    run = self._queue.popleft()
                    self._running += 1
                    tasks.create_task(self._execute(run))

    async def _execute(self, run: Run) -> None:
        try:
            if run.state != "queued":
                return  # ended after it left the queue, before this task began
            run.state = "running"
            await self._announce(run.agent_id)
            await self._start_turn(run)
            if not run.ended:
                await self._follow(run)
        except JsonRpcError as exc:
            await self._abort(run, exc.message, exc.code)
        except Exception as exc:  # a run task must never take the scheduler down
            logger.exception("run %s failed", run.run_id)
            await self._abort(run, f"internal error: {type(exc).__name__}", RUN_FAILED)
        finally:
            self._running -= 1
            self._wake.set()

    async def _start_turn(self, run: Run) -> None:
        if self._kernel.state != "up" and not await self._kernel.wait_up(KERNEL_WAIT_SECONDS):
            raise KernelUnavailableError("the kernel is not running, and did not come back in time")
        if run.ended:
            return
        params = await self._prepare(self._store.get(run.agent_id), run.run_id)
        if run.ended:  # cancelled while the turn was being prepared
            return
        await self._kernel.request("turn.start", params, TurnStartResult)
        if run.ended:  # cancelled while `turn.start` was on its way: the kernel must stop it too
            await self._cancel_in_kernel(run)

    async def _follow(self, run: Run) -> None:
        """Consume the run's feed in order until its end."""
        run.following = True
        while True:
            item = await run.feed.get()
            if isinstance(item, Barrier):
                item.reached.set()
                continue
            if item is None or run.ended:
                return
            if isinstance(item, Stop):
                await self.end(run, item.reason, error=item.error, code=item.code)
                return
            if isinstance(item, TurnEndedEvent):
                code = item.error_code if item.error_code is not None else RUN_FAILED
                await self.end(
                    run, item.reason, error=item.error, code=code, usage=item.usage, stop_reason=item.stop_reason
                )
                return
            await self._record(run, item)

    async def _abort(self, run: Run, error: str, code: int) -> None:
        if run.following:
            await self._cancel_in_kernel(run)
        await self.end(run, "error", error=error, code=code)

    async def _cancel_in_kernel(self, run: Run) -> None:
        try:
            await self._kernel.request("turn.cancel", RunRef(run_id=run.run_id), TurnCancelResult, timeout=2)
        except JsonRpcError as exc:
            logger.info("run %s: the kernel did not take the cancel: %s", run.run_id, exc.message)

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
        """End `run` once: keep any streamed text, record the end, announce it, then run the end hooks."""
        if run.state == "ended":
            return
        if run in self._queue:
            self._queue.remove(run)
        run.state = "ended"
        run.reason = reason
        self._ending.add(run)
        run.fold_unread_text()
        ended = RunEndedEvent(run_id=run.run_id, reason=reason, error=error, usage=usage, stop_reason=stop_reason)
        unstored = await self._end_lines.write(run, ended)
        await self._guarded(self.end_records, run)
        self._runs.pop(run.run_id, None)
        run.finished.set()
        run.feed.put_nowait(None)
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
        if unstored is not None:
            await self._notify(
                "agent.error",
                AgentErrorEvent(agent_id=run.agent_id, run_id=run.run_id, code=unstored.code, message=unstored.message),
            )
        await self._guarded(self.end_hooks, run)
        await self._announce(run.agent_id)
        run.settled.set()
        self._ending.discard(run)

    async def _guarded(self, hooks: list[Callable[[Run], Awaitable[None]]], run: Run) -> None:
        for hook in hooks:
            try:
                await hook(run)
            except Exception:  # a hook's top level: its failure must not undo or hide the end
                logger.exception("an end hook failed for run %s", run.run_id)

    async def settle(self, timeout: float = STOP_GRACE_SECONDS) -> None:
        """Wait until every run whose end has begun has run its end hooks (the host is about to stop)."""
        try:
            async with asyncio.timeout(timeout):
                for run in list(self._ending):
                    await run.settled.wait()
        except TimeoutError:
            logger.warning("%d run end(s) still running their hooks as the host stops", len(self._ending))

    async def _announce(self, agent_id: str) -> None:
        try:
            await self._on_status(agent_id)
        except Exception:  # a status announcement is a courtesy: a run's outcome never depends on it
            logger.exception("could not announce the status of agent %s", agent_id)

    async def stop(self, run: Run, reason: EndReason, *, error: str | None = None, code: int = RUN_FAILED) -> None:
        """End `run` from outside; a run in the kernel first records what the kernel already sent."""
        if run.state == "ended":
            return
        if not run.following:
            await self.end(run, reason, error=error, code=code)
            return
        run.feed.put_nowait(Stop(reason, error, code))
        try:
            async with asyncio.timeout(STOP_GRACE_SECONDS):
                await run.settled.wait()
        except TimeoutError:
            logger.warning("run %s did not stop in time; ending it here", run.run_id)
            await self.end(run, reason, error=error, code=code)

    async def cancel(self, agent_id: str) -> bool:
        """Stop the agent's run: a queued run ends at once; a running one is asked to stop, then ended."""
        run = self.active_run(agent_id)
        if run is None or run.state == "ended":
            return False
        if run.state == "queued":
            await self.end(run, "cancelled")
            return True
        try:
            await self._kernel.request("turn.cancel", RunRef(run_id=run.run_id), TurnCancelResult, timeout=2)
            async with asyncio.timeout(CANCEL_GRACE_SECONDS):
                await run.settled.wait()
        except (JsonRpcError, TimeoutError):
            logger.warning("run %s did not confirm its cancellation; ending it here", run.run_id)
        await self.stop(run, "cancelled")
        return True

    async def cancel_agent(self, agent_id: str) -> bool:
        """`cancel` for a shell: an unknown agent is NOT_FOUND rather than "nothing to cancel".

        Raises:
            NotFoundError: there is no such agent.
        """
        self._store.get(agent_id)
        return await self.cancel(agent_id)

    async def end_all_running(self, reason: EndReason, error: str | None, code: int = RUN_FAILED) -> None:
        """End every run in the kernel (the kernel died), each after what it already sent is recorded."""
        await self._stop_all([run for run in self._runs.values() if run.state == "running"], reason, error, code)

    async def cancel_all(self) -> None:
        """Cancel every run, queued or running (the host is stopping); streamed text is kept."""
        await self._stop_all(list(self._runs.values()), "cancelled", None, RUN_FAILED)

    async def _stop_all(self, runs: list[Run], reason: EndReason, error: str | None, code: int) -> None:
        async with asyncio.TaskGroup() as tasks:
            for run in runs:
                tasks.create_task(self.stop(run, reason, error=error, code=code))
