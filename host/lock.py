"""`host.lock`: one host per data directory.

The lock is an `flock` on `host.lock`, held for the host's lifetime, and the file records `{pid,
startedAt}` so a refused second host can say who holds it. A crashed host's flock is released by the
OS, so its stale file is simply taken over.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from host.errors import HostLockedError

__all__ = ["HostLock"]


class HostLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "host.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or refuse.

        Raises:
            HostLockedError: a live host holds it; the message names its pid and the directory.
        """
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._read_holder(fd)
                os.close(fd)
                raise HostLockedError(
                    f"another Hearth host (pid {holder}) is already using {self.path.parent}; "
                    "stop it first, or start this one with --data-dir pointing elsewhere"
                ) from None
            if self._still_linked(fd):
                break
            # The previous holder unlinked the file while we waited on it: lock the new one instead.
            os.close(fd)
        record = json.dumps({"pid": os.getpid(), "startedAt": datetime.now(UTC).isoformat()})
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode("utf-8"), 0)
        os.fsync(fd)
        self._fd = fd

    def _still_linked(self, fd: int) -> bool:
        try:
            return os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    @staticmethod
    def _read_holder(fd: int) -> str:
        try:
            return str(json.loads(os.pread(fd, 4096, 0).decode("utf-8"))["pid"])
        except (ValueError, KeyError, TypeError, OSError):
            return "unknown"

    def release(self) -> None:
        """Remove the lock file and drop the lock; safe to call twice."""
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
