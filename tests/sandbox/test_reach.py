"""Search roots: the data dir splits into what the run may read; uniform directories are handed over whole."""

from __future__ import annotations

import os
from typing import Any

import pytest

from sandbox import TooBroadError, search_roots


def test_the_data_dir_splits_into_only_what_mallory_may_read(world: Any) -> None:
    roots = [
        os.path.relpath(r, world.data) for r in search_roots(world.policy("mallory"), str(world.data), is_dir=True)
    ]
    assert roots == [
        "agents/alice/profile.json",
        "agents/alice/scratch",
        "agents/alice/settings.json",
        "agents/mallory",
    ]


def test_the_owner_gets_its_whole_agent_dir_as_one_root(world: Any) -> None:
    roots = [os.path.relpath(r, world.data) for r in search_roots(world.policy("alice"), str(world.data), is_dir=True)]
    assert roots == [
        "agents/alice",
        "agents/mallory/profile.json",
        "agents/mallory/scratch",
        "agents/mallory/settings.json",
    ]


def test_a_symlink_in_a_split_directory_is_dropped(world: Any) -> None:
    os.symlink(world.agent("alice") / "memory", world.data / "agents" / "sneaky")
    roots = search_roots(world.policy("mallory"), str(world.data / "agents"), is_dir=True)
    assert not any("sneaky" in root or "alice/memory" in root for root in roots)


def test_a_uniform_directory_or_a_file_is_its_own_root(world: Any) -> None:
    scratch = str(world.agent("mallory") / "scratch")
    assert search_roots(world.policy("mallory"), scratch, is_dir=True) == [scratch]
    assert search_roots(world.policy("mallory"), scratch + "/notes.txt", is_dir=False) == [scratch + "/notes.txt"]


def test_too_many_pieces_is_an_error(world: Any) -> None:
    for n in range(5):
        (world.data / "agents" / f"extra{n}").mkdir()
    with pytest.raises(TooBroadError):
        search_roots(world.policy("mallory"), str(world.data), is_dir=True, limit=3)
