"""How a host is configured: where it keeps its state and how it starts its kernel.

The data directory is resolved by `protocol.datadir.resolve_data_dir` (flag, `$HEARTH_HOME`, platform
default). A host serves the shell that launched it on stdio, or (`idle_exit`) only socket clients. The
kernel starts as a child process unless a `kernel_launcher` is given: the seam the tests use to run a
kernel in memory. `clock` drives request deadlines and `schedule_clock` the schedules and budget days, so
tests can move time by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from host.schedules.clock import ScheduleClock
from host.supervisor import KernelLauncher, default_kernel_command, process_launcher
from host.together.clock import Clock, SystemClock

__all__ = ["HostConfig"]


@dataclass(frozen=True, slots=True)
class HostConfig:
    data_dir: Path
    kernel_command: list[str] = field(default_factory=default_kernel_command)
    kernel_launcher: KernelLauncher | None = None
    clock: Clock = field(default_factory=SystemClock)
    """The time source of request deadlines (tests pass one they move by hand)."""
    schedule_clock: ScheduleClock | None = None
    """The schedules' clock (None: the system's). A `ManualClock` also adds the test-only `debug.advanceClock`."""
    listen: bool = True
    """Listen on the data dir's Unix socket for more clients."""
    idle_exit: float | None = None
    """None: serve the shell on stdio. Seconds: serve only the socket, and stop once idle that long."""

    def launcher(self) -> KernelLauncher:
        """The kernel launcher: the configured one, or a child process running `kernel_command`."""
        return self.kernel_launcher or process_launcher(self.kernel_command)
