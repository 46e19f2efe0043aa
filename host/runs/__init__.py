"""host.runs: a turn's life in the host: scheduling and queues, turn preparation (context, compaction), kernel
events into the transcript, the approval desk, and the run's memory, host tools and MCP state.
"""

from host.runs.approval_desk import ApprovalDesk
from host.runs.kernel_events import KernelEvents
from host.runs.memory_service import MemoryService
from host.runs.scheduler import Notify, Run, RunManager
from host.runs.turns import TurnPlanner
from host.runs.warmup import ModelWarmup

__all__ = [
    "ApprovalDesk",
    "KernelEvents",
    "MemoryService",
    "ModelWarmup",
    "Notify",
    "Run",
    "RunManager",
    "TurnPlanner",
]
