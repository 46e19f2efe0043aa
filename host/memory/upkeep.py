"""The memory's background upkeep: ended lifetimes recorded, and the consolidation pass while an agent is idle.

Every `UPKEEP_SECONDS` (`HEARTH_MEMORY_UPKEEP_SECONDS`), for each agent with memory on: facts whose
`validUntil`, or whose tier's lifetime (`ttl`), has passed get their `expire` record (a rule the person set,
so it runs for every agent), and, when the agent has no run and its `consolidation` setting (the most
proposals a round may write, the cost cap the person sets) is above 0, the deterministic pass proposes
forgetting the older side of contradictions, likely duplicates and stale facts, and the agent's model (when
it may write them: `model_for`) writes the summaries of old log entries' spans (`model_summaries.py`); the
cap bounds the proposals and, apart, the model calls of a round. Every proposal waits in the review queue; a
failure with one agent never stops the others.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from functools import partial

from host.memory.hub import MemoryHub
from host.memory.model_summaries import Ask, write_model_summaries

__all__ = ["UPKEEP_SECONDS", "UPKEEP_ENV", "upkeep_every", "run_upkeep"]

logger = logging.getLogger(__name__)

UPKEEP_SECONDS = 900.0
UPKEEP_ENV = "HEARTH_MEMORY_UPKEEP_SECONDS"


def upkeep_every(env: dict[str, str] | None = None) -> float:
    """The seconds between rounds: `HEARTH_MEMORY_UPKEEP_SECONDS` when it is a positive number, else 900."""
    raw = (os.environ if env is None else env).get(UPKEEP_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return UPKEEP_SECONDS
    return value if value > 0 else UPKEEP_SECONDS


async def run_upkeep(
    hub: MemoryHub,
    agents: Callable[[], Iterable[tuple[str, int]]],
    idle: Callable[[str], bool],
    stop: asyncio.Event,
    every: float,
    model_for: Callable[[str], Ask | None] = lambda _: None,
) -> None:
    """Run rounds until `stop` is set.

    Args:
        hub: the host's memories.
        agents: (agent id, consolidation cap) of each agent whose memory is on.
        idle: whether an agent has no run (the pass waits for the next round otherwise).
        stop: set it to stop.
        every: seconds between rounds.
        model_for: how to ask an agent's model for a summary, or None when no model may write them for it.
    """
    while not stop.is_set():
        for agent_id, cap in agents():
            try:
                store = hub.get(agent_id)
                store.flush_uses()
                await store.expire_due()
                if cap > 0 and idle(agent_id):
                    await store.propose_upkeep(cap)
                    ask = model_for(agent_id)
                    if ask is not None:
                        await write_model_summaries(store, ask, cap, partial(idle, agent_id))
            except Exception:  # one agent's memory failing must never stop the upkeep of the others
                logger.exception("memory upkeep of %s failed; it is tried again next round", agent_id)
        try:
            await asyncio.wait_for(stop.wait(), every)
        except TimeoutError:
            pass
