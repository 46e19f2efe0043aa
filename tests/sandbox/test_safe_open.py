"""The safe openers: what is opened is exactly the checked canonical path, and writes never go through links."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import SANDBOX_DENIED
from sandbox import (
    AccessDeniedError,
    UnsafeFileError,
    fd_path,
    list_entries,
    open_dir,
    open_read,
    opened,
    pin_path,
    write_atomic,
)


def test_write_atomic_creates_parents_inside_the_workspace(world: Any) -> None:
    target = world.agent("alice") / "scratch" / "a" / "b" / "c.txt"
    write_atomic(world.policy("alice"), str(target), b"hello")
    assert target.read_bytes() == b"hello"


def test_write_atomic_creates_no_parent_the_policy_refuses(world: Any) -> None:
    target = world.agent("alice") / "memory" / "sub" / "c.txt"
    with pytest.raises(AccessDeniedError) as caught:
        write_atomic(world.policy("alice"), str(target), b"hello")
    assert caught.value.code == SANDBOX_DENIED
    assert not (world.agent("alice") / "memory" / "sub").exists()


def test_write_atomic_refuses_a_final_symlink_and_leaves_its_target_alone(world: Any) -> None:
    link = world.agent("alice") / "scratch" / "link"
    os.symlink(world.agent("alice") / "memory" / "secret.md", link)
    with pytest.raises(UnsafeFileError):
        write_atomic(world.policy("alice"), str(link), b"forged")
    assert (world.agent("alice") / "memory" / "secret.md").read_text(encoding="utf-8") == world.memory_canary
    assert link.is_symlink()


def test_write_atomic_replaces_a_hard_linked_file_instead_of_writing_through_it(world: Any) -> None:
    original = world.agent("alice") / "scratch" / "notes.txt"
    twin = world.agent("alice") / "scratch" / "twin.txt"
    os.link(original, twin)
    write_atomic(world.policy("alice"), str(twin), b"new")
    assert twin.read_bytes() == b"new"
    assert original.read_text(encoding="utf-8") == world.notes


def test_write_atomic_leaves_no_temp_file_behind(world: Any) -> None:
    scratch = world.agent("alice") / "scratch"
    write_atomic(world.policy("alice"), str(scratch / "notes.txt"), b"new")
    assert sorted(p.name for p in scratch.iterdir()) == ["notes.txt"]


def test_open_dir_refuses_a_symlink_anywhere_on_the_way(world: Any) -> None:
    link = world.agent("alice") / "scratch" / "dirlink"
    os.symlink(world.agent("mallory") / "memory", link)
    with pytest.raises(UnsafeFileError):
        open_dir(str(link))
    with pytest.raises(UnsafeFileError):
        open_dir(str(link / "deeper"))
    with opened(open_dir(str(world.agent("alice") / "scratch"))) as fd:
        assert fd_path(fd) == str(world.agent("alice") / "scratch")


def test_open_read_refuses_a_final_symlink_and_opens_a_regular_file(world: Any) -> None:
    link = world.agent("alice") / "scratch" / "leaf"
    os.symlink(world.agent("alice") / "memory" / "secret.md", link)
    with pytest.raises(UnsafeFileError):
        open_read(str(link))
    with opened(open_read(str(world.agent("alice") / "memory" / "secret.md"))) as fd:
        assert os.read(fd, 100).decode() == world.memory_canary


def test_open_read_refuses_a_fifo_without_blocking(world: Any) -> None:
    fifo = world.agent("alice") / "scratch" / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFileError):
        open_read(str(fifo))


def test_pin_path_pins_directories_and_files_but_not_links(world: Any, tmp_path: Path) -> None:
    scratch = world.agent("alice") / "scratch"
    os.symlink(scratch / "notes.txt", scratch / "leaf")
    with opened(pin_path(str(scratch / "notes.txt"))) as fd:
        assert fd_path(fd) == str(scratch / "notes.txt")
    with pytest.raises(UnsafeFileError):
        pin_path(str(scratch / "leaf"))


def test_list_entries_describes_links_without_following_them(world: Any) -> None:
    scratch = world.agent("alice") / "scratch"
    os.symlink(world.agent("mallory") / "memory", scratch / "memlink")
    (scratch / "sub").mkdir()
    entries = {entry.name: entry for entry in list_entries(str(scratch))}
    assert entries["memlink"].kind == "symlink"
    assert entries["memlink"].link_target == str(world.agent("mallory") / "memory")
    assert entries["sub"].kind == "dir" and entries["notes.txt"].size == len(world.notes)
