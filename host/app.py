"""The host process: wiring every part together and serving its clients.

`HostServer` builds the stores, the kernel supervisor, the run manager, memory and approvals, registers
the method families of `host.rpc`, and serves the shell on stdio and every client of its Unix socket
until `shutdown`, until the stdio shell goes away, or (a host no shell owns) until it has been idle; then
it stops runs and the kernel, cleanly. `run_host` takes the data directory's lock around that.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from typing import Literal

from pydantic import BaseModel

from host.agent_dir import AgentDirectory
from host.agent_service import AgentService
from host.archive_service import ArchiveService
from host.config import HostConfig
from host.connections import Connection, ConnectionHub
from host.errors import HostError
from host.idle import wait_until_idle
from host.knowledge import KnowledgeHub, KnowledgeStatus, Owner
from host.knowledge.suggestion_desk import SuggestDocumentTool, SuggestionDesk
from host.knowledge.suggestions import SuggestionStore
from host.knowledge.tools import KnowledgeTools
from host.knowledge.wire import progress_event
from host.listener import SocketListener
from host.lock import HostLock
from host.memory import MemoryEvent, MemoryHub, MemoryStore, watch_memory_views
from host.memory.model_summaries import Ask
from host.memory.upkeep import run_upkeep, upkeep_every
from host.recovery import recover_data_dir
from host.rpc.agent_dir import register_agent_dir_methods
from host.rpc.agents import register_agent_methods
from host.rpc.archive import register_archive_methods
from host.rpc.kernel_calls import register_kernel_calls
from host.rpc.knowledge import register_knowledge_methods
from host.rpc.memory import memory_notification, register_memory_methods
from host.rpc.proposals import register_proposal_methods
from host.rpc.runs import register_run_methods
from host.rpc.schedules import register_schedule_methods
from host.rpc.secrets import register_secrets_methods
from host.rpc.session import register_session_methods
from host.rpc.table import ShellTable
from host.rpc.works import register_work_methods
from host.runs.approval_desk import ApprovalDesk
from host.runs.history_tool import HistoryTools
from host.runs.host_tools import HostTools
from host.runs.kernel_events import KernelEvents
from host.runs.kernel_prefix import PrefixLink
from host.runs.mcp_board import McpBoard
from host.runs.mcp_config import check_mcp_servers
from host.runs.memory_service import MemoryService
from host.runs.scheduler import Run, RunManager, RunOrigin
from host.runs.turns import TurnPlanner
from host.runs.warmup import ModelWarmup
from host.schedules import (
    Budgets,
    FiringLog,
    ManualClock,
    ProposeScheduleTool,
    ScheduleBook,
    ScheduleDesk,
    ScheduleService,
    SystemScheduleClock,
    clock_from_env,
    zone_named,
)
from host.signals import stop_on_signals
from host.store.agents import Agent, AgentStore
from host.store.approvals import ApprovalStore
from host.store.host_settings import HostSettingsStore
from host.store.secrets import SecretStore
from host.store.signing import SigningKey
from host.supervisor import KernelSupervisor
from host.together import PrivateMemoryTools, Together
from host.together.chains import ChainGuard
from protocol.datadir import resolve_data_dir
from protocol.dispatch import Router
from protocol.errors import KERNEL_UNAVAILABLE
from protocol.models.host import PROTOCOL_VERSION, KernelDownEvent, KernelUpEvent
from protocol.models.kernel import KernelInitializeParams, SummarizeParams, SummarizeResult
from protocol.models.schedules import AgentWarningEvent
from protocol.transport import Transport, stdio_transport

__all__ = ["HostServer", "host_main", "main", "run_host", "IDLE_EXIT_HELP"]

IDLE_EXIT_HELP = (
    "serve only the Unix socket (no stdio) and stop SECONDS after the last client leaves with no run active"
)

logger = logging.getLogger(__name__)


class HostServer:
    """Serves the shell on stdio and the socket's clients. Build it, then `await serve(transport)`."""

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.store = AgentStore(config.data_dir)
        self.settings = HostSettingsStore(config.data_dir)
        self.shell_router = Router()
        self.kernel_router = Router()
        self.kernel = KernelSupervisor(
            config.launcher(),
            self.kernel_router,
            on_down=self._kernel_down,
            on_up=self._kernel_up,
            init_params=lambda: KernelInitializeParams(
                protocol_version=PROTOCOL_VERSION, shell_sandbox=self.settings.current.shell_sandbox
            ),
        )
        self.secrets = SecretStore(config.data_dir)
        self.schedule_clock = config.schedule_clock or SystemScheduleClock()
        self.hub = MemoryHub(
            config.data_dir,
            on_event=self._memory_event,
            # A hand-moved test clock moves memory's time too (lifetimes, staleness); otherwise the system's.
            clock=_memory_clock(self.schedule_clock) if isinstance(self.schedule_clock, ManualClock) else None,
            copies=lambda agent_id, scrub: self.together.copies.scrub(agent_id, scrub),
            lifetimes=self._lifetimes,
        )
        self.budgets = Budgets(config.data_dir, self.schedule_clock, self._zone)
        self.planner = TurnPlanner(
            self.store,
            self.secrets,
            self._summarize,
            lambda: self.kernel.info,
            memory=lambda agent: self.memory.source(agent),
            host_tools=lambda agent: self.host_tools.offered(agent, RunOrigin()),
            cover=lambda agent, through, first: self.memory.cover(agent, through, first),
        )
        self.kernel_turns = PrefixLink(self.kernel, self.planner.prefixes)
        """The kernel as runs and summaries reach it: a turn's messages go as what follows what it holds."""
        self.runs = RunManager(
            self.store,
            self.kernel_turns,
            self.notify,
            lambda agent, run_id: self.together.prepare(agent, run_id),
            self.budgets.counting(
                KernelEvents(lambda run: self.together.transcript_of(run), self.notify, self._memory_of).record
            ),
            max_concurrent=self.settings.current.max_concurrent_runs,
            on_status=self._agent_changed,
            transcripts=lambda run: self.together.transcript_of(run),
        )
        self.together = Together(
            config.data_dir, self.store, self.runs, self.notify, self._agent_changed, clock=config.clock
        )
        self.warmup = ModelWarmup(self.store, self.kernel, self.planner.resolve_model, self.notify)
        self.mcp = McpBoard(self.notify)
        self.agents = AgentService(
            self.store,
            self.runs,
            self.kernel,
            self.hub,
            self.notify,
            on_settings=self.warmup.agent_changed,
            mcp=self.mcp,
            check=lambda settings: check_mcp_servers(settings, self.secrets, config.data_dir),
        )
        self.agents.after_delete.append(self.planner.forget)
        self.memory = MemoryService(
            self.hub, self.store, self.runs, self.planner, self._summarize, self.budgets.counting_notify(self.notify)
        )
        self.approvals = ApprovalDesk(
            self.runs,
            self.notify,
            self._remember_approval,
            lambda agent_id: self.store.get(agent_id).settings.approval_timeout,
        )
        self.runs.end_hooks.extend([self.memory.after_run, self.approvals.run_ended])
        self.host_tools = HostTools(self.runs, self.store)
        self.host_tools.providers.append(PrivateMemoryTools(self.memory))
        self.host_tools.providers.append(HistoryTools(self.store))
        self.chains = ChainGuard(lambda: self.settings.current.chain_budget, lambda agent: self.budgets.spent(agent))
        self.budgets.per_request.append(self.chains.count)
        self.knowledge = KnowledgeHub(config.data_dir, self._knowledge_on, self._knowledge_progress)
        self.host_tools.providers.append(KnowledgeTools(self.knowledge))
        self.suggestions = SuggestionDesk(SuggestionStore(config.data_dir), self.notify)
        self.host_tools.providers.append(SuggestDocumentTool(self.suggestions))
        self.agents.after_settings.append(self._knowledge_settings)
        self.agents.before_delete.append(lambda agent_id: self.knowledge.deactivate(Owner("agent", agent_id)))
        self.together.connect(
            self.agents,
            self.planner,
            self.host_tools,
            lambda: self.kernel.info,
            lambda: self.settings.current.max_hops,
            self.chains,
        )
        self.schedules = ScheduleService(
            ScheduleBook(config.data_dir),
            FiringLog(config.data_dir),
            self.store,
            self.together.deliveries,
            self.runs,
            self.together.work_service,
            self.budgets,
            self.notify,
            self.schedule_clock,
            self._zone,
        )
        self.schedule_desk = ScheduleDesk(self.schedules, self.store, self.together.work_service, self.notify)
        self.host_tools.providers.append(ProposeScheduleTool(self.schedule_desk))
        self.together.reconcilers.append(self.schedules.reconcile)  # a firing with its outcome never runs again
        self.agents.after_delete.append(self.schedule_desk.agent_deleted)
        register_kernel_calls(self.kernel_router, self.runs, self.host_tools, self.approvals, self.mcp)
        self._activity = asyncio.Event()
        self.connections = ConnectionHub(self.shell_router, self._activity, self.approvals.set_answerers)
        self.listener: SocketListener | None = None
        self._tasks: asyncio.TaskGroup | None = None
        self._stop = asyncio.Event()
        self.table = ShellTable(self.shell_router)
        register_session_methods(
            self.table,
            data_dir=config.data_dir,
            kernel=self.kernel,
            runs=self.runs,
            store=self.store,
            settings=self.settings,
            stop=self._stop.set,
            queued=self.together.deliveries.queued_runs,
            token=lambda: self.listener.token if self.listener is not None else None,
            attached=self._attached,
        )
        register_agent_methods(self.table, self.agents)
        register_agent_dir_methods(
            self.table, AgentDirectory(self.store, lambda: self.kernel.info.shell if self.kernel.info else None)
        )
        register_run_methods(self.table, self.together.deliveries, self.approvals, after_send=self._warn_if_spent)
        register_work_methods(self.table, self.together.work_service)
        register_secrets_methods(self.table, self.secrets)
        register_memory_methods(self.table, self.hub, self.memory.evidence_line)
        register_knowledge_methods(self.table, self.knowledge, self._knowledge_owner, self.suggestions)
        register_proposal_methods(self.table, self.hub, self.store)
        self.together.work_service.before_delete.append(lambda w: self.knowledge.deactivate(Owner("work", w)))
        archives = ArchiveService(self.store, self.hub, SigningKey(config.data_dir), self.agents, self.knowledge)
        register_archive_methods(self.table, archives, self.agents)
        register_schedule_methods(
            self.table,
            self.schedule_desk,
            self.schedules,
            self.budgets,
            self.store,
            self.together.work_service,
            test_clock=self.schedule_clock if isinstance(self.schedule_clock, ManualClock) else None,
        )

    async def _attached(self, conn: Connection) -> None:
        """A client has initialized: count it among those who can answer, and offer it the open questions."""
        self.connections.count_answerers()
        if conn.answers_approvals:
            for question in self.approvals.pending():
                await self.connections.notify_one(conn, "agent.tool", question)

    def _memory_of(self, run: Run) -> MemoryStore | None:
        """The memory a run's memory tools use, if it is open (a Work run's is its Work's)."""
        if run.origin.work_id is not None:
            return self.together.work_memories.opened(run.origin.work_id)
        return self.hub.opened(run.agent_id)

    def stop(self) -> None:
        """Stop as `shutdown` does (what SIGTERM and SIGINT do)."""
        self._stop.set()

    async def notify(self, method: str, event: BaseModel) -> None:
        await self.connections.notify(method, event)

    async def serve(self, transport: Transport | None, *, idle_exit: float | None = None) -> None:
        """Serve until `shutdown`, until the stdio shell on `transport` closes its end, or, with no
        transport, until no client and no run has been there for `idle_exit` seconds; then stop cleanly.

        Raises:
            ListenerError: the Unix socket cannot be set up safely.
        """
        await self.together.recover()
        await self.schedules.recover()
        if self.config.listen:
            self.listener = SocketListener(self.config.data_dir, self._attach)
            await self.listener.start()
        try:
            await self._serve(transport, idle_exit)
        finally:
            if self.listener is not None:
                self.listener.stop_accepting()
        self.hub.close()
        self.together.close()
        self.budgets.flush()

    def _idle(self) -> bool:
        """No client, and no run running, queued or waiting in an inbox."""
        return not len(self.connections) and not self.runs.runs() and not self.together.deliveries.queued_runs()

    async def _serve(self, transport: Transport | None, idle_exit: float | None) -> None:
        async with asyncio.TaskGroup() as tasks:
            self._tasks = tasks
            kernel_task = tasks.create_task(self.kernel.run())
            runs_task = tasks.create_task(self.runs.serve())
            memory_task = tasks.create_task(self.memory.serve())
            warmup_task = tasks.create_task(self.warmup.serve())
            together_task = tasks.create_task(self.together.serve())
            schedules_task = tasks.create_task(self.schedules.serve())
            budgets_task = tasks.create_task(self.budgets.serve())
            knowledge_task = tasks.create_task(self.knowledge.serve(self._knowledge_owners))
            watch_stop = asyncio.Event()
            watch_task = tasks.create_task(self._watch_views(watch_stop))
            upkeep_task = tasks.create_task(
                run_upkeep(
                    self.hub, self._upkeep_agents, self._agent_idle, watch_stop, upkeep_every(), self._summary_model
                )
            )
            stop_task = tasks.create_task(self._stop.wait())
            if transport is not None:
                owner = tasks.create_task(self.connections.serve(transport, "stdio"))
            else:
                owner = tasks.create_task(
                    wait_until_idle(self._idle, lambda: self.connections.served > 0, self._activity, idle_exit or 0.0)
                )
            await asyncio.wait({owner, stop_task}, return_when=asyncio.FIRST_COMPLETED)
            schedules_task.cancel()  # no firing is decided while the host stops
            await self.runs.settle()  # a run that had ended finishes its end hooks before the inboxes halt
            self.together.halt()  # what is unfinished stays in the inboxes for the next start
            # No new client may attach to a host that is stopping.
            if self.listener is not None:
                self.listener.stop_accepting()
            await self.runs.cancel_all()
            await self.knowledge.close()
            await self.kernel.stop()
            await kernel_task
            watch_stop.set()
            await watch_task
            for task in (
                runs_task,
                memory_task,
                warmup_task,
                together_task,
                schedules_task,
                budgets_task,
                knowledge_task,
                upkeep_task,
                stop_task,
            ):
                task.cancel()
            await asyncio.sleep(0)  # let the answer to `shutdown` reach the wire
            await self.connections.close_all()
            if not owner.done():
                owner.cancel()
        self._tasks = None

    async def _attach(self, transport: Transport) -> None:
        if self._tasks is None:
            await transport.close()
            return
        self._tasks.create_task(self.connections.serve(transport, "socket"))

    async def _watch_views(self, stop: asyncio.Event) -> None:
        try:
            await watch_memory_views(self.hub, stop)
        except Exception:  # without the watcher the host still serves; edits are imported on the next start
            logger.exception("watching MEMORY.md files failed; a person's edits will be imported on restart")

    def _upkeep_agents(self) -> list[tuple[str, int]]:
        """(agent id, consolidation cap) of every readable agent whose memory is on."""
        return [
            (entry.agent_id, entry.settings.consolidation)
            for entry in self.store.scan()
            if isinstance(entry, Agent) and entry.settings.memory
        ]

    def _lifetimes(self, agent_id: str) -> dict[str, int]:
        """The agent's lifetime per tier (`ttl`); an agent whose files cannot be read sets none."""
        try:
            return dict(self.store.get(agent_id).settings.ttl.items())
        except HostError:  # gone or unreadable: its memory is not read by a turn either
            return {}

    def _summary_model(self, agent_id: str) -> Ask | None:
        """The agent's model for summaries of old log entries, counted in its budget; none once the budget is spent."""
        if self.budgets.spent(agent_id) is not None:
            return None
        return self.memory.summary_model(agent_id, lambda tokens: self.budgets.count(agent_id, None, tokens))

    def _agent_idle(self, agent_id: str) -> bool:
        return self.runs.active_run(agent_id) is None

    async def _memory_event(self, event: MemoryEvent) -> None:
        method, params = memory_notification(event)
        await self.notify(method, params)

    def _knowledge_on(self, owner: Owner) -> bool:
        """An agent's knowledge is on by its setting; a Work's while the Work exists."""
        if owner.kind == "work":
            return self.together.works.exists(owner.id)
        return self.store.exists(owner.id) and self.store.get(owner.id).settings.knowledge

    def _knowledge_owner(self, owner: Owner) -> None:
        """Raises NotFoundError for an agent or Work that does not exist."""
        if owner.kind == "work":
            self.together.works.get(owner.id)
        else:
            self.store.get(owner.id)

    def _knowledge_owners(self) -> list[Owner]:
        agents = [Owner("agent", entry.agent_id) for entry in self.store.scan()]
        return agents + [Owner("work", work.work_id) for work in self.together.works.list()]

    async def _knowledge_settings(self, agent: Agent) -> None:
        await self.knowledge.settings_changed(Owner("agent", agent.agent_id))

    async def _knowledge_progress(self, status: KnowledgeStatus) -> None:
        await self.notify("knowledge.progress", progress_event(status))

    async def _summarize(self, params: SummarizeParams) -> SummarizeResult:
        return await self.kernel_turns.request("summarize", params, SummarizeResult, timeout=300)

    async def _warn_if_spent(self, agent_id: str, run_id: str) -> None:
        """A person's message runs past the agent's budget; every client is told so."""
        spent = self.budgets.spent(agent_id)
        if spent is not None:
            message = f"{spent}; your message runs anyway (scheduled and agent-started runs are skipped today)"
            await self.notify(
                "agent.warning", AgentWarningEvent(agent_id=agent_id, run_id=run_id, kind="budget", message=message)
            )

    def _zone(self) -> tzinfo:
        return zone_named(self.settings.current.time_zone)

    def _remember_approval(self, agent_id: str, action: str, target: str, decision: Literal["allow", "deny"]) -> None:
        ApprovalStore.for_agent(self.config.data_dir, agent_id).remember(action, target, decision)

    async def _agent_changed(self, agent_id: str) -> None:
        self._activity.set()
        await self.agents.changed(agent_id)

    async def _kernel_down(self, reason: str) -> None:
        self.mcp.kernel_down()
        await self.runs.end_all_running(
            "error", f"the kernel stopped unexpectedly ({reason}); send your message again", code=KERNEL_UNAVAILABLE
        )
        await self.notify("kernel.down", KernelDownEvent(reason=reason, restarting=True))

    async def _kernel_up(self) -> None:
        self.planner.prefixes.forget_all()  # a new kernel holds no conversation
        await self.notify("kernel.up", KernelUpEvent(pid=self.kernel.pid or 0, restarts=self.kernel.restarts))
        self.warmup.kernel_started()


async def _serve(config: HostConfig) -> None:
    server = HostServer(config)
    with stop_on_signals(server.stop):
        if config.idle_exit is not None:
            await server.serve(None, idle_exit=config.idle_exit)
            return
        async with stdio_transport() as transport:
            await server.serve(transport)


def run_host(config: HostConfig) -> int:
    """Serve a shell on this process's stdio (or, with `idle_exit`, only the socket's clients) until done.

    Returns:
        The process exit code.

    Raises:
        HostLockedError: another live host uses the same data directory.
    """
    config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = HostLock(config.data_dir)
    lock.acquire()
    try:
        recover_data_dir(config.data_dir)
        asyncio.run(_serve(config))
    finally:
        lock.release()
    logger.info("host stopped")
    return 0


def host_main(data_dir: str | None, idle_exit: float | None = None) -> int:
    """`hearth host`: run the host on the resolved data directory; a refusal is one line on stderr, exit 2."""
    try:
        config = HostConfig(data_dir=resolve_data_dir(data_dir), idle_exit=idle_exit, schedule_clock=clock_from_env())
        return run_host(config)
    except HostError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """`python -m host [--data-dir DIR] [-v]`."""
    parser = argparse.ArgumentParser(prog="python -m host", description="Run the Hearth host on stdio.")
    parser.add_argument("--data-dir", help="where Hearth keeps its state (default: $HEARTH_HOME or the user data dir)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    parser.add_argument("--idle-exit", type=float, metavar="SECONDS", help=IDLE_EXIT_HELP)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    return host_main(args.data_dir, args.idle_exit)


def _memory_clock(clock: ManualClock) -> Callable[[], datetime]:
    return lambda: datetime.fromtimestamp(clock.now(), UTC)
