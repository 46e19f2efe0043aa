"""Where the host keeps its state and how it starts the kernel.

The data directory is, in order: `--data-dir`, `$HEARTH_HOME`, the platform's user data directory for
"hearth" (platformdirs). Tests point `HEARTH_HOME` at a temporary directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_data_dir

from host.kernel import default_kernel_command

__all__ = ["HostConfig", "resolve_data_dir"]


def resolve_data_dir(flag: str | None = None) -> Path:
    """The data directory from the flag, `HEARTH_HOME`, or the platform default (not created here)."""
    chosen = flag or os.environ.get("HEARTH_HOME") or user_data_dir("hearth", appauthor=False)
    return Path(chosen).expanduser().resolve()


@dataclass(frozen=True, slots=True)
class HostConfig:
    data_dir: Path
    kernel_command: list[str] = field(default_factory=default_kernel_command)
