"""`grep`: ripgrep over what the policy lets the run read, with its output shaped for a model.

rg runs as an argv list, never through a shell: `rg --json --no-config --no-ignore... --no-pre ... -e PATTERN --
ROOTS`, so a pattern that looks like an option (`--pre=/bin/sh`) is searched, not obeyed. rg reads no config or
ignore file of any kind (those it would open by name, following symlinks, outside every check), and its stderr
never reaches the model: a failure is one of a few fixed sentences. The rg binary is resolved once, when the
tools are made, to a canonical path no agent can write (`sandbox.programs`), and checked again against each
run's policy. The search root is split into uniform pieces (`sandbox.reach`), each pinned by an O_PATH
descriptor and handed to rg as /proc/self/fd/N (or as rg's working directory when the root is one directory),
so a symlink swapped in after the check cannot redirect the search; rg never follows symlinks, and every
reported file is checked against the policy again before a byte of it is shown. A timeout and a cap bound it.
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
from sandbox import Deny, Unavailable, decide, pin_path, search_roots
from sandbox.programs import TrustedProgram, program_refusal, trusted_program

__all__ = ["find_rg", "resolve_rg", "make_grep_tool", "RG_FLAGS"]

RG_FLAGS = (
    "--json",
    "--no-config",
    # Every source of ignore rules, each a file rg would open by name: none is read.
    "--no-ignore",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--no-ignore-parent",
    "--no-ignore-vcs",
    "--no-ignore-files",
    "--no-ignore-messages",
    "--no-messages",
    "--no-pre",
    "--no-follow",
    "--sort=path",
    "--max-filesize=50M",
)
"""The fixed part of every rg command line; `--ignore-file` and `--pre` are never passed."""

_FAILED_TO_START = "ripgrep could not run this search: check the pattern (ripgrep regex syntax), the glob and the type"

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


def resolve_rg(candidate: str | None = None) -> TrustedProgram | Unavailable:
    """The rg the kernel will run, resolved and checked once (`find_rg` when no candidate is given)."""
    return trusted_program("ripgrep (rg)", candidate if candidate is not None else find_rg())


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
    searched: bool = False

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
        self.searched = True
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


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return os.fsdecode(base64.b64decode(value.get("bytes", "")))


def _build_argv(rg: str, args: Arguments, mode: str, roots: list[str]) -> tuple[list[str], bool]:
    """The rg argv and whether content output needs group separators (context lines asked for)."""
    argv = [rg, *RG_FLAGS]
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


async def _run_rg(argv: list[str], fds: list[int], cwd: str, search: _Search, timeout: float) -> str | None:
    """Run rg and feed its events to `search`; return a fixed failure sentence, "timeout", or None."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        # rg's messages can quote what it read (a line of a file); they are never read, let alone shown.
        stderr=asyncio.subprocess.DEVNULL,
        env={"PATH": os.defpath, "LANG": "C.UTF-8"},
        cwd=cwd,
        pass_fds=fds,
        limit=_MAX_JSON_LINE,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(timeout):
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
        return "some files could not be searched" if search.searched else _FAILED_TO_START
    return None


def make_grep_tool(
    *, rg: TrustedProgram | Unavailable | None = None, timeout: float = 30.0, output_cap: int = 30_000
) -> LocalTool:
    """The grep tool, with the rg it runs (resolved now when not given), its time limit and its output cap."""
    program = resolve_rg() if rg is None else rg

    async def run(args: Arguments, ctx: ToolContext) -> ToolResult:
        mode = args.choice("output_mode", ("content", "files", "count"), "files")
        head_limit = args.integer("head_limit", 100, low=1, high=5000)
        offset = args.integer("offset", 0, low=0, high=10_000_000)
        if isinstance(program, Unavailable):
            return ToolResult(f"error: grep is not available: {program.reason}", is_error=True)
        refusal = program_refusal(ctx.policy, program.path)
        if refusal is not None:
            return ToolResult(f"error: grep is refused: ripgrep at {program.path}: {refusal}", is_error=True)
        rg = program.path
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
            text += f"\n[{failure}]"
        return ToolResult(text)

    return LocalTool(_DEFINITION, run)


_DEFINITION = ToolDefinition(
    name="grep",
    description=(
        "Search file contents with a regular expression (ripgrep syntax). output_mode: files (default: paths of "
        "matching files), content (matching lines as path:line:text, with optional context lines) or count "
        "(matches per file). Filter with glob (e.g. '*.py') or type (e.g. py). Results are paged with head_limit "
        "and offset. Symbolic links are not followed and hidden files are skipped; ignore files (.gitignore, "
        ".ignore) are not read, so everything else is searched."
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
