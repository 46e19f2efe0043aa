"""A crash image: the data directory as a SIGKILL at one instant would leave it, copied while the host runs.

Every write the host acknowledges is fsynced or atomic, so what another process reads at an instant is what
a kill at that instant leaves. Copy it from a hook at the moment under test (the host's loop waits while it
copies), then start a host on the copy, after `recover_data_dir` as `run_host` does, to see what a restart
from there makes of it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from host.recovery import recover_data_dir

__all__ = ["crash_image", "restarted"]


def crash_image(data_dir: Path, image: Path) -> Path:
    """Copy `data_dir` to `image` (which must not exist) as it is now; the host lock is not copied."""
    shutil.copytree(
        data_dir,
        image,
        symlinks=True,
        ignore=shutil.ignore_patterns("host.lock", "host.sock"),
        copy_function=_copy_if_still_there,
    )
    return image


def _copy_if_still_there(source: str, target: str) -> None:
    """Copy a file unless it went while the tree was walked: a writer on another thread (the budget, say)
    renames its temporary into place meanwhile, and a kill at that instant would leave one or the other."""
    try:
        shutil.copy2(source, target)
    except FileNotFoundError:
        pass


def restarted(image: Path) -> Path:
    """Recover `image` as a host starting on it first does (open runs closed, temporaries removed)."""
    recover_data_dir(image)
    return image
