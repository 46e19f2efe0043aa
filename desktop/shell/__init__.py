"""desktop.shell: the reference desktop shell (`hearth`), a Textual app that speaks only the wire.

`run_shell` opens it in this terminal; `hearth web` serves the same app in a browser. A new view is a module
here (`<view>_view.py`) that `app.py` mounts as a tab.
"""

from desktop.shell.app import HearthApp
from desktop.shell.run import run_shell

__all__ = ["HearthApp", "run_shell"]
