"""A run's project root: a directory a person opened the run on (an editor's project), checked before it queues.

It must name an existing directory by an absolute path, and is kept canonical (symlinks resolved), which is what
the run's sandbox policy gets. `/`, the system pseudo-file trees, and any directory that holds the data dir or lies
inside it are refused outright: the policy keeps the data dir's rules whatever the root, but a root over the host's
own files would make every write approval there a question about host state.
"""

from __future__ import annotations

import os
from pathlib import Path

from host.errors import InvalidRequestError
from sandbox import is_within

__all__ = ["check_project_root"]

_SYSTEM_TREES = ("/proc", "/sys", "/dev")


def check_project_root(raw: str, data_dir: Path) -> str:
    """The canonical form of `raw` when it may be a run's project root.

    Raises:
        InvalidRequestError: a relative path, a missing directory, `/`, a system tree, or one overlapping the data dir.
    """
    if not raw.startswith("/") or "\x00" in raw:
        raise InvalidRequestError("projectRoot must be an absolute path")
    canonical = os.path.realpath(raw)
    if not os.path.isdir(canonical):
        raise InvalidRequestError(f"the project root {raw} is not a directory")
    home = os.path.realpath(data_dir)
    if canonical == "/" or any(is_within(canonical, tree) for tree in _SYSTEM_TREES):
        raise InvalidRequestError(f"{canonical} cannot be a project root; open a project's own folder")
    if is_within(canonical, home) or is_within(home, canonical):
        raise InvalidRequestError(
            f"the project root {canonical} overlaps Hearth's data directory {home}; open a folder that neither "
            "holds it nor lies inside it (or keep Hearth's data elsewhere with HEARTH_HOME)"
        )
    return canonical
