"""kernel.tools: the local tools the kernel runs itself, every one through the sandbox policy.
A new tool is `kernel/tools/<tool>.py` (a `LocalTool` with its schema and handler), listed in `catalog.py`.

`local_tools(shell)` gives the set to offer; each `LocalTool.run(arguments, ctx)` returns a `ToolResult` and
never raises. `ShellPool` keeps one persistent sandboxed bash per session; `make_approver` builds the approval
callback from the permission mode, remembered rules and a way to ask the person.
"""

from kernel.tools.approver import AskPerson, PersonDecision, make_approver
from kernel.tools.catalog import local_tools, unavailable_tools_note
from kernel.tools.context import Approve, Arguments, LocalTool, ToolArgumentError, ToolContext, authorize
from kernel.tools.glob import GLOB
from kernel.tools.grep import find_rg, make_grep_tool, resolve_rg
from kernel.tools.reader import LIST_DIR, READ_FILE
from kernel.tools.result import ToolResult
from kernel.tools.shell import SHELL
from kernel.tools.shell_pool import ShellPool
from kernel.tools.writer import EDIT_FILE, WRITE_FILE
from sandbox.approval import decide_approval

__all__ = [
    "EDIT_FILE",
    "GLOB",
    "LIST_DIR",
    "READ_FILE",
    "SHELL",
    "WRITE_FILE",
    "Approve",
    "Arguments",
    "AskPerson",
    "LocalTool",
    "PersonDecision",
    "ShellPool",
    "ToolArgumentError",
    "ToolContext",
    "ToolResult",
    "authorize",
    "decide_approval",
    "find_rg",
    "local_tools",
    "make_approver",
    "make_grep_tool",
    "resolve_rg",
    "unavailable_tools_note",
]
