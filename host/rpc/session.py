"""Session methods: `initialize`, `ping`, `shutdown`, `host.status`, `settings.get` and `settings.set`.

`initialize` is per connection: it refuses a protocol version the host does not speak (naming the one it
does), and on the socket a missing or wrong token; only then does the connection get events.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from host.connections import Connection, current_connection
from host.errors import NotAuthorizedError
from host.rpc.table import ShellTable
from host.runs.scheduler import RunManager
from host.store.agents import AgentStore
from host.store.host_settings import HostSettingsStore
from host.supervisor import KernelSupervisor
from protocol.endpoint import ENDPOINT_FILE
from protocol.errors import InvalidParamsError
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
    token: Callable[[], str | None],
    attached: Callable[[Connection], Awaitable[None]] | None = None,
) -> None:
    """Add the session methods to `table`; `token()` is the socket's token (None while nothing listens), and
    `attached(conn)` runs once a connection has initialized (to offer it what it missed)."""

    async def initialize(params: InitializeParams) -> InitializeResult:
        if params.protocol_version != PROTOCOL_VERSION:
            raise InvalidParamsError(
                f"this host speaks protocol {PROTOCOL_VERSION}, not {params.protocol_version}",
                data={"supported": [PROTOCOL_VERSION], "requested": params.protocol_version},
            )
        conn = current_connection()
        if conn is not None and conn.origin == "socket":
            expected = token()
            if expected is None or not hmac.compare_digest(params.token or "", expected):
                raise NotAuthorizedError(f"the token does not match; read it from {data_dir / ENDPOINT_FILE}")
        if conn is not None:
            conn.initialized = True
            conn.client = params.client.name
            conn.answers_approvals = params.capabilities.approvals
            if attached is not None:
                await attached(conn)
        logger.info("client %s %s initialized", params.client.name, params.client.version)
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
            agents=len(store.scan()),
            runs=[*runs.runs(), *queued()],
            max_concurrent_runs=runs.max_concurrent,
        )

    async def settings_get(_: EmptyParams) -> HostSettings:
        return settings.current

    async def settings_set(params: SettingsSetParams) -> HostSettings:
        updated = await asyncio.to_thread(settings.update, params.model_dump(exclude_none=True))
        runs.max_concurrent = updated.max_concurrent_runs
        return updated

    table.add("initialize", InitializeParams, initialize, before_init="open")
    table.add("ping", EmptyParams, ping, before_init="open")
    table.add("shutdown", EmptyParams, shutdown, before_init="stdio")
    table.add("host.status", EmptyParams, host_status)
    table.add("settings.get", EmptyParams, settings_get)
    table.add("settings.set", SettingsSetParams, settings_set)
