"""What happens to an agent's document suggestions: its `suggest_document` tool keeps one, a person decides.

The tool is offered in an agent's direct runs while its knowledge is on (and its model is offered tools),
never in a Work run. It keeps the path as given and announces `knowledge.suggested`; it never reads, stats
or resolves the path, so its answer is the same whether the path exists or not and tells the agent nothing
about files outside its sandbox. Only a person's `knowledge.accept` admits, through `knowledge.add`'s own
checks; a refused path leaves the suggestion pending. `knowledge.decline` drops it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from host.errors import HostError
from host.knowledge.errors import SuggestionNotFoundError
from host.knowledge.suggestions import Suggestion, SuggestionStore
from host.knowledge.wire import suggestion_model
from host.runs.host_tools import ArgumentsError, HostCall, parse_arguments, tool_spec
from host.runs.scheduler import Notify, RunOrigin
from host.runs.turns import offers_tools
from host.store.agents import Agent
from protocol.models.kernel import ToolCallResult, ToolSpec
from protocol.models.knowledge import SUGGESTION_TOOLS, KnowledgeSuggestedEvent, SuggestDocumentArgs

__all__ = ["SuggestionDesk", "SuggestDocumentTool"]

T = TypeVar("T")


class SuggestionDesk:
    """Args:
    store: the agents' pending suggestions.
    notify: sends events to the shells.
    """

    def __init__(self, store: SuggestionStore, notify: Notify) -> None:
        self.store = store
        self._notify = notify

    async def pending(self, agent_id: str) -> list[Suggestion]:
        """Raises: CorruptFileError."""
        return await asyncio.to_thread(self.store.pending, agent_id)

    async def suggest(self, agent_id: str, path: str, reason: str, run_id: str) -> tuple[Suggestion, bool]:
        """Keep an agent's suggestion (announced when new). Raises: TooManySuggestionsError, CorruptFileError."""
        suggestion, fresh = await asyncio.to_thread(self.store.suggest, agent_id, path, reason, run_id)
        if fresh:
            await self._notify("knowledge.suggested", KnowledgeSuggestedEvent(suggestion=suggestion_model(suggestion)))
        return suggestion, fresh

    async def accept(self, agent_id: str, suggestion_id: str, admit: Callable[[str], Awaitable[T]]) -> T:
        """A person's yes: `admit` the suggested path, then the suggestion is gone (kept if `admit` raised).

        Raises: SuggestionNotFoundError, CorruptFileError, and whatever `admit` raises.
        """
        suggestion = await asyncio.to_thread(self.store.get, agent_id, suggestion_id)
        admitted = await admit(suggestion.path)
        try:
            await asyncio.to_thread(self.store.remove, agent_id, suggestion_id)
        except SuggestionNotFoundError:  # decided meanwhile by another client: the admission still stands
            pass
        return admitted

    async def decline(self, agent_id: str, suggestion_id: str) -> None:
        """A person's no. Raises: SuggestionNotFoundError, CorruptFileError."""
        await asyncio.to_thread(self.store.remove, agent_id, suggestion_id)


class SuggestDocumentTool:
    """`suggest_document` as a host-tool provider."""

    def __init__(self, desk: SuggestionDesk) -> None:
        self._desk = desk
        self._specs = [tool_spec(name, model) for name, model in SUGGESTION_TOOLS.items()]

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        if origin.work_id is not None or not agent.settings.knowledge or not offers_tools(agent.settings.model):
            return []
        return list(self._specs)

    async def call(self, call: HostCall) -> ToolCallResult:
        agent_id = call.agent.agent_id
        try:
            args = parse_arguments(SuggestDocumentArgs, call.arguments)
            suggestion, fresh = await self._desk.suggest(agent_id, args.path, args.reason, call.run.run_id)
        except ArgumentsError as exc:
            return ToolCallResult(content=f"Not suggested: {exc}.", is_error=True)
        except HostError as exc:  # too many waiting, or a file the host cannot read
            return ToolCallResult(content=f"Not suggested: {exc.message}.", is_error=True)
        # The same words whether the path exists or not: nothing about it was looked at.
        if not fresh:
            return ToolCallResult(
                content=f"{suggestion.path} is suggested already ({suggestion.suggestion_id}); a person decides."
            )
        return ToolCallResult(
            content=f"Suggested {suggestion.path} ({suggestion.suggestion_id}); a person decides. Nothing was "
            f"read or checked: the user admits it or not (`hearth knowledge {agent_id} suggestions`). "
            "Tell the user what you suggested and why."
        )
