"""Where Hearth keeps its state: the one fact every client and the host must agree on.

The data directory is, in order: `--data-dir`, `$HEARTH_HOME`, the platform's user data directory for
"hearth" (platformdirs). Tests point `HEARTH_HOME` at a temporary directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

__all__ = ["resolve_data_dir"]


def resolve_data_dir(flag: str | None = None) -> Path:
    """The data directory from the flag, `HEARTH_HOME`, or the platform default (not created here)."""
    chosen = flag or os.environ.get("HEARTH_HOME") or user_data_dir("hearth", appauthor=False)
    return Path(chosen).expanduser().resolve()
