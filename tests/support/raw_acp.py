"""A raw test editor: writes bytes to a real `hearth acp` over real pipes and reads every stdout line.

Unlike `acp_editor` (the `acp` package's own client) it sends lines exactly as given, hostile ones included,
and checks each line `hearth acp` writes with a strict JSON parser (`RawHost`'s reading, which it shares).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.support.host_process import REPO_ROOT
from tests.support.raw_host import RawHost

__all__ = ["RawAcp"]


class RawAcp(RawHost):
    """`async with RawAcp(data_dir, "AGENT", stderr_to=log) as acp:` starts `hearth acp AGENT`; leaving closes
    its stdin, as an editor does."""

    def __init__(self, data_dir: Path, *args: str, stderr_to: Path) -> None:
        super().__init__(data_dir, stderr_to=stderr_to)
        self._args = args
        self._log = stderr_to

    async def __aenter__(self) -> RawAcp:
        with open(self._log, "ab") as stderr:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hearth", "acp", *self._args, "--data-dir", str(self.data_dir),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=REPO_ROOT,
                limit=128 * 1024 * 1024,
            )  # fmt: skip
        return self

    async def stop(self) -> None:
        """Close its stdin; kill it if it does not exit within the timeout."""
        assert self.process is not None and self.process.stdin is not None
        if self.process.returncode is None:
            self.process.stdin.close()
            try:
                async with asyncio.timeout(60):
                    await self.process.wait()
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
