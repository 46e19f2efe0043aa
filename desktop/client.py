"""A shell's side of the wire: launch `hearth host` over stdio, initialize, and shut it down after.

Used by the terminal commands (`hearth chat`, `hearth secrets`); a desktop shell does the same in its
own language. The host's log goes to `<data>/logs/host.log` unless `verbose`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from protocol.dispatch import Router
from protocol.errors import ConnectionClosedError, JsonRpcError
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION, InitializeResult
from protocol.peer import JsonRpcPeer
from protocol.transport import process_transport

__all__ = ["host_command", "connect_host"]


def host_command(data_dir: Path) -> list[str]:
    """argv that runs a host on `data_dir` with this interpreter (what `hearth host` does)."""
    return [sys.executable, "-m", "host", "--data-dir", str(data_dir)]


def _why_it_stopped(log_path: Path, start: int, code: int | None) -> str:
    """The host's last words from its log, for a host that exited before it could answer."""
    with open(log_path, "rb") as log:
        log.seek(start)
        lines = log.read().decode("utf-8", errors="replace").strip().splitlines()
    last = lines[-1] if lines else f"no output; see {log_path}"
    return f"the host stopped before it answered (exit code {code}): {last}"


@asynccontextmanager
async def connect_host(
    data_dir: Path, router: Router, *, client: str, verbose: bool = False
) -> AsyncIterator[JsonRpcPeer]:
    """Start a host on `data_dir`, initialize it, and yield the peer; stop the host on the way out.

    Raises:
        JsonRpcError: the host refused to start (its lock is held) or to initialize.
    """
    log_path = data_dir / "logs" / "host.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = log_path.stat().st_size if log_path.exists() else 0
    with open(log_path, "ab") as log:
        process = await asyncio.create_subprocess_exec(
            *host_command(data_dir),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None if verbose else log,
            limit=READ_LIMIT,
        )
    peer = JsonRpcPeer(process_transport(process), router, name="host")
    # Owned here and awaited in `finally`; a task group would wrap the caller's errors in an ExceptionGroup.
    serving = asyncio.create_task(peer.serve())
    try:
        try:
            await peer.request(
                "initialize", {"client": {"name": client}, "protocolVersion": PROTOCOL_VERSION}, InitializeResult
            )
        except ConnectionClosedError:
            await process.wait()
            raise ConnectionClosedError(_why_it_stopped(log_path, start, process.returncode)) from None
        yield peer
    finally:
        if not peer.closed:
            try:
                await peer.request("shutdown", {}, timeout=15)
            except JsonRpcError:
                process.terminate()
        await process.wait()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
