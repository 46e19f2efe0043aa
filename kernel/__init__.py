"""kernel: the process that owns no state: model providers (`providers/`), the model loop, local tools (`tools/`),
MCP (`mcp/`). A new kernel tool goes in `kernel/tools/<tool>.py`, listed in `kernel/tools/catalog.py`. What it
keeps between turns is a cache of each session's last conversation (`conversations.py`), never a source of truth.
"""

from kernel.errors import KernelError, ProviderError
from kernel.loop import TurnOutcome, run_turn
from kernel.server import KernelServer

__all__ = ["KernelError", "KernelServer", "ProviderError", "TurnOutcome", "run_turn"]
