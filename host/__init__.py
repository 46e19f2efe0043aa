"""host: the stateful process. It owns every agent's directory, runs their turns through the kernel, and
serves shells over JSON-RPC: `app` wires it, `rpc/` answers, `runs/` orchestrates, `store/` and `memory/` keep.
"""

from host.app import HostServer, run_host
from host.config import HostConfig
from host.errors import HostError

__all__ = ["HostConfig", "HostError", "HostServer", "run_host"]
