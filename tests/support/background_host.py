"""Waiting for a host that a `hearth` command started in the background to stop by itself.

Such a host is no child of the test, so it is waited on through a pidfd (an event with a timeout,
never a sleep loop).
"""

from __future__ import annotations

import json
import os
import select
from pathlib import Path

__all__ = ["host_pid", "wait_until_stopped"]


def host_pid(data_dir: Path) -> int | None:
    """The pid in the data dir's `host.lock`, if a host holds or held it."""
    try:
        return int(json.loads((data_dir / "host.lock").read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError):
        return None


def wait_until_stopped(data_dir: Path, timeout: float = 30.0) -> None:
    """Return once the host on `data_dir` (if any) has exited; fail after `timeout` seconds."""
    pid = host_pid(data_dir)
    if pid is None:
        return
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        assert poller.poll(timeout * 1000), f"the host (pid {pid}) on {data_dir} did not stop in {timeout} s"
    finally:
        os.close(fd)
