"""What every local tool is given and returns, and the one place a tool asks the sandbox.

A tool is a definition (name, description, JSON schema) and an async handler. `LocalTool.run` never raises:
bad arguments, sandbox refusals and OS errors become a short error `ToolResult` ("error: ...", "denied: ...")
meant for the model. `authorize` makes a raw path canonical, asks the policy and, on Ask, the approval callback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kernel.errors import KernelError
from kernel.providers.base import ToolDefinition
from kernel.tools.result import ToolResult
from kernel.tools.shell_pool import ShellPool
from protocol.errors import INVALID_PARAMS
from sandbox import AccessDeniedError, Action, Allow, Deny, Policy, SandboxError, canonical_path, decide, display_path

__all__ = ["Approve", "ToolContext", "ToolArgumentError", "Arguments", "LocalTool", "authorize"]

logger = logging.getLogger(__name__)


class Approve(Protocol):
    """`approve(action, target, summary)`: True when the action may go ahead (remembered rule, mode or a person).

    With `always_ask` the permission mode may not answer: only a person or their remembered rule for the target.
    """

    async def __call__(self, action: str, target: str, summary: str, *, always_ask: bool = False) -> bool: ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    """One run's view for its tools: the policy, the shell session key, the approval callback, the shells."""

    policy: Policy
    session: str
    approve: Approve
    shells: ShellPool | None = None

    def show(self, path: str) -> str:
        """How results name a canonical path: relative to the workspace when inside it."""
        return display_path(path, self.policy.workspace)


class ToolArgumentError(KernelError):
    """The model's arguments do not fit the tool's schema."""

    CODE = INVALID_PARAMS


class Arguments:
    """Typed reads of the model's argument object; every mismatch is a `ToolArgumentError`."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._raw = raw

    def text(self, name: str, default: str | None = None) -> str:
        value = self._raw.get(name, default)
        if not isinstance(value, str):
            raise ToolArgumentError(f"`{name}` must be a string" if name in self._raw else f"`{name}` is required")
        return value

    def optional_text(self, name: str) -> str | None:
        value = self._raw.get(name)
        if value is not None and not isinstance(value, str):
            raise ToolArgumentError(f"`{name}` must be a string")
        return value

    def integer(self, name: str, default: int, *, low: int, high: int) -> int:
        value = self._raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
            raise ToolArgumentError(f"`{name}` must be an integer")
        if not low <= value <= high:
            raise ToolArgumentError(f"`{name}` must be between {low} and {high}")
        return int(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._raw.get(name, default)
        if not isinstance(value, bool):
            raise ToolArgumentError(f"`{name}` must be true or false")
        return value

    def choice(self, name: str, options: tuple[str, ...], default: str) -> str:
        value = self._raw.get(name, default)
        if value not in options:
            raise ToolArgumentError(f"`{name}` must be one of: {', '.join(options)}")
        return str(value)


Handler = Callable[[Arguments, ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class LocalTool:
    """A tool the kernel runs itself."""

    definition: ToolDefinition
    handler: Handler

    async def run(self, arguments: Any, ctx: ToolContext) -> ToolResult:
        """Run the tool; every failure is an error result, never an exception.

        Args:
            arguments: the model's argument object (checked here: anything but an object is an error).
            ctx: the run's tool context.

        Returns:
            The result text for the model.
        """
        if not isinstance(arguments, Mapping):
            return ToolResult("error: arguments must be a JSON object", is_error=True)
        try:
            return await self.handler(Arguments(arguments), ctx)
        except ToolArgumentError as exc:
            return ToolResult(f"error: {exc.message}", is_error=True)
        except SandboxError as exc:
            return ToolResult(f"denied: {exc.message}", is_error=True)
        except OSError as exc:
            where = f": {ctx.show(str(exc.filename))}" if exc.filename else ""
            return ToolResult(f"error: {exc.strerror or exc}{where}", is_error=True)
        except Exception:  # the tool dispatcher's top level: a bug must not end the turn
            logger.exception("local tool %s failed", self.definition.name)
            return ToolResult("error: the tool failed unexpectedly (details are in the kernel log)", is_error=True)


async def authorize(ctx: ToolContext, action: Action, raw: str, *, follow_final: bool = True) -> str:
    """Make `raw` canonical and get the policy's (and, on Ask, the approver's) yes.

    Args:
        ctx: the run's tool context.
        action: `read`, `list` or `write`.
        raw: the path the model gave; relative to the workspace.
        follow_final: False for writes (a final symlink is kept as a name and refused when opened).

    Returns:
        The canonical path.

    Raises:
        PathEscapeError: the raw path is unusable (a NUL byte).
        AccessDeniedError: the policy refused, or nobody approved.
    """
    path = canonical_path(raw, ctx.policy.workspace, follow_final=follow_final)
    verdict = decide(ctx.policy, action, path)
    if isinstance(verdict, Allow):
        return path
    if isinstance(verdict, Deny):
        raise AccessDeniedError(verdict.reason)
    if await ctx.approve(action, path, f"{action} {path} ({verdict.reason})", always_ask=verdict.always_ask):
        return path
    raise AccessDeniedError(f"{action} of {path} was not approved")
