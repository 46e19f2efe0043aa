"""read_file and list_dir: numbered text, ranges, refusals of binary and oversized files, listings without links."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kernel.tools import LIST_DIR, READ_FILE
from kernel.tools import reader as reader_module


def read(env: Any, arun: Any, **arguments: Any) -> Any:
    return arun(READ_FILE.run(arguments, env.context()))


def test_read_file_numbers_every_line(env: Any, arun: Any) -> None:
    (env.scratch / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    assert read(env, arun, path="a.txt").content == "     1\tone\n     2\ttwo"


def test_read_file_shows_a_line_range_and_says_how_to_continue(env: Any, arun: Any) -> None:
    (env.scratch / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)), encoding="utf-8")
    result = read(env, arun, path="a.txt", offset=3, limit=2)
    assert result.content.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[lines 3-4 of 10; call again with offset=5 for more]",
    ]


def test_read_file_refuses_binary_files(env: Any, arun: Any) -> None:
    (env.scratch / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    result = read(env, arun, path="blob.bin")
    assert result.is_error and "binary" in result.content


def test_read_file_refuses_files_over_the_size_cap(env: Any, arun: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(reader_module, "MAX_FILE_BYTES", 10)
    (env.scratch / "big.txt").write_text("x" * 11, encoding="utf-8")
    (env.scratch / "small.txt").write_text("x" * 10, encoding="utf-8")
    assert read(env, arun, path="big.txt").is_error
    assert not read(env, arun, path="small.txt").is_error


def test_read_file_cuts_very_long_lines(env: Any, arun: Any) -> None:
    (env.scratch / "wide.txt").write_text("y" * 5000, encoding="utf-8")
    content = read(env, arun, path="wide.txt").content
    assert content.endswith("[line cut]") and len(content) < 2100


def test_read_file_errors_are_plain(env: Any, arun: Any) -> None:
    assert read(env, arun, path="missing.txt").content.startswith("error: ")
    (env.scratch / "dir").mkdir()
    assert read(env, arun, path="dir").content.startswith("error: ")
    (env.scratch / "a.txt").write_text("one\n", encoding="utf-8")
    assert read(env, arun, path="a.txt", offset=5).content.startswith("error: ")
    assert read(env, arun, path=7).content.startswith("error: ")


def test_read_file_outside_the_data_dir_asks_with_the_canonical_path(env: Any, arun: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("far away\n", encoding="utf-8")
    os.symlink(outside, env.scratch / "via")
    env.answer = False
    assert read(env, arun, path="via").content.startswith("denied:")
    env.answer = True
    assert read(env, arun, path="via").content == "     1\tfar away"
    assert env.asked == [("read", str(outside)), ("read", str(outside))]


def test_read_file_of_the_own_memory_needs_no_approval(env: Any, arun: Any) -> None:
    assert read(env, arun, path="../memory/MEMORY.md").content == "     1\tada likes tea"
    assert env.asked == []


def test_list_dir_describes_entries_without_following_links(env: Any, arun: Any) -> None:
    (env.scratch / "sub").mkdir()
    (env.scratch / "a.txt").write_text("abc", encoding="utf-8")
    os.symlink("/etc", env.scratch / "etc")
    result = arun(LIST_DIR.run({}, env.context()))
    assert result.content.splitlines() == [".: 3 entries", "a.txt (3 bytes)", "etc -> /etc", "sub/"]


def test_list_dir_of_a_neighbours_memory_is_denied(env: Any, arun: Any) -> None:
    result = arun(LIST_DIR.run({"path": "../../bob/memory"}, env.context()))
    assert result.content.startswith("denied:") and "MEMORY.md" not in result.content
    own = arun(LIST_DIR.run({"path": "../memory"}, env.context()))
    assert "MEMORY.md" in own.content


def test_a_hard_link_to_another_agents_memory_is_refused_and_one_between_own_files_is_read(
    env: Any, arun: Any, tmp_path: Path
) -> None:
    """Issue 21.6: a path check cannot see a hard link; the opened file is checked by its inode."""
    project = tmp_path / "project"
    project.mkdir()
    os.link(env.data / "agents" / "bob" / "memory" / "MEMORY.md", project / "bob.md")
    (project / "a.py").write_text("shared = 1\n", encoding="utf-8")
    os.link(project / "a.py", project / "b.py")
    refused = read(env, arun, path=str(project / "bob.md"))
    assert refused.is_error and refused.content.startswith("denied:") and "bob likes tea" not in refused.content
    assert read(env, arun, path=str(project / "b.py")).content == "     1\tshared = 1"
    listing = arun(LIST_DIR.run({"path": str(project)}, env.context())).content
    assert "bob.md (a hard link to a file this agent may not read" in listing and "b.py (11 bytes)" in listing
