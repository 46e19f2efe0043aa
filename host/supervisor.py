"""Kernel supervision: the host starts `python -m kernel`, talks to it over its stdio, and restarts it.

When the kernel dies unexpectedly, cannot be spawned, or refuses `initialize`, the supervisor reports
it (`on_down` with the reason, which ends the runs in flight), waits a growing backoff (see
`restarts.py`), starts a new kernel and reports it (`on_up`): nothing about a kernel ends the host.
Stopping asks the kernel to shut down, closes its stdin, waits, then terminates, then kills. How a
kernel is started is a seam (`KernelLauncher`): a child process in its own session with a trimmed
environment in production, an in-memory kernel in the tests.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from host.errors import KernelUnavailableError
from host.kernel_env import kernel_environment
from host.restarts import Clock, RestartBackoff, SystemClock
from protocol.dispatch import Router
from protocol.errors import ConnectionClosedError, JsonRpcError, RequestTimeoutError
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION, KernelState
from protocol.models.kernel import KernelInitializeParams, KernelInitializeResult
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport, process_transport

__all__ = ["KernelChild", "KernelLauncher", "KernelSupervisor", "default_kernel_command", "process_launcher"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)


def default_kernel_command() -> list[str]:
    return [sys.executable, "-m", "kernel"]


class KernelChild(Protocol):
    """A started kernel: the frames to and from it, and how to end it."""

    @property
    def transport(self) -> Transport: ...

    @property
    def pid(self) -> int | None: ...

    async def wait(self) -> int: ...

    def close_input(self) -> None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


KernelLauncher = Callable[[], Awaitable[KernelChild]]


class _ProcessChild:
    """A kernel in a child process, spoken to over its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self.transport = process_transport(process)

    @property
    def pid(self) -> int | None:
        return self._process.pid

    async def wait(self) -> int:
        return await self._process.wait()

    def close_input(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()


def process_launcher(command: list[str], env: dict[str, str] | None = None) -> KernelLauncher:
    """A launcher that starts `command` as a child process (stderr shared with the host's).

    The child gets `env`, or the allowlisted part of the host's environment (`kernel_environment`), and
    its own session, so a Ctrl-C at the host's terminal reaches the host alone and the host stops it.
    """

    async def launch() -> KernelChild:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            env=kernel_environment() if env is None else env,
            limit=READ_LIMIT,
            start_new_session=True,
        )
        return _ProcessChild(process)

    return launch


class KernelSupervisor:
    """Owns the kernel process and the JSON-RPC peer to it.

    Args:
        launch: starts one kernel (see `process_launcher`).
        router: handles what the kernel sends the host (turn events, tool calls, approval requests).
        on_down: awaited with a reason when a kernel exits unexpectedly, cannot start or refuses to initialize.
        on_up: awaited after each (re)start and successful initialize.
        clock: time for the restart backoff.
    """

    def __init__(
        self,
        launch: KernelLauncher,
        router: Router,
        *,
        on_down: Callable[[str], Awaitable[None]],
        on_up: Callable[[], Awaitable[None]],
        init_params: Callable[[], KernelInitializeParams] = lambda: KernelInitializeParams(
            protocol_version=PROTOCOL_VERSION
        ),
        clock: Clock | None = None,
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        self.backoff = RestartBackoff()
        self._init_params = init_params
        self._launch = launch
        self._router = router
        self._on_down = on_down
        self._on_up = on_up
        self._peer: JsonRpcPeer | None = None
        self._child: KernelChild | None = None
        self._up = asyncio.Event()
        self._stopping = asyncio.Event()
        self._stop_timeout = 5.0
        self.state: KernelState = "starting"
        self._up_since: float | None = None
        self.restarts = 0
        self.info: KernelInitializeResult | None = None

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None and self.state == "up" else None

    async def run(self) -> None:
        """Keep a kernel running until `stop()`; returns once the last one has exited."""
        while not self._stopping.is_set():
            reason, up_for = await self._run_once()
            if self._stopping.is_set():
                break
            self.state = "down"
            self._up.clear()
            logger.error("kernel stopped unexpectedly: %s", reason)
            await self._report(self._on_down(reason))
            await self._pause(self.backoff.next_delay(up_for))
            self.restarts += 1
        self.state = "stopped"

    async def _report(self, callback: Awaitable[None]) -> None:
        try:
            await callback
        except Exception:  # the supervisor's top level: a failed report must never stop the restarts
            logger.exception("reporting a kernel state change failed")

    async def _pause(self, seconds: float) -> None:
        """Wait `seconds` on the clock, or less if the host is stopping."""
        async with asyncio.TaskGroup() as tasks:
            sleeping = tasks.create_task(self._clock.sleep(seconds))
            stopping = tasks.create_task(self._stopping.wait())
            await asyncio.wait({sleeping, stopping}, return_when=asyncio.FIRST_COMPLETED)
            sleeping.cancel()
            stopping.cancel()

    async def _run_once(self) -> tuple[str, float | None]:
        """Start one kernel and serve it until it exits; returns why it stopped and how long it was up."""
        self.state = "starting"
        self._up_since = None
        try:
            child = self._child = await self._launch()
        except OSError as exc:
            return f"the kernel could not be started ({exc.strerror or exc})", None
        peer = JsonRpcPeer(child.transport, self._router, name="kernel")
        refused: str | None = None
        async with asyncio.TaskGroup() as tasks:
            serving = tasks.create_task(peer.serve())
            stopping = tasks.create_task(self._stopping.wait())
            initializing = tasks.create_task(self._initialize(peer))
            done, _ = await asyncio.wait({serving, stopping, initializing}, return_when=asyncio.FIRST_COMPLETED)
            if initializing in done:
                refused = initializing.result()
                if refused is None:
                    await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            initializing.cancel()
            if self._stopping.is_set() or refused is not None:
                await self._shut_down(child, peer)
            stopping.cancel()
            await serving
        self._peer = None
        self._up.clear()
        up_for = None if self._up_since is None else self._clock.monotonic() - self._up_since
        code = await child.wait()
        return refused or f"the kernel process exited with code {code}", up_for

    async def _initialize(self, peer: JsonRpcPeer) -> str | None:
        """Initialize the kernel; returns why it cannot be used, or None (up, or gone: `serve` ends then)."""
        try:
            self.info = await peer.request("initialize", self._init_params(), KernelInitializeResult, timeout=30)
        except ConnectionClosedError as exc:
            logger.error("kernel did not initialize: %s", exc.message)
            return None
        except RequestTimeoutError:
            return "the kernel did not answer initialize in time"
        except JsonRpcError as exc:
            return f"the kernel refused to initialize: {exc.message}"
        except ValidationError:
            return "the kernel answered initialize with something that is not an initialize result"
        self._peer = peer
        self.state = "up"
        self._up_since = self._clock.monotonic()
        self._up.set()
        await self._report(self._on_up())
        return None

    async def wait_up(self, timeout: float) -> bool:
        try:
            async with asyncio.timeout(timeout):
                await self._up.wait()
        except TimeoutError:
            return False
        return True

    async def request(self, method: str, params: BaseModel, result_type: type[R], *, timeout: float = 60.0) -> R:
        """Call the kernel.

        Raises:
            KernelUnavailableError: the kernel is down or went away before answering.
        """
        peer = self._peer
        if peer is None or self.state != "up":
            raise KernelUnavailableError("the kernel is not running (it is restarting; try again shortly)")
        try:
            result: R = await peer.request(method, params, result_type, timeout=timeout)
        except ConnectionClosedError as exc:
            raise KernelUnavailableError("the kernel stopped before it answered") from exc
        return result

    async def notify(self, method: str, params: BaseModel | dict[str, Any]) -> None:
        if self._peer is not None:
            await self._peer.notify(method, params)

    async def stop(self) -> None:
        """Ask `run()` to shut the kernel down; awaiting `run()` then waits for the exit."""
        self._up.clear()
        self._stopping.set()

    async def _shut_down(self, child: KernelChild, peer: JsonRpcPeer) -> None:
        """Ask the kernel to shut down, close its stdin, wait, then terminate, then kill."""
        timeout = self._stop_timeout
        if self.state == "up":
            try:
                await peer.request("shutdown", {}, timeout=timeout)
            except JsonRpcError:
                logger.warning("kernel did not acknowledge shutdown; closing its stdin")
        child.close_input()
        for signal_process in (None, child.terminate, child.kill):
            if signal_process is not None:
                try:
                    signal_process()
                except ProcessLookupError:
                    break
            try:
                async with asyncio.timeout(timeout):
                    await child.wait()
                break
            except TimeoutError:
                continue
