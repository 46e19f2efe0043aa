"""Approvals between the kernel and a person: the kernel asks, a client shows, a person decides.

`approval.request` from the kernel raises `agent.tool` (status `pending`) and waits for `agent.decideTool`.
A question belongs to the agent, not to the client that was first shown it: every client that can answer
(it said so in `initialize`) is offered the open questions when it attaches. While no such client is
attached, a question waits the agent's `approvalTimeout` and then ends `deny`, with the reason in the
tool's result, so a run whose only client died neither hangs nor keeps the host alive. An `allow_always`
or `deny_always` answer is remembered for the exact action and canonical target. A run that ends while a
question is open answers it `deny`, so nothing waits forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass(eq=False, slots=True)
class _Question:
    run_id: str
    event: AgentToolEvent
    answer: asyncio.Future[tuple[Decision, str | None]]
    timer: asyncio.Task[None] | None = field(default=None)


class ApprovalDesk:
    """Args:
    runs: the run manager (a question is asked only for a running run).
    notify: sends events to every attached client.
    remember: persists an always-answer.
    timeout_of: the agent's `approvalTimeout` in seconds: how long a question waits with nobody to answer it.
    """

    def __init__(
        self, runs: RunManager, notify: Notify, remember: Remember, timeout_of: Callable[[str], float]
    ) -> None:
        self._runs = runs
        self._notify = notify
        self._remember = remember
        self._timeout_of = timeout_of
        self._open: dict[tuple[str, str], _Question] = {}
        self._answerers = 0

    def pending(self) -> list[AgentToolEvent]:
        """Every open question, oldest first: what a client that attaches is offered."""
        return [question.event for question in self._open.values() if not question.answer.done()]

    def set_answerers(self, count: int) -> None:
        """How many attached clients can answer; with none, every open question's timeout runs."""
        self._answerers = count
        for question in self._open.values():
            self._arm(question)

    def _arm(self, question: _Question) -> None:
        if self._answerers and question.timer is not None:
            question.timer.cancel()
            question.timer = None
        elif not self._answerers and question.timer is None and not question.answer.done():
            question.timer = asyncio.get_running_loop().create_task(self._expire(question))

    async def _expire(self, question: _Question) -> None:
        seconds = self._timeout_of(question.event.agent_id)
        await asyncio.sleep(seconds)
        if not question.answer.done():
            reason = f"nobody was there to answer for {seconds:g} s, so it was denied by default"
            logger.info("%s: %s %s: %s", question.event.agent_id, question.event.action, question.event.target, reason)
            question.answer.set_result(("deny", reason))

    async def request(self, params: ApprovalRequestParams) -> ApprovalRequestResult:
        """Handle the kernel's `approval.request`: ask the person and wait for the answer.

        Raises:
            NotFoundError: the run is not running (the kernel asked for a run the host has ended).
        """
        run = self._runs.running(params.run_id)
        if run is None:
            raise NotFoundError(f"run {params.run_id} is not running")
        key = (run.agent_id, params.tool_call_id)
        event = AgentToolEvent(
            agent_id=run.agent_id,
            run_id=run.run_id,
            tool_call_id=params.tool_call_id,
            name=params.name,
            status="pending",
            action=params.action,
            target=params.target,
            content=params.summary or None,
        )
        question = _Question(run.run_id, event, asyncio.get_running_loop().create_future())
        self._open[key] = question
        try:
            self._arm(question)
            await self._notify("agent.tool", event)
            decision, reason = await question.answer
        finally:
            self._open.pop(key, None)
            if question.timer is not None:
                question.timer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await question.timer
        if decision in ("allow_always", "deny_always"):
            remembered: Literal["allow", "deny"] = "allow" if decision == "allow_always" else "deny"
            self._remember(run.agent_id, params.action, params.target, remembered)
        return ApprovalRequestResult(decision=decision, reason=reason)

    async def decide(self, params: DecideToolParams) -> DecideToolResult:
        """Handle a client's `agent.decideTool`.

        Raises:
            NotFoundError: nothing is waiting for that tool call's decision.
        """
        question = self._open.get((params.agent_id, params.tool_call_id))
        if question is None or question.answer.done():
            raise NotFoundError(f"no tool call {params.tool_call_id} of agent {params.agent_id} awaits a decision")
        question.answer.set_result((params.decision, None))
        return DecideToolResult(accepted=True)

    async def run_ended(self, run: Run) -> None:
        """Answer every open question of an ended run with `deny`."""
        for question in list(self._open.values()):
            if question.run_id == run.run_id and not question.answer.done():
                question.answer.set_result(("deny", None))
