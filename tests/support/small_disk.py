"""A real, small file system for disk-full tests: a tmpfs mounted for one test, and a file that fills it."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["small_tmpfs", "fill"]


@contextlib.contextmanager
def small_tmpfs(path: Path, options: str) -> Iterator[Path]:
    """Mount a tmpfs with `options` (e.g. `size=2m`) at `path`; the test is skipped where that cannot be done."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root, and this test runs as another user")
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is impossible here: {done.stderr.strip() or done.returncode}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(path: Path) -> Path:
    """Write the file `path` until the disk refuses: no byte is left free."""
    with open(path, "wb", buffering=0) as handle:
        for size in (1 << 16, 1 << 12, 1 << 8, 1):
            while True:
                try:
                    handle.write(b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    return path
