"""host: the stateful process: it owns every agent's directory, runs turns through the kernel, serves the shells.
`app` wires it; a method goes in `rpc/`, run logic in `runs/`, a file in `store/`, the memory in `memory/`.
"""

from host.app import HostServer, run_host
from host.config import HostConfig
from host.errors import HostError

__all__ = ["HostConfig", "HostError", "HostServer", "run_host"]
