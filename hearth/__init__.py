"""hearth: the `hearth` command, a thin argparse dispatcher above the host and the clients.
A new subcommand is parsed in `cli.py` and runs one function in `desktop/` (or the host), imported when it runs.

`hearth host` runs the host (as `python -m host` does); every other subcommand is a client in `desktop/`.
Neither side imports the other; this package imports each lazily, so `hearth --help` stays instant.
"""

from hearth.cli import build_parser, main

__all__ = ["build_parser", "main"]
