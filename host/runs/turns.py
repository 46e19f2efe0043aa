"""Turn preparation: everything the kernel needs for one run of one agent, gathered by the host.

The system prompt comes first and is marked as the end of the cached prefix; the conversation since
the last compaction follows. A model that needs an API key and has none fails here, before any call.
When the context passes 75% of the model's window, older history is summarised first (compaction), once
memory extraction has read what it drops (bounded); a failed compaction is logged and the turn goes on with
the full history. The conversation is kept per agent between turns (`live_context.py`) and sent as what
follows the prefix the kernel already holds (`kernel_prefix.py`), so a turn's work does not grow with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from host.memory.reads import MemoryReads
from host.memory.recall import replay_budget
from host.prompt.cache import AssembledPrompt, MemorySource, assemble_prompt, bump_epoch
from host.prompt.identity import AgentIdentity, RosterEntry, roster_line
from host.runs.compaction import compaction_due, compaction_messages, split_for_compaction
from host.runs.kernel_prefix import SentPrefixes
from host.runs.live_context import Context, LiveContexts
from host.runs.mcp_config import mcp_server_specs
from host.runs.receipts import build_receipt
from host.store.agents import Agent, AgentStore
from host.store.approvals import ApprovalStore
from host.store.secrets import SecretStore, resolve_api_key
from host.store.transcript import Transcript
from protocol.errors import JsonRpcError
from protocol.models.agents import DEFAULT_CONTEXT_WINDOWS, ModelSettings
from protocol.models.kernel import (
    ChatMessage,
    KernelInitializeResult,
    ModelSpec,
    SummarizeParams,
    SummarizeResult,
    ToolSet,
    ToolSpec,
    TurnStartParams,
)
from protocol.models.policy import SandboxPolicy
from protocol.models.transcript import CompactEvent, ContextEvent
from sandbox import rules_to_wire

__all__ = ["TurnPlanner", "model_spec", "offers_tools", "DEFAULT_CONTEXT_WINDOWS", "Summarize"]

logger = logging.getLogger(__name__)

Summarize = Callable[[SummarizeParams], Awaitable[SummarizeResult]]
Cover = Callable[[Agent, int, int], Awaitable[Literal["covered", "unfinished"] | None]]
"""`cover(agent, through_seq, first_seq)`: extraction of those lines before a compaction (None: it does not run)."""


async def _no_cover(agent: Agent, through_seq: int, first_seq: int) -> None:
    return None


def offers_tools(settings: ModelSettings) -> bool:
    """Whether the model is offered tools: the embedded model is too small to call them, so it gets none."""
    return settings.provider != "local"


def model_spec(settings: ModelSettings, api_key: str | None) -> ModelSpec:
    return ModelSpec(
        provider=settings.provider,
        name=settings.name,
        base_url=settings.base_url,
        api_key=api_key,
        key_name=settings.api_key_secret or settings.provider,
        context_window=settings.context_window or DEFAULT_CONTEXT_WINDOWS.get(settings.provider, 8192),
        max_output_tokens=settings.max_output_tokens or 1024,
        temperature=settings.temperature,
        rules=settings.rules,
    )


class TurnPlanner:
    """Builds `turn.start` params.

    Args:
        store: agents and their transcripts.
        secrets: where API keys come from.
        summarize: the kernel's `summarize` call (used for compaction).
        memory: the agent's memory for its prompt, or None when its memory is off.
        host_tools: the host-executed tools an agent's runs are offered.
        cover: extracts memory from the lines a compaction is about to summarise (`MemoryService.cover`).

    `contexts` keeps each agent's conversation between turns; `prefixes` what the kernel holds of it.
    """

    def __init__(
        self,
        store: AgentStore,
        secrets: SecretStore,
        summarize: Summarize,
        kernel_info: Callable[[], KernelInitializeResult | None],
        memory: Callable[[Agent], MemorySource | None] = lambda _: None,
        host_tools: Callable[[Agent], list[ToolSpec]] = lambda _: [],
        cover: Cover = _no_cover,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._summarize = summarize
        self._kernel_info = kernel_info
        self._memory = memory
        self._host_tools = host_tools
        self._cover = cover
        self.contexts = LiveContexts()
        self.prefixes = SentPrefixes()

    async def forget(self, agent_id: str) -> None:
        """Let go of what is kept of the agent's conversation (it was deleted)."""
        self.contexts.forget(agent_id)
        self.prefixes.forget(agent_id)

    def resolve_model(self, agent: Agent) -> ModelSpec:
        """The agent's model with its key. Raises MissingApiKeyError when a needed key is missing."""
        settings = agent.settings.model
        key = resolve_api_key(self._secrets, settings.provider, settings.api_key_secret, settings.base_url)
        return model_spec(settings, key)

    async def prepare(self, agent: Agent, run_id: str, *, project_root: str | None = None) -> TurnStartParams:
        """Build `turn.start` for `agent`'s run `run_id` from its settings, transcript and memory.

        The prompt is assembled (frozen per epoch) and this turn's recall block is stored, by record id, in a
        `context` event before the messages are built; every stored block is rendered from memory as it
        stands, so a removed fact is in no later request, and within an epoch a replay gives the same bytes.
        A `project_root` (checked when the message was queued) goes into the run's policy only. Once the request
        is built (after any compaction) its receipt is stored: the fact ids it carries, its epoch, its prefix hash.
        """
        spec = self.resolve_model(agent)
        transcript = self._store.transcript(agent.agent_id)
        memory = self._memory(agent)
        latest = next((e["text"] for e in transcript.context_backwards() if e.get("type") in ("user", "wake")), "")
        identity, roster = self._identity(agent)
        if isinstance(memory, MemoryReads):
            await memory.prepare_recall(latest)  # the recall block's query is embedded off the event loop
        tools = offers_tools(agent.settings.model)
        prompt = assemble_prompt(agent.directory, identity, roster, memory, latest, memory_tools=tools)
        block = prompt.recall
        context = ContextEvent(
            run_id=run_id,
            epoch=prompt.epoch,
            recalled=list(block.recalled) if block else [],
            added=list(block.added) if block else [],
            more_added=block.more_added if block else 0,
            cut=block.cut if block else 0,
        )
        await transcript.append_async(context.model_dump(mode="json"))
        built = self._context(agent, transcript, prompt, memory, spec)
        if compaction_due(built.tokens, spec.context_window) and await self._compact(agent, transcript, spec):
            prompt = assemble_prompt(agent.directory, identity, roster, memory, latest, memory_tools=tools)
            built = self._context(agent, transcript, prompt, memory, spec)
        await transcript.append_async(build_receipt(run_id, prompt, built).model_dump(mode="json"))
        prefix, messages = self.prefixes.split("turn.start", agent.agent_id, built.messages, built.chain)
        return TurnStartParams(
            run_id=run_id,
            session=agent.agent_id,
            messages=messages,
            prefix=prefix,
            model=spec,
            tools=self._tools(agent),
            policy=self._policy(agent, project_root),
            approvals=rules_to_wire(ApprovalStore.for_agent(self._store.data_dir, agent.agent_id).rules()),
            mcp_servers=mcp_server_specs(agent.settings, self._secrets),
        )

    def replay(self, agent: Agent, instruction: ChatMessage) -> SummarizeParams:
        """A summary call that sends what a turn of `agent` would send now, with `instruction` last.

        Background extraction sends this, so the provider's cache serves the whole prefix a turn has just paid
        for (and the kernel holds it too: only what follows it is sent). Nothing is stored.

        Raises:
            MissingApiKeyError: the model needs a key that is not stored.
        """
        spec = self.resolve_model(agent)
        memory = self._memory(agent)
        identity, roster = self._identity(agent)
        tools = offers_tools(agent.settings.model)
        prompt = assemble_prompt(agent.directory, identity, roster, memory, "", memory_tools=tools)
        built = self._context(agent, self._store.transcript(agent.agent_id), prompt, memory, spec)
        whole = [*built.messages, instruction]
        prefix, messages = self.prefixes.split("summarize", agent.agent_id, whole, built.chain)
        return SummarizeParams(
            session=agent.agent_id, prefix=prefix, messages=messages, model=spec, tools=self._tools(agent)
        )

    def _context(
        self,
        agent: Agent,
        transcript: Transcript,
        prompt: AssembledPrompt,
        memory: MemorySource | None,
        spec: ModelSpec,
    ) -> Context:
        """The kept context of `agent`, brought up to date; every stored recall block rendered from memory now."""
        system = [ChatMessage(role="system", content=prompt.system, cache_breakpoint=True)]
        budget = replay_budget(spec.context_window)
        recall = None
        if memory is not None:
            source = memory

            def recall(contexts: list[dict[str, Any]]) -> Mapping[int, str]:
                return source.replayed_recall(contexts, prompt.epoch, budget)

        return self.contexts.of(agent.agent_id).build(transcript, prompt.epoch, system, recall, budget)

    def _identity(self, agent: Agent) -> tuple[AgentIdentity, list[RosterEntry]]:
        identity = AgentIdentity(agent.agent_id, agent.name, agent.settings.instructions, self.tools_note(agent))
        roster = [
            (mate.agent_id, mate.name, roster_line(mate.settings.instructions))
            for mate in self._store.list()
            if mate.agent_id != agent.agent_id
        ]
        return identity, roster

    def _tools(self, agent: Agent) -> ToolSet:
        info = self._kernel_info()
        local = [tool.name for tool in info.tools] if info is not None else []
        return ToolSet(local=local, host=self._host_tools(agent))

    def _policy(self, agent: Agent, project_root: str | None = None) -> SandboxPolicy:
        return SandboxPolicy(
            data_dir=str(self._store.data_dir),
            agent_id=agent.agent_id,
            network=agent.settings.network,
            permission=agent.settings.tool_permission,
            project_root=project_root,
        )

    def tools_note(self, agent: Agent | None = None) -> str:
        """What the agent is told about tools it does not have (the shell, MCP servers, where no OS sandbox works)."""
        info = self._kernel_info()
        if info is None:
            return ""
        notes = []
        if not info.shell.available:
            notes.append(
                f"There is no shell tool: {info.shell.reason}. No OS sandbox could confine it, so it is not offered."
            )
        if agent is not None and agent.settings.mcp_servers and info.mcp is not None and not info.mcp.available:
            names = ", ".join(server.name for server in agent.settings.mcp_servers)
            notes.append(
                f"Your MCP servers ({names}) are not started: {info.mcp.reason}. No OS sandbox could confine them, "
                "so their tools are not offered."
            )
        return " ".join(notes)

    async def _compact(self, agent: Agent, transcript: Transcript, spec: ModelSpec) -> bool:
        """Summarise the history before the current turn; memory extraction first reads what it has not yet.

        The extraction (`cover`, bounded) and the summary call run side by side; the `compact` event is written
        once both are done, and says whether extraction covered every line it summarises.
        """
        older, _ = split_for_compaction(transcript.since_last_compact())  # read whole: it is all summarised
        if not older:
            return False
        # A previous summary sits first with a seq newer than the turn it preceded: count what it covers.
        covered = [int(e["throughSeq"]) if e.get("type") == "compact" else int(e["seq"]) for e in older]
        through = max(covered)
        first = min((int(e["seq"]) for e in older if e.get("type") != "compact"), default=through)
        extraction = asyncio.ensure_future(self._cover(agent, through, first))
        try:
            summary = await self._summarize(SummarizeParams(messages=compaction_messages(older), model=spec))
        except JsonRpcError as exc:
            logger.warning("compaction for %s failed, going on without it: %s", agent.agent_id, exc.message)
            await extraction
            return False
        event = CompactEvent(
            summary=summary.text.strip(), through_seq=through, from_seq=first, extraction=await extraction
        )
        await self._store.transcript(agent.agent_id).append_async(event.model_dump(mode="json"))
        bump_epoch(agent.directory, "compaction")
        return True
