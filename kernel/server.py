"""The kernel's JSON-RPC server: turns in, streamed events out. It owns no state between turns.

Each `turn.start` is acknowledged at once and runs as a task; its text, messages and tool progress
stream back as notifications and it always finishes with exactly one `turn.ended`. `turn.cancel` stops
a turn where it is. When the host goes away the kernel cancels its turns and exits. The one thing kept
between turns is each session's conversation as it was last sent (`conversations.py`), so the next turn
carries only its new messages; a kernel that does not hold them says so, and is sent them all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from kernel.conversations import Conversation, Conversations
from kernel.convert import to_config, to_usage_info
from kernel.errors import KernelError, UnknownRunError
from kernel.loop import ToolOutcome, TurnOutcome, run_turn
from kernel.mcp import McpPool, ServerSpec, mcp_turn_tools
from kernel.providers.base import ToolCall, ToolDefinition, Usage, Warmable
from kernel.providers.clients import ClientPool
from kernel.providers.registry import open_provider
from kernel.tools import LocalTool, PersonDecision, ShellPool, ToolContext, local_tools, make_approver, resolve_rg
from kernel.turn_events import TextCollector, TurnNotifier
from kernel.turn_tools import CURRENT_CALL, LocalToolLike, TurnTools
from protocol.dispatch import Router
from protocol.errors import RUN_FAILED, JsonRpcError
from protocol.models.base import Empty, EmptyParams
from protocol.models.host import PROTOCOL_VERSION
from protocol.models.kernel import (
    ApprovalRequestParams,
    ApprovalRequestResult,
    KernelInitializeParams,
    KernelInitializeResult,
    RunRef,
    SessionCloseParams,
    ShellAvailability,
    SummarizeParams,
    SummarizeResult,
    ToolCallParams,
    ToolCallResult,
    ToolSet,
    ToolSpec,
    TurnCancelResult,
    TurnEndedEvent,
    TurnStartParams,
    TurnStartResult,
)
from protocol.models.mcp import McpCloseParams, McpStatusEvent
from protocol.models.warmup import ModelWarmParams, ModelWarmResult
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport
from sandbox import ShellSandbox, Unavailable, detect_shell_sandbox, policy_from_wire, rules_from_wire

__all__ = ["KernelServer"]

logger = logging.getLogger(__name__)

HOST_TOOL_TIMEOUT = 120.0
APPROVAL_TIMEOUT = 24 * 3600.0


async def _refuse_tool(call: ToolCall) -> ToolOutcome:
    """A `summarize` call lists tools for the provider's cache only; none of them runs."""
    return ToolOutcome(f"error: no tool runs in this call ({call.name})", True)


class KernelServer:
    """Args:
    detect_mcp_sandbox: finds the OS sandbox MCP servers run in (a seam, so tests can take it away).
    rg: where ripgrep is looked for (a seam for tests); it is resolved and checked once, at start.
    """

    def __init__(
        self,
        detect_mcp_sandbox: Callable[[], ShellSandbox | Unavailable] = lambda: detect_shell_sandbox("auto"),
        *,
        rg: str | None = None,
    ) -> None:
        self._rg = resolve_rg(rg)
        self.router = Router()
        self._peer: JsonRpcPeer | None = None
        self._turns: dict[str, asyncio.Task[None]] = {}
        self._tasks: asyncio.TaskGroup | None = None
        self._stop = asyncio.Event()
        self._shell: ShellSandbox | Unavailable = Unavailable("the kernel has not been initialized")
        self._tools: dict[str, LocalTool] = {}
        self._shells: ShellPool | None = None
        self.clients = ClientPool()
        """The SDK clients of the model calls, one per provider configuration, closed when serving ends."""
        self._detect_mcp_sandbox = detect_mcp_sandbox
        self._mcp: McpPool | None = None
        self._mcp_task: asyncio.Task[None] | None = None
        self.conversations = Conversations()
        self.router.add("initialize", KernelInitializeParams, self.initialize)
        self.router.add("turn.start", TurnStartParams, self.turn_start)
        self.router.add("turn.cancel", RunRef, self.turn_cancel)
        self.router.add("summarize", SummarizeParams, self.summarize)
        self.router.add("session.close", SessionCloseParams, self.session_close)
        self.router.add("model.warm", ModelWarmParams, self.model_warm)
        self.router.add("mcp.close", McpCloseParams, self.mcp_close)
        self.router.add("shutdown", EmptyParams, self.shutdown)

    async def serve(self, transport: Transport) -> None:
        """Serve the host until it says `shutdown` or closes the pipe."""
        self._peer = JsonRpcPeer(transport, self.router, name="host")
        try:
            async with asyncio.TaskGroup() as tasks:
                self._tasks = tasks
                serving = tasks.create_task(self._peer.serve())
                stopping = tasks.create_task(self._stop.wait())
                await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
                for turn in list(self._turns.values()):
                    turn.cancel()
                stopping.cancel()
                if self._shells is not None:
                    await self._shells.close_all()
                if self._mcp is not None:
                    await self._mcp.close_all()
                if self._mcp_task is not None:
                    self._mcp_task.cancel()
                if not serving.done():
                    await asyncio.sleep(0)  # let the answer to `shutdown` go out
                    serving.cancel()
        finally:
            await self.clients.aclose()  # every turn has ended: no stream runs through a client any more

    async def initialize(self, params: KernelInitializeParams) -> KernelInitializeResult:
        self._shell = await asyncio.to_thread(detect_shell_sandbox, params.shell_sandbox)
        self._tools = local_tools(self._shell, self._rg)
        if isinstance(self._rg, Unavailable):
            logger.warning("grep cannot run: %s", self._rg.reason)
        if isinstance(self._shell, ShellSandbox):
            self._shells = ShellPool(self._shell)
            shell = ShellAvailability(available=True)
        else:
            logger.warning("no shell tool: %s", self._shell.reason)
            shell = ShellAvailability(available=False, reason=self._shell.reason)
        tools = [
            ToolSpec(
                name=t.definition.name, description=t.definition.description, input_schema=t.definition.input_schema
            )
            for t in self._tools.values()
        ]
        mcp = await self._start_mcp()
        return KernelInitializeResult(name="hearth-kernel", version=PROTOCOL_VERSION, tools=tools, shell=shell, mcp=mcp)

    async def _start_mcp(self) -> ShellAvailability:
        sandbox = await asyncio.to_thread(self._detect_mcp_sandbox)
        if self._mcp is None:
            assert self._tasks is not None
            self._mcp = McpPool(sandbox, self._mcp_status)
            self._mcp_task = self._tasks.create_task(self._mcp.serve())
        if isinstance(sandbox, Unavailable):
            logger.warning("no MCP servers: %s", sandbox.reason)
            return ShellAvailability(available=False, reason=sandbox.reason)
        return ShellAvailability(available=True)

    async def _mcp_status(self, event: McpStatusEvent) -> None:
        if self._peer is not None:
            await self._peer.notify("mcp.status", event)

    async def turn_start(self, params: TurnStartParams) -> TurnStartResult:
        """Raises: UnknownPrefixError: `params.prefix` names messages this kernel does not hold."""
        if params.run_id in self._turns:
            raise KernelError(f"run {params.run_id} is already in progress")
        assert self._tasks is not None
        conversation = self.conversations.resolve(params.session, params.prefix, params.messages)
        self.conversations.keep(params.session, conversation)
        self._turns[params.run_id] = self._tasks.create_task(self._run(params, conversation))
        return TurnStartResult(accepted=True)

    async def turn_cancel(self, params: RunRef) -> TurnCancelResult:
        task = self._turns.get(params.run_id)
        if task is None:
            raise UnknownRunError(f"no run {params.run_id} in progress")
        task.cancel()
        return TurnCancelResult(cancelled=True)

    async def summarize(self, params: SummarizeParams) -> SummarizeResult:
        """Raises: UnknownPrefixError: `params.prefix` names messages this kernel does not hold."""
        conversation = self.conversations.resolve(params.session, params.prefix, params.messages)
        config = to_config(params.model)
        provider = open_provider(config, clients=self.clients)
        collector = TextCollector()
        listed = () if params.tools is None else self._listed_tools(params.tools)
        no_tools = TurnTools({}, None, listed, _refuse_tool)
        messages = list(conversation.messages)
        outcome = await run_turn(
            provider, config, messages, no_tools, collector, max_steps=1, known=conversation.encodings
        )
        if outcome.reason == "error":
            raise KernelError(outcome.error or "the summary failed", code=outcome.error_code or RUN_FAILED)
        return SummarizeResult(text="".join(collector.parts), usage=to_usage_info(outcome.usage))

    async def model_warm(self, params: ModelWarmParams) -> ModelWarmResult:
        """Load the model a turn would load (only the embedded one has anything to load)."""
        provider = open_provider(to_config(params.model))
        return ModelWarmResult(loaded=await provider.warm() if isinstance(provider, Warmable) else False)

    def _listed_tools(self, tools: ToolSet) -> tuple[ToolDefinition, ...]:
        """The definitions a turn with `tools` offers, in the same order, for a call in which none runs."""
        local = tuple(tool.definition for name, tool in self._tools.items() if name in tools.local)
        names = {definition.name for definition in local}
        host = tuple(ToolDefinition(t.name, t.description, t.input_schema) for t in tools.host if t.name not in names)
        return local + host

    async def session_close(self, params: SessionCloseParams) -> Empty:
        self.conversations.forget(params.session)
        if self._shells is not None:
            await self._shells.close(params.session)
        if self._mcp is not None:
            await self._mcp.close(params.session)
        return Empty()

    async def mcp_close(self, params: McpCloseParams) -> Empty:
        if self._mcp is not None:
            await self._mcp.close(params.session)
        return Empty()

    async def shutdown(self, _: EmptyParams) -> Empty:
        self._stop.set()
        return Empty()

    def _call_host_tool_for(self, run_id: str) -> Any:
        async def call(tool_call: ToolCall) -> ToolOutcome:
            assert self._peer is not None
            params = ToolCallParams(
                run_id=run_id, tool_call_id=tool_call.id, name=tool_call.name, arguments=tool_call.arguments
            )
            result = await self._peer.request("tool.call", params, ToolCallResult, timeout=HOST_TOOL_TIMEOUT)
            return ToolOutcome(result.content, result.is_error)

        return call

    async def _run(self, params: TurnStartParams, conversation: Conversation) -> None:
        assert self._peer is not None
        notifier = TurnNotifier(self._peer, params.run_id)
        try:
            outcome = await self._turn(params, conversation, notifier)
        except asyncio.CancelledError:
            outcome = TurnOutcome("cancelled", Usage())
        except JsonRpcError as exc:
            outcome = TurnOutcome("error", Usage(), exc.message, exc.code)
        except Exception as exc:  # the host must always hear how a turn ended
            logger.exception("turn %s failed", params.run_id)
            outcome = TurnOutcome("error", Usage(), f"internal error in the kernel: {type(exc).__name__}", RUN_FAILED)
        finally:
            self._turns.pop(params.run_id, None)
        await self._peer.notify(
            "turn.ended",
            TurnEndedEvent(
                run_id=params.run_id,
                reason=outcome.reason,
                error=outcome.error,
                error_code=outcome.error_code,
                usage=to_usage_info(outcome.usage),
                stop_reason=outcome.stop_reason,
            ),
        )

    def _ask_person_for(self, run_id: str) -> Any:
        async def ask_person(action: str, target: str, summary: str) -> PersonDecision:
            assert self._peer is not None
            call = CURRENT_CALL.get()
            params = ApprovalRequestParams(
                run_id=run_id,
                tool_call_id=call.id if call is not None else "",
                name=call.name if call is not None else action,
                action=action,
                target=target,
                summary=summary,
            )
            try:
                answer = await self._peer.request(
                    "approval.request", params, ApprovalRequestResult, timeout=APPROVAL_TIMEOUT
                )
            except JsonRpcError as exc:
                logger.warning("approval for %s %s failed, denying: %s", action, target, exc.message)
                return "deny"
            return answer.decision

        return ask_person

    def _local_tools_for(self, params: TurnStartParams) -> tuple[dict[str, LocalTool], ToolContext | None]:
        if params.policy is None:
            return {}, None
        policy = policy_from_wire(params.policy)
        approve = make_approver(
            policy.permission, rules_from_wire(params.approvals), self._ask_person_for(params.run_id)
        )
        context = ToolContext(policy=policy, session=params.session, approve=approve, shells=self._shells)
        enabled = {name: tool for name, tool in self._tools.items() if name in params.tools.local}
        return enabled, context

    async def _turn(self, params: TurnStartParams, conversation: Conversation, notifier: TurnNotifier) -> TurnOutcome:
        config = to_config(params.model)
        provider = open_provider(config, clients=self.clients)
        host_tools = tuple(ToolDefinition(t.name, t.description, t.input_schema) for t in params.tools.host)
        enabled, context = self._local_tools_for(params)
        local: dict[str, LocalToolLike] = dict(enabled)
        if context is not None and self._mcp is not None:
            specs = [ServerSpec.from_wire(spec) for spec in params.mcp_servers]
            servers = await self._mcp.ready_servers(params.session, context.policy, specs)
            local = {**local, **mcp_turn_tools(servers, context_window=params.model.context_window)}
        turn_tools = TurnTools(local, context, host_tools, self._call_host_tool_for(params.run_id))
        messages = list(conversation.messages)
        return await run_turn(
            provider, config, messages, turn_tools, notifier, max_steps=params.max_steps, known=conversation.encodings
        )
