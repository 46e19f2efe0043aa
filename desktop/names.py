"""Finding an agent the way a person names it: by id or by name, ignoring case.

`hearth chat "My Helper"` and `hearth chat my-helper` reach the same agent, and so do `Assistant` and
`assistant`; an id match wins over a name match, and a name that two agents share is refused with
both ids, so a person never talks to the wrong one (or silently to a new one).
"""

from __future__ import annotations

from protocol.errors import CONFLICT, NOT_FOUND, JsonRpcError
from protocol.models.agents import AgentInfo, AgentListResult
from protocol.peer import JsonRpcPeer

__all__ = ["find_agent", "match_agent", "require_agent"]


def match_agent(agents: list[AgentInfo], ref: str) -> AgentInfo | None:
    """The agent `ref` names among `agents`, or None.

    Raises:
        JsonRpcError: (CONFLICT) two or more agents carry that name.
    """
    wanted = ref.strip().casefold()
    for agent in agents:
        if agent.agent_id.casefold() == wanted:
            return agent
    named = [agent for agent in agents if agent.name.strip().casefold() == wanted]
    if len(named) > 1:
        ids = ", ".join(agent.agent_id for agent in named)
        raise JsonRpcError(f"{len(named)} agents are called {ref!r} ({ids}); name one by its id", code=CONFLICT)
    return named[0] if named else None


async def find_agent(peer: JsonRpcPeer, ref: str) -> AgentInfo | None:
    """The agent `ref` names on the host, or None (see `match_agent` for the raises)."""
    listing = await peer.request("agent.list", {}, AgentListResult)
    return match_agent(listing.agents, ref)


async def require_agent(peer: JsonRpcPeer, ref: str) -> AgentInfo:
    """The agent `ref` names.

    Raises:
        JsonRpcError: NOT_FOUND when no agent has that id or name; CONFLICT when two share the name.
    """
    agent = await find_agent(peer, ref)
    if agent is None:
        raise JsonRpcError(f"no agent {ref!r} (see `hearth agents`)", code=NOT_FOUND)
    return agent
