"""The kernel's local tools as one set, and the shell tool, offered only where an OS sandbox works.

`local_tools(shell)` is what the model loop offers: grep, glob, read_file, list_dir, write_file, edit_file and,
when `shell` is a working `ShellSandbox`, shell. When it is `Unavailable`, there is no shell tool at all and
`unavailable_tools_note` is the sentence the agent reads about why (fail closed, never open).
"""

from __future__ import annotations

from kernel.providers.base import ToolDefinition
from kernel.tools.context import Arguments, LocalTool, ToolArgumentError, ToolContext, ToolResult
from kernel.tools.glob import GLOB
from kernel.tools.grep import make_grep_tool
from kernel.tools.reader import LIST_DIR, READ_FILE
from kernel.tools.writer import EDIT_FILE, WRITE_FILE
from sandbox import Deny, ShellSandbox, Unavailable, decide_command

__all__ = ["SHELL", "local_tools", "unavailable_tools_note", "MAX_SHELL_TIMEOUT"]

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


def local_tools(shell: ShellSandbox | Unavailable) -> dict[str, LocalTool]:
    """Every local tool, by name; `shell` only where an OS sandbox works.

    Args:
        shell: what `sandbox.detect_shell_sandbox` found.

    Returns:
        Tool name → tool, in the order they are offered.
    """
    tools = [make_grep_tool(), GLOB, READ_FILE, LIST_DIR, WRITE_FILE, EDIT_FILE]
    if isinstance(shell, ShellSandbox):
        tools.append(SHELL)
    return {tool.definition.name: tool for tool in tools}


def unavailable_tools_note(shell: ShellSandbox | Unavailable) -> str:
    """What the agent is told about tools it does not have; empty when nothing is missing."""
    if isinstance(shell, ShellSandbox):
        return ""
    return f"There is no shell tool in this run: {shell.reason}. No OS sandbox could confine it, so it is not offered."
