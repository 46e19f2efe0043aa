"""host: the stateful process: it owns every agent's directory, runs turns through the kernel, serves the shells.
`app` wires it; a method goes in `rpc/`, run logic in `runs/`, a file in `store/`, the memory in `memory/`.
"""

import os
import typing

# One BLAS thread, set before numpy loads: recall's search is one matrix-vector product (about a millisecond
# on one core), and OpenBLAS's idle workers spin for a while after each call, taking a core from the machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if typing.TYPE_CHECKING:
    from host.app import HostServer, run_host
    from host.config import HostConfig
    from host.errors import HostError

__all__ = ["HostConfig", "HostError", "HostServer", "run_host"]

_HOMES = {"HostConfig": "host.config", "HostError": "host.errors", "HostServer": "host.app", "run_host": "host.app"}


def __getattr__(name: str) -> object:
    # Loaded when first asked for (host/lazy_exports.py says why).
    from host.lazy_exports import load_export

    return load_export(__name__, _HOMES, name)
