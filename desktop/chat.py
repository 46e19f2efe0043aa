"""`hearth chat AGENT`: a line-based terminal client of the running host (started if none runs).

It speaks only the wire: initialize, find the agent by id or name (any case) or create it (a person at a
terminal is asked first, with the names it may have meant; piped input is told), then one
`agent.send` per input line, printing the streamed reply as it arrives. Ctrl-C during a reply cancels it
(the text so far stays shown and is kept in the transcript); Ctrl-C or Ctrl-D at the prompt leaves.
Piped input exits 1 when one of its runs failed. The host's log is in `<data>/logs/host.log`.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import sys
from dataclasses import dataclass
from typing import Any

from desktop.chat_input import INTERRUPT, ChatEvents, Control
from desktop.client import connect_host
from desktop.describe import LOCAL_MODEL_NOTE, describe_model, describe_request
from desktop.memory_slash import MEMORY_COMMANDS_HELP, run_memory_command
from desktop.names import match_agent
from protocol.datadir import resolve_data_dir
from protocol.dispatch import Router
from protocol.errors import JsonRpcError
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentInfo, AgentListResult, AgentSendResult
from protocol.models.host import (
    AgentDeltaEvent,
    AgentEndedEvent,
    AgentStartedEvent,
    AgentToolEvent,
    KernelDownEvent,
)
from protocol.models.warmup import ModelStatusEvent
from protocol.peer import JsonRpcPeer

__all__ = ["ChatOptions", "run_chat"]


@dataclass(frozen=True, slots=True)
class ChatOptions:
    agent: str
    data_dir: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    key_secret: str | None = None
    verbose: bool = False


def _model_patch(options: ChatOptions) -> dict[str, Any] | None:
    if options.provider is None and options.model is None and options.base_url is None:
        return None
    model: dict[str, Any] = {"provider": options.provider or "openai"}
    if options.model:
        model["name"] = options.model
    if options.base_url:
        model["baseUrl"] = options.base_url
    if options.key_secret:
        model["apiKeySecret"] = options.key_secret
    return {"model": model}


_DECISIONS = {"y": "allow_once", "a": "allow_always", "n": "deny", "d": "deny_always"}


class _Printer:
    """Shows one run's stream on stdout; hands the input loop each approval question, then the run's end.

    Notification handlers only record: the input loop asks the person and answers, because an answer
    (`agent.decideTool`) is a request whose reply comes through the same reader. Only the run this chat
    started is shown and followed; a question from any run of the agent is asked, since it waits for
    whoever can answer. At a terminal a status line says what the chat waits for (its place in the queue,
    the model's first words) until the reply begins.
    """

    def __init__(self, events: ChatEvents, *, interactive: bool) -> None:
        self.agent_id: str | None = None  # known once the agent is found or made
        self._early: list[AgentToolEvent] = []  # questions offered before that
        self.events = events
        self.failed = False
        self.run_id: str | None = None  # the run this chat follows
        self.prompt = ""  # what the input line shows while the person types ("" while a reply streams)
        self._interactive = interactive
        self._status = ""  # the status line now shown (at a terminal only)
        self._model_error: str | None = None
        # A fast run's events can come before `agent.send`'s answer names it: kept per run until then.
        self._unclaimed: dict[str, list[AgentDeltaEvent | AgentToolEvent | AgentEndedEvent]] = {}

    def register(self, router: Router) -> None:
        router.add("agent.started", AgentStartedEvent, self.on_started)
        router.add("agent.delta", AgentDeltaEvent, self.on_delta)
        router.add("agent.tool", AgentToolEvent, self.on_tool)
        router.add("agent.ended", AgentEndedEvent, self.on_ended)
        router.add("kernel.down", KernelDownEvent, self.on_kernel_down)
        router.add("model.status", ModelStatusEvent, self.on_model_status)

    def status(self, text: str) -> None:
        """Show `text` on the status line ("" clears it); nothing is shown when the input is piped."""
        if not self._interactive or text == self._status:
            return
        sys.stdout.write(f"\r\x1b[K{text}")
        sys.stdout.flush()
        self._status = text

    def note(self, text: str) -> None:
        """A line about the host or the model, above the prompt or the status line, which are shown again."""
        if not self.prompt and not self._status:
            sys.stderr.write(f"{text}\n")
            sys.stderr.flush()
            return
        sys.stdout.write(f"\r\x1b[K{text}\n{self.prompt or self._status}")
        sys.stdout.flush()

    def attach(self, agent_id: str) -> None:
        """Show `agent_id` from now on, and ask its questions the host offered while it was being found."""
        self.agent_id = agent_id
        for event in self._early:
            if event.agent_id == agent_id:
                self.events.push(event)
        self._early.clear()

    async def follow(self, sent: AgentSendResult) -> None:
        """Follow the run `agent.send` started or queued (what it already sent is shown first)."""
        self.run_id = sent.run_id
        if sent.position > 0:
            ahead = "1 run goes" if sent.position == 1 else f"{sent.position} runs go"
            self.status(f"[queued: {ahead} first; waiting for the agent…]")
        else:
            self.status("[waiting for the model's first words…]")
        early, self._unclaimed = self._unclaimed.pop(sent.run_id, []), {}
        for event in early:
            if isinstance(event, AgentDeltaEvent):
                await self.on_delta(event)
            elif isinstance(event, AgentToolEvent):
                await self.on_tool(event)
            else:
                await self.on_ended(event)

    def _unclaimed_of(self, event: AgentDeltaEvent | AgentToolEvent | AgentEndedEvent) -> bool:
        """Keep an event of this agent's that came while this chat waits to learn its run's id."""
        if self.run_id is not None or event.agent_id != self.agent_id:
            return False
        if event.run_id not in self._unclaimed and len(self._unclaimed) >= 16:
            del self._unclaimed[next(iter(self._unclaimed))]  # the oldest run's: this chat's is a new one
        kept = self._unclaimed.setdefault(event.run_id, [])
        if len(kept) < 10_000:
            kept.append(event)
        return True

    async def on_started(self, event: AgentStartedEvent) -> None:
        if event.run_id == self.run_id:
            self.status("[waiting for the model's first words…]")

    async def on_delta(self, event: AgentDeltaEvent) -> None:
        if self._unclaimed_of(event):
            return
        if event.run_id == self.run_id:
            self.status("")
            sys.stdout.write(event.text)
            sys.stdout.flush()

    async def on_tool(self, event: AgentToolEvent) -> None:
        if self.agent_id is None and event.status == "pending":
            self._early.append(event)
        if event.agent_id != self.agent_id:
            return
        if event.status == "pending":
            self.status("")
            self.events.push(event)
        elif event.status == "started" and not self._unclaimed_of(event) and event.run_id == self.run_id:
            self.status("")
            sys.stdout.write(f"\n[{event.name}]\n")

    async def on_ended(self, event: AgentEndedEvent) -> None:
        if self._unclaimed_of(event) or event.run_id != self.run_id:
            return
        self.status("")
        if event.reason == "error":
            self.failed = True
            said = "the embedded model could not be loaded (see above)" if event.error == self._model_error else None
            sys.stdout.write(f"\n[error: {said or event.error}]")
        elif event.reason == "cancelled":
            sys.stdout.write("\n[cancelled]")
        sys.stdout.write("\n")
        sys.stdout.flush()
        self.run_id = None
        self.events.push(event)

    async def on_model_status(self, event: ModelStatusEvent) -> None:
        if event.state == "loading":
            self.note("[loading the embedded model...]")
        elif event.state == "ready":
            self.note(f"[the embedded model is ready ({event.seconds or 0:.1f} s)]")
        elif event.error != self._model_error:  # each agent's attempt fails alike: say it once
            self._model_error = event.error
            self.note(f"[the embedded model could not be loaded: {event.error}]")

    async def on_kernel_down(self, event: KernelDownEvent) -> None:
        self.note(f"[the kernel stopped: {event.reason}; restarting]")


def _did_you_mean(ref: str, agents: list[AgentInfo]) -> str:
    names = {a.name for a in agents} | {a.agent_id for a in agents}
    close = difflib.get_close_matches(ref, sorted(names), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(name) for name in close)}?)" if close else ""


async def _may_create(ref: str, agents: list[AgentInfo], interactive: bool) -> bool:
    """Whether to make a new agent called `ref`: a person at a terminal is asked; piped input is told."""
    hint = _did_you_mean(ref, agents)
    if not interactive:
        print(
            f"hearth: no agent was called {ref!r}{hint}, so a new one was made; "
            "if that was a typo, delete it in the shell (`hearth`, F8)",
            file=sys.stderr,
        )
        return True
    sys.stdout.write(f"No agent is called {ref!r}{hint}. Make a new agent called {ref!r}? [y/N] ")
    sys.stdout.flush()
    answer = await asyncio.to_thread(sys.stdin.readline)
    return answer.strip().lower() in ("y", "yes")


async def _ensure_agent(peer: JsonRpcPeer, options: ChatOptions, interactive: bool) -> AgentInfo | None:
    """The agent `options.agent` names, made when there is none and the person agrees; None when not."""
    patch = _model_patch(options)
    listing = await peer.request("agent.list", {}, AgentListResult)
    agent = match_agent(listing.agents, options.agent)
    if agent is None:
        if not await _may_create(options.agent, listing.agents, interactive):
            print("hearth: nothing was made (`hearth agents` lists the agents)", file=sys.stderr)
            return None
        params: dict[str, Any] = {"name": options.agent}
        if re.match(AGENT_ID_PATTERN, options.agent):
            params["agentId"] = options.agent
        if patch:
            params["settings"] = patch
        return await peer.request("agent.create", params, AgentInfo)
    if patch:
        agent = await peer.request("agent.update", {"agentId": agent.agent_id, "settings": patch}, AgentInfo)
    return agent


async def _chat(options: ChatOptions) -> int:
    router = Router()
    events = ChatEvents()
    interactive = sys.stdin.isatty()
    printer = _Printer(events, interactive=interactive)
    printer.register(router)
    try:
        async with connect_host(
            resolve_data_dir(options.data_dir),
            router,
            client="hearth-chat",
            verbose=options.verbose,
            answers_approvals=True,
        ) as peer:
            agent = await _ensure_agent(peer, options, interactive)
            if agent is None:
                return 1
            printer.attach(agent.agent_id)
            if interactive:
                print(f"Chatting with {agent.name} ({_describe_model(agent)}). {MEMORY_COMMANDS_HELP}.")
                print("Ctrl-C stops a reply; Ctrl-C or Ctrl-D at the prompt quits.")
            with events.reading():
                await _converse(peer, agent.agent_id, printer, interactive)
            return 1 if printer.failed and not interactive else 0
    except (JsonRpcError, ConnectionError) as exc:
        print(f"hearth: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 1


async def _converse(peer: JsonRpcPeer, agent_id: str, printer: _Printer, interactive: bool) -> None:
    """One `agent.send` per line until the input ends or the person leaves."""
    events = printer.events
    while True:
        if interactive:
            printer.prompt = "you> "
            sys.stdout.write(printer.prompt)
            sys.stdout.flush()
        item = await events.next(want_line=True)
        printer.prompt = ""
        if isinstance(item, AgentToolEvent):  # another run's question, waiting for whoever can answer
            await _ask(peer, agent_id, item, events)
            continue
        if item is INTERRUPT or (item is None and interactive):
            sys.stdout.write("\n")  # the prompt's line is left clean
            sys.stdout.flush()
            return
        if item is None:
            return
        if not isinstance(item, str) or not item.strip():
            continue  # an end left over from an earlier run, or an empty line
        if (said := await run_memory_command(peer, agent_id, item)) is not None:
            print(said, flush=True)
            continue
        sent = await peer.request("agent.send", {"agentId": agent_id, "text": item.rstrip("\n")}, AgentSendResult)
        await printer.follow(sent)
        if not await _follow_run(peer, agent_id, sent.run_id, events):
            sys.stdout.write("\n")
            sys.stdout.flush()
            return


async def _follow_run(peer: JsonRpcPeer, agent_id: str, run_id: str, events: ChatEvents) -> bool:
    """Wait for the run's end, asking the person about each tool call that needs a yes on the way.

    The first Ctrl-C cancels the run (this one, even while it waits behind another); the chat goes on once
    its end arrives.

    Returns:
        False when a second Ctrl-C came before the cancelled run's end: the person wants to leave.
    """
    async with asyncio.TaskGroup() as tasks:
        cancelling: asyncio.Task[None] | None = None
        item: Control | None = None
        while True:
            current = item if item is not None else await events.next(want_line=False)
            item = None
            if isinstance(current, AgentEndedEvent):
                return True
            if isinstance(current, AgentToolEvent):
                item = await _ask(peer, agent_id, current, events)
            elif cancelling is None:
                cancelling = tasks.create_task(_cancel(peer, agent_id, run_id))
            else:
                cancelling.cancel()
                return False


async def _cancel(peer: JsonRpcPeer, agent_id: str, run_id: str) -> None:
    try:  # this chat's own run, waiting or running, never another client's
        await peer.request("agent.cancel", {"agentId": agent_id, "runId": run_id})
    except JsonRpcError as exc:
        sys.stdout.write(f"\n[could not cancel: {exc.message}]\n")


async def _ask(peer: JsonRpcPeer, agent_id: str, event: AgentToolEvent, events: ChatEvents) -> Control | None:
    """Ask about one tool call and send the answer.

    Returns:
        The control event that came before an answer (Ctrl-C, the run's end), or None once answered.
    """
    sys.stdout.write(
        f"\n[the agent {describe_request(event.name, event.action, event.target)}]\n"
        "  allow (y)es once, (a)lways, (n)o, or (d)eny always? "
    )
    sys.stdout.flush()
    reply = await events.next(want_line=True)
    if reply is not None and not isinstance(reply, str):
        return reply
    decision = _DECISIONS.get((reply or "").strip().lower()[:1], "deny")
    params = {"agentId": agent_id, "toolCallId": event.tool_call_id, "decision": decision}
    try:
        await peer.request("agent.decideTool", params)
    except JsonRpcError as exc:  # the run ended meanwhile; nothing waits for this answer any more
        sys.stdout.write(f"[{exc.message}]\n")
    return None


def _describe_model(agent: AgentInfo) -> str:
    if agent.settings.model.provider == "local":
        return f"{LOCAL_MODEL_NOTE}; use --provider to pick a real one"
    return describe_model(agent.settings.model)


def run_chat(options: ChatOptions) -> int:
    """Run the chat until stdin ends or the person leaves. Returns the exit code."""
    try:
        return asyncio.run(_chat(options))
    except KeyboardInterrupt:  # a Ctrl-C before the chat could take it over (while the host starts)
        return 130
