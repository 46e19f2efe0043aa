"""`grep`: ripgrep over what the policy lets the run read, with its output shaped for a model.

rg runs as an argv list, never through a shell: `rg --json --no-config --no-pre ... -e PATTERN -- ROOTS`, so a
pattern that looks like an option (`--pre=/bin/sh`) is searched, not obeyed. The search root is split into
uniform pieces (`sandbox.reach`), each pinned by an O_PATH descriptor and handed to rg as /proc/self/fd/N (or
as rg's working directory when the root is one directory), so a symlink swapped in after the check cannot
redirect the search; rg never follows symlinks, and every reported file is checked against the policy again
before a byte of it is shown. A timeout and an output cap bound it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass, field
from typing import Any

from kernel.providers.base import ToolDefinition
from kernel.tools.context import Arguments, LocalTool, ToolArgumentError, ToolContext, authorize
from kernel.tools.result import ToolResult
from kernel.tools.shell_pool import clip_text
from sandbox import Deny, decide, pin_path, search_roots

__all__ = ["find_rg", "make_grep_tool"]

_TYPE_NAME = re.compile(r"^[A-Za-z0-9_+-]{1,40}$")
_MAX_LINE_CHARS = 500
_MAX_JSON_LINE = 8 * 1024 * 1024
_MAX_STDOUT = 64 * 1024 * 1024


def find_rg() -> str | None:
    """The `rg` binary: next to the running Python first (the venv's bin), then on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("rg")


_FD_PATH = re.compile(r"^(/proc/self/fd/\d+)(/.*)?$")


@dataclass(slots=True)
class _Search:
    """One search: how to render, where the pinned roots really are, and what was collected so far."""

    ctx: ToolContext
    mode: str
    separators: bool
    limit: int
    pieces: dict[str, str]
    entries: list[str] = field(default_factory=list)
    last: tuple[str, int] | None = None
    more: bool = False

    def real_path(self, reported: str) -> str | None:
        if "." in self.pieces and (reported == "." or reported.startswith("./")):
            return self.pieces["."] + reported[1:]
        found = _FD_PATH.match(reported)
        if found is None or found.group(1) not in self.pieces:
            return None
        return self.pieces[found.group(1)] + (found.group(2) or "")

    def add(self, event: dict[str, Any]) -> bool:
        """Render one rg event; True once more entries than the limit are collected."""
        kind, data = event.get("type"), event.get("data") or {}
        if kind not in ("match", "context", "end"):
            return False
        path = self.real_path(_text(data["path"]))
        # Checked again per file: a path outside what the policy allows is never shown.
        if path is None or isinstance(decide(self.ctx.policy, "read", path), Deny):
            return False
        shown = self.ctx.show(path)
        if self.mode == "files" and kind == "match":
            self.entries.append(shown)
        elif self.mode == "count" and kind == "end" and data["stats"]["matched_lines"]:
            self.entries.append(f"{shown}:{data['stats']['matched_lines']}")
        elif self.mode == "content" and kind != "end":
            number = int(data["line_number"])
            text = _text(data["lines"]).rstrip("\r\n")
            if len(text) > _MAX_LINE_CHARS:
                text = text[:_MAX_LINE_CHARS] + " [line cut]"
            if self.separators and self.last is not None and self.last != (path, number - 1):
                self.entries.append("--")
            mark = ":" if kind == "match" else "-"
            self.entries.append(f"{shown}{mark}{number}{mark}{text}")
            self.last = (path, number)
        return len(self.entries) > self.limit

    def clean(self, message: str) -> str:
        """rg's message with pinned descriptors named as the model knows the paths."""
        for pinned, real in self.pieces.items():
            if pinned != ".":
                message = message.replace(pinned, self.ctx.show(real))
        return message


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return os.fsdecode(base64.b64decode(value.get("bytes", "")))


def _build_argv(rg: str, args: Arguments, mode: str, roots: list[str]) -> tuple[list[str], bool]:
    """The rg argv and whether content output needs group separators (context lines asked for)."""
    argv = [rg, "--json", "--no-config", "--no-pre", "--no-follow", "--sort=path", "--max-filesize=50M"]
    if args.flag("case_insensitive"):
        argv.append("--ignore-case")
    glob = args.optional_text("glob")
    if glob is not None:
        if not glob or "\x00" in glob:
            raise ToolArgumentError("`glob` must be a non-empty pattern")
        argv.append(f"--glob={glob}")
    file_type = args.optional_text("type")
    if file_type is not None:
        if not _TYPE_NAME.match(file_type):
            raise ToolArgumentError("`type` must be a ripgrep type name such as py, js or rust")
        argv.append(f"--type={file_type}")
    separators = False
    if mode == "content":
        context = args.integer("context", 0, low=0, high=50)
        before = args.integer("before", context, low=0, high=50)
        after = args.integer("after", context, low=0, high=50)
        argv += [f"--before-context={before}", f"--after-context={after}"]
        separators = before > 0 or after > 0
    elif mode == "files":
        argv.append("--max-count=1")
    pattern = args.text("pattern")
    if not pattern or "\x00" in pattern:
        raise ToolArgumentError("`pattern` must be a non-empty regular expression without NUL bytes")
    return [*argv, "-e", pattern, "--", *roots], separators


async def _drain(stream: asyncio.StreamReader, keep: list[bytes]) -> None:
    """Read a stream to its end, keeping only its first few KiB (rg's error messages)."""
    kept = 0
    while chunk := await stream.read(65536):
        if kept < 4096:
            keep.append(chunk[: 4096 - kept])
            kept += len(keep[-1])


async def _run_rg(argv: list[str], fds: list[int], cwd: str, search: _Search, timeout: float) -> str | None:
    """Run rg and feed its events to `search`; return a failure message, "timeout", or None."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": os.defpath, "LANG": "C.UTF-8"},
        cwd=cwd,
        pass_fds=fds,
        limit=_MAX_JSON_LINE,
    )
    assert process.stdout is not None and process.stderr is not None
    errors: list[bytes] = []
    try:
        async with asyncio.timeout(timeout), asyncio.TaskGroup() as group:
            group.create_task(_drain(process.stderr, errors))
            read = 0
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:  # one JSON line over the limit: a huge matching line
                    search.more = True
                    break
                read += len(line)
                if not line:
                    break
                if read > _MAX_STDOUT or search.add(json.loads(line)):
                    search.more = True
                    break
            if search.more:
                process.kill()
            await process.wait()
    except TimeoutError:
        return "timeout"
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode == 2 and not search.more:
        lines = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
        return search.clean(lines[0]) if lines else "ripgrep failed"
    return None


def make_grep_tool(*, timeout: float = 30.0, output_cap: int = 30_000) -> LocalTool:
    """The grep tool, with its time limit and the most characters it returns."""

    async def run(args: Arguments, ctx: ToolContext) -> ToolResult:
        mode = args.choice("output_mode", ("content", "files", "count"), "files")
        head_limit = args.integer("head_limit", 100, low=1, high=5000)
        offset = args.integer("offset", 0, low=0, high=10_000_000)
        rg = find_rg()
        if rg is None:
            return ToolResult("error: ripgrep (rg) is not installed", is_error=True)
        _build_argv(rg, args, mode, [])  # every argument is checked before the filesystem is touched
        root = await authorize(ctx, "read", args.text("path", "."))
        fds = [pin_path(root)]
        try:
            is_dir = stat.S_ISDIR(os.fstat(fds[0]).st_mode)
            names = search_roots(ctx.policy, root, is_dir=is_dir)
            cwd = "/"
            if names == [root] and is_dir:
                # rg starts inside the pinned directory: as safe as a /proc/self/fd path, and faster per file.
                cwd, pieces = f"/proc/self/fd/{fds[0]}", {".": root}
            elif names == [root]:
                pieces = {f"/proc/self/fd/{fds[0]}": root}
            else:
                for name in names:
                    fds.append(pin_path(name))
                pieces = {f"/proc/self/fd/{fd}": name for fd, name in zip(fds[1:], names, strict=True)}
            argv, separators = _build_argv(rg, args, mode, list(pieces))
            search = _Search(ctx, mode, separators, offset + head_limit, pieces)
            failure = await _run_rg(argv, fds, cwd, search, timeout) if pieces else None
        finally:
            for fd in fds:
                os.close(fd)
        if failure == "timeout":
            message = f"error: grep timed out after {timeout:g}s; narrow the path or the pattern"
            return ToolResult(message, is_error=True)
        shown = search.entries[offset : offset + head_limit]
        if not shown:
            if failure:
                return ToolResult(f"error: {failure}", is_error=True)
            return ToolResult("no matches" if offset == 0 else f"no more matches after offset {offset}")
        text = clip_text("\n".join(shown), output_cap)
        if search.more:
            text += f"\n[more results: call again with offset={offset + len(shown)}]"
        elif failure:
            text += f"\n[some files could not be searched: {failure}]"
        return ToolResult(text)

    return LocalTool(_DEFINITION, run)


_DEFINITION = ToolDefinition(
    name="grep",
    description=(
        "Search file contents with a regular expression (ripgrep syntax). output_mode: files (default: paths of "
        "matching files), content (matching lines as path:line:text, with optional context lines) or count "
        "(matches per file). Filter with glob (e.g. '*.py') or type (e.g. py). Results are paged with head_limit "
        "and offset. Symbolic links are not followed; .gitignore'd and hidden files are skipped."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "File or directory to search (default: your workspace)."},
            "output_mode": {"type": "string", "enum": ["files", "content", "count"]},
            "glob": {"type": "string", "description": "Only files whose path matches this glob."},
            "type": {"type": "string", "description": "Only files of this ripgrep type (py, js, rust, ...)."},
            "case_insensitive": {"type": "boolean"},
            "context": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Lines around each match."},
            "before": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Lines before each match."},
            "after": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Lines after each match."},
            "head_limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Most entries (100)."},
            "offset": {"type": "integer", "minimum": 0, "description": "Entries to skip, for paging."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
)
