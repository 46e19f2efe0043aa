"""Wire model for `memory.propose`: a fact another tool (an MCP client) wants an agent to remember.

It lands in the agent's review queue as `proposed`, with the source `mcp:<client>`, and is never confirmed
by this call: only a person's review can confirm it. The secret gate and tombstones apply as to any write.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.base import Params, WireModel
from protocol.models.memory import WriteOutcomeKind

__all__ = ["MemoryProposeParams", "MemoryProposeResult", "PROPOSAL_METHODS", "CLIENT_NAME_PATTERN"]

CLIENT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,63}$"
"""An MCP client's name as it says it in its `initialize` (made safe for a source label)."""


class MemoryProposeParams(Params):
    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    text: str = Field(min_length=1, max_length=2000, description="One fact, as a full sentence.")
    client: str = Field(pattern=CLIENT_NAME_PATTERN, description="The tool proposing it; the source is mcp:<client>.")


class MemoryProposeResult(WireModel):
    outcome: WriteOutcomeKind = Field(description="`proposed`, or `duplicate` / `suppressed` when nothing was written.")
    record_id: str | None = None
    source: str


PROPOSAL_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "memory.propose": (MemoryProposeParams, MemoryProposeResult),
}
