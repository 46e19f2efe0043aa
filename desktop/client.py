"""A client's side of the wire: attach to the host running on a data dir, or start one, then initialize.

`connect_host` reads `<data>/host.endpoint`; when a host listens there it connects to its Unix socket and
initializes with the host's token. When none runs it starts `python -m host --idle-exit SECONDS` in its own
session (its log in `<data>/logs/host.log`), waits for the socket and attaches. Leaving closes this
connection only: the host goes on serving its other clients, and a host a client started stops by itself
once no client and no run has been there for the grace period (`$HEARTH_IDLE_EXIT`, default 15 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.dispatch import Router
from protocol.endpoint import EndpointError, live_endpoint
from protocol.errors import NOT_AUTHORIZED, ConnectionClosedError, JsonRpcError
from protocol.framing import READ_LIMIT
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport, stream_transport
from protocol.version import PROTOCOL_VERSION

__all__ = [
    "run_command",
    "IDLE_EXIT_ENV",
    "DEFAULT_IDLE_EXIT",
    "HostLink",
    "host_command",
    "connect_host",
    "attach_or_start",
]

IDLE_EXIT_ENV = "HEARTH_IDLE_EXIT"
DEFAULT_IDLE_EXIT = 15.0
ATTACH_TIMEOUT = 60.0
_POLL = 0.05


def _idle_exit() -> float:
    try:
        return max(float(os.environ.get(IDLE_EXIT_ENV, DEFAULT_IDLE_EXIT)), 0.0)
    except ValueError:
        return DEFAULT_IDLE_EXIT


def host_command(data_dir: Path, idle_exit: float | None = None) -> list[str]:
    """argv that runs a host on `data_dir` with this interpreter; with `idle_exit`, a socket-only host."""
    argv = [sys.executable, "-m", "host", "--data-dir", str(data_dir)]
    return argv if idle_exit is None else [*argv, "--idle-exit", str(idle_exit)]


@dataclass(slots=True)
class HostLink:
    """One initialized connection to a host: its peer, the task reading its frames, and what it said."""

    transport: Transport
    peer: JsonRpcPeer
    serving: asyncio.Task[None]
    info: dict[str, Any]
    """The host's `initialize` result, in wire form."""
    started_host: bool

    async def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            await self.transport.close()
        self.serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.serving


async def _try_attach(data_dir: Path, router: Router, client: str, answers_approvals: bool) -> HostLink | None:
    """Connect to the host recorded for `data_dir` and initialize; None when no host answers there.

    Raises:
        ConnectionClosedError: the recorded socket is not this user's (it is refused, not used).
    """
    try:
        endpoint = live_endpoint(data_dir)
    except EndpointError as exc:
        raise ConnectionClosedError(f"refusing to attach: {exc}") from None
    if endpoint is None:
        return None
    try:
        reader, writer = await asyncio.open_unix_connection(endpoint.socket, limit=READ_LIMIT)
    except OSError:
        return None  # a dead host's record: nobody listens there
    transport = stream_transport(reader, writer)
    peer = JsonRpcPeer(transport, router, name="host")
    # Owned by the HostLink and awaited in its close(); a task group would wrap the caller's errors.
    serving = asyncio.create_task(peer.serve())
    params = {
        "client": {"name": client},
        "protocolVersion": PROTOCOL_VERSION,
        "token": endpoint.token,
        "capabilities": {"approvals": answers_approvals},
    }
    try:
        info: dict[str, Any] = await peer.request("initialize", params, timeout=30)
    except JsonRpcError as exc:
        await HostLink(transport, peer, serving, {}, False).close()
        if isinstance(exc, ConnectionClosedError) or exc.code == NOT_AUTHORIZED:
            return None  # the host was stopping, or restarted with a new token: look again
        raise
    return HostLink(transport, peer, serving, info, started_host=False)


def _spawn_host(data_dir: Path, verbose: bool) -> int:
    """Start a socket-only host in its own session; returns its pid. Its log goes to `<data>/logs/host.log`."""
    log_path = data_dir / "logs" / "host.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = host_command(data_dir, _idle_exit())
    actions: list[tuple[int, int, str, int, int] | tuple[int, int, int]] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
    ]
    if not verbose:
        actions.append((os.POSIX_SPAWN_OPEN, 2, str(log_path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
    return os.posix_spawn(argv[0], argv, dict(os.environ), file_actions=actions, setsid=True)


def _reaped(pid: int) -> bool:
    """Whether the host we started has exited (collecting it, so it leaves no zombie)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _lock_holder(data_dir: Path) -> int | None:
    """The pid recorded in `host.lock` while that process lives: a host is starting or stopping there."""
    try:
        pid = int(json.loads((data_dir / "host.lock").read_text(encoding="utf-8"))["pid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid


def _last_log_line(data_dir: Path) -> str:
    log_path = data_dir / "logs" / "host.log"
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return f"see {log_path}"
    return lines[-1] if lines else f"no output; see {log_path}"


async def attach_or_start(
    data_dir: Path,
    router: Router,
    *,
    client: str,
    verbose: bool = False,
    timeout: float = ATTACH_TIMEOUT,
    answers_approvals: bool = False,
) -> HostLink:
    """Attach to the host running on `data_dir`, starting one when none runs.

    A client that shows tool calls' questions to a person and answers them says so (`answers_approvals`):
    the host then offers it the questions already open, and lets them wait while it is attached.

    Two clients starting at once each start a host; the one that loses the data dir's lock exits, and
    both attach to the winner.

    Raises:
        ConnectionClosedError: no host could be started or reached in time, or the socket is not ours.
        JsonRpcError: the host refused to initialize.
    """
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    deadline = time.monotonic() + timeout
    started: int | None = None
    last_spawn = 0.0
    failures = 0
    while True:
        link = await _try_attach(data_dir, router, client, answers_approvals)
        if link is not None:
            link.started_host = started is not None
            return link
        if started is not None and _reaped(started):
            started = None
            if _lock_holder(data_dir) is None:
                failures += 1  # it did not lose a race to another host: it could not start
                if failures >= 2:
                    raise ConnectionClosedError(f"the host stopped before it answered: {_last_log_line(data_dir)}")
        # While another host holds the lock (starting, or stopping) wait for it rather than race it.
        holder_wait = _lock_holder(data_dir) is not None and time.monotonic() - last_spawn < 5.0
        if started is None and not holder_wait:
            started = _spawn_host(data_dir, verbose)
            last_spawn = time.monotonic()
        if time.monotonic() > deadline:
            raise ConnectionClosedError(f"no host answered on {data_dir} in time: {_last_log_line(data_dir)}")
        await asyncio.sleep(_POLL)


@asynccontextmanager
async def connect_host(
    data_dir: Path, router: Router, *, client: str, verbose: bool = False, answers_approvals: bool = False
) -> AsyncIterator[JsonRpcPeer]:
    """Attach to (or start) the host on `data_dir`, initialize, and yield the peer; leaving disconnects.

    Raises:
        ConnectionClosedError: no host could be started or reached.
        JsonRpcError: the host refused to initialize.
    """
    link = await attach_or_start(data_dir, router, client=client, verbose=verbose, answers_approvals=answers_approvals)
    try:
        yield link.peer
    finally:
        await link.close()


def run_command(command: Coroutine[Any, Any, int]) -> int:
    """Run a terminal command's coroutine; a refusal from the host is printed as `hearth: WHY` and exits 1."""
    try:
        return asyncio.run(command)
    except JsonRpcError as exc:
        print(f"hearth: {exc.message}", file=sys.stderr)
        return 1
