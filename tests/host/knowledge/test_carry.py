"""An agent's knowledge carried in an archive: dumped whole from one snapshot, loaded back paused, and every line
of a carried base checked as strictly as the rest of an archive (shapes, sizes, paths, secrets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from host.knowledge import KnowledgeHub
from host.knowledge.carry import KNOWLEDGE_LINE_CAP, CarriedKnowledgeError, dump_knowledge, load_knowledge
from host.knowledge.chunks import Chunk
from host.knowledge.store import INDEX_FILE, FileState, KnowledgeStore

KEY = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"
SOURCE = {"id": "s-0a1b2c3d", "path": "/home/ann/docs", "kind": "folder", "pattern": None, "addedAt": "2026-01-01"}
FILE = {"path": "/home/ann/docs/a.md", "mtimeNs": 1, "size": 10, "unit": "line", "reason": None}
CHUNK = {"heading": ["A"], "start": 1, "end": 2, "text": "The saffron note.", "masked": False}


def _write(path: Path, *lines: dict[str, Any] | str) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _hub(tmp_path: Path) -> KnowledgeHub:
    return KnowledgeHub(tmp_path / "data", lambda _: True, embedder=None)


def _chunks(index: Path) -> list[tuple[str, str, int]]:
    store = KnowledgeStore(index)
    try:
        rows = store.chunks(list(range(1, 100)))
        return [(row.path, row.text, row.masked) for row in rows.values()]
    finally:
        store.close()


def test_a_dumped_base_loads_back_whole_with_its_sources_paused(tmp_path: Path) -> None:
    store = KnowledgeStore(tmp_path / "one.sqlite")
    store.add_source("s-0a1b2c3d", "/home/ann/docs", "folder", "*.md", "2026-01-01")
    chunks = [(Chunk("The saffron note.", ("A",), 1, 2), False), (Chunk("(hidden: a key)", ("A", "B"), 4, 4), True)]
    store.replace_file("s-0a1b2c3d", "/home/ann/docs/a.md", FileState(1, 10, None), "line", chunks)
    store.replace_file("s-0a1b2c3d", "/home/ann/docs/b.pdf", FileState(2, 20, "encrypted"), "page", [])
    store.close()
    lines = _write(tmp_path / "k.jsonl")
    lines.write_bytes(dump_knowledge(tmp_path / "one.sqlite"))
    assert load_knowledge(lines, tmp_path / "two", _hub(tmp_path).refusal) == 2
    loaded = KnowledgeStore(tmp_path / "two" / INDEX_FILE)
    try:
        [row] = loaded.sources()
        assert (row.path, row.pattern, row.paused, row.chunks, row.failed) == (
            "/home/ann/docs", "*.md", True, 2, (("/home/ann/docs/b.pdf", "encrypted"),)
        )  # fmt: skip
        texts = {r.text: (r.heading, r.start, r.end, r.masked) for r in loaded.chunks([1, 2]).values()}
        assert texts == {"The saffron note.": (("A",), 1, 2, False), "(hidden: a key)": (("A", "B"), 4, 4, True)}
    finally:
        loaded.close()


def test_a_carried_chunk_holding_a_key_is_masked_again_when_loaded(tmp_path: Path) -> None:
    lines = _write(tmp_path / "k.jsonl", {"source": SOURCE}, {"file": FILE}, {"chunk": CHUNK | {"text": f"key {KEY}"}})
    load_knowledge(lines, tmp_path / "two", _hub(tmp_path).refusal)
    [(_, text, masked)] = _chunks(tmp_path / "two" / INDEX_FILE)
    assert KEY not in text and masked
    assert all(KEY.encode() not in p.read_bytes() for p in (tmp_path / "two").iterdir())


HOSTILE = {
    "relative source": [{"source": SOURCE | {"path": "docs"}}],
    "source in the data dir": [{"source": SOURCE | {"path": "DATA/agents"}}],
    "system tree": [{"source": SOURCE | {"path": "/proc/self"}}],
    "root": [{"source": SOURCE | {"path": "/"}}],
    "bad source id": [{"source": SOURCE | {"id": "../x"}}],
    "source twice": [{"source": SOURCE}, {"source": SOURCE}],
    "file outside its source": [{"source": SOURCE}, {"file": FILE | {"path": "/home/ann/.ssh/id_rsa"}}],
    "file climbing out": [{"source": SOURCE}, {"file": FILE | {"path": "/home/ann/docs/../.ssh/id_rsa"}}],
    "file before a source": [{"file": FILE}],
    "chunk before a file": [{"source": SOURCE}, {"chunk": CHUNK}],
    "chunk of a failed file": [{"source": SOURCE}, {"file": FILE | {"reason": "broken"}}, {"chunk": CHUNK}],
    "start as text": [{"source": SOURCE}, {"file": FILE}, {"chunk": CHUNK | {"start": "1"}}],
    "end before start": [{"source": SOURCE}, {"file": FILE}, {"chunk": CHUNK | {"start": 5, "end": 2}}],
    "heading not text": [{"source": SOURCE}, {"file": FILE}, {"chunk": CHUNK | {"heading": [{"x": 1}]}}],
    "unknown line": [{"source": SOURCE}, {"vector": [0.1]}],
    "not json": [{"source": SOURCE}, "{not json"],
    "endless line": [{"source": SOURCE}, json.dumps({"chunk": CHUNK | {"text": "x" * KNOWLEDGE_LINE_CAP}})],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_carried_line_that_no_export_writes_is_refused(tmp_path: Path, case: str) -> None:
    hub = _hub(tmp_path)
    data = str((tmp_path / "data").resolve())
    lines = [json.loads(json.dumps(x).replace("DATA", data)) if isinstance(x, dict) else x for x in HOSTILE[case]]
    with pytest.raises(CarriedKnowledgeError):
        load_knowledge(_write(tmp_path / "k.jsonl", *lines), tmp_path / "two", hub.refusal)
