"""desktop: everything a person runs against a host; it imports only `protocol` (never `host`, `kernel`, `sandbox`).
A new terminal command is `desktop/<command>_cmd.py`, parsed in `hearth/cli.py`; the Textual shell is `desktop/shell/`.

The host client (attach to the running host or start one), the shell (`hearth`), `hearth web`, `hearth chat`,
`hearth agents`, `hearth inspect`, `hearth memory`, `hearth secrets`, `hearth mcp`, `hearth export`/`import`.
The Textual shell (`desktop.shell`) and `desktop.web` are imported only when they run, so the terminal
commands start without loading Textual.
"""

from desktop.chat import ChatOptions, run_chat
from desktop.client import HostLink, attach_or_start, connect_host, host_command
from desktop.inspect_cmd import run_agents, run_inspect
from desktop.memory_cmd import MemoryCommand, run_memory_command
from desktop.names import find_agent, match_agent, require_agent
from desktop.secrets_cmd import run_secrets

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
