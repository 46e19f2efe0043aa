"""`memory.propose`: another tool's fact for an agent's memory, written as `proposed` for a person's review.

The source is `mcp:<client>` (lower-cased, spaces as dashes), so the trust rules make it proposed; a
tombstoned fact is suppressed and a secret refused, as for any write. With memory off it is refused
(CONFLICT): the agent remembers nothing then, from anyone.
"""

from __future__ import annotations

from host.errors import ConflictError
from host.memory.hub import MemoryHub
from host.memory.records import Evidence
from host.rpc.table import ShellTable
from host.store.agents import AgentStore
from protocol.models.proposals import MemoryProposeParams, MemoryProposeResult

__all__ = ["register_proposal_methods", "proposal_source"]


def proposal_source(client: str) -> str:
    """The memory source of a client's proposals: `mcp:claude-code` for "Claude Code"."""
    return "mcp:" + "-".join(client.strip().lower().split())


def register_proposal_methods(table: ShellTable, hub: MemoryHub, store: AgentStore) -> None:
    """Add `memory.propose` to `table`."""

    async def propose(p: MemoryProposeParams) -> MemoryProposeResult:
        if not store.get(p.agent_id).settings.memory:
            raise ConflictError(f"memory is off for {p.agent_id}: nothing is remembered")
        source = proposal_source(p.client)
        outcome = await hub.get(p.agent_id).note(p.text, evidence=Evidence(source, basis=source))
        record = outcome.fact.id if outcome.fact is not None else None
        return MemoryProposeResult.model_validate({"outcome": outcome.kind, "record_id": record, "source": source})

    table.add("memory.propose", MemoryProposeParams, propose)
