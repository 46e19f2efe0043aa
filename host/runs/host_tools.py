"""The host-executed tools of a run, in one table: memory, teammates and Works each offer theirs.

A provider says which tools a run is offered (from the agent and what started the run) and executes a
call. The kernel's `tool.call` is routed here; a call is executed only if the running run was offered
that tool, so a Work run can never reach a direct run's tools (private memory, messaging) by name.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from host.errors import NotFoundError
from host.runs.scheduler import Run, RunManager, RunOrigin
from host.store.agents import Agent, AgentStore
from protocol.errors import describe_validation_error
from protocol.models.kernel import ToolCallParams, ToolCallResult, ToolSpec

__all__ = ["HostCall", "HostToolProvider", "HostTools", "tool_spec", "parse_arguments", "ArgumentsError"]

A = TypeVar("A", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class HostCall:
    """One call of a host tool by a running run."""

    run: Run
    agent: Agent
    tool_call_id: str
    name: str
    arguments: dict[str, Any]

    @property
    def origin(self) -> RunOrigin:
        return self.run.origin


class HostToolProvider(Protocol):
    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        """The tools this provider gives a run of `agent` started by `origin`."""
        ...

    async def call(self, call: HostCall) -> ToolCallResult:
        """Execute one of the tools it offered; a refusal is an `isError` result, not an exception."""
        ...


class ArgumentsError(ValueError):
    """A tool's arguments do not fit its schema; the message is fit to show the model."""


def tool_spec(name: str, model: type[BaseModel]) -> ToolSpec:
    """A tool whose arguments are `model`: its docstring is the description, its JSON Schema the input schema."""
    return ToolSpec(
        name=name, description=inspect.cleandoc(model.__doc__ or name), input_schema=model.model_json_schema()
    )


def parse_arguments(model: type[A], arguments: dict[str, Any]) -> A:
    """Raises: ArgumentsError when the arguments do not fit."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise ArgumentsError(describe_validation_error(exc).replace("Invalid params", "Invalid arguments")) from exc


class HostTools:
    """Every provider of host tools, and the `tool.call` entry point.

    Args:
        runs: the run manager (a call is accepted only from a running run).
        store: the agent store.
    """

    def __init__(self, runs: RunManager, store: AgentStore) -> None:
        self._runs = runs
        self._store = store
        self.providers: list[HostToolProvider] = []

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        """Every host tool of one run, in provider order."""
        return [spec for provider in self.providers for spec in provider.offered(agent, origin)]

    async def call(self, params: ToolCallParams) -> ToolCallResult:
        """The kernel's `tool.call`.

        Raises:
            NotFoundError: the run is not running, or was not offered a tool of that name.
        """
        run = self._runs.running(params.run_id)
        if run is None:
            raise NotFoundError(f"run {params.run_id} is not running")
        agent = self._store.get(run.agent_id)
        for provider in self.providers:
            if any(spec.name == params.name for spec in provider.offered(agent, run.origin)):
                call = HostCall(run, agent, params.tool_call_id, params.name, params.arguments)
                return await provider.call(call)
        raise NotFoundError(f"there is no host tool named {params.name!r} in this run")
