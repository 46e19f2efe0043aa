"""Appends and atomic writes under a full or failing disk: whole or not at all, named, and never acknowledged
half-written (issue 10 items 13 and 15). The disk's refusals are simulated by patching `os.write`/`os.fsync`."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from host.errors import StorageError
from host.store import durable
from host.store.atomic import remove_stale_temps, write_json_atomic
from host.store.transcript import Transcript
from protocol.errors import STORAGE_ERROR, STORAGE_FULL

_real_write = os.write
_real_fsync = os.fsync


def _target(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def _patch_writes(monkeypatch: pytest.MonkeyPatch, path: Path, fake: Callable[[int, bytes | memoryview], int]) -> None:
    """Route `os.write` calls on `path` to `fake`; every other descriptor is written as usual."""

    def write(fd: int, data: bytes | memoryview) -> int:
        if _target(fd) == str(path):
            return fake(fd, data)
        return _real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


def _filled(path: Path, n: int = 3) -> Transcript:
    transcript = Transcript(path)
    for i in range(n):
        transcript.append({"type": "user", "text": f"message {i}"})
    return transcript


def test_a_short_write_is_completed_before_the_event_is_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host used to ignore a short `os.write`: `seq 5` was acknowledged for half a line."""
    path = tmp_path / "transcript.jsonl"
    transcript = _filled(path)
    calls: list[int] = []

    def short(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        return _real_write(fd, bytes(data[: max(1, len(data) // 3)]))

    _patch_writes(monkeypatch, path, short)
    stored = transcript.append({"type": "user", "text": "a message written in pieces"})
    monkeypatch.undo()
    assert len(calls) > 1
    assert stored["seq"] == 4
    reopened = Transcript(path)
    assert [e["seq"] for e in reopened.read_all()] == [1, 2, 3, 4]
    assert reopened.read_all()[-1]["text"] == "a message written in pieces"


def test_a_full_disk_leaves_the_file_as_it_was_and_the_seq_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = _filled(path)
    before = path.read_bytes()
    written: list[int] = []

    def full_after_some(fd: int, data: bytes | memoryview) -> int:
        if not written:
            written.append(_real_write(fd, bytes(data[:10])))
            return written[0]
        raise OSError(errno.ENOSPC, "No space left on device")

    _patch_writes(monkeypatch, path, full_after_some)
    with pytest.raises(StorageError) as info:
        transcript.append({"type": "user", "text": "this one does not fit"})
    monkeypatch.undo()
    assert info.value.code == STORAGE_FULL
    assert info.value.data == {"path": str(path), "errno": "ENOSPC"}
    assert "was not stored" in info.value.message
    assert path.read_bytes() == before, "the ten bytes that fit were cut back"
    assert transcript.last_seq == 3
    assert transcript.append({"type": "user", "text": "after space was freed"})["seq"] == 4
    assert [e["seq"] for e in Transcript(path).read_all()] == [1, 2, 3, 4]


def test_a_failed_fsync_is_a_storage_error_and_the_line_is_cut_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = _filled(path, 1)
    before = path.read_bytes()
    failures = [OSError(errno.EIO, "Input/output error")]

    def fsync(fd: int) -> None:
        if failures and _target(fd) == str(path):
            raise failures.pop()
        _real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StorageError) as info:
        transcript.append({"type": "user", "text": "lost to an I/O error"})
    assert info.value.code == STORAGE_ERROR and info.value.data["errno"] == "EIO"
    assert path.read_bytes() == before
    assert isinstance(info.value, OSError), "callers that catch OSError still catch it"


def test_a_new_transcript_fsyncs_its_directory_and_an_existing_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[Path] = []
    real = durable.fsync_dir
    monkeypatch.setattr(durable, "fsync_dir", lambda directory: (synced.append(directory), real(directory))[1])
    Transcript(tmp_path / "transcript.jsonl")
    assert synced == [tmp_path]
    Transcript(tmp_path / "transcript.jsonl")
    assert synced == [tmp_path]


def test_the_torn_tail_is_on_disk_aside_before_the_original_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "transcript.jsonl"
    _filled(path, 2)
    with path.open("ab") as f:
        f.write(b'{"seq":3,"type":"user","text":"cut sh')
    torn_size = path.stat().st_size
    seen: list[tuple[str, int]] = []

    def fsync(fd: int) -> None:
        seen.append((_target(fd), path.stat().st_size))
        _real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    Transcript(path)
    aside = str(tmp_path / "transcript.jsonl.torn")
    assert (aside, torn_size) in seen, "the aside file was fsynced while the original still held the torn bytes"
    assert seen.index((aside, torn_size)) < seen.index((str(path), path.stat().st_size))


def test_an_atomic_write_on_a_full_disk_keeps_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    write_json_atomic(path, {"kept": True})

    def fsync(fd: int) -> None:
        if _target(fd).endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        _real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StorageError) as info:
        write_json_atomic(path, {"kept": False})
    assert info.value.code == STORAGE_FULL and info.value.data["path"] == str(path)
    assert path.read_text(encoding="utf-8") == '{\n  "kept": true\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_temporaries_of_interrupted_atomic_writes_are_removed_and_nothing_else(tmp_path: Path) -> None:
    leftovers = [".settings.json.k3j_9a2b.tmp", ".profile.json.abcdefgh.tmp"]
    kept = ["settings.json", ".settings.json.tmp", "notes.abcdefgh.tmp", ".x.ABCDEFGH.tmp", ".x.abc.tmp"]
    for name in leftovers + kept:
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / ".dir.abcdefgh.tmp").mkdir()
    assert remove_stale_temps(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, ".dir.abcdefgh.tmp"])
    assert remove_stale_temps(tmp_path / "missing") == 0
