"""Overlapping sources: one base never holds two sources that read the same file (search would give its
passages twice).

A new path overlaps an admitted source of the same base when the admitted folder already reads it (a file
that fits its pattern, or a folder below it that it does not skip), when the new folder would read the
admitted file or folder, or when it is the same folder with another pattern. Paths are compared canonical
(symlinks resolved). Only one base's sources are compared: an agent and a Work may admit the same folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from host.knowledge.indexer import SKIPPED_DIRS, matches
from host.knowledge.store import SourceSpec
from sandbox import is_within, parts_under

__all__ = ["folder_reads", "overlap"]


def _canonical(spec: SourceSpec) -> SourceSpec:
    # A source carried in by an archive keeps the path it was admitted with elsewhere; compare it resolved.
    path = os.path.realpath(spec.path)
    return spec if path == spec.path else SourceSpec(spec.source_id, path, spec.kind, spec.pattern, spec.paused)


def folder_reads(folder: SourceSpec, path: str, kind: str, excluded: str) -> bool:
    """Whether the admitted folder `folder` reads the file `path` (kind `file`), or the files below the folder
    `path` (kind `folder`: one strictly inside it that it does not skip as hidden or generated)."""
    if kind == "file":
        return matches(folder, path, excluded)
    parts = parts_under(path, folder.path)
    if not parts or is_within(path, excluded):
        return False
    return not any(part.startswith(".") or part in SKIPPED_DIRS for part in parts)


def _pattern(pattern: str | None) -> str:
    return f"with the pattern {pattern!r}" if pattern else "without a pattern"


def overlap(
    raw: str, path: str, kind: str, pattern: str | None, sources: Iterable[SourceSpec], excluded: str
) -> str | None:
    """Why admitting `path` (canonical; `raw` as the person gave it) would read what one of `sources` reads,
    naming that source, or None. The very same source (path and pattern) is no overlap: it is kept as it is.

    Args:
        raw: the path as given, for the message.
        path: its canonical form.
        kind: `file` or `folder`.
        pattern: the new folder's pattern (None for a file).
        sources: the base's sources (and those admitted earlier in the same call).
        excluded: the tree never read (the data directory).
    """
    fresh = SourceSpec("", path, kind, pattern, False)
    for spec in map(_canonical, sources):
        held = f"{spec.source_id} ({spec.path})"
        if spec.path == path:
            if spec.pattern == pattern or kind == "file":
                continue
            return (
                f"{raw} is admitted already as {held} {_pattern(spec.pattern)}; remove {spec.source_id} first "
                f"to admit it {_pattern(pattern)}"
            )
        if spec.kind == "folder" and folder_reads(spec, path, kind, excluded):
            return (
                f"{raw} is inside the admitted folder {held}, which reads it already; remove {spec.source_id} "
                f"first to admit {raw} on its own"
            )
        if kind == "folder" and folder_reads(fresh, spec.path, spec.kind, excluded):
            return (
                f"{raw} holds the admitted {spec.kind} {held}; remove {spec.source_id} first to admit {raw}, "
                "or admit the folders beside it instead"
            )
    return None
