"""Running the desktop shell in this terminal: the app owns the screen, so every log line goes to a file.

`run_shell` sends the root logger to `<data>/logs/shell.log` (nothing else) and runs `HearthApp` until the
person quits.
"""

from __future__ import annotations

import logging
from pathlib import Path

from desktop.shell.app import HearthApp

__all__ = ["run_shell"]


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
