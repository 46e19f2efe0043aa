"""Turn preparation: everything the kernel needs for one run of one agent, gathered by the host.

The system prompt comes first and is marked as the end of the cached prefix; the conversation since
the last compaction follows. The kernel gets the model's settings and, for one call, its API key.
"""

from __future__ import annotations

from protocol.models.agents import ModelSettings
from protocol.models.kernel import ChatMessage, ModelSpec, ToolSet, TurnStartParams

from host.agents import Agent, AgentStore
from host.context import build_messages

__all__ = ["TurnPlanner", "model_spec", "identity_prompt", "DEFAULT_CONTEXT_WINDOWS"]

DEFAULT_CONTEXT_WINDOWS = {"local": 8192, "openai": 128_000, "anthropic": 200_000, "scripted": 8192}


def identity_prompt(agent: Agent) -> str:
    lines = [
        f"You are {agent.name} (agent id {agent.agent_id}), a persistent assistant running in Hearth on the "
        "user's own computer. You keep a transcript across conversations and work in your own workspace.",
        "Be direct and accurate. When you use a tool, say briefly what you found.",
    ]
    if agent.settings.instructions.strip():
        lines += ["", "Instructions from the user:", agent.settings.instructions.strip()]
    return "\n".join(lines)


def model_spec(settings: ModelSettings, api_key: str | None) -> ModelSpec:
    return ModelSpec(
        provider=settings.provider,
        name=settings.name,
        base_url=settings.base_url,
        api_key=api_key,
        context_window=settings.context_window or DEFAULT_CONTEXT_WINDOWS.get(settings.provider, 8192),
        max_output_tokens=settings.max_output_tokens or 1024,
        temperature=settings.temperature,
        rules=settings.rules,
    )


class TurnPlanner:
    def __init__(self, store: AgentStore) -> None:
        self._store = store

    async def prepare(self, agent: Agent, run_id: str) -> TurnStartParams:
        """Build `turn.start` for `agent`'s run `run_id` from its settings and transcript."""
        system = [ChatMessage(role="system", content=identity_prompt(agent), cache_breakpoint=True)]
        events = self._store.transcript(agent.agent_id).since_last_compact()
        return TurnStartParams(
            run_id=run_id,
            session=agent.agent_id,
            messages=build_messages(system, events),
            model=model_spec(agent.settings.model, None),
            tools=ToolSet(),
        )
