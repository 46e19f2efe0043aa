"""In-memory doubles for driving a `RunManager` on its own: a kernel link, a recorder of events, a gate.

`FakeKernel` answers `turn.start` and `turn.cancel` and lets a test feed the run's kernel events by hand.
`RunBench` wires a real `AgentStore` on a temporary directory to a `RunManager` and records every
notification. `hold_run_tasks` makes each run task wait at its very first step, so a test can land a
call between the scheduler taking a run off the queue and the run's task starting: deterministically,
with events, never sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from host.errors import KernelUnavailableError
from host.runs.kernel_events import KernelEvents
from host.runs.scheduler import RunManager
from host.store.agents import Agent, AgentStore
from protocol.errors import NOT_FOUND, JsonRpcError
from protocol.models.agents import AgentSettings
from protocol.models.host import KernelState
from protocol.models.kernel import TurnCancelResult, TurnEndedEvent, TurnStartParams, TurnStartResult

__all__ = ["FakeKernel", "RunBench", "hold_run_tasks"]

R = TypeVar("R", bound=BaseModel)


class FakeKernel:
    """A kernel link that starts nothing: it records requests and answers them.

    With `start_gate` set, `turn.start` is received (and `started` set) but answered only once the gate opens.
    """

    def __init__(self) -> None:
        self.state: KernelState = "up"
        self.requests: list[tuple[str, Any]] = []
        self.started = asyncio.Event()
        self.start_gate: asyncio.Event | None = None
        self.turns: set[str] = set()
        self.on_cancel: Callable[[str], Awaitable[None]] | None = None
        self._arrived = asyncio.Condition()

    async def wait_up(self, timeout: float) -> bool:
        return self.state == "up"

    async def request(self, method: str, params: BaseModel, result_type: type[R], *, timeout: float = 60.0) -> R:
        async with self._arrived:
            self.requests.append((method, params))
            self._arrived.notify_all()
        if self.state != "up":
            raise KernelUnavailableError("the fake kernel is down")
        if method == "turn.start":
            self.started.set()
            if self.start_gate is not None:
                await self.start_gate.wait()
            self.turns.add(getattr(params, "run_id", ""))
            return result_type.model_validate(TurnStartResult(accepted=True).model_dump(by_alias=True))
        if method == "turn.cancel":
            run_id = getattr(params, "run_id", "")
            if run_id not in self.turns:  # as the real kernel answers a run it has not started
                raise JsonRpcError(f"no run {run_id} in progress", code=NOT_FOUND)
            self.turns.discard(run_id)
            if self.on_cancel is not None:
                await self.on_cancel(run_id)
            return result_type.model_validate(TurnCancelResult(cancelled=True).model_dump(by_alias=True))
        raise KernelUnavailableError(f"the fake kernel has no {method}")

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    async def wait_requests(self, method: str, count: int, timeout: float = 5) -> None:
        """Wait until `method` has been asked for `count` times."""
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: self.methods().count(method) >= count)


class RunBench:
    """A run manager over a real agent store, a fake kernel and a list of notifications."""

    def __init__(self, data_dir: Path, *, max_concurrent: int = 4) -> None:
        self.status_error: Exception | None = None
        self.store = AgentStore(data_dir)
        self.kernel = FakeKernel()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Condition()
        self.manager = RunManager(
            self.store,
            self.kernel,
            self.notify,
            self.prepare,
            KernelEvents(lambda run: self.store.transcript(run.agent_id), self.notify).record,
            max_concurrent=max_concurrent,
            on_status=self.on_status,
        )
        self.kernel.on_cancel = self._kernel_cancelled

    async def _kernel_cancelled(self, run_id: str) -> None:
        await self.manager.deliver(TurnEndedEvent(run_id=run_id, reason="cancelled"))

    def agent(self, agent_id: str) -> Agent:
        return self.store.create(agent_id, agent_id, AgentSettings())

    async def prepare(self, agent: Agent, run_id: str) -> TurnStartParams:
        return TurnStartParams.model_construct(run_id=run_id, session=agent.agent_id)

    async def notify(self, method: str, event: BaseModel) -> None:
        async with self.changed:
            self.events.append((method, event.model_dump(mode="json", by_alias=True)))
            self.changed.notify_all()

    async def on_status(self, agent_id: str) -> None:
        if self.status_error is not None:
            raise self.status_error

    async def wait_for(self, method: str, run_id: str, timeout: float = 5) -> dict[str, Any]:
        async with asyncio.timeout(timeout), self.changed:
            while True:
                for name, params in self.events:
                    if name == method and params.get("runId") == run_id:
                        return params
                await self.changed.wait()

    def named(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.events if name == method]

    def transcript(self, agent_id: str) -> list[dict[str, Any]]:
        return self.store.transcript(agent_id).read_all()


class RunTaskGate:
    """Run tasks created while installed wait for `opened` before their first step."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.dequeued = asyncio.Event()
        self.tasks: list[asyncio.Task[Any]] = []

    async def _held(self, coro: Coroutine[Any, Any, Any]) -> Any:
        await self.opened.wait()
        return await coro


@contextmanager
def hold_run_tasks() -> Generator[RunTaskGate, None, None]:
    """Hold every `RunManager` run task at its start until `gate.opened` is set.

    `gate.dequeued` is set when the scheduler has taken a run off the queue and made its task.
    """
    loop = asyncio.get_running_loop()
    gate = RunTaskGate()
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        if getattr(coro, "__qualname__", "") == "RunManager._execute":
            coro = gate._held(coro)
            task = asyncio.Task(coro, loop=loop, **kwargs)
            gate.tasks.append(task)
            gate.dequeued.set()
            return task
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(factory)
    try:
        yield gate
    finally:
        loop.set_task_factory(previous)
