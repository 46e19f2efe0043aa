"""`hearth secrets set|list|delete`: manage provider API keys through the host, as a shell would.

A value is read from the terminal without echo (or from stdin when piped) and is never printed.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

from desktop.client import connect_host, run_command
from protocol.dispatch import Router

__all__ = ["run_secrets"]


def _read_value(name: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(f"API key for {name} (input hidden): ")
    return sys.stdin.readline().strip()


async def _run(action: str, name: str | None, data_dir: Path) -> int:
    value = _read_value(name or "") if action == "set" else None
    if action == "set" and not value:
        print("hearth: no value given; nothing stored", file=sys.stderr)
        return 1
    async with connect_host(data_dir, Router(), client="hearth-secrets") as peer:
        if action == "set":
            await peer.request("secrets.set", {"name": name, "value": value})
            print(f"stored {name}")
        elif action == "delete":
            await peer.request("secrets.delete", {"name": name})
            print(f"deleted {name}")
        else:
            names = (await peer.request("secrets.list", {}))["names"]
            print("\n".join(names) if names else "(no secrets stored)")
    return 0


def run_secrets(action: str, name: str | None, data_dir: Path) -> int:
    """Run one secrets command. Returns the exit code."""
    return run_command(_run(action, name, data_dir))
