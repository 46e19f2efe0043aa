"""Agents together, wired as one part of the host: inboxes, requests, teammate tools and Works.

`Together` builds the pieces over the host's stores and run manager and gives the host what it needs
from them: where a run's events go, how a run is prepared (a Work run or a direct one), the host tools
each run is offered, what happens when an agent is deleted, and the start-up recovery and deadline loop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from host.agent_service import AgentService
from host.runs.host_tools import HostTools
from host.runs.scheduler import Notify, Run, RunManager, RunOrigin
from host.runs.turns import TurnPlanner
from host.store.agents import Agent, AgentStore
from host.store.transcript import Transcript
from host.together.asks import RequestDesk
from host.together.clock import Clock, SystemClock
from host.together.delivery import Deliveries
from host.together.peers import PeerTools
from host.together.requests import RequestBook
from host.together.work_runs import WorkRunPlanner
from host.together.work_service import WorkService
from host.together.work_tools import WorkMemories, WorkTools
from host.together.works import WorkStore
from protocol.models.kernel import KernelInitializeResult, TurnStartParams

__all__ = ["Together"]

logger = logging.getLogger(__name__)


class Together:
    """Args:
    data_dir: the host's data directory.
    store: the agent store.
    runs: the run manager.
    notify: sends events to the shell.
    on_status: told when an agent's queue changed.
    clock: the time source of request deadlines.
    """

    def __init__(
        self,
        data_dir: Path,
        store: AgentStore,
        runs: RunManager,
        notify: Notify,
        on_status: Callable[[str], Awaitable[None]],
        *,
        clock: Clock | None = None,
    ) -> None:
        self._store = store
        self._runs = runs
        self.clock = clock or SystemClock()
        self.works = WorkStore(data_dir)
        self.deliveries = Deliveries(store, runs, notify, on_status)
        self.desk = RequestDesk(RequestBook(data_dir, self.clock), self.deliveries, store, runs, self.clock)
        self.work_service = WorkService(self.works, store, runs, self.deliveries, notify)
        self.work_memories = WorkMemories(self.works.works_dir)
        self._work_planner: WorkRunPlanner | None = None
        self._planner: TurnPlanner | None = None

    def connect(
        self,
        agents: AgentService,
        planner: TurnPlanner,
        host_tools: HostTools,
        kernel_info: Callable[[], KernelInitializeResult | None],
        max_hops: Callable[[], int],
    ) -> None:
        """Join the parts built after this one: agent lifecycle, the direct planner, the host-tool table."""
        self._planner = planner
        self._work_planner = WorkRunPlanner(
            self._store, self.works, self.work_memories, planner, host_tools, kernel_info
        )
        host_tools.providers += [
            PeerTools(self._store, self._runs, self.deliveries, self.desk, agents, max_hops),
            WorkTools(self.work_service, self.work_memories, self._runs),
        ]
        agents.before_delete.append(self._before_delete)
        agents.after_delete.append(self._after_delete)
        agents.queue = self.deliveries.queue
        self._runs.end_records.append(self.deliveries.record_end)
        self._runs.end_hooks.append(self.deliveries.run_ended)

    def transcript_of(self, run: Run) -> Transcript:
        """A run's transcript: the member's Work-run transcript for a Work run, else the agent's own."""
        if run.origin.work_id is not None:
            return self.works.member_transcript(run.origin.work_id, run.agent_id)
        return self._store.transcript(run.agent_id)

    async def prepare(self, agent: Agent, run_id: str) -> TurnStartParams:
        """The run manager's preparer: a Work run is planned from the Work, any other run as a direct run."""
        assert self._planner is not None and self._work_planner is not None, "connect() first"
        run = self._runs.get(run_id)
        origin = run.origin if run is not None else RunOrigin()
        if origin.work_id is not None:
            return await self._work_planner.prepare(agent, run_id, origin)
        return await self._planner.prepare(agent, run_id, project_root=origin.project_root)

    async def _before_delete(self, agent_id: str) -> None:
        await self.deliveries.stop(agent_id)
        await self.desk.refuse_all_to(agent_id, f"{agent_id} was deleted")

    async def _after_delete(self, agent_id: str) -> None:
        self.deliveries.forget(agent_id)
        await self.work_service.agent_deleted(agent_id)

    async def recover(self) -> None:
        """At start-up, before the shell is served: deliver what waited when the host last stopped, once."""
        waiting = await self.deliveries.recover()
        await self.desk.recover()
        await self.deliveries.pump_all()
        if waiting:
            logger.info("delivering %d run(s) that waited when the host last stopped", waiting)

    async def serve(self) -> None:
        """Expire requests at their deadlines until cancelled."""
        await self.desk.serve()

    def halt(self) -> None:
        """The host is stopping: runs that end now leave their items waiting for the next start."""
        self.deliveries.halted = True

    def close(self) -> None:
        self.work_memories.close()
