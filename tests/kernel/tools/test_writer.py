"""write_file and edit_file: atomic replacement, parents created in the workspace, exact unique edits."""

from __future__ import annotations

import os
from typing import Any

from kernel.tools import EDIT_FILE, WRITE_FILE


def write(env: Any, arun: Any, **arguments: Any) -> Any:
    return arun(WRITE_FILE.run(arguments, env.context()))


def edit(env: Any, arun: Any, **arguments: Any) -> Any:
    return arun(EDIT_FILE.run(arguments, env.context()))


def test_write_file_creates_missing_parent_directories(env: Any, arun: Any) -> None:
    result = write(env, arun, path="a/b/c.txt", content="hi")
    assert result.content == "wrote 2 bytes to a/b/c.txt"
    assert (env.scratch / "a/b/c.txt").read_text(encoding="utf-8") == "hi"


def test_write_file_replaces_content_and_keeps_the_mode(env: Any, arun: Any) -> None:
    target = env.scratch / "run.sh"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o755)
    write(env, arun, path="run.sh", content="new")
    assert target.read_text(encoding="utf-8") == "new" and target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in env.scratch.iterdir()] == ["run.sh"]


def test_write_file_into_the_own_memory_is_denied(env: Any, arun: Any) -> None:
    result = write(env, arun, path="../memory/MEMORY.md", content="forged")
    assert result.content.startswith("denied:")
    assert (env.data / "agents/ada/memory/MEMORY.md").read_text(encoding="utf-8") == "ada likes tea\n"


def test_edit_file_replaces_one_exact_occurrence(env: Any, arun: Any) -> None:
    (env.scratch / "a.txt").write_text("alpha beta gamma\n", encoding="utf-8")
    assert edit(env, arun, path="a.txt", old_string="beta", new_string="BETA").content == "edited a.txt: 1 replacement"
    assert (env.scratch / "a.txt").read_text(encoding="utf-8") == "alpha BETA gamma\n"


def test_edit_file_with_no_match_says_so_and_changes_nothing(env: Any, arun: Any) -> None:
    (env.scratch / "a.txt").write_text("alpha\n", encoding="utf-8")
    result = edit(env, arun, path="a.txt", old_string="omega", new_string="x")
    assert result.is_error and "not found" in result.content
    assert (env.scratch / "a.txt").read_text(encoding="utf-8") == "alpha\n"


def test_edit_file_with_several_matches_asks_for_context_unless_replace_all(env: Any, arun: Any) -> None:
    (env.scratch / "a.txt").write_text("x = 1\nx = 1\n", encoding="utf-8")
    refused = edit(env, arun, path="a.txt", old_string="x = 1", new_string="x = 2")
    assert refused.is_error and "2 times" in refused.content
    assert (env.scratch / "a.txt").read_text(encoding="utf-8") == "x = 1\nx = 1\n"
    done = edit(env, arun, path="a.txt", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert done.content == "edited a.txt: 2 replacements"
    assert (env.scratch / "a.txt").read_text(encoding="utf-8") == "x = 2\nx = 2\n"


def test_edit_file_rejects_empty_and_identical_strings(env: Any, arun: Any) -> None:
    (env.scratch / "a.txt").write_text("alpha\n", encoding="utf-8")
    assert edit(env, arun, path="a.txt", old_string="", new_string="x").content.startswith("error:")
    assert edit(env, arun, path="a.txt", old_string="alpha", new_string="alpha").content.startswith("error:")
    assert edit(env, arun, path="a.txt", old_string="alpha").content.startswith("error:")
    assert (env.scratch / "a.txt").read_text(encoding="utf-8") == "alpha\n"


def test_edit_file_refuses_binary_files(env: Any, arun: Any) -> None:
    (env.scratch / "b.bin").write_bytes(b"ab\x00cd")
    assert edit(env, arun, path="b.bin", old_string="ab", new_string="x").is_error
    assert (env.scratch / "b.bin").read_bytes() == b"ab\x00cd"


def test_edit_file_of_a_hard_link_to_another_agents_memory_is_refused_and_copies_nothing(env: Any, arun: Any) -> None:
    """Issue 21.6: an edit would write the linked file's bytes under the new name, readable afterwards."""
    memory = env.data / "agents" / "bob" / "memory" / "MEMORY.md"
    os.link(memory, env.scratch / "bob.md")
    result = edit(env, arun, path="bob.md", old_string="tea", new_string="coffee")
    assert result.is_error and result.content.startswith("denied:")
    assert memory.read_text(encoding="utf-8") == "bob likes tea\n"
    assert os.stat(env.scratch / "bob.md").st_ino == os.stat(memory).st_ino, "the link was left as it was"


def test_writing_over_a_hard_link_replaces_the_name_and_never_the_linked_file(env: Any, arun: Any) -> None:
    memory = env.data / "agents" / "bob" / "memory" / "MEMORY.md"
    os.link(memory, env.scratch / "bob.md")
    assert not write(env, arun, path="bob.md", content="mine now").is_error
    assert memory.read_text(encoding="utf-8") == "bob likes tea\n"
    assert (env.scratch / "bob.md").read_text(encoding="utf-8") == "mine now"
