"""The kernel's MCP sessions: one per (session key, server name), started lazily, closed when no longer wanted.

A turn asks for its servers (`ready_servers`); each one not running is started inside the OS sandbox built from
the run's policy and the server's own network setting, and the turn waits, bounded, until each is ready or
has failed (longer for a package runner with the network, which may fetch its package first). A running server
whose spec or policy changed is restarted; every server of a session is stopped on `close` (agent deleted, its
servers changed), and one idle for `idle_seconds` on its own. Where no OS sandbox works, a named secret is
missing, the program cannot be found or lies where an agent writes, or a loader variable is in its
environment, the server is not started and is reported `failed` with the reason, once until it changes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from kernel.mcp.causes import is_package_runner
from kernel.mcp.connection import McpConnection, Report
from kernel.mcp.spec import ServerSpec
from protocol.models.mcp import McpState, McpStatusEvent
from sandbox import Policy, SandboxError, ShellSandbox, Unavailable, open_dir
from sandbox.loader_vars import refused_variables
from sandbox.mcp_sandbox import ServerProgram, server_home, server_launch, server_program_refusal

__all__ = ["McpPool", "StatusSink"]

logger = logging.getLogger(__name__)

StatusSink = Callable[[McpStatusEvent], Awaitable[None]]

IDLE_SECONDS = 600.0
START_TIMEOUT = 30.0
FETCH_START_TIMEOUT = 180.0
"""How long a turn waits for a package runner (npx, uvx) with the network: its first start downloads the server."""
CALL_TIMEOUT = 300.0


@dataclass(slots=True)
class _Entry:
    connection: McpConnection
    policy: Policy
    tmp_dir: str | None


class McpPool:
    """Args:
    sandbox: the OS sandbox servers run in, or why there is none.
    sink: receives every status change.
    idle_seconds: a server unused this long is stopped.
    start_timeout: how long a turn waits for a server to become ready.
    call_timeout: how long one tool call may take.
    """

    def __init__(
        self,
        sandbox: ShellSandbox | Unavailable,
        sink: StatusSink,
        *,
        idle_seconds: float = IDLE_SECONDS,
        start_timeout: float = START_TIMEOUT,
        call_timeout: float = CALL_TIMEOUT,
    ) -> None:
        self.sandbox = sandbox
        self._sink = sink
        self._idle = idle_seconds
        self._start_timeout = start_timeout
        self._call_timeout = call_timeout
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._refused: dict[tuple[str, str], str] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: asyncio.TaskGroup | None = None

    async def serve(self) -> None:
        """Own the servers' tasks and stop idle ones, until cancelled (then every server is stopped)."""
        try:
            async with asyncio.TaskGroup() as tasks:
                self._tasks = tasks
                while True:
                    await asyncio.sleep(min(max(self._idle / 4, 0.05), 30.0))
                    await self._stop_idle()
        finally:
            self._tasks = None

    async def ready_servers(self, session: str, policy: Policy, specs: Iterable[ServerSpec]) -> list[McpConnection]:
        """The session's servers for this turn, started if needed; only the ready ones are returned.

        A running server whose spec or policy changed, or that died, is started afresh. Servers of the session
        that are not in `specs` are left alone (a Work run offers none); `close` stops them.
        """
        wanted = {spec.name: spec for spec in specs}
        async with self._locks.setdefault(session, asyncio.Lock()):
            for name, spec in wanted.items():
                entry = self._entries.get((session, name))
                if entry is not None and (
                    entry.connection.spec != spec or entry.policy != policy or not entry.connection.alive
                ):
                    await self._stop((session, name))
            for spec in wanted.values():
                if (session, spec.name) not in self._entries:
                    await self._start(session, policy, spec)
            connections = [self._entries[(session, n)].connection for n in wanted if (session, n) in self._entries]
        ready = await asyncio.gather(*(c.ready(self._start_timeout_of(c)) for c in connections))
        for connection, ok in zip(connections, ready, strict=True):
            if not ok and connection.alive:
                waited = self._start_timeout_of(connection)
                logger.warning("MCP server %s was not ready within %gs", connection.spec.name, waited)
                reason = f"it was not ready within {waited:g} seconds"
                await self._stop((session, connection.spec.name), reason=reason)
        return [c for c, ok in zip(connections, ready, strict=True) if ok]

    async def close(self, session: str) -> None:
        """Stop every server of `session`."""
        async with self._locks.setdefault(session, asyncio.Lock()):
            await asyncio.gather(*(self._stop(key) for key in [key for key in self._entries if key[0] == session]))
            for key in [key for key in self._refused if key[0] == session]:
                del self._refused[key]
        self._locks.pop(session, None)

    async def close_all(self) -> None:
        for session in {key[0] for key in self._entries}:
            await self.close(session)

    def _start_timeout_of(self, connection: McpConnection) -> float:
        if connection.spec.network and is_package_runner(connection.program):
            return max(self._start_timeout, FETCH_START_TIMEOUT)
        return self._start_timeout

    async def _start(self, session: str, policy: Policy, spec: ServerSpec) -> None:
        key = (session, spec.name)
        reason = self._why_not(policy, spec)
        if reason is not None:
            if self._refused.get(key) != reason:
                self._refused[key] = reason
                await self._sink(McpStatusEvent(session=session, server=spec.name, state="failed", error=reason))
            return
        self._refused.pop(key, None)
        assert isinstance(self.sandbox, ShellSandbox) and self._tasks is not None
        tmp_dir = tempfile.mkdtemp(prefix="hearth-mcp-") if self.sandbox.kind == "landlock" else None
        launch = server_launch(
            self.sandbox,
            policy,
            ServerProgram(spec.name, spec.command, spec.args, spec.env, spec.network),
            secrets=dict(spec.secrets),
            tmp_dir=tmp_dir,
        )
        report = self._reporter(session, spec.name)
        connection = McpConnection(spec, launch, report, program=spec.command, call_timeout=self._call_timeout)
        self._entries[key] = _Entry(connection, policy, tmp_dir)
        connection.task = self._tasks.create_task(connection.run())

    def _why_not(self, policy: Policy, spec: ServerSpec) -> str | None:
        if isinstance(self.sandbox, Unavailable):
            return f"MCP servers are not started here: {self.sandbox.reason}, so none could be confined"
        if self._tasks is None:
            return "the kernel is shutting down"
        if spec.missing_secrets:
            names = ", ".join(spec.missing_secrets)
            return f"the secret(s) {names} named in secretEnv are not stored (`hearth secrets set NAME`)"
        # The host resolves the command as the person's shell would; anything else was not found there.
        if not os.path.isabs(spec.command) or not os.access(spec.command, os.X_OK) or os.path.isdir(spec.command):
            return f"the program {spec.command!r} was not found"
        refusal = server_program_refusal(policy.data_dir, spec.command)
        if refusal is not None:
            return f"the program is refused: {refusal}"
        refused = refused_variables([*spec.env, *spec.secrets])
        if refused:
            return f"its environment is refused: {'; '.join(refused)}"
        try:
            os.close(open_dir(policy.workspace, create_for=policy))
            _make_home(server_home(policy, spec.name))
        except (SandboxError, OSError) as exc:
            return f"the agent's workspace or the server's home cannot be used ({type(exc).__name__})"
        return None

    def _reporter(self, session: str, server: str) -> Report:
        async def report(
            state: McpState,
            *,
            tools: int | None = None,
            error: str | None = None,
            tail: str | None = None,
            cause: str | None = None,
        ) -> None:
            event = McpStatusEvent(
                session=session,
                server=server,
                state=state,
                tool_count=tools,
                error=error,
                stderr_tail=tail,
                cause=cause,
            )
            await self._sink(event)

        return report

    async def _stop(self, key: tuple[str, str], *, reason: str | None = None) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        await entry.connection.close(reason)
        if entry.tmp_dir is not None:
            shutil.rmtree(entry.tmp_dir, ignore_errors=True)

    async def _stop_idle(self) -> None:
        now = time.monotonic()
        for key, entry in list(self._entries.items()):
            connection = entry.connection
            if connection.state != "ready" or connection.busy or now - connection.last_used < self._idle:
                continue
            async with self._locks.setdefault(key[0], asyncio.Lock()):
                if self._entries.get(key) is entry:
                    await self._stop(key)


def _make_home(home: str) -> None:
    """Create the server's home (0700), refusing one reached through a symlink: it must be where it is named.

    Raises:
        OSError: it cannot be created, or it resolves elsewhere.
    """
    os.makedirs(home, mode=0o700, exist_ok=True)
    if os.path.realpath(home) != home:
        raise OSError(f"{home} resolves elsewhere")
