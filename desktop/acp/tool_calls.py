"""Hearth's tool calls as ACP tool calls: a kind, a title a person reads, the files touched, and the result.

Pure functions from a tool's name and arguments (as `agent.tool` and the transcript carry them). Only absolute
paths become locations: relative ones start in the agent's workspace, which the editor cannot open. A result
is shown as text, cut to `RESULT_CHARS`; a write or an edit of an absolute path is also shown as a diff.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp import start_tool_call, text_block, tool_content, tool_diff_content, update_tool_call
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
)

__all__ = ["RESULT_CHARS", "ToolLook", "describe_tool", "tool_started", "tool_finished"]

RESULT_CHARS = 4000

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "grep": "search",
    "glob": "search",
    "memory_recall": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "shell": "execute",
}


@dataclass(frozen=True, slots=True)
class ToolLook:
    kind: ToolKind
    title: str
    locations: list[ToolCallLocation]


def _short(value: Any, limit: int = 80) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _title(name: str, args: dict[str, Any]) -> str:
    path = args.get("path")
    where = f" in {path}" if path else ""
    titles = {
        "read_file": f"Read {path}",
        "list_dir": f"List {path or 'the workspace'}",
        "grep": f"Search for `{_short(args.get('pattern', ''))}`{where}",
        "glob": f"Find files `{_short(args.get('pattern', ''))}`{where}",
        "write_file": f"Write {path}",
        "edit_file": f"Edit {path}",
        "shell": f"Run `{_short(args.get('command', ''))}`",
        "memory_note": f"Remember: {_short(args.get('text', ''))}",
        "memory_recall": f"Recall `{_short(args.get('query', ''))}`",
        "memory_correct": f"Correct {args.get('id') or 'a fact'}: {_short(args.get('text', ''))}",
        "memory_forget": f"Forget {args.get('id') or 'a fact'}",
    }
    if name.startswith("mcp__") and name.count("__") >= 2:
        _, server, tool = name.split("__", 2)
        return titles.get(name) or f"{server}: {tool}"
    return titles.get(name) or name.replace("_", " ")


def describe_tool(name: str, arguments: dict[str, Any]) -> ToolLook:
    """What an editor shows for a call of tool `name` with `arguments`."""
    path = arguments.get("path")
    locations: list[ToolCallLocation] = []
    if isinstance(path, str) and path.startswith("/"):
        offset = arguments.get("offset")
        line = offset if name == "read_file" and isinstance(offset, int) and offset >= 1 else None
        locations.append(ToolCallLocation(path=path, line=line))
    return ToolLook(_KINDS.get(name, "other"), _title(name, arguments), locations)


def _diff(name: str, arguments: dict[str, Any]) -> list[FileEditToolCallContent]:
    path = arguments.get("path")
    if not (isinstance(path, str) and path.startswith("/")):
        return []
    if name == "write_file" and isinstance(arguments.get("content"), str):
        return [tool_diff_content(path, arguments["content"])]
    old, new = arguments.get("old_string"), arguments.get("new_string")
    if name == "edit_file" and isinstance(old, str) and isinstance(new, str):
        return [tool_diff_content(path, new, old)]
    return []


def tool_started(tool_call_id: str, name: str, arguments: dict[str, Any]) -> ToolCallStart:
    """The `tool_call` update for a call that has started (it may still wait for a person's yes)."""
    look = describe_tool(name, arguments)
    return start_tool_call(
        tool_call_id,
        look.title,
        kind=look.kind,
        status="in_progress",
        locations=look.locations or None,
        raw_input=arguments,
    )


def _cut(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    return text[:RESULT_CHARS] + f"\n… ({len(text) - RESULT_CHARS} more characters)"


def tool_finished(
    tool_call_id: str, name: str, arguments: dict[str, Any], content: str, *, is_error: bool
) -> ToolCallProgress:
    """The `tool_call_update` for a finished call: its status, its result as text, and a diff for a file change."""
    status: ToolCallStatus = "failed" if is_error else "completed"
    shown: list[ContentToolCallContent | FileEditToolCallContent] = []
    if not is_error:
        shown.extend(_diff(name, arguments))
    if content:
        shown.append(tool_content(text_block(_cut(content))))
    return update_tool_call(tool_call_id, status=status, content=shown or None, raw_output={"content": _cut(content)})
