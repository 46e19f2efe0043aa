"""Chains that cannot loop: the path a chain of messages took, and the model budget its hops share.

A person's message (or a schedule's firing) starts a chain: a new id, and a path holding the agent it
reached. Every wake, question and answer carries the chain on, one agent longer. A message to an agent
the path already holds `MAX_VISITS` times is refused `refused: loop` (A→B→A→B is the longest ping-pong,
A→B→C→A→B→C the longest ring), and so is one from a chain that has used the host's `chainBudget` of
model requests across all its hops. Tallies are kept in memory, so a restart starts them again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from host.runs.run import Run

__all__ = ["MAX_CHAINS", "MAX_VISITS", "ChainGuard", "loop_refusal"]

MAX_VISITS = 2
"""How many times a chain may reach one agent."""

MAX_CHAINS = 10_000
"""How many chains' tallies are kept (the oldest go first)."""


def _arrow(path: tuple[str, ...], receiver: str) -> str:
    shown = path if len(path) <= 8 else ("…", *path[-7:])
    return " → ".join([*shown, receiver])


def loop_refusal(path: tuple[str, ...], receiver: str) -> str | None:
    """Why a message along `path` may not reach `receiver` (None when it may)."""
    visits = path.count(receiver)
    if visits < MAX_VISITS:
        return None
    return (
        f"refused: loop. This chain of messages has already reached {receiver} {visits} times "
        f"({_arrow(path, receiver)}), and the host allows {MAX_VISITS}. Nothing was delivered. Answer with what "
        "you have; the user can start a new conversation if more is needed."
    )


class ChainGuard:
    """Refuses loops and chains past their budget; counts each chain's model requests.

    Args:
        budget: the host setting `chainBudget`, read at each check.
        daily: why an agent may not be woken by another today (its daily budget is spent), or None.
    """

    def __init__(self, budget: Callable[[], int], daily: Callable[[str], str | None]) -> None:
        self._budget = budget
        self._daily = daily
        self._used: OrderedDict[str, int] = OrderedDict()

    def used(self, chain_id: str | None) -> int:
        return self._used.get(chain_id, 0) if chain_id else 0

    def count(self, run: Run) -> None:
        """One model request of `run`, against its chain."""
        chain = run.origin.chain_id
        if chain is None:
            return
        self._used[chain] = self._used.pop(chain, 0) + 1
        while len(self._used) > MAX_CHAINS:
            self._used.popitem(last=False)

    def refusal(self, chain_id: str | None, path: tuple[str, ...], receiver: str) -> str | None:
        """Why a message of this chain may not reach `receiver`: a loop, the chain's budget, the receiver's day."""
        loop = loop_refusal(path, receiver)
        if loop is not None:
            return loop
        used, budget = self.used(chain_id), self._budget()
        if used >= budget:
            return (
                f"refused: budget. This chain of messages has used {used} model requests across its hops, and the "
                f"host allows {budget} per chain. Nothing was delivered. Answer with what you have."
            )
        daily = self._daily(receiver)
        if daily is not None:
            return f"refused: budget. {daily}, so it cannot be woken by another agent today. Nothing was delivered."
        return None
