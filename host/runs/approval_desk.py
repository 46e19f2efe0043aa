"""Approvals between the kernel and a person: the kernel asks, the shell shows, a person decides.

`approval.request` from the kernel raises `agent.tool` (status `pending`) to the shell and waits for
`agent.decideTool`. An `allow_always` or `deny_always` answer is remembered for the exact action and
canonical target. A run that ends while a question is open answers it `deny`, so nothing waits forever.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Literal

from host.errors import NotFoundError
from host.runs.scheduler import Notify, Run, RunManager
from protocol.ids import Decision
from protocol.models.host import AgentToolEvent, DecideToolParams, DecideToolResult
from protocol.models.kernel import ApprovalRequestParams, ApprovalRequestResult

__all__ = ["ApprovalDesk", "Remember"]

logger = logging.getLogger(__name__)

Remember = Callable[[str, str, str, Literal["allow", "deny"]], None]
"""`remember(agent_id, action, target, "allow" | "deny")`: persist an always-answer."""


class ApprovalDesk:
    def __init__(self, runs: RunManager, notify: Notify, remember: Remember) -> None:
        self._runs = runs
        self._notify = notify
        self._remember = remember
        self._open: dict[tuple[str, str], tuple[str, asyncio.Future[Decision]]] = {}

    async def request(self, params: ApprovalRequestParams) -> ApprovalRequestResult:
        """Handle the kernel's `approval.request`: ask the person and wait for the answer.

        Raises:
            NotFoundError: the run is not running (the kernel asked for a run the host has ended).
        """
        run = self._runs.running(params.run_id)
        if run is None:
            raise NotFoundError(f"run {params.run_id} is not running")
        key = (run.agent_id, params.tool_call_id)
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._open[key] = (run.run_id, future)
        try:
            await self._notify(
                "agent.tool",
                AgentToolEvent(
                    agent_id=run.agent_id,
                    run_id=run.run_id,
                    tool_call_id=params.tool_call_id,
                    name=params.name,
                    status="pending",
                    action=params.action,
                    target=params.target,
                    content=params.summary or None,
                ),
            )
            decision = await future
        finally:
            self._open.pop(key, None)
        if decision in ("allow_always", "deny_always"):
            remembered: Literal["allow", "deny"] = "allow" if decision == "allow_always" else "deny"
            self._remember(run.agent_id, params.action, params.target, remembered)
        return ApprovalRequestResult(decision=decision)

    async def decide(self, params: DecideToolParams) -> DecideToolResult:
        """Handle the shell's `agent.decideTool`.

        Raises:
            NotFoundError: nothing is waiting for that tool call's decision.
        """
        entry = self._open.get((params.agent_id, params.tool_call_id))
        if entry is None or entry[1].done():
            raise NotFoundError(f"no tool call {params.tool_call_id} of agent {params.agent_id} awaits a decision")
        entry[1].set_result(params.decision)
        return DecideToolResult(accepted=True)

    async def run_ended(self, run: Run) -> None:
        """Answer every open question of an ended run with `deny`."""
        for (_, _), (run_id, future) in list(self._open.items()):
            if run_id == run.run_id and not future.done():
                future.set_result("deny")
