"""`grep`: ripgrep over what the policy lets the run read, with its output shaped for a model.

rg runs as an argv list, never through a shell: `rg --files --no-config --no-ignore... -- ROOTS` lists the files,
then `rg --json --no-config --no-pre ... -e PATTERN -- FILES` searches them, so a pattern that looks like an
option (`--pre=/bin/sh`) is searched, not obeyed. rg reads no config or ignore file of any kind (those it would
open by name, following symlinks, outside every check), and its stderr never reaches the model: a failure is one
of a few fixed sentences. The rg binary is resolved once, when the tools are made, to a canonical path no agent can
write (`sandbox.programs`), and checked again against each run's policy. The search root is split into uniform
pieces (`sandbox.reach`), each pinned by an O_PATH descriptor and handed to rg as /proc/self/fd/N (or as its
working directory when the root is one directory). rg only lists what is there; the files themselves are opened
and checked by the kernel and searched through their descriptors (`kernel.tools.grep_files`), so neither a
symlink swapped in nor a hard link to a protected file is read. A file found binary (a NUL byte) is left out
whole, every reported file is checked against the policy again, and a timeout and a cap bound it.
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
from kernel.tools.grep_files import Listing, Piece, Vetter
from kernel.tools.result import ToolResult
from kernel.tools.shell_pool import clip_text
from sandbox import Deny, Unavailable, decide, pin_path, search_roots
from sandbox.programs import TrustedProgram, program_refusal, trusted_program
from sandbox.protected import PROTECTED_REASON

__all__ = ["find_rg", "resolve_rg", "make_grep_tool", "RG_FLAGS", "SEARCH_FLAGS"]

RG_FLAGS = (
    "--files",
    "--null",
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
    "--no-follow",
    "--sort=path",
    "--max-filesize=50M",
)
"""The fixed part of the listing's command line; `--ignore-file` and `--pre` are never passed."""

SEARCH_FLAGS = (
    "--json",
    "--no-config",
    "--no-messages",
    "--no-pre",
)
"""The fixed part of the search's command line: it is given files (descriptors) only, never a directory (the
listing has applied the size cap, the glob and the type)."""

_FAILED_TO_START = "ripgrep could not run this search: check the pattern (ripgrep regex syntax), the glob and the type"
_SOME_FAILED = "some files could not be searched"

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


_Held = list[tuple[str, int, str]]


@dataclass(slots=True)
class _Search:
    """One search: how to render, the current chunk's files by rg's name, and what was collected so far.

    rg searches a chunk on several threads, each file's events together; a file's lines are held until its `end`
    event (so a file rg found binary is left out whole, and at most as many as still fit are held), and the
    chunk's files are rendered in the listing's order once rg is done with them.
    """

    ctx: ToolContext
    mode: str
    separators: bool
    limit: int
    names: dict[str, str] = field(default_factory=dict)
    done: dict[str, tuple[_Held, int] | None] = field(default_factory=dict)
    entries: list[str] = field(default_factory=list)
    held: _Held = field(default_factory=list)
    last: tuple[str, int] | None = None
    more: bool = False
    events: int = 0
    left_out: int = 0

    def start(self, names: dict[str, str]) -> None:
        """A new chunk: rg's name of each file → its canonical path, in the listing's order."""
        self.names, self.done, self.held = names, {}, []

    def add(self, event: dict[str, Any]) -> None:
        """Take one rg event."""
        kind, data = event.get("type"), event.get("data") or {}
        self.events += 1
        if kind == "begin":
            self.held = []
        elif kind in ("match", "context") and self.mode == "content":
            if len(self.held) <= self.limit - len(self.entries):
                mark = ":" if kind == "match" else "-"
                self.held.append((mark, int(data["line_number"]), _text(data["lines"]).rstrip("\r\n")))
        elif kind == "end":
            held, self.held = self.held, []
            binary = data.get("binary_offset") is not None
            self.done[_text(data["path"])] = None if binary else (held, int(data["stats"]["matched_lines"]))

    def finish(self) -> None:
        """Render the chunk's files in order until more entries than the limit are in."""
        for name, path in self.names.items():
            found = self.done.get(name)
            # Checked again per file: a path outside what the policy allows is never shown.
            if found is None or isinstance(decide(self.ctx.policy, "read", path), Deny):
                continue
            self._render(path, *found)
            if len(self.entries) > self.limit:
                self.more = True
                return

    def _render(self, path: str, held: _Held, matched: int) -> None:
        shown = self.ctx.show(path)
        if self.mode == "files" and matched:
            self.entries.append(shown)
        elif self.mode == "count" and matched:
            self.entries.append(f"{shown}:{matched}")
        for mark, number, text in held:
            if len(text) > _MAX_LINE_CHARS:
                text = text[:_MAX_LINE_CHARS] + " [line cut]"
            if self.separators and self.last is not None and self.last != (path, number - 1):
                self.entries.append("--")
            self.entries.append(f"{shown}{mark}{number}{mark}{text}")
            self.last = (path, number)


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return os.fsdecode(base64.b64decode(value.get("bytes", "")))


def _filters(args: Arguments) -> list[str]:
    """The listing's filters: the glob and the type."""
    flags = []
    glob = args.optional_text("glob")
    if glob is not None:
        if not glob or "\x00" in glob:
            raise ToolArgumentError("`glob` must be a non-empty pattern")
        flags.append(f"--glob={glob}")
    file_type = args.optional_text("type")
    if file_type is not None:
        if not _TYPE_NAME.match(file_type):
            raise ToolArgumentError("`type` must be a ripgrep type name such as py, js or rust")
        flags.append(f"--type={file_type}")
    return flags


def _search_flags(args: Arguments, mode: str) -> tuple[list[str], bool]:
    """The search's flags up to the files, and whether content output needs group separators."""
    flags = ["--ignore-case"] if args.flag("case_insensitive") else []
    separators = False
    if mode == "content":
        context = args.integer("context", 0, low=0, high=50)
        before = args.integer("before", context, low=0, high=50)
        after = args.integer("after", context, low=0, high=50)
        flags += [f"--before-context={before}", f"--after-context={after}"]
        separators = before > 0 or after > 0
    elif mode == "files":
        flags.append("--max-count=1")
    pattern = args.text("pattern")
    if not pattern or "\x00" in pattern:
        raise ToolArgumentError("`pattern` must be a non-empty regular expression without NUL bytes")
    return [*flags, "-e", pattern, "--"], separators


async def _run_search(argv: list[str], fds: list[int], search: _Search) -> str | None:
    """Run one search over vetted descriptors, feed its events to `search` and render them; a failure sentence,
    or None."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        # rg's messages can quote what it read (a line of a file); they are never read, let alone shown.
        stderr=asyncio.subprocess.DEVNULL,
        env={"PATH": os.defpath, "LANG": "C.UTF-8"},
        cwd="/",
        pass_fds=fds,
        limit=_MAX_JSON_LINE,
    )
    assert process.stdout is not None
    events, cut = search.events, False
    try:
        read = 0
        while True:
            try:
                line = await process.stdout.readline()
            except ValueError:  # one JSON line over the limit: a huge matching line
                cut = True
                break
            read += len(line)
            if not line:
                break
            if read > _MAX_STDOUT:
                cut = True
                break
            search.add(json.loads(line))
        if cut:
            process.kill()
        await process.wait()
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    search.finish()
    search.more = search.more or cut
    if process.returncode == 2 and not search.more:
        return _SOME_FAILED if search.events > events else _FAILED_TO_START
    return None


async def _search_all(rg: str, listing: Listing, vetter: Vetter, flags: list[str], search: _Search) -> str | None:
    """Vet and search the listed files a chunk at a time until they end or enough entries are in."""
    failure: str | None = None
    ran = False
    while not search.more and (names := await listing.next()):
        vetted = await asyncio.to_thread(vetter.vet, names)
        try:
            search.start(vetted.names)
            search.left_out += vetted.left_out
            if vetted.fds:
                failure = await _run_search([rg, *SEARCH_FLAGS, *flags, *vetted.names], vetted.fds, search) or failure
                ran = True
        finally:
            vetted.close()
    if not ran:  # nothing to search: the pattern is still checked, against an empty file
        search.start({})
        failure = await _run_search([rg, *SEARCH_FLAGS, *flags, "/dev/null"], [], search)
    return failure


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
        filters = _filters(args)  # every argument is checked before the filesystem is touched
        flags, separators = _search_flags(args, mode)
        root = await authorize(ctx, "read", args.text("path", "."))
        fds = [pin_path(root)]
        search = _Search(ctx, mode, separators, offset + head_limit)
        failure: str | None = None
        try:
            is_dir = stat.S_ISDIR(os.fstat(fds[0]).st_mode)
            names = search_roots(ctx.policy, root, is_dir=is_dir)
            cwd = "/"
            if names == [root] and is_dir:
                # rg starts inside the pinned directory: as safe as a /proc/self/fd path, and faster per file.
                cwd, pieces = f"/proc/self/fd/{fds[0]}", {".": Piece(fds[0], root)}
            elif names == [root]:
                pieces = {f"/proc/self/fd/{fds[0]}": Piece(fds[0], root)}
            else:
                fds += [pin_path(name) for name in names]
                pieces = {f"/proc/self/fd/{fd}": Piece(fd, name) for fd, name in zip(fds[1:], names, strict=True)}
            if pieces:
                failure = await _search(
                    rg, [*RG_FLAGS, *filters, "--", *pieces], fds, cwd, pieces, flags, search, timeout
                )
        finally:
            for fd in fds:
                os.close(fd)
        if failure == "timeout":
            message = f"error: grep timed out after {timeout:g}s; narrow the path or the pattern"
            return ToolResult(message, is_error=True)
        return _result(search, offset, head_limit, failure, output_cap)

    return LocalTool(_DEFINITION, run)


async def _search(
    rg: str,
    listing_args: list[str],
    fds: list[int],
    cwd: str,
    pieces: dict[str, Piece],
    flags: list[str],
    search: _Search,
    timeout: float,
) -> str | None:
    """List, vet and search; a failure sentence, "timeout", or None."""
    vetter = Vetter(search.ctx.policy, pieces)
    try:
        async with asyncio.timeout(timeout):
            listing = await Listing.start([rg, *listing_args], fds, cwd)
            try:
                failure = await _search_all(rg, listing, vetter, flags, search)
            finally:
                code = await listing.close()
    except TimeoutError:
        return "timeout"
    finally:
        await asyncio.to_thread(vetter.close)
    if code == 2 and failure is None:
        return _SOME_FAILED if listing.count else _FAILED_TO_START
    return failure


def _result(search: _Search, offset: int, head_limit: int, failure: str | None, output_cap: int) -> ToolResult:
    shown = search.entries[offset : offset + head_limit]
    left_out = f"[{search.left_out} file(s) left out: hard links to {PROTECTED_REASON}]" if search.left_out else None
    if not shown:
        if failure:
            return ToolResult(f"error: {failure}", is_error=True)
        text = "no matches" if offset == 0 else f"no more matches after offset {offset}"
        return ToolResult(text if left_out is None else f"{text}\n{left_out}")
    text = clip_text("\n".join(shown), output_cap)
    if search.more:
        text += f"\n[more results: call again with offset={offset + len(shown)}]"
    elif failure:
        text += f"\n[{failure}]"
    if left_out is not None:
        text += f"\n{left_out}"
    return ToolResult(text)


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
