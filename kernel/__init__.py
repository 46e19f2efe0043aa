"""kernel: the stateless process. Model providers, the model loop and the local tools; it owns no state."""

from kernel.errors import KernelError, ProviderError
from kernel.loop import TurnOutcome, run_turn
from kernel.server import KernelServer

__all__ = ["KernelError", "KernelServer", "ProviderError", "TurnOutcome", "run_turn"]
