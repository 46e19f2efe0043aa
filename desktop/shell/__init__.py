"""desktop.shell: the reference desktop shell (`hearth`), a Textual app that speaks only the wire.
A new view is `desktop/shell/<view>_view.py`, mounted as a tab by `app.py`; `run_shell` opens it in this terminal.

`hearth web` serves the same app in a browser.
"""

from desktop.shell.app import HearthApp
from desktop.shell.run import run_shell

__all__ = ["HearthApp", "run_shell"]
