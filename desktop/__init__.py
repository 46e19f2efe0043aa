"""desktop: everything a person runs against a host. The host client, `hearth chat`, `hearth memory`,
`hearth secrets`. It speaks only the wire: it imports `protocol`, never `host`, `kernel` or `sandbox`.
"""

from desktop.chat import ChatOptions, run_chat
from desktop.client import connect_host, host_command
from desktop.memory_cmd import MemoryCommand, run_memory_command
from desktop.secrets_cmd import run_secrets

__all__ = [
    "ChatOptions",
    "MemoryCommand",
    "connect_host",
    "host_command",
    "run_chat",
    "run_memory_command",
    "run_secrets",
]
