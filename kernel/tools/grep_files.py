"""The files grep lets rg read: listed by rg, opened and checked by the kernel, handed back as descriptors.

rg opens what it finds by name, so a hard link in the tree to another agent's memory (or a file swapped for one
after any check) would be read. So rg first only lists the files its filters keep (`--files`, which opens no
file), the kernel opens each beneath its pinned search root without following a symlink (`sandbox.Beneath`),
leaves out every one that is a protected file (`sandbox.protected`: by `fstat` of the open descriptor, with the
set brought up to date after the opens, so a link made after the listing is caught too), and rg searches the rest
as /proc/self/fd/N, a chunk at a time: whatever it prints comes from those inodes and no other.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
from dataclasses import dataclass

from sandbox import Beneath, Policy, protected_files

__all__ = ["CHUNK", "Listing", "Piece", "Vetted", "Vetter"]

CHUNK = max(64, min(1024, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 4))
"""Files opened and searched at once: up to a quarter of this process's descriptors, at most 1,024."""

_READ = 1 << 16
_FD_NAME = re.compile(r"^(/proc/self/fd/\d+)(?:/(.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Piece:
    """One pinned search root: its O_PATH descriptor and canonical path."""

    fd: int
    path: str


@dataclass(slots=True)
class Vetted:
    """A chunk's open files: rg's name of each (`/proc/self/fd/N`) → its canonical path, and how many were left
    out as protected. `close` closes them."""

    names: dict[str, str]
    fds: list[int]
    left_out: int = 0

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


class Vetter:
    """Opens listed files beneath their pinned roots and keeps only those the run may read.

    Args:
        policy: the run's policy.
        pieces: rg's name of each search root (`.` for its working directory, else `/proc/self/fd/N`) → the root.
    """

    def __init__(self, policy: Policy, pieces: dict[str, Piece]) -> None:
        self._policy = policy
        self._pieces = pieces
        self._beneath: dict[str, Beneath] = {}

    def _where(self, name: str) -> tuple[str, str] | None:
        """(the root's name, the path below it; "" for the root itself) of a name rg listed."""
        if "." in self._pieces:
            return (".", name[2:]) if name.startswith("./") else None
        found = _FD_NAME.match(name)
        if found is None or found.group(1) not in self._pieces:
            return None
        return found.group(1), found.group(2) or ""

    def _open(self, name: str) -> tuple[int, os.stat_result, str] | None:
        where = self._where(name)
        if where is None:
            return None
        root, below = where
        piece = self._pieces[root]
        beneath = self._beneath.get(root)
        if beneath is None:
            beneath = self._beneath[root] = Beneath(piece.fd)
        found = beneath.open(below)  # a file given as a root ("" below it) is reopened through its descriptor
        path = f"{piece.path.rstrip('/')}/{below}" if below else piece.path
        return None if found is None else (*found, path)

    def vet(self, listed: list[str]) -> Vetted:
        """Open every listed file the run may read, then leave out the protected ones (checked after the opens)."""
        # Every root is uniform (`sandbox.reach`): what lies below it has its verdict, so no file is decided here
        # (each one reported is, before it is shown).
        opened = [found for name in listed if (found := self._open(name)) is not None]
        vetted = Vetted({}, [])
        protected = protected_files(self._policy).current() if opened else None
        for fd, info, path in opened:
            if protected is not None and protected.holds(info):
                os.close(fd)
                vetted.left_out += 1
            else:
                vetted.fds.append(fd)
                vetted.names[f"/proc/self/fd/{fd}"] = path
        return vetted

    def close(self) -> None:
        for beneath in self._beneath.values():
            beneath.__exit__()
        self._beneath.clear()


class Listing:
    """`rg --files --null` running over the pinned roots, read a chunk of names at a time."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self._rest = b""
        self._names: list[bytes] = []
        self._done = False
        self.count = 0

    @staticmethod
    async def start(argv: list[str], fds: list[int], cwd: str) -> Listing:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,  # never read: it could quote a name
            env={"PATH": os.defpath, "LANG": "C.UTF-8"},
            cwd=cwd,
            pass_fds=fds,
        )
        return Listing(process)

    async def next(self, limit: int = CHUNK) -> list[str]:
        """Up to `limit` more names, in rg's (path) order; [] once the listing has ended."""
        assert self._process.stdout is not None
        while len(self._names) < limit and not self._done:
            data = await self._process.stdout.read(_READ)
            if not data:
                self._done = True
                break
            *complete, self._rest = (self._rest + data).split(b"\0")
            self._names += complete
        names, self._names = self._names[:limit], self._names[limit:]
        self.count += len(names)
        return [os.fsdecode(name) for name in names]

    async def close(self) -> int | None:
        """Stop it (if still running) and return its exit code; None when it was stopped before its end."""
        if self._process.returncode is None and not self._done:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()
            return None
        return await self._process.wait()
