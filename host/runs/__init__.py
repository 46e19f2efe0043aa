"""Run orchestration: scheduling and queues, kernel-event persistence, turn preparation (context,
compaction), the approval desk, and memory's part in a run (tools, extraction).
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
