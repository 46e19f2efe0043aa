"""The kernel's local tools as one set; the shell tool is in it only where an OS sandbox works.

`local_tools(shell)` is what the model loop offers: grep, glob, read_file, list_dir, write_file, edit_file and,
when `shell` is a working `ShellSandbox`, shell. When it is `Unavailable`, there is no shell tool at all and
`unavailable_tools_note` is the sentence the agent reads about why (fail closed, never open).
"""

from __future__ import annotations

from kernel.tools.context import LocalTool
from kernel.tools.glob import GLOB
from kernel.tools.grep import make_grep_tool, resolve_rg
from kernel.tools.reader import LIST_DIR, READ_FILE
from kernel.tools.shell import SHELL
from kernel.tools.writer import EDIT_FILE, WRITE_FILE
from sandbox import ShellSandbox, Unavailable
from sandbox.programs import TrustedProgram

__all__ = ["local_tools", "unavailable_tools_note"]


def local_tools(
    shell: ShellSandbox | Unavailable, rg: TrustedProgram | Unavailable | None = None
) -> dict[str, LocalTool]:
    """Every local tool, by name; `shell` only where an OS sandbox works.

    Args:
        shell: what `sandbox.detect_shell_sandbox` found.
        rg: the ripgrep grep runs, resolved once (`kernel.tools.grep.resolve_rg` when not given).

    Returns:
        Tool name → tool, in the order they are offered.
    """
    grep = make_grep_tool(rg=rg if rg is not None else resolve_rg())
    tools = [grep, GLOB, READ_FILE, LIST_DIR, WRITE_FILE, EDIT_FILE]
    if isinstance(shell, ShellSandbox):
        tools.append(SHELL)
    return {tool.definition.name: tool for tool in tools}


def unavailable_tools_note(shell: ShellSandbox | Unavailable) -> str:
    """What the agent is told about tools it does not have; empty when nothing is missing."""
    if isinstance(shell, ShellSandbox):
        return ""
    return f"There is no shell tool in this run: {shell.reason}. No OS sandbox could confine it, so it is not offered."
