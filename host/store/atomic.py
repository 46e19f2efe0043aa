"""Atomic JSON files: a reader sees the old file or the new one, never a mix, even after a crash.

Write to a temporary file in the same directory, fsync it, rename it over the target, then fsync the
directory so the rename itself survives a power cut.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from host.errors import CorruptFileError

__all__ = ["write_json_atomic", "write_bytes_atomic", "read_json", "fsync_dir"]


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_bytes_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace `path` with `data` atomically, with permission bits `mode` from the start."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_json_atomic(path: Path, value: Any) -> None:
    """Replace `path` with `value` as pretty JSON, atomically."""
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def read_json(path: Path, default: Any = None) -> Any:
    """Read a JSON file; a missing file gives `default`.

    Raises:
        CorruptFileError: the file exists but is not valid JSON (the message names it).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from exc
