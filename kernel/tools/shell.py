"""The `shell` tool: one command in the agent's persistent, OS-sandboxed bash.

The command is checked against the hard-denied list first (denied whatever the permission), then
approved (mode, remembered rule, or a person), then run in the session's shell with a timeout.
"""

from __future__ import annotations

from kernel.providers.base import ToolDefinition
from kernel.tools.context import Arguments, LocalTool, ToolArgumentError, ToolContext
from kernel.tools.result import ToolResult
from sandbox import Deny, decide_command

__all__ = ["MAX_SHELL_TIMEOUT", "SHELL"]

MAX_SHELL_TIMEOUT = 600
_DEFAULT_SHELL_TIMEOUT = 120
_MAX_COMMAND_CHARS = 100_000


async def _shell(args: Arguments, ctx: ToolContext) -> ToolResult:
    command = args.text("command")
    timeout = args.integer("timeout_seconds", _DEFAULT_SHELL_TIMEOUT, low=1, high=MAX_SHELL_TIMEOUT)
    if not command.strip() or len(command) > _MAX_COMMAND_CHARS:
        raise ToolArgumentError(f"`command` must be a non-empty command line under {_MAX_COMMAND_CHARS} characters")
    if ctx.shells is None:
        return ToolResult("error: no shell is available in this run", is_error=True)
    verdict = decide_command(ctx.policy, command)
    if isinstance(verdict, Deny):
        return ToolResult(f"denied: {verdict.reason}", is_error=True)
    if not await ctx.approve("shell", command, f"run `{command}` ({verdict.reason})"):
        return ToolResult("denied: the command was not approved", is_error=True)
    return await ctx.shells.run(ctx.session, ctx.policy, command, timeout)


SHELL = LocalTool(
    ToolDefinition(
        name="shell",
        description=(
            "Run a bash command in your persistent shell, inside a sandbox: your workspace is writable, your "
            "memory is read-only, nothing else of Hearth's data is visible, and the network is off unless your "
            "settings allow it. The working directory and exported variables persist between calls. Output "
            "(stdout and stderr together) is capped; the exit code is reported."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout_seconds": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SHELL_TIMEOUT,
                    "description": f"Seconds before the command is killed (default {_DEFAULT_SHELL_TIMEOUT}).",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    ),
    _shell,
)
