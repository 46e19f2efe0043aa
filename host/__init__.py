"""host: the stateful process. Agents, transcripts, memory, prompts, runs, secrets, and the `hearth` CLI."""

from host.config import HostConfig, resolve_data_dir
from host.errors import HostError
from host.main import run_host
from host.server import HostServer

__all__ = ["HostConfig", "HostError", "HostServer", "resolve_data_dir", "run_host"]
