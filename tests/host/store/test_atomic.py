"""Atomic JSON writes and reads that name a corrupt file."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.errors import CorruptFileError
from host.store.atomic import read_json, write_json_atomic
from protocol.errors import CORRUPT_FILE


def test_a_write_replaces_the_whole_file_and_leaves_no_temporary_behind(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write_json_atomic(path, {"a": 1})
    write_json_atomic(path, {"b": 2})
    assert read_json(path) == {"b": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_a_missing_file_reads_as_the_default(tmp_path: Path) -> None:
    assert read_json(tmp_path / "nope.json", {"x": 1}) == {"x": 1}


def test_a_corrupt_file_is_an_error_that_names_it_and_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"cut": ', encoding="utf-8")
    with pytest.raises(CorruptFileError) as info:
        read_json(path)
    assert str(path) in info.value.message
    assert info.value.code == CORRUPT_FILE
    assert path.read_text(encoding="utf-8") == '{"cut": '
