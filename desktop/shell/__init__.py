"""desktop.shell: the reference desktop shell (`hearth`), a Textual app that speaks only the wire.

`run_shell` opens it in this terminal; `hearth web` serves the same app in a browser.
"""

from __future__ import annotations

import logging
from pathlib import Path

from desktop.shell.app import HearthApp

__all__ = ["HearthApp", "run_shell"]


def run_shell(data_dir: Path, *, verbose: bool = False) -> int:
    """Run the shell until the person quits. Returns the exit code.

    Log lines go to `<data>/logs/shell.log`: the terminal belongs to the app.
    """
    log_path = data_dir / "logs" / "shell.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.FileHandler(log_path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    HearthApp(data_dir, verbose=verbose).run()
    return 0
