"""A run's project root: a directory a person opened the run on (an editor's project), checked before it queues.

It must name an existing directory by an absolute path, and is kept canonical (symlinks resolved), which is what
the run's sandbox policy gets. What may be one is `protocol.project_root`'s rule, the one `hearth acp` applies at
session/new: not `/`, a system tree, a folder such as `/home` or `/tmp` itself, the person's home or one holding
it, nor a directory that holds the data dir or lies inside it (the policy keeps the data dir's rules whatever the
root, but a root over the host's own files would make every write approval there a question about host state).
"""

from __future__ import annotations

import os
from pathlib import Path

from host.errors import InvalidRequestError
from protocol.project_root import FIX, project_root_refusal

__all__ = ["check_project_root"]


def check_project_root(raw: str, data_dir: Path) -> str:
    """The canonical form of `raw` when it may be a run's project root.

    Raises:
        InvalidRequestError: a relative path, a missing directory, or one `project_root_refusal` refuses.
    """
    if not raw.startswith("/") or "\x00" in raw:
        raise InvalidRequestError("projectRoot must be an absolute path")
    canonical = os.path.realpath(raw)
    if not os.path.isdir(canonical):
        raise InvalidRequestError(f"the project root {raw} is not a directory")
    home = os.path.realpath(os.path.expanduser("~"))
    refusal = project_root_refusal(canonical, data_dir=os.path.realpath(data_dir), home=home)
    if refusal is not None:
        raise InvalidRequestError(f"{refusal}; {FIX}", data={"projectRoot": canonical, "fix": FIX})
    return canonical
