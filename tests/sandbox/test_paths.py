"""Canonical paths and component-wise containment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import SANDBOX_DENIED
from sandbox import PathEscapeError, canonical_path, display_path, is_within, parts_under


def test_relative_paths_start_at_the_base(tmp_path: Path) -> None:
    assert canonical_path("a/b.txt", str(tmp_path)) == f"{tmp_path}/a/b.txt"
    assert canonical_path("", str(tmp_path)) == str(tmp_path)


def test_absolute_paths_ignore_the_base(tmp_path: Path) -> None:
    assert canonical_path("/etc/../etc/hosts", str(tmp_path)) == "/etc/hosts"


def test_symlinks_of_the_deepest_existing_ancestor_are_resolved(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert canonical_path("link/not/yet/here.txt", str(tmp_path)) == f"{tmp_path}/real/not/yet/here.txt"


def test_dot_dot_after_a_symlink_leaves_the_links_target_not_the_link(tmp_path: Path) -> None:
    (tmp_path / "a" / "deep").mkdir(parents=True)
    os.symlink(tmp_path / "a" / "deep", tmp_path / "link")
    assert canonical_path("link/../x", str(tmp_path)) == f"{tmp_path}/a/x"


def test_a_dangling_leaf_symlink_resolves_to_its_target(tmp_path: Path) -> None:
    os.symlink(tmp_path / "elsewhere" / "new.md", tmp_path / "dangling")
    assert canonical_path("dangling", str(tmp_path)) == f"{tmp_path}/elsewhere/new.md"


def test_without_following_the_final_part_a_leaf_symlink_stays_a_name(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "dirlink")
    os.symlink("/etc/passwd", tmp_path / "real" / "leaf")
    assert canonical_path("dirlink/leaf", str(tmp_path), follow_final=False) == f"{tmp_path}/real/leaf"
    assert canonical_path("dirlink/leaf", str(tmp_path)) == "/etc/passwd"
    assert canonical_path("dirlink/..", str(tmp_path), follow_final=False) == str(tmp_path)


def test_a_nul_byte_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PathEscapeError) as caught:
        canonical_path("a\x00b", str(tmp_path))
    assert caught.value.code == SANDBOX_DENIED


def test_a_non_string_path_and_a_relative_base_are_refused(tmp_path: Path) -> None:
    not_a_path: Any = 7
    with pytest.raises(PathEscapeError):
        canonical_path(not_a_path, str(tmp_path))
    with pytest.raises(PathEscapeError):
        canonical_path("a", "relative/base")


def test_containment_compares_whole_components() -> None:
    assert is_within("/d/agents/a1/x", "/d/agents/a1")
    assert is_within("/d/agents/a1", "/d/agents/a1")
    assert not is_within("/d/agents/a10", "/d/agents/a1")
    assert not is_within("/d/agents/a10/x", "/d/agents/a1")
    assert is_within("/anything", "/")


def test_parts_under_and_display_name_paths_from_the_root() -> None:
    assert parts_under("/d/agents/a1/memory/x", "/d") == ("agents", "a1", "memory", "x")
    assert parts_under("/d", "/d") == ()
    assert parts_under("/dx", "/d") is None
    assert display_path("/w/scratch/a.txt", "/w/scratch") == "a.txt"
    assert display_path("/w/scratch", "/w/scratch") == "."
    assert display_path("/w/other", "/w/scratch") == "/w/other"
