"""An agent's knowledge carried in its archive, when the person asks: its sources, files and chunks as JSON lines.

`dump_knowledge` reads a base in one read transaction (the indexing thread may write meanwhile) and carries no
vector (they are derived, and computed again where it is imported). `load_knowledge` builds a base from such
lines, checking each as strictly as the rest of an archive: known shapes and types, bounded sizes and counts,
every path absolute and admissible, every file inside its source, every chunk masked again by the secret gate.
Imported sources arrive paused: nothing is read from this machine's disk until a person resumes one.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from host.knowledge.chunks import Chunk
from host.knowledge.masking import mask_secrets
from host.knowledge.store import INDEX_FILE, FileState, KnowledgeStore

__all__ = ["KNOWLEDGE_LINE_CAP", "MAX_CARRIED_CHUNKS", "CarriedKnowledgeError", "dump_knowledge", "load_knowledge"]

KNOWLEDGE_LINE_CAP = 64 * 1024
"""The most bytes one line may hold (a chunk is at most 1,500 characters and its heading path)."""
MAX_CARRIED_CHUNKS = 1_000_000
_MAX_SOURCES = 100  # the hub's limit for one base
_SOURCE_ID = re.compile(r"s-[0-9a-f]{8}")
_MAX_TEXT = 16 * 1024
_MAX_PATH = 4096


class CarriedKnowledgeError(ValueError):
    """The archive's knowledge is not what an export writes (the message says what and where)."""


def dump_knowledge(index: Path) -> bytes:
    """The base at `index` as JSON lines: each source, then each file of it followed by its chunks."""
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    lines: list[str] = []

    def line(kind: str, value: dict[str, Any]) -> None:
        lines.append(json.dumps({kind: value}, ensure_ascii=False, separators=(",", ":")))

    try:
        db.execute("BEGIN")  # one snapshot: a file is never carried half replaced
        for sid, path, kind, pattern, added_at in db.execute(
            "SELECT id, path, kind, pattern, added_at FROM sources ORDER BY rowid"
        ).fetchall():
            line("source", {"id": sid, "path": path, "kind": kind, "pattern": pattern, "addedAt": added_at})
            for fid, fpath, mtime, size, unit, reason in db.execute(
                "SELECT id, path, mtime_ns, size, unit, reason FROM files WHERE source = ? ORDER BY id", (sid,)
            ).fetchall():
                line("file", {"path": fpath, "mtimeNs": mtime, "size": size, "unit": unit, "reason": reason})
                for heading, start, end, text, masked in db.execute(
                    "SELECT heading, start, end, text, masked FROM chunks WHERE file = ? ORDER BY ord", (fid,)
                ):
                    chunk = {"heading": json.loads(heading), "start": start, "end": end, "text": text}
                    line("chunk", chunk | {"masked": bool(masked)})
        db.execute("COMMIT")
    finally:
        db.close()
    return "".join(f"{text}\n" for text in lines).encode("utf-8")


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("rb") as file:
        number = 0
        while raw := file.readline(KNOWLEDGE_LINE_CAP + 1):
            number += 1
            if len(raw) > KNOWLEDGE_LINE_CAP:
                raise CarriedKnowledgeError(f"line {number} is longer than {KNOWLEDGE_LINE_CAP} bytes")
            try:
                value = json.loads(raw)
            except ValueError:
                raise CarriedKnowledgeError(f"line {number} is not JSON") from None
            if not isinstance(value, dict) or len(value) != 1:
                raise CarriedKnowledgeError(f"line {number} is not one source, file or chunk")
            yield number, value


def _text(value: object, cap: int, *, optional: bool = False) -> bool:
    return (optional and value is None) or (isinstance(value, str) and len(value) <= cap and "\x00" not in value)


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value < 1 << 62


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def load_knowledge(lines: Path, directory: Path, refusal: Callable[[str], str | None]) -> int:
    """Build the base in `directory` (its `knowledge/` folder to be) from the carried `lines`; returns its chunks.

    Args:
        lines: the archive's knowledge member, as it came.
        directory: where `index.sqlite` is written (made if missing).
        refusal: why a source path could not be admitted here, or None (the hub's own rules).

    Raises:
        CarriedKnowledgeError: any line that is not what an export writes (nothing should be kept then).
    """
    directory.mkdir(mode=0o700, exist_ok=True)
    store = KnowledgeStore(directory / INDEX_FILE)
    sources: dict[str, str] = {}
    source: tuple[str, str, str] | None = None  # (id, path, kind) of the source the lines are in
    file: tuple[str, FileState, str] | None = None
    chunks: list[tuple[Chunk, bool]] = []
    total = 0

    def flush() -> None:
        if source is not None and file is not None:
            store.replace_file(source[0], file[0], file[1], file[2], chunks)
        chunks.clear()

    try:
        for number, value in _lines(lines):
            where = f"line {number}"
            if "source" in value:
                flush()
                file = None
                item = value["source"]
                if not isinstance(item, dict) or not all(
                    (
                        isinstance(item.get("id"), str) and _SOURCE_ID.fullmatch(item["id"]),
                        _text(item.get("path"), _MAX_PATH) and str(item["path"]).startswith("/"),
                        item.get("kind") in ("file", "folder"),
                        _text(item.get("pattern"), 200, optional=True),
                        _text(item.get("addedAt"), 64),
                    )
                ):
                    raise CarriedKnowledgeError(f"{where} is not a source")
                if item["id"] in sources or len(sources) >= _MAX_SOURCES:
                    raise CarriedKnowledgeError(f"{where}: a repeated source, or more than {_MAX_SOURCES}")
                problem = refusal(item["path"])
                if problem is not None:
                    raise CarriedKnowledgeError(f"{where}: {problem}")
                store.add_source(item["id"], item["path"], item["kind"], item["pattern"], item["addedAt"])
                store.set_paused(item["id"], True)
                sources[item["id"]] = item["path"]
                source = (item["id"], item["path"], item["kind"])
            elif "file" in value:
                flush()
                item = value["file"]
                if (
                    source is None
                    or not isinstance(item, dict)
                    or not all(
                        (
                            _text(item.get("path"), _MAX_PATH),
                            _count(item.get("mtimeNs")) and _count(item.get("size")),
                            item.get("unit") in ("line", "page"),
                            _text(item.get("reason"), 1000, optional=True),
                        )
                    )
                ):
                    raise CarriedKnowledgeError(f"{where} is not a file of a source")
                fits = item["path"] == source[1] if source[2] == "file" else _within(item["path"], source[1])
                if not fits or "/../" in item["path"] or item["path"].endswith("/.."):
                    raise CarriedKnowledgeError(f"{where}: the file {item['path']!r} is not inside its source")
                file = (item["path"], FileState(item["mtimeNs"], item["size"], item["reason"]), item["unit"])
            elif "chunk" in value:
                item = value["chunk"]
                heading = item.get("heading") if isinstance(item, dict) else None
                if (
                    file is None
                    or file[1].reason is not None
                    or not isinstance(item, dict)
                    or not all(
                        (
                            isinstance(heading, list) and len(heading) <= 32 and all(_text(h, 1000) for h in heading),
                            _count(item.get("start")) and _count(item.get("end")) and item["start"] <= item["end"],
                            _text(item.get("text"), _MAX_TEXT) and item["text"].strip(),
                            isinstance(item.get("masked"), bool),
                        )
                    )
                ):
                    raise CarriedKnowledgeError(f"{where} is not a chunk of a file that was read")
                total += 1
                if total > MAX_CARRIED_CHUNKS:
                    raise CarriedKnowledgeError(f"more than {MAX_CARRIED_CHUNKS} chunks")
                text, masked = mask_secrets(item["text"])  # the gate runs here too: the archive is not trusted
                chunks.append(
                    (Chunk(text, tuple(heading or ()), item["start"], item["end"]), item["masked"] or masked > 0)
                )
            else:
                raise CarriedKnowledgeError(f"{where} is not one source, file or chunk")
        flush()
    finally:
        store.close()
    return total
