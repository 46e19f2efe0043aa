"""The teammate tools of a direct run: send_to_agent, ask_agent, reply_to_agent, create_agent,
read_agent_transcript, check_agent and stop_agent.

A wake goes one hop further down the chain than the run that sends it; a person's message starts a chain
at 0. A wake or question that would reach past `maxHops` agents is refused to the sender and leaves
nothing on the receiver, and so is one past the flood bounds: one run sends at most `MAX_SENT_PER_RUN`
messages and questions, and at most `MAX_WAITING_FROM_ONE_AGENT` of one agent's are in another's inbox at
once (a person's messages are never counted or refused). An agent creates at most one teammate per turn.
None of these tools is offered in a Work run, where a member must not see its teammates' private
conversations.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from host.agent_service import AgentService
from host.runs.host_tools import ArgumentsError, HostCall, parse_arguments, tool_spec
from host.runs.scheduler import RunManager, RunOrigin
from host.store.agents import Agent, AgentStore
from host.together.asks import RequestDesk
from host.together.delivery import Deliveries
from host.together.inbox import InboxItem
from host.together.peer_view import render_peer_transcript
from protocol.models.agents import AgentSettingsPatch
from protocol.models.kernel import ToolCallResult, ToolSpec
from protocol.models.together import (
    PEER_TOOLS,
    AskAgentArgs,
    CheckAgentArgs,
    CreateAgentArgs,
    ReadAgentTranscriptArgs,
    ReplyToAgentArgs,
    SendToAgentArgs,
    StopAgentArgs,
)

__all__ = ["MAX_SENT_PER_RUN", "MAX_WAITING_FROM_ONE_AGENT", "PeerTools", "chain_refusal"]

MAX_SENT_PER_RUN = 20
"""How many messages and questions (send_to_agent and ask_agent together) one run may send to other agents."""

MAX_WAITING_FROM_ONE_AGENT = 8
"""How many of one agent's messages and questions may be in another agent's inbox at once (read or not yet)."""


def chain_refusal(hops: int, max_hops: int) -> str | None:
    """Why a wake `hops` down a chain may not go out (None when it may): a chain reaches at most `max_hops` agents."""
    if hops < max_hops:
        return None
    return (
        f"Not sent: this chain of messages already reaches {hops} agents, and the host allows {max_hops}. "
        "Nothing was delivered. Answer with what you have, or ask the user to continue."
    )


def _flood_refusal(sent_by_run: int, waiting_from_sender: int, receiver: str) -> str | None:
    """Why one more message or question may not go out (None when it may); nothing is delivered when refused."""
    if sent_by_run >= MAX_SENT_PER_RUN:
        return (
            f"Not sent: this turn has already sent {sent_by_run} messages and questions to other agents, and the "
            f"host allows {MAX_SENT_PER_RUN} in one turn. Nothing was delivered. Finish this turn with what you "
            "have; a later turn may send more."
        )
    if waiting_from_sender >= MAX_WAITING_FROM_ONE_AGENT:
        return (
            f"Not sent: {waiting_from_sender} of your messages and questions are already in {receiver}'s inbox, and "
            f"the host allows {MAX_WAITING_FROM_ONE_AGENT} from one agent at a time. Nothing was delivered. Put what "
            f"is left into one message, or send it once {receiver} has read what waits (check_agent shows its queue)."
        )
    return None


class PeerTools:
    """The teammate tools, as a host-tool provider.

    Args:
        store: the agent store.
        runs: the run manager.
        deliveries: the inboxes.
        desk: the requests.
        agents: agent lifecycle (for create_agent).
        max_hops: the host setting, read at each call.
    """

    def __init__(
        self,
        store: AgentStore,
        runs: RunManager,
        deliveries: Deliveries,
        desk: RequestDesk,
        agents: AgentService,
        max_hops: Callable[[], int],
    ) -> None:
        self._store = store
        self._runs = runs
        self._deliveries = deliveries
        self._desk = desk
        self._agents = agents
        self._max_hops = max_hops
        self._created: dict[str, str] = {}
        self._sent: dict[str, int] = {}  # messages and questions accepted, per live run
        self._specs = [tool_spec(name, model) for name, model in PEER_TOOLS.items()]

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        return [] if origin.work_id is not None else list(self._specs)

    async def call(self, call: HostCall) -> ToolCallResult:
        handler = getattr(self, f"_{call.name}")
        try:
            text, is_error = await handler(call, call.arguments)
        except ArgumentsError as exc:
            text, is_error = f"{exc}.", True
        return ToolCallResult(content=text, is_error=is_error)

    def _peer(self, call: HostCall, agent_id: str) -> str | None:
        """Why `agent_id` cannot be reached (None when it can)."""
        if agent_id == call.agent.agent_id:
            return "That is your own id; use a teammate's id from the roster."
        if not self._store.exists(agent_id):
            mates = ", ".join(a.agent_id for a in self._store.list() if a.agent_id != call.agent.agent_id)
            return f"There is no agent {agent_id!r}. Teammates: {mates or 'none (create_agent makes one)'}."
        return None

    async def _send_to_agent(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(SendToAgentArgs, raw)
        problem = self._peer(call, args.agent_id)
        hops = call.origin.hops + 1
        problem = problem or chain_refusal(hops, self._max_hops()) or self._flood(call, args.agent_id)
        if problem:
            return problem, True
        item = InboxItem(_run_id(), "wake", args.message, from_agent=call.agent.agent_id, hops=hops)
        with self._counted(call):
            _, position = await self._deliveries.deliver(args.agent_id, item, interrupt=args.priority)
        if args.priority:
            return f"Sent to {args.agent_id} with priority: what it was doing was cancelled for your message.", False
        if position == 0:
            return f"Sent to {args.agent_id}; it is reading your message now.", False
        return f"Sent to {args.agent_id}; it is busy, and your message is number {position} in its queue.", False

    async def _ask_agent(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(AskAgentArgs, raw)
        hops = call.origin.hops + 1
        problem = self._peer(call, args.agent_id) or chain_refusal(hops, self._max_hops())
        problem = problem or self._flood(call, args.agent_id)
        if problem:
            return problem, True
        with self._counted(call):
            request, position = await self._desk.ask(
                call.agent.agent_id, args.agent_id, args.question, args.timeout_seconds, hops
            )
        where = "it is reading it now" if position == 0 else f"it is busy; your question is number {position} in line"
        return (
            f"Asked {args.agent_id} (request {request.request_id}); {where}. You will be woken with the answer as a "
            f"new message, or told why there is none, within {args.timeout_seconds} s. End your turn unless you "
            "have other work.",
            False,
        )

    def _flood(self, call: HostCall, receiver: str) -> str | None:
        """Why this run may not send `receiver` one more message or question (None when it may)."""
        for run_id in [r for r in self._sent if self._runs.get(r) is None]:
            del self._sent[run_id]
        sender = call.agent.agent_id
        waiting = sum(
            1 for item in self._deliveries.inbox(receiver).items if item.kind == "wake" and item.from_agent == sender
        )
        return _flood_refusal(self._sent.get(call.run.run_id, 0), waiting, receiver)

    @contextmanager
    def _counted(self, call: HostCall) -> Iterator[None]:
        """Count one message or question against the run, before it is delivered (so calls that overlap see
        it), and give it back when the delivery failed."""
        run_id = call.run.run_id
        self._sent[run_id] = self._sent.get(run_id, 0) + 1
        try:
            yield
        except BaseException:
            self._sent[run_id] -= 1
            raise

    async def _reply_to_agent(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(ReplyToAgentArgs, raw)
        return await self._desk.reply(call.agent.agent_id, args.request_id, args.answer)

    async def _create_agent(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(CreateAgentArgs, raw)
        for run_id in [r for r in self._created if self._runs.get(r) is None]:
            del self._created[run_id]
        made = self._created.get(call.run.run_id)
        if made is not None:
            return (
                f"Not created: you already created {made} in this turn, and an agent may create one teammate per "
                "turn (so that a loop cannot fill the machine with agents). Ask the user if more are needed.",
                True,
            )
        patch = AgentSettingsPatch(model=call.agent.settings.model, instructions=args.instructions)
        info = await self._agents.create(args.name, None, patch)
        self._created[call.run.run_id] = info.agent_id
        return f"Created {info.name} with id {info.agent_id}. Reach it with send_to_agent or ask_agent.", False

    async def _read_agent_transcript(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(ReadAgentTranscriptArgs, raw)
        problem = self._peer(call, args.agent_id)
        if problem:
            return problem, True
        events, _ = self._store.transcript(args.agent_id).page(None, min(1000, args.limit * 6))
        return render_peer_transcript(args.agent_id, events, args.limit), False

    async def _check_agent(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(CheckAgentArgs, raw)
        problem = self._peer(call, args.agent_id)
        if problem:
            return problem, True
        me, peer = call.agent.agent_id, args.agent_id
        status = self._runs.status(peer)
        waiting = len(self._deliveries.queue(peer))
        mine = [r for r in self._desk.book.open_requests() if r.asker == me and r.receiver == peer]
        theirs = [r for r in self._desk.book.open_requests() if r.asker == peer and r.receiver == me]
        lines = [
            f"{self._store.get(peer).name} ({peer}) is {status}, with {waiting} run(s) waiting.",
            f"Your open requests to it: {', '.join(r.request_id for r in mine) or 'none'}.",
            f"Its open requests to you: {', '.join(r.request_id for r in theirs) or 'none'}.",
        ]
        return "\n".join(lines), False

    async def _stop_agent(self, call: HostCall, raw: dict[str, Any]) -> tuple[str, bool]:
        args = parse_arguments(StopAgentArgs, raw)
        problem = self._peer(call, args.agent_id)
        if problem:
            return problem, True
        dropped = await self._deliveries.stop(args.agent_id)
        await self._desk.refuse_all_to(args.agent_id, f"{args.agent_id} was stopped by {call.agent.agent_id}")
        return (
            f"Stopped {args.agent_id}: its turn was cancelled, {dropped} waiting run(s) were dropped, and the "
            "requests sent to it were refused.",
            False,
        )


def _run_id() -> str:
    return f"run-{uuid.uuid4().hex[:12]}"
