"""A kernel that cannot start, or refuses to, never ends the host; restarts back off, and the backoff resets
after a healthy run (issue 10 item 8). Driven with a fake clock and in-memory kernels: no waiting."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from host.kernel_env import kernel_environment
from host.restarts import BACKOFF_STEPS, HEALTHY_AFTER_SECONDS
from host.supervisor import KernelChild, KernelSupervisor
from protocol.dispatch import Router
from protocol.errors import JsonRpcError
from protocol.models.base import Empty, EmptyParams
from protocol.models.kernel import KernelInitializeParams, KernelInitializeResult, ShellAvailability
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport, memory_transport_pair


class FakeClock:
    """Time moves only when the test moves it, or by exactly what the supervisor sleeps."""

    def __init__(self, hold: asyncio.Event | None = None) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self._hold = hold
        self._slept = asyncio.Condition()

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        async with self._slept:
            self.sleeps.append(seconds)
            self._slept.notify_all()
        if self._hold is not None:
            await self._hold.wait()  # a sleep that only a stop can cut short
        self.now += seconds

    async def wait_sleeps(self, count: int) -> list[float]:
        async with asyncio.timeout(5), self._slept:
            await self._slept.wait_for(lambda: len(self.sleeps) >= count)
        return self.sleeps


class FakeKernelChild:
    """An in-memory kernel that answers `initialize` (or refuses it) and exits when told to or when its input ends."""

    def __init__(self, refuse: str | None) -> None:
        host_side, kernel_side = memory_transport_pair()
        self._host_side = host_side
        self._kernel_side = kernel_side
        self.exit_code = asyncio.get_running_loop().create_future()
        router = Router()

        async def initialize(_: KernelInitializeParams) -> KernelInitializeResult:
            if refuse is not None:
                raise JsonRpcError(refuse, code=-32602)
            return KernelInitializeResult(
                name="fake", version="0", tools=[], shell=ShellAvailability(available=False, reason="fake")
            )

        async def shutdown(_: EmptyParams) -> Empty:
            return Empty()  # the host closes our input next, which ends the serving

        router.add("initialize", KernelInitializeParams, initialize)
        router.add("shutdown", EmptyParams, shutdown)
        self._peer = JsonRpcPeer(kernel_side, router, name="fake-kernel")
        self._serving = asyncio.create_task(self._serve())

    async def _serve(self) -> None:
        serving = asyncio.create_task(self._peer.serve())
        await asyncio.wait({serving, self.exit_code}, return_when=asyncio.FIRST_COMPLETED)
        serving.cancel()
        self.exit(0)
        await self._kernel_side.close()

    def exit(self, code: int) -> None:
        if not self.exit_code.done():
            self.exit_code.set_result(code)

    @property
    def transport(self) -> Transport:
        return self._host_side

    @property
    def pid(self) -> int | None:
        return 4242

    async def wait(self) -> int:
        code: int = await self.exit_code
        await self._serving
        return code

    def close_input(self) -> None:
        self._kernel_side.reader.feed_eof()

    def terminate(self) -> None:
        self.exit(-15)

    def kill(self) -> None:
        self.exit(-9)


@dataclass
class Launches:
    """Each launch takes the next outcome the test queued: an OSError, a refusal text, or None for a good kernel."""

    outcomes: asyncio.Queue[OSError | str | None] = field(default_factory=asyncio.Queue)
    children: list[FakeKernelChild] = field(default_factory=list)

    async def launch(self) -> KernelChild:
        outcome = await self.outcomes.get()
        if isinstance(outcome, OSError):
            raise outcome
        child = FakeKernelChild(outcome)
        self.children.append(child)
        return child


class Reports:
    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.changed = asyncio.Condition()

    def on(self, kind: str) -> Callable[..., Awaitable[None]]:
        async def record(reason: str = "") -> None:
            async with self.changed:
                self.log.append((kind, reason))
                self.changed.notify_all()

        return record

    async def wait(self, count: int) -> None:
        async with asyncio.timeout(5), self.changed:
            await self.changed.wait_for(lambda: len(self.log) >= count)


def _supervised(clock: FakeClock) -> tuple[KernelSupervisor, Launches, Reports]:
    launches, reports = Launches(), Reports()
    supervisor = KernelSupervisor(
        launches.launch, Router(), on_down=reports.on("down"), on_up=reports.on("up"), clock=clock
    )
    return supervisor, launches, reports


def test_a_kernel_that_cannot_be_spawned_or_refuses_to_initialize_is_reported_and_retried() -> None:
    async def main() -> None:
        clock = FakeClock()
        supervisor, launches, reports = _supervised(clock)
        running = asyncio.create_task(supervisor.run())
        launches.outcomes.put_nowait(OSError(errno.ENOENT, "No such file or directory"))
        await reports.wait(1)
        assert supervisor.state == "down"
        launches.outcomes.put_nowait("protocol version 9 is not spoken here")
        await reports.wait(2)
        launches.outcomes.put_nowait(None)
        await reports.wait(3)
        assert supervisor.state == "up" and supervisor.restarts == 2
        (spawn, _), (refusal, _), (up, _) = reports.log
        assert (spawn, refusal, up) == ("down", "down", "up")
        assert "No such file or directory" in reports.log[0][1]
        assert "protocol version 9 is not spoken here" in reports.log[1][1]
        assert launches.children[0].exit_code.done(), "the kernel that refused was stopped, not left running"
        await supervisor.stop()
        async with asyncio.timeout(5):
            await running
        assert supervisor.state == "stopped" and clock.sleeps == list(BACKOFF_STEPS[:2])
        assert all(child.exit_code.done() for child in launches.children)

    asyncio.run(main())


def test_the_backoff_grows_to_its_cap_and_resets_after_a_healthy_run_but_not_a_short_one() -> None:
    """Today every restart after the fifth waited ~5 s forever, however long the kernel had run."""

    async def main() -> None:
        clock = FakeClock()
        supervisor, launches, reports = _supervised(clock)
        running = asyncio.create_task(supervisor.run())
        for count in range(1, 7):
            launches.outcomes.put_nowait(OSError(errno.EACCES, "Permission denied"))
            await reports.wait(count)
        assert await clock.wait_sleeps(6) == [0.2, 0.5, 1.0, 2.0, 5.0, 5.0]

        launches.outcomes.put_nowait(None)
        await reports.wait(7)
        clock.now += 3.0  # up, but not for long
        launches.children[-1].exit(1)
        await reports.wait(8)
        assert (await clock.wait_sleeps(7))[-1] == 5.0, "a kernel that died after 3 s does not reset the backoff"

        launches.outcomes.put_nowait(None)
        await reports.wait(9)
        clock.now += HEALTHY_AFTER_SECONDS + 1  # a healthy stretch
        launches.children[-1].exit(1)
        await reports.wait(10)
        assert (await clock.wait_sleeps(8))[-1] == BACKOFF_STEPS[0]
        launches.outcomes.put_nowait(OSError(errno.ENOENT, "gone"))
        await reports.wait(11)
        assert (await clock.wait_sleeps(9))[-1] == BACKOFF_STEPS[1]
        await supervisor.stop()
        async with asyncio.timeout(5):
            await running

    asyncio.run(main())


def test_a_stop_during_the_backoff_ends_the_wait_and_the_supervisor() -> None:
    async def main() -> None:
        clock = FakeClock(hold=asyncio.Event())
        supervisor, launches, reports = _supervised(clock)
        running = asyncio.create_task(supervisor.run())
        launches.outcomes.put_nowait(OSError(errno.ENOENT, "gone"))
        await reports.wait(1)
        await supervisor.stop()
        async with asyncio.timeout(5):
            await running
        assert supervisor.state == "stopped"

    asyncio.run(main())


def test_the_kernel_environment_is_an_allowlist() -> None:
    """Issue 10 item 12: the kernel used to get the host's whole environment."""
    host_env = {
        "PATH": "/usr/bin",
        "HOME": "/home/ann",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp/ann",
        "HEARTH_HOME": "/data",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
        "GITHUB_TOKEN": "ghp_abc",
        "OPENAI_API_KEY": "sk-x",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent",
    }
    assert kernel_environment(host_env) == {
        "PATH": "/usr/bin",
        "HOME": "/home/ann",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp/ann",
        "HEARTH_HOME": "/data",
    }
