"""desktop: everything a person runs against a host; it imports only `protocol` (never `host`, `kernel`, `sandbox`).
A new terminal command is `desktop/<command>_cmd.py`, parsed in `hearth/cli.py`; the Textual shell is `desktop/shell/`.

The host client (attach to the running host or start one), the shell (`hearth`), `hearth web`, `hearth chat`,
`hearth agents`, `hearth inspect`, `hearth memory`, `hearth secrets`, `hearth mcp`, `hearth export`/`import`.
Every name here is loaded when first used, so each command imports only what it runs (the terminal
commands never load Textual, and `hearth agents` does not load `hearth chat`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol._lazy import lazy_exports

if TYPE_CHECKING:
    from desktop.chat import ChatOptions, run_chat
    from desktop.client import HostLink, attach_or_start, connect_host, host_command
    from desktop.inspect_cmd import run_agents, run_inspect
    from desktop.memory_cmd import MemoryCommand, run_memory_command
    from desktop.names import find_agent, match_agent, require_agent
    from desktop.secrets_cmd import run_secrets

_HOMES = {
    "desktop.chat": ("ChatOptions", "run_chat"),
    "desktop.client": ("HostLink", "attach_or_start", "connect_host", "host_command"),
    "desktop.inspect_cmd": ("run_agents", "run_inspect"),
    "desktop.memory_cmd": ("MemoryCommand", "run_memory_command"),
    "desktop.names": ("find_agent", "match_agent", "require_agent"),
    "desktop.secrets_cmd": ("run_secrets",),
}

__all__ = [
    "ChatOptions",
    "HostLink",
    "MemoryCommand",
    "attach_or_start",
    "connect_host",
    "find_agent",
    "host_command",
    "match_agent",
    "require_agent",
    "run_agents",
    "run_chat",
    "run_inspect",
    "run_memory_command",
    "run_secrets",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
