"""The data dir's files a run may not read, known by (device, inode), so no hard link elsewhere reaches them.

A path check cannot see a hard link: `P/k` in a project may be the very inode of `D/secrets.key`. So a file a
tool opens is also checked by what it is (`fstat` of the open descriptor, never a path), against the inodes of
every regular file under the data dir whose read the run's policy denies (another agent's memory, transcript,
prompt cache and inbox, every host file, the Works the run may not read). The set is brought up to date before
each use, cheaply: every directory walked is kept with its stamp (device, inode, mtime, ctime) and listed again
only once that changes (a file added, removed, or atomically replaced with a new inode) or while it is too recent
to be trusted (the kernel's timestamps are coarse), so a stale set is never used.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from sandbox.policy import Allow, Deny, Policy, decide, read_uniform

__all__ = ["PROTECTED_REASON", "Inode", "ProtectedFiles", "Snapshot", "protected_files"]

Inode = tuple[int, int]
"""(st_dev, st_ino): what a file is, whatever its names."""

_SETTLE_NS = 1_000_000_000
"""A directory changed within this long before it was listed is listed again next time: a change in the same
clock tick as the one listed can leave its mtime and ctime as they were."""

_CACHED = 32

PROTECTED_REASON = "a file this agent may not read (another agent's memory or private files, or a host file)"
"""How a refusal names a protected file, whatever name it was reached by."""


@dataclass(frozen=True, slots=True)
class _Listing:
    stamp: tuple[int, int, int, int]
    settled: bool
    files: frozenset[Inode]
    subdirs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The protected inodes at one moment; `complete` when every directory of the data dir could be listed."""

    inodes: frozenset[Inode]
    complete: bool = True

    def holds(self, info: os.stat_result) -> bool:
        """Whether `info` (the `fstat` of an open file) may be one of the protected files.

        Where a directory of the data dir could not be listed, any file with more than one name may be.
        """
        return (info.st_dev, info.st_ino) in self.inodes or (not self.complete and info.st_nlink > 1)


class ProtectedFiles:
    """The inodes a run of `policy` may not read, kept current (see the module docstring). Thread-safe.

    Args:
        policy: the run's policy; only its data dir, agent, run kind and Work matter.
    """

    def __init__(self, policy: Policy) -> None:
        self._policy = policy
        self._listings: dict[str, _Listing] = {}
        self._inodes: frozenset[Inode] = frozenset()
        self._lock = threading.Lock()

    def current(self) -> Snapshot:
        """The protected inodes as the data dir is now (its changed directories listed again first)."""
        with self._lock:
            listings: dict[str, _Listing] = {}
            complete = True
            pending = [self._policy.data_dir]
            while pending:
                path = pending.pop()
                try:
                    listing = self._listing(path)
                except OSError:
                    complete = False
                    continue
                if listing is not None:
                    listings[path] = listing
                    pending.extend(listing.subdirs)
            if listings.keys() != self._listings.keys() or any(
                listing is not self._listings.get(path) for path, listing in listings.items()
            ):
                self._inodes = frozenset().union(*(listing.files for listing in listings.values()))
            self._listings = listings
            return Snapshot(self._inodes, complete)

    def _listing(self, path: str) -> _Listing | None:
        """The directory at `path` as it is now: the kept listing while its stamp holds, else a fresh one; None
        when it is gone.

        Raises:
            OSError: it is there but cannot be listed.
        """
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        stamp = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        kept = self._listings.get(path)
        if kept is not None and kept.settled and kept.stamp == stamp:
            return kept
        return self._list(path)

    def _list(self, path: str) -> _Listing | None:
        started = time.time_ns()
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return None  # gone since it was seen: nothing of it to protect
        try:
            info = os.fstat(fd)
            files: set[Inode] = set()
            subdirs: list[str] = []
            for entry in os.scandir(fd):
                child = f"{path.rstrip('/')}/{entry.name}"
                try:
                    found = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(found.st_mode):
                    # A subtree the run may read whole holds nothing protected: it is not walked.
                    whole = read_uniform(self._policy, child) and isinstance(decide(self._policy, "read", child), Allow)
                    if not whole:
                        subdirs.append(child)
                elif stat.S_ISREG(found.st_mode) and isinstance(decide(self._policy, "read", child), Deny):
                    files.add((found.st_dev, found.st_ino))
        finally:
            os.close(fd)
        stamp = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        settled = max(info.st_mtime_ns, info.st_ctime_ns) < started - _SETTLE_NS
        return _Listing(stamp, settled, frozenset(files), tuple(subdirs))


_KNOWN: OrderedDict[tuple[str, str, str, str | None], ProtectedFiles] = OrderedDict()
_KNOWN_LOCK = threading.Lock()


def protected_files(policy: Policy) -> ProtectedFiles:
    """The one `ProtectedFiles` of this process for the run identity `policy` names (the last few are kept)."""
    key = (policy.data_dir, policy.agent_id, policy.run_kind, policy.work_id)
    with _KNOWN_LOCK:
        known = _KNOWN.get(key)
        if known is None:
            known = _KNOWN[key] = ProtectedFiles(policy)
        _KNOWN.move_to_end(key)
        while len(_KNOWN) > _CACHED:
            _KNOWN.popitem(last=False)
        return known
