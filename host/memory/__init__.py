"""host.memory: an agent's memory: an audited, hash-chained ledger of facts and every view derived from it.
A new memory operation goes on the store (`writes.py` or `reads.py`); its wire method in `host/rpc/memory.py`.

`MemoryHub` opens one `MemoryStore` per agent; the store is the single writer of its ledger (its writes in
`writes.py`, planned by the pure `plan_notes`, its MEMORY.md kept in step by `view_sync.py`). The model's
tools, the extraction plan, the MEMORY.md watcher and the prompt's memory section build on the store.
"""

import typing

if typing.TYPE_CHECKING:
    from host.memory.errors import (
        InvalidMemoryRequestError,
        LedgerWriteError,
        MemoryLockedError,
        MemoryStateError,
        MemoryStoreError,
        RecordNotFoundError,
        SensitiveContentError,
        UnknownAgentError,
    )
    from host.memory.extraction import (
        ExchangeItem,
        ExtractionOp,
        apply_extraction,
        extraction_prompt,
        parse_extraction,
        worth_extracting,
    )
    from host.memory.fold import Conflict, Fact, Standing
    from host.memory.gate import check_sensitive
    from host.memory.hub import MemoryHub
    from host.memory.ledger import VerifyReport
    from host.memory.planner import NoteContext, NotePlan, plan_notes
    from host.memory.reads import VIEWS, Listing, SearchHit
    from host.memory.records import Evidence, Record
    from host.memory.section import MemorySection
    from host.memory.store import MemoryStore
    from host.memory.tools import MEMORY_TOOL_NAMES, MEMORY_TOOLS, MemoryTool, memory_tool_definitions, run_memory_tool
    from host.memory.values import MemoryEvent, NoteItem, WriteOutcome
    from host.memory.watcher import watch_memory_views

__all__ = [
    "MEMORY_TOOLS",
    "MEMORY_TOOL_NAMES",
    "VIEWS",
    "Conflict",
    "Evidence",
    "ExchangeItem",
    "ExtractionOp",
    "Fact",
    "InvalidMemoryRequestError",
    "LedgerWriteError",
    "Listing",
    "MemoryEvent",
    "MemoryHub",
    "MemoryLockedError",
    "MemorySection",
    "MemoryStateError",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryTool",
    "NoteContext",
    "NoteItem",
    "NotePlan",
    "Record",
    "RecordNotFoundError",
    "SearchHit",
    "SensitiveContentError",
    "Standing",
    "UnknownAgentError",
    "VerifyReport",
    "WriteOutcome",
    "apply_extraction",
    "check_sensitive",
    "extraction_prompt",
    "memory_tool_definitions",
    "parse_extraction",
    "plan_notes",
    "run_memory_tool",
    "watch_memory_views",
    "worth_extracting",
]

_HOMES = {
    name: f"host.memory.{module}"
    for module, names in {
        "errors": (
            "InvalidMemoryRequestError",
            "LedgerWriteError",
            "MemoryLockedError",
            "MemoryStateError",
            "MemoryStoreError",
            "RecordNotFoundError",
            "SensitiveContentError",
            "UnknownAgentError",
        ),
        "extraction": (
            "ExchangeItem",
            "ExtractionOp",
            "apply_extraction",
            "extraction_prompt",
            "parse_extraction",
            "worth_extracting",
        ),
        "fold": ("Conflict", "Fact", "Standing"),
        "gate": ("check_sensitive",),
        "hub": ("MemoryHub",),
        "ledger": ("VerifyReport",),
        "planner": ("NoteContext", "NotePlan", "plan_notes"),
        "reads": ("VIEWS", "Listing", "SearchHit"),
        "records": ("Evidence", "Record"),
        "section": ("MemorySection",),
        "store": ("MemoryStore",),
        "tools": ("MEMORY_TOOL_NAMES", "MEMORY_TOOLS", "MemoryTool", "memory_tool_definitions", "run_memory_tool"),
        "values": ("MemoryEvent", "NoteItem", "WriteOutcome"),
        "watcher": ("watch_memory_views",),
    }.items()
    for name in names
}


def __getattr__(name: str) -> object:
    # Loaded when first asked for (host/lazy_exports.py says why).
    from host.lazy_exports import load_export

    return load_export(__name__, _HOMES, name)
