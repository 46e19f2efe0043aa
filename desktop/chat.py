"""`hearth chat AGENT`: a line-based terminal client of the running host (started if none runs).

It speaks only the wire: initialize, find the agent by id or name (any case) or create it, then one
`agent.send` per input line, printing the streamed reply as it arrives. The host's log is in
`<data>/logs/host.log`.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from typing import Any

from desktop.client import connect_host
from desktop.describe import LOCAL_MODEL_NOTE, describe_model
from desktop.memory_slash import MEMORY_COMMANDS_HELP, run_memory_command
from desktop.names import find_agent
from protocol.datadir import resolve_data_dir
from protocol.dispatch import Router
from protocol.errors import JsonRpcError
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentInfo, AgentSendResult
from protocol.models.host import AgentDeltaEvent, AgentEndedEvent, AgentToolEvent, KernelDownEvent
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
    (`agent.decideTool`) is a request whose reply comes through the same reader.
    """

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        # Approval questions in order, then None when the run has ended.
        self.questions: asyncio.Queue[AgentToolEvent | None] = asyncio.Queue()

    def register(self, router: Router) -> None:
        router.add("agent.delta", AgentDeltaEvent, self.on_delta)
        router.add("agent.tool", AgentToolEvent, self.on_tool)
        router.add("agent.ended", AgentEndedEvent, self.on_ended)
        router.add("kernel.down", KernelDownEvent, self.on_kernel_down)
        router.add("model.status", ModelStatusEvent, self.on_model_status)

    async def on_delta(self, event: AgentDeltaEvent) -> None:
        if event.agent_id == self.agent_id:
            sys.stdout.write(event.text)
            sys.stdout.flush()

    async def on_tool(self, event: AgentToolEvent) -> None:
        if event.agent_id != self.agent_id:
            return
        if event.status == "pending":
            await self.questions.put(event)
        elif event.status == "started":
            sys.stdout.write(f"\n[{event.name}]\n")

    async def on_ended(self, event: AgentEndedEvent) -> None:
        if event.agent_id != self.agent_id:
            return
        if event.reason == "error":
            sys.stdout.write(f"\n[error: {event.error}]")
        elif event.reason == "cancelled":
            sys.stdout.write("\n[cancelled]")
        sys.stdout.write("\n")
        sys.stdout.flush()
        await self.questions.put(None)

    async def on_model_status(self, event: ModelStatusEvent) -> None:
        if event.state == "loading":
            sys.stderr.write("[loading the embedded model...]\n")
        elif event.state == "ready":
            sys.stderr.write(f"[the embedded model is ready ({event.seconds or 0:.1f} s)]\n")
        else:
            sys.stderr.write(f"[the embedded model could not be loaded: {event.error}]\n")
        sys.stderr.flush()

    async def on_kernel_down(self, event: KernelDownEvent) -> None:
        sys.stderr.write(f"[the kernel stopped: {event.reason}; restarting]\n")


async def _ensure_agent(peer: JsonRpcPeer, options: ChatOptions) -> AgentInfo:
    patch = _model_patch(options)
    agent = await find_agent(peer, options.agent)
    if agent is None:
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
    printer = _Printer(options.agent)
    printer.register(router)
    interactive = sys.stdin.isatty()
    try:
        async with connect_host(
            resolve_data_dir(options.data_dir), router, client="hearth-chat", verbose=options.verbose
        ) as peer:
            agent = await _ensure_agent(peer, options)
            printer.agent_id = agent.agent_id
            if interactive:
                print(f"Chatting with {agent.name} ({_describe_model(agent)}). {MEMORY_COMMANDS_HELP}; Ctrl-D quits.")
            while True:
                if interactive:
                    sys.stdout.write("you> ")
                    sys.stdout.flush()
                line = await asyncio.to_thread(sys.stdin.readline)
                if not line:
                    return 0
                if not line.strip():
                    continue
                if (said := await run_memory_command(peer, agent.agent_id, line)) is not None:
                    print(said, flush=True)
                    continue
                params = {"agentId": agent.agent_id, "text": line.rstrip("\n")}
                await peer.request("agent.send", params, AgentSendResult)
                await _follow_run(peer, printer)
    except (JsonRpcError, ConnectionError) as exc:
        print(f"hearth: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 1


async def _follow_run(peer: JsonRpcPeer, printer: _Printer) -> None:
    """Wait for the run's end, asking the person about each tool call that needs a yes on the way."""
    while (event := await printer.questions.get()) is not None:
        sys.stdout.write(
            f"\n[{event.name} wants to {event.action}: {event.target}]\n"
            "  allow (y)es once, (a)lways, (n)o, or (d)eny always? "
        )
        sys.stdout.flush()
        answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()[:1]
        decision = _DECISIONS.get(answer, "deny")
        params = {"agentId": printer.agent_id, "toolCallId": event.tool_call_id, "decision": decision}
        try:
            await peer.request("agent.decideTool", params)
        except JsonRpcError as exc:  # the run ended meanwhile; nothing waits for this answer any more
            sys.stdout.write(f"[{exc.message}]\n")


def _describe_model(agent: AgentInfo) -> str:
    if agent.settings.model.provider == "local":
        return f"{LOCAL_MODEL_NOTE}; use --provider to pick a real one"
    return describe_model(agent.settings.model)


def run_chat(options: ChatOptions) -> int:
    """Run the chat until stdin ends. Returns the exit code."""
    try:
        return asyncio.run(_chat(options))
    except KeyboardInterrupt:
        return 130
