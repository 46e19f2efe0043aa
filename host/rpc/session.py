"""Session methods: `initialize`, `ping`, `shutdown`, `host.status`, `settings.get` and `settings.set`."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from host.rpc.table import ShellTable
from host.runs.scheduler import RunManager
from host.store.agents import AgentStore
from host.store.host_settings import HostSettingsStore
from host.supervisor import KernelSupervisor
from protocol.models.base import Empty, EmptyParams
from protocol.models.host import (
    PROTOCOL_VERSION,
    HostSettings,
    HostStatusResult,
    InitializeParams,
    InitializeResult,
    KernelStatus,
    RunInfo,
    ServerInfo,
    SettingsSetParams,
)
from protocol.version import hearth_version

__all__ = ["register_session_methods"]

logger = logging.getLogger(__name__)


def register_session_methods(
    table: ShellTable,
    *,
    data_dir: Path,
    kernel: KernelSupervisor,
    runs: RunManager,
    store: AgentStore,
    settings: HostSettingsStore,
    stop: Callable[[], None],
    queued: Callable[[], list[RunInfo]] = list,
) -> None:
    """Add the session methods to `table`."""

    async def initialize(params: InitializeParams) -> InitializeResult:
        table.initialized = True
        logger.info("shell %s %s connected", params.client.name, params.client.version)
        return InitializeResult(
            server=ServerInfo(name="hearth", version=hearth_version()),
            protocol_version=PROTOCOL_VERSION,
            capabilities={"agents": True, "streaming": True, "kernelRestart": True},
        )

    async def ping(_: EmptyParams) -> Empty:
        return Empty()

    async def shutdown(_: EmptyParams) -> Empty:
        stop()
        return Empty()

    async def host_status(_: EmptyParams) -> HostStatusResult:
        info = kernel.info
        return HostStatusResult(
            version=hearth_version(),
            pid=os.getpid(),
            data_dir=str(data_dir),
            kernel=KernelStatus(
                state=kernel.state,
                pid=kernel.pid,
                restarts=kernel.restarts,
                tools=[tool.name for tool in info.tools] if info is not None else [],
                shell=info.shell if info is not None else None,
            ),
            agents=len(store.list()),
            runs=[*runs.runs(), *queued()],
            max_concurrent_runs=runs.max_concurrent,
        )

    async def settings_get(_: EmptyParams) -> HostSettings:
        return settings.current

    async def settings_set(params: SettingsSetParams) -> HostSettings:
        updated = settings.update(params.model_dump(exclude_none=True))
        runs.max_concurrent = updated.max_concurrent_runs
        return updated

    table.add("initialize", InitializeParams, initialize, needs_init=False)
    table.add("ping", EmptyParams, ping, needs_init=False)
    table.add("shutdown", EmptyParams, shutdown, needs_init=False)
    table.add("host.status", EmptyParams, host_status)
    table.add("settings.get", EmptyParams, settings_get)
    table.add("settings.set", SettingsSetParams, settings_set)
