"""Turn preparation: everything the kernel needs for one run of one agent, gathered by the host.

The system prompt comes first and is marked as the end of the cached prefix; the conversation since
the last compaction follows. A model that needs an API key and has none fails here, before any call.
When the context passes 75% of the model's window, older history is summarised first (compaction); a
failed compaction is logged and the turn goes on with the full history.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from host.agents import Agent, AgentStore
from host.approvals import ApprovalStore
from host.compaction import compaction_messages, needs_compaction, split_for_compaction
from host.context import build_messages
from host.secrets import SecretStore, resolve_api_key
from protocol.errors import JsonRpcError
from protocol.models.agents import ModelSettings
from protocol.models.kernel import (
    ChatMessage,
    KernelInitializeResult,
    ModelSpec,
    SummarizeParams,
    SummarizeResult,
    ToolSet,
    TurnStartParams,
)
from protocol.models.policy import SandboxPolicy
from protocol.models.transcript import CompactEvent
from sandbox import rules_to_wire

__all__ = ["TurnPlanner", "model_spec", "identity_prompt", "DEFAULT_CONTEXT_WINDOWS", "Summarize"]

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOWS = {"local": 8192, "openai": 128_000, "anthropic": 200_000, "scripted": 8192}

Summarize = Callable[[SummarizeParams], Awaitable[SummarizeResult]]


def identity_prompt(agent: Agent, tools_note: str = "") -> str:
    lines = [
        f"You are {agent.name} (agent id {agent.agent_id}), a persistent assistant running in Hearth on the "
        "user's own computer. You keep a transcript across conversations and work in your own workspace.",
        "Be direct and accurate. When you use a tool, say briefly what you found.",
    ]
    if tools_note:
        lines.append(tools_note)
    if agent.settings.instructions.strip():
        lines += ["", "Instructions from the user:", agent.settings.instructions.strip()]
    return "\n".join(lines)


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
        on_compacted: told after a compaction was recorded (the prompt epoch moves on).
    """

    def __init__(
        self,
        store: AgentStore,
        secrets: SecretStore,
        summarize: Summarize,
        kernel_info: Callable[[], KernelInitializeResult | None],
        on_compacted: Callable[[Agent], None] = lambda _: None,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._summarize = summarize
        self._kernel_info = kernel_info
        self._on_compacted = on_compacted

    def resolve_model(self, agent: Agent) -> ModelSpec:
        """The agent's model with its key. Raises MissingApiKeyError when a needed key is missing."""
        settings = agent.settings.model
        key = resolve_api_key(self._secrets, settings.provider, settings.api_key_secret, settings.base_url)
        return model_spec(settings, key)

    async def prepare(self, agent: Agent, run_id: str) -> TurnStartParams:
        """Build `turn.start` for `agent`'s run `run_id` from its settings and transcript."""
        spec = self.resolve_model(agent)
        system = [ChatMessage(role="system", content=identity_prompt(agent, self.tools_note()), cache_breakpoint=True)]
        events = self._store.transcript(agent.agent_id).since_last_compact()
        messages = build_messages(system, events)
        if needs_compaction(messages, spec.context_window) and await self._compact(agent, events, spec):
            events = self._store.transcript(agent.agent_id).since_last_compact()
            messages = build_messages(system, events)
        return TurnStartParams(
            run_id=run_id,
            session=agent.agent_id,
            messages=messages,
            model=spec,
            tools=self._tools(agent),
            policy=self._policy(agent),
            approvals=rules_to_wire(ApprovalStore.for_agent(self._store.data_dir, agent.agent_id).rules()),
        )

    def _tools(self, agent: Agent) -> ToolSet:
        info = self._kernel_info()
        local = [tool.name for tool in info.tools] if info is not None else []
        return ToolSet(local=local)

    def _policy(self, agent: Agent) -> SandboxPolicy:
        return SandboxPolicy(
            data_dir=str(self._store.data_dir),
            agent_id=agent.agent_id,
            network=agent.settings.network,
            permission=agent.settings.tool_permission,
        )

    def tools_note(self) -> str:
        """What the agent is told about tools it does not have (the shell, where no OS sandbox works)."""
        info = self._kernel_info()
        if info is None or info.shell.available:
            return ""
        return f"There is no shell tool: {info.shell.reason}. No OS sandbox could confine it, so it is not offered."

    async def _compact(self, agent: Agent, events: list[dict[str, Any]], spec: ModelSpec) -> bool:
        older, _ = split_for_compaction(events)
        if not older:
            return False
        try:
            summary = await self._summarize(SummarizeParams(messages=compaction_messages(older), model=spec))
        except JsonRpcError as exc:
            logger.warning("compaction for %s failed, going on without it: %s", agent.agent_id, exc.message)
            return False
        # A previous summary sits first with a seq newer than the turn it preceded: count what it covers.
        covered = [int(e["throughSeq"]) if e.get("type") == "compact" else int(e["seq"]) for e in older]
        through = max(covered)
        event = CompactEvent(summary=summary.text.strip(), through_seq=through)
        self._store.transcript(agent.agent_id).append(event.model_dump(mode="json"))
        self._on_compacted(agent)
        return True
