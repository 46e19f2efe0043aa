"""The host's shell-facing server: session methods, agents, runs, and the kernel's lifecycle.

One `HostServer` serves one shell over one transport. `initialize` comes first; every other method
but `ping` and `shutdown` is refused with NOT_INITIALIZED until it has. The server owns the kernel
supervisor and the run manager and stops both, cleanly, on `shutdown` or when the shell goes away.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from host.agents import Agent, AgentStore, apply_settings_patch
from host.approval_desk import ApprovalDesk
from host.approvals import ApprovalStore
from host.atomic import read_json, write_json_atomic
from host.config import HostConfig
from host.errors import CorruptFileError, NotInitializedError
from host.kernel import KernelSupervisor
from host.memory import MemoryEvent, MemoryHub, watch_memory_views
from host.memory_rpc import register_memory_methods
from host.memory_service import MemoryService
from host.runs import RunManager
from host.secrets import SecretStore
from host.secrets_rpc import register_secrets_methods
from host.turns import TurnPlanner
from protocol.dispatch import Router
from protocol.errors import KERNEL_UNAVAILABLE, JsonRpcError, describe_validation_error
from protocol.models.agents import (
    AgentCancelResult,
    AgentCreateParams,
    AgentDeleteResult,
    AgentInfo,
    AgentListResult,
    AgentRef,
    AgentSendParams,
    AgentSendResult,
    AgentSettings,
    AgentTranscriptParams,
    AgentTranscriptResult,
    AgentUpdateParams,
)
from protocol.models.base import Empty, EmptyParams
from protocol.models.host import (
    PROTOCOL_VERSION,
    AgentUpdatedEvent,
    DecideToolParams,
    HostSettings,
    HostStatusResult,
    InitializeParams,
    InitializeResult,
    KernelDownEvent,
    KernelStatus,
    KernelUpEvent,
    ServerInfo,
    SettingsSetParams,
)
from protocol.models.kernel import (
    ApprovalRequestParams,
    KernelInitializeParams,
    SessionCloseParams,
    SummarizeParams,
    SummarizeResult,
    ToolCallParams,
)
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport

__all__ = ["HostServer", "hearth_version"]

logger = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)


def hearth_version() -> str:
    try:
        return version("hearth")
    except PackageNotFoundError:
        return "0.0.0"


def load_host_settings(path: Path) -> HostSettings:
    """The host's settings; a file that is not valid settings is an error that names it, never a reset."""
    try:
        return HostSettings.model_validate(read_json(path, {}))
    except ValidationError as exc:
        problem = describe_validation_error(exc).removeprefix("Invalid params ")
        raise CorruptFileError(f"{path} does not hold valid host settings: {problem}") from exc


class HostServer:
    """Serves one shell. Build it, then `await serve(transport)`."""

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.store = AgentStore(config.data_dir)
        self.settings = load_host_settings(config.data_dir / "settings.json")
        self.shell_router = Router()
        self.kernel_router = Router()
        self.kernel = KernelSupervisor(
            config.kernel_command,
            self.kernel_router,
            on_down=self._kernel_down,
            on_up=self._kernel_up,
            init_params=lambda: KernelInitializeParams(
                protocol_version=PROTOCOL_VERSION, shell_sandbox=self.settings.shell_sandbox
            ),
        )
        self.secrets = SecretStore(config.data_dir)
        self.hub = MemoryHub(config.data_dir, on_event=self._memory_event)
        self.planner = TurnPlanner(
            self.store,
            self.secrets,
            self._summarize,
            lambda: self.kernel.info,
            memory=lambda agent: self.memory.source(agent),
            host_tools=lambda agent: self.memory.tools(agent),
        )
        self.runs = RunManager(
            self.store,
            self.kernel,
            self.notify,
            self.planner.prepare,
            max_concurrent=self.settings.max_concurrent_runs,
            on_status=self._agent_changed,
        )
        self.runs.register(self.kernel_router)
        self.memory = MemoryService(self.hub, self.store, self.runs, self.planner, self._summarize, self.notify)
        self.runs.end_hooks.append(self.memory.after_run)
        self.kernel_router.add("tool.call", ToolCallParams, self.memory.call_tool)
        self.approvals = ApprovalDesk(self.runs, self.notify, self._remember_approval)
        self.runs.end_hooks.append(self.approvals.run_ended)
        self.kernel_router.add("approval.request", ApprovalRequestParams, self.approvals.request)
        self._peer: JsonRpcPeer | None = None
        self._initialized = False
        self._stop = asyncio.Event()
        self._register()

    # -- plumbing -------------------------------------------------------------------------------

    def add(
        self,
        name: str,
        params: type[P],
        handler: Callable[[P], Awaitable[BaseModel | None]],
        *,
        needs_init: bool = True,
    ) -> None:
        """Register a shell-facing method; most need `initialize` first."""

        async def guarded(p: P) -> BaseModel | None:
            if needs_init and not self._initialized:
                raise NotInitializedError(f"call initialize before {name}")
            return await handler(p)

        self.shell_router.add(name, params, guarded)

    async def notify(self, method: str, event: BaseModel) -> None:
        if self._peer is not None:
            await self._peer.notify(method, event)

    async def serve(self, transport: Transport) -> None:
        """Serve until `shutdown` or the shell closes its end; then stop runs and the kernel."""
        self._peer = JsonRpcPeer(transport, self.shell_router, name="shell")
        async with asyncio.TaskGroup() as tasks:
            kernel_task = tasks.create_task(self.kernel.run())
            runs_task = tasks.create_task(self.runs.serve())
            memory_task = tasks.create_task(self.memory.serve())
            watch_stop = asyncio.Event()
            watch_task = tasks.create_task(self._watch_views(watch_stop))
            shell_task = tasks.create_task(self._peer.serve())
            stop_task = tasks.create_task(self._stop.wait())
            await asyncio.wait({shell_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
            await self.runs.cancel_all()
            await self.kernel.stop()
            await kernel_task
            watch_stop.set()
            await watch_task
            for task in (runs_task, memory_task, stop_task):
                task.cancel()
            if not shell_task.done():
                await asyncio.sleep(0)  # let the answer to `shutdown` reach the wire
                shell_task.cancel()
        self.hub.close()
        await transport.close()

    async def _watch_views(self, stop: asyncio.Event) -> None:
        try:
            await watch_memory_views(self.hub, stop)
        except Exception:  # without the watcher the host still serves; edits are imported on the next start
            logger.exception("watching MEMORY.md files failed; a person's edits will be imported on restart")

    async def _memory_event(self, event: MemoryEvent) -> None:
        await self.memory.on_event(event)

    async def _summarize(self, params: SummarizeParams) -> SummarizeResult:
        return await self.kernel.request("summarize", params, SummarizeResult, timeout=300)

    def _remember_approval(self, agent_id: str, action: str, target: str, decision: Literal["allow", "deny"]) -> None:
        ApprovalStore.for_agent(self.config.data_dir, agent_id).remember(action, target, decision)

    # -- events -----------------------------------------------------------------------------------

    def _info(self, agent: Agent) -> AgentInfo:
        return AgentInfo(
            agent_id=agent.agent_id,
            name=agent.name,
            created_at=agent.created_at,
            status=self.runs.status(agent.agent_id),
            settings=agent.settings,
        )

    async def _agent_changed(self, agent_id: str) -> None:
        agent = self.store.get(agent_id) if self.store.exists(agent_id) else None
        info = self._info(agent) if agent is not None else None
        await self.notify("agent.updated", AgentUpdatedEvent(agent_id=agent_id, agent=info))

    async def _kernel_down(self, reason: str) -> None:
        await self.runs.end_all_running(
            "error", f"the kernel stopped unexpectedly ({reason}); send your message again", code=KERNEL_UNAVAILABLE
        )
        await self.notify("kernel.down", KernelDownEvent(reason=reason, restarting=True))

    async def _kernel_up(self) -> None:
        await self.notify("kernel.up", KernelUpEvent(pid=self.kernel.pid or 0, restarts=self.kernel.restarts))

    # -- methods ----------------------------------------------------------------------------------

    def _register(self) -> None:
        self.add("initialize", InitializeParams, self.initialize, needs_init=False)
        self.add("ping", EmptyParams, self.ping, needs_init=False)
        self.add("shutdown", EmptyParams, self.shutdown, needs_init=False)
        self.add("host.status", EmptyParams, self.host_status)
        self.add("settings.get", EmptyParams, self.settings_get)
        self.add("settings.set", SettingsSetParams, self.settings_set)
        self.add("agent.create", AgentCreateParams, self.agent_create)
        self.add("agent.list", EmptyParams, self.agent_list)
        self.add("agent.get", AgentRef, self.agent_get)
        self.add("agent.update", AgentUpdateParams, self.agent_update)
        self.add("agent.delete", AgentRef, self.agent_delete)
        self.add("agent.send", AgentSendParams, self.agent_send)
        self.add("agent.cancel", AgentRef, self.agent_cancel)
        self.add("agent.transcript", AgentTranscriptParams, self.agent_transcript)
        self.add("agent.decideTool", DecideToolParams, self.approvals.decide)
        register_secrets_methods(self, self.secrets)
        register_memory_methods(self, self.hub)

    async def initialize(self, params: InitializeParams) -> InitializeResult:
        self._initialized = True
        logger.info("shell %s %s connected", params.client.name, params.client.version)
        return InitializeResult(
            server=ServerInfo(name="hearth", version=hearth_version()),
            protocol_version=PROTOCOL_VERSION,
            capabilities={"agents": True, "streaming": True, "kernelRestart": True},
        )

    async def ping(self, _: EmptyParams) -> Empty:
        return Empty()

    async def shutdown(self, _: EmptyParams) -> Empty:
        self._stop.set()
        return Empty()

    async def host_status(self, _: EmptyParams) -> HostStatusResult:
        info = self.kernel.info
        return HostStatusResult(
            version=hearth_version(),
            pid=os.getpid(),
            data_dir=str(self.config.data_dir),
            kernel=KernelStatus(
                state=self.kernel.state,
                pid=self.kernel.pid,
                restarts=self.kernel.restarts,
                tools=[tool.name for tool in info.tools] if info is not None else [],
                shell=info.shell if info is not None else None,
            ),
            agents=len(self.store.list()),
            runs=self.runs.runs(),
            max_concurrent_runs=self.runs.max_concurrent,
        )

    async def settings_get(self, _: EmptyParams) -> HostSettings:
        return self.settings

    async def settings_set(self, params: SettingsSetParams) -> HostSettings:
        merged = {**self.settings.model_dump(), **params.model_dump(exclude_none=True)}
        self.settings = HostSettings.model_validate(merged)
        write_json_atomic(self.config.data_dir / "settings.json", self.settings.model_dump(mode="json"))
        self.runs.max_concurrent = self.settings.max_concurrent_runs
        return self.settings

    async def agent_create(self, params: AgentCreateParams) -> AgentInfo:
        settings = apply_settings_patch(AgentSettings(), params.settings)
        agent = self.store.create(params.name, params.agent_id, settings)
        await self._agent_changed(agent.agent_id)
        return self._info(agent)

    async def agent_list(self, _: EmptyParams) -> AgentListResult:
        return AgentListResult(agents=[self._info(agent) for agent in self.store.list()])

    async def agent_get(self, params: AgentRef) -> AgentInfo:
        return self._info(self.store.get(params.agent_id))

    async def agent_update(self, params: AgentUpdateParams) -> AgentInfo:
        agent = self.store.update(params.agent_id, params.name, params.settings)
        await self._agent_changed(agent.agent_id)
        return self._info(agent)

    async def agent_delete(self, params: AgentRef) -> AgentDeleteResult:
        self.store.get(params.agent_id)
        await self.runs.cancel(params.agent_id)
        try:
            await self.kernel.request("session.close", SessionCloseParams(session=params.agent_id), Empty, timeout=10)
        except JsonRpcError as exc:
            logger.warning("could not close %s's kernel session: %s", params.agent_id, exc.message)
        self.hub.close_agent(params.agent_id)
        self.store.delete(params.agent_id)
        await self._agent_changed(params.agent_id)
        return AgentDeleteResult(deleted=True)

    async def agent_send(self, params: AgentSendParams) -> AgentSendResult:
        run_id, seq = await self.runs.send(params.agent_id, params.text)
        return AgentSendResult(run_id=run_id, seq=seq)

    async def agent_cancel(self, params: AgentRef) -> AgentCancelResult:
        self.store.get(params.agent_id)
        return AgentCancelResult(cancelled=await self.runs.cancel(params.agent_id))

    async def agent_transcript(self, params: AgentTranscriptParams) -> AgentTranscriptResult:
        self.store.get(params.agent_id)
        events, has_more = self.store.transcript(params.agent_id).page(params.before_seq, params.limit)
        return AgentTranscriptResult.model_validate({"events": events, "hasMore": has_more})
