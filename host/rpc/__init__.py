"""host.rpc: the host's JSON-RPC methods, one module per method family: params in, a service call, result out.
A new host method goes in its family's `register_<family>_methods` here (a new family: a module, wired in `app`).

`table` guards shell methods behind `initialize`; `kernel_calls` is what the kernel asks of the host.
"""

from host.rpc.agent_dir import register_agent_dir_methods
from host.rpc.agents import register_agent_methods
from host.rpc.archive import register_archive_methods
from host.rpc.kernel_calls import register_kernel_calls
from host.rpc.memory import register_memory_methods
from host.rpc.runs import register_run_methods
from host.rpc.secrets import register_secrets_methods
from host.rpc.session import register_session_methods
from host.rpc.table import ShellTable
from host.rpc.works import register_work_methods

__all__ = [
    "ShellTable",
    "register_agent_dir_methods",
    "register_agent_methods",
    "register_archive_methods",
    "register_kernel_calls",
    "register_memory_methods",
    "register_run_methods",
    "register_secrets_methods",
    "register_session_methods",
    "register_work_methods",
]
